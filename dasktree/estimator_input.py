"""What the estimator accepts, checked as scikit-learn and dask-ml users expect.

In-memory ``X, y`` (numpy, pandas, lists) go through scikit-learn's own input
validation (:func:`sklearn.utils.validation.validate_data`), so errors and
warnings read as scikit-learn's do; a pandas DataFrame keeps its column types
(strings and categories are nominal attributes). Dask collections (a DataFrame,
Series or array for ``X``, and for ``y``) are joined partition by partition
into one dask DataFrame that the workers read; a dataset path is read there
too.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .errors import DataError, InputError, ParameterError

__all__ = ["is_dataset", "is_dask", "check_fit_input", "fit_input", "check_predict_input", "dask_frame",
           "join_dask", "folds_of_splits", "with_column"]


def is_dataset(X) -> bool:
    """A Parquet path, URL, or a list of them."""
    if isinstance(X, (str, os.PathLike)):
        return True
    return isinstance(X, (list, tuple)) and bool(X) and all(isinstance(p, (str, os.PathLike)) for p in X)


def is_dask(obj) -> bool:
    """A dask DataFrame, Series or array."""
    module = type(obj).__module__ or ""
    if not module.startswith("dask"):
        return False
    import dask.array as da
    import dask.dataframe as dd

    return isinstance(obj, (dd.DataFrame, dd.Series, da.Array))


def dask_frame(X, columns: list[str] | None = None):
    """``X`` (dask DataFrame or 2-D dask array) as a dask DataFrame; an array's columns are ``columns``."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(X, dd.DataFrame):
        return X
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise InputError(f"X must be 2-D (rows x features), got a dask array of shape {X.shape}")
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})
        names = columns or [f"x{i}" for i in range(X.shape[1])]
        if len(names) != X.shape[1]:
            raise InputError(f"X has {X.shape[1]} columns but the model uses {len(names)} features")
        return dd.from_dask_array(X, columns=names)
    raise InputError(f"X must be a dask DataFrame or 2-D dask array, got {type(X).__name__}")


def join_dask(X, y, target: str | None, what: str = "y", columns: list[str] | None = None):
    """A dask DataFrame of ``X``'s columns and ``y`` as column ``target`` (made unique); and that
    column's name. ``what`` names ``y`` in errors (``y``, ``sample_weight``); ``columns`` name a dask
    array ``X``'s columns.

    Row ``i`` of ``y`` goes with row ``i`` of ``X``, whatever dask did to their
    partitions (dask may merge a one-column ``y`` read from Parquet into fewer
    partitions than ``X``): collections of one expression (``X = ddf.drop(...)``,
    ``y = ddf[...]``) are joined in that expression, collections with known
    divisions by their index (as pandas aligns), and others by their
    partitions' lengths (counted first: one more read of both). ``X`` and ``y``
    of different lengths are a :class:`~dasktree.errors.DataError`.
    """
    import dask.dataframe as dd
    import pandas as pd

    frame = dask_frame(X, columns)
    y = _dask_series(y, what)
    name = target or (str(y.name) if y.name is not None else "target")
    while name in frame.columns:
        name = "_" + name
    if _same_rows(frame, y):
        return frame.assign(**{name: y}), name
    meta = frame._meta.assign(**{name: pd.Series(y._meta.to_numpy(), dtype=y._meta.dtype)})
    x_parts, y_parts = frame.to_delayed(), y.to_delayed()
    x_rows, y_rows = _partition_rows(x_parts, y_parts)
    if sum(x_rows) != sum(y_rows):
        raise DataError(f"X has {sum(x_rows)} rows but {what} has {sum(y_rows)}")
    joined = [_join_part(fx, pieces, name=name)
              for fx, pieces in zip(x_parts, _pieces(x_rows, y_rows, y_parts))]
    return dd.from_delayed(joined, meta=meta, verify_meta=False), name


def _dask_series(y, what: str):
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(y, da.Array):
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise InputError(f"{what} must be 1-D, got a dask array of shape {y.shape}")
        y = dd.from_dask_array(y)
    if isinstance(y, dd.DataFrame):
        if len(y.columns) != 1:
            raise InputError(f"{what} must be one column, got {len(y.columns)}")
        y = y[y.columns[0]]
    if not isinstance(y, dd.Series):
        raise InputError(f"with dask X, {what} must be a dask Series or array, got {type(y).__name__}")
    return y


def _same_rows(frame, y) -> bool:
    """Whether dask itself pairs ``frame``'s and ``y``'s rows: both indexed with known divisions (aligned
    by index, as pandas does), or both of one expression (dask optimizes the join as one)."""
    if frame.known_divisions and y.known_divisions:
        return True
    if frame.npartitions != y.npartitions:
        return False
    try:  # dask's API for libraries built on its DataFrame (the check its own assign makes)
        from dask.dataframe.api import are_co_aligned

        return bool(are_co_aligned(frame.expr, y.expr))
    except (ImportError, AttributeError):  # a dask without it: align by lengths, which always holds
        return False


def _partition_rows(x_parts, y_parts) -> tuple[list[int], list[int]]:
    import dask

    counts = dask.compute(*[dask.delayed(len)(p) for p in [*x_parts, *y_parts]])
    return [int(c) for c in counts[:len(x_parts)]], [int(c) for c in counts[len(x_parts):]]


def _pieces(x_rows: list[int], y_rows: list[int], y_parts: list):
    """Per partition of ``X``: ``(parts of y, first row in the first, rows)`` covering its rows."""
    y_starts = np.concatenate([[0], np.cumsum(y_rows)]).astype(np.int64)
    start = 0
    for rows in x_rows:
        first = int(np.searchsorted(y_starts, start, side="right")) - 1
        last = int(np.searchsorted(y_starts, start + rows, side="left"))
        chosen = [j for j in range(max(first, 0), max(last, first + 1)) if y_rows[j]] if rows else []
        offset = start - int(y_starts[chosen[0]]) if chosen else 0
        yield [y_parts[j] for j in chosen], offset, rows
        start += rows


def _join_part(frame, pieces, *, name: str):
    import dask

    parts, offset, rows = pieces
    return dask.delayed(_join_frames)(frame, parts, offset=offset, rows=rows, name=name)


def _join_frames(frame, parts, *, offset: int, rows: int, name: str):
    import pandas as pd

    values = pd.concat(parts).to_numpy()[offset:offset + rows] if parts else np.zeros(0)
    if len(frame) != rows or len(values) != rows:  # the data changed between the count and the read
        raise DataError(f"a partition of X has {len(frame)} rows where {rows} were counted")
    return frame.reset_index(drop=True).assign(**{name: values})


def check_fit_input(est, X, y, regression: bool = False):
    """Validate in-memory ``X, y`` as scikit-learn does; returns them (a DataFrame stays one).

    Sets ``n_features_in_`` (and ``feature_names_in_`` for string column names) on ``est``. With
    ``regression``, ``y`` must be finite numbers (float64).
    """
    import pandas as pd
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_array, check_consistent_length, column_or_1d, validate_data

    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None "
                         "(or name the class column of a dataset with target=)")
    if isinstance(X, pd.DataFrame):
        validate_data(est, X, skip_check_array=True, reset=True)
        if X.shape[0] == 0:
            raise ValueError("Found array with 0 sample(s) (shape=(0, n)) while a minimum of 1 is required.")
    else:
        X = validate_data(est, X, dtype=None, ensure_all_finite="allow-nan", reset=True)
        if X.dtype.kind == "O":  # numbers as objects are numbers
            try:
                X = X.astype(np.float64)
            except (TypeError, ValueError):
                pass
    y = column_or_1d(y, warn=True) if not isinstance(y, pd.Series) else y
    whole = not regression and isinstance(y, np.ndarray) and y.dtype.kind in "biu"  # integer or boolean labels
    if not whole:  # a NaN label is no class: its row is skipped as a null label's (an infinity is refused)
        check_array(np.asarray(y), ensure_2d=False, dtype=None,
                    ensure_all_finite=True if regression else "allow-nan", input_name="y")
    check_consistent_length(X, y)
    if regression:
        values = check_array(np.asarray(y), ensure_2d=False, dtype=np.float64, ensure_all_finite=True, input_name="y")
        # a named Series keeps its name, as the classifier's does: the target's name, as a dataset's column would
        return X, (pd.Series(values, name=y.name) if isinstance(y, pd.Series) and y.name is not None else values)
    labels = np.asarray(y)
    labels = labels[~pd.isna(labels)] if labels.dtype.kind in "fO" else labels
    if labels.size == 0:
        raise ValueError("Input y contains NaN only: no row has a label")
    if whole:  # 1-D whole numbers: "binary" or "multiclass" to check_classification_targets, its warning said here
        n_classes = len(np.unique(labels))
        if n_classes > 2 and labels.size > 20 and n_classes > round(0.5 * labels.size):
            warnings.warn(MANY_CLASSES, UserWarning)
    else:
        check_classification_targets(labels)
        n_classes = len(pd.unique(labels))
    if n_classes < 2:
        raise ValueError(f"y has one class ({labels[0]!r}): a classifier needs at least 2 classes")
    return X, y


MANY_CLASSES = ("The number of unique classes is greater than 50% of the number of samples. `y` could represent a "
                "regression problem, not a classification problem.")
"""scikit-learn's warning (``check_classification_targets``) when integer labels look like a regression target."""


def fit_input(est, X, y, target: str | None, sample_weight, regression: bool = False):
    """What an estimator's ``fit`` hands its functional core, from any input form: ``(data, labels,
    target, sample_weight, sklearn_input)``. ``X, y`` in memory (``sklearn_input``) checked by
    :func:`check_fit_input`; a dask ``X`` and ``y`` (and a dask ``sample_weight``) joined into one dask
    DataFrame (:func:`join_dask`); a dataset, or a dask frame with ``target=``, as given."""
    sklearn_input = not (is_dataset(X) or is_dask(X)) and target is None
    data, labels = X, y
    if sklearn_input:
        data, labels = check_fit_input(est, X, y, regression=regression)
    elif is_dask(X) and y is not None:
        data, target = join_dask(X, y, target)
        labels = None
    if is_dask(X) and sample_weight is not None and not isinstance(sample_weight, str):
        data, sample_weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
    return data, labels, target, sample_weight, sklearn_input


def check_predict_input(est, X, features: list[str]):
    """In-memory ``X`` as scikit-learn checks it at prediction; returns a pandas DataFrame of ``features``.

    A DataFrame given to a model fitted on named columns is matched by name
    (in the fitted order; columns beyond them, such as the target, are left
    aside); otherwise columns are taken in order.
    """
    import pandas as pd
    from sklearn.utils.validation import validate_data

    named = hasattr(est, "feature_names_in_")
    if isinstance(X, pd.DataFrame):
        if named and X.shape[1] > len(features) and set(features) <= set(map(str, X.columns)):
            X = X[list(features)]  # extra columns (the target, an id) are left aside, as a dataset's are
        validate_data(est, X, skip_check_array=True, reset=False)
        if named:
            return X
        if X.shape[1] != len(features):
            raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                             f"{len(features)} features as input")
        return pd.DataFrame(X.to_numpy(), columns=features)
    X = validate_data(est, X, dtype=None, ensure_all_finite="allow-nan", reset=False)
    if X.dtype.kind == "O":
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            pass
    return pd.DataFrame(X, columns=features)


def folds_of_splits(splits, n_rows: int) -> tuple[int, np.ndarray]:
    """``(k, fold)``: scikit-learn's ``(train, test)`` splits as a fold per row (test set ``i`` is fold ``i``).

    The test sets must partition the rows, and each split's training rows must be the other rows
    (the fold trees are grown that way).
    """
    try:
        splits = [(np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64)) for train, test in splits]
    except (TypeError, ValueError):
        raise ParameterError("cv must be an integer >= 2, a list of (train, test) index splits, or None") from None
    fold = np.full(n_rows, -1, dtype=np.int64)
    for i, (train, test) in enumerate(splits):
        if test.size and (test.min() < 0 or test.max() >= n_rows):
            raise ParameterError(f"cv split {i}: test indices must be in 0..{n_rows - 1}")
        if (fold[test] >= 0).any():
            raise ParameterError(f"cv split {i}: its test rows are in another split's test set too: the test "
                             "sets must partition the rows (KFold, GroupKFold, LeaveOneGroupOut...)")
        fold[test] = i
        if train.size + test.size != n_rows or np.intersect1d(train, test).size:
            raise ParameterError(f"cv split {i}: the training rows must be all the rows not in its test set")
    if len(splits) < 2 or (fold < 0).any():
        raise ParameterError("cv splits: at least 2, and every row in one test set")
    return len(splits), fold


def with_column(X, values: np.ndarray, name: str):
    """In-memory ``X`` as a DataFrame (an array's columns named ``x0, x1, ...``) with one more column."""
    import pandas as pd

    frame = X.reset_index(drop=True) if isinstance(X, pd.DataFrame) else \
        pd.DataFrame(X, columns=[f"x{i}" for i in range(np.shape(X)[1])])
    while name in frame.columns:
        name = "_" + name
    return frame.assign(**{name: values}), name
