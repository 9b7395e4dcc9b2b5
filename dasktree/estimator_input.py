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

import numpy as np

from .errors import DataError, InputError, ParameterError

__all__ = ["is_dataset", "is_dask", "check_fit_input", "check_predict_input", "dask_frame", "dask_partitions", "join_dask",
           "folds_of_splits", "with_column"]


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


def dask_partitions(values, name: str, n: int) -> list:
    """A dask Series' or array's partitions as delayed values; there must be ``n`` of them (``X``'s)."""
    import dask.array as da

    if not is_dask(values):
        raise InputError(f"score on dask X needs {name} as a dask Series or array of the same partitions")
    parts = list(values.to_delayed().ravel()) if isinstance(values, da.Array) else values.to_delayed()
    if len(parts) != n:
        raise InputError(f"X has {n} partitions but {name} has {len(parts)}")
    return parts


def join_dask(X, y, target: str | None, what: str = "y"):
    """A dask DataFrame of ``X``'s columns and ``y`` as column ``target`` (made unique), partition by
    partition; and that column's name. ``what`` names ``y`` in errors (``y``, ``sample_weight``).

    ``X`` and ``y`` must have the same number of partitions, and each pair the
    same number of rows (checked as the partitions are read: a mismatch is a
    :class:`~dasktree.errors.DataError`).
    """
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    frame = dask_frame(X)
    if isinstance(y, da.Array):
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise InputError(f"{what} must be 1-D, got a dask array of shape {y.shape}")
        if isinstance(X, da.Array) and X.chunks[0] != y.chunks[0]:
            raise InputError(f"X and {what} must have the same row chunks, got {X.chunks[0]} and {y.chunks[0]}")
        y = dd.from_dask_array(y)
    if isinstance(y, dd.DataFrame):
        if len(y.columns) != 1:
            raise InputError(f"{what} must be one column, got {len(y.columns)}")
        y = y[y.columns[0]]
    if not isinstance(y, dd.Series):
        raise InputError(f"with dask X, {what} must be a dask Series or array, got {type(y).__name__}")
    if frame.npartitions != y.npartitions:
        raise InputError(f"X has {frame.npartitions} partitions but {what} has {y.npartitions}: give them "
                         "matching partitions (the same row chunks)")
    name = target or (str(y.name) if y.name is not None else "target")
    while name in frame.columns:
        name = "_" + name
    meta = frame._meta.assign(**{name: pd.Series(y._meta.to_numpy(), dtype=y._meta.dtype)})
    parts = [frame.to_delayed(), y.to_delayed()]
    joined = [_join_part(fx, fy, name=name, index=i, what=what) for i, (fx, fy) in enumerate(zip(*parts))]
    return dd.from_delayed(joined, meta=meta, verify_meta=False), name


def _join_part(frame, y, *, name: str, index: int, what: str):
    import dask

    return dask.delayed(_join_frames)(frame, y, name=name, index=index, what=what)


def _join_frames(frame, y, *, name: str, index: int, what: str = "y"):
    if len(frame) != len(y):
        raise DataError(f"partition {index}: X has {len(frame)} rows but {what} has {len(y)}")
    return frame.reset_index(drop=True).assign(**{name: y.to_numpy()})


def check_fit_input(est, X, y):
    """Validate in-memory ``X, y`` as scikit-learn does; returns them (a DataFrame stays one).

    Sets ``n_features_in_`` (and ``feature_names_in_`` for string column names) on ``est``.
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
    check_array(np.asarray(y), ensure_2d=False, dtype=None, ensure_all_finite=True, input_name="y")
    check_consistent_length(X, y)
    check_classification_targets(y)
    if len(pd.unique(np.asarray(y))) < 2:
        raise ValueError(f"y has one class ({np.asarray(y)[0]!r}): a classifier needs at least 2 classes")
    return X, y


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
