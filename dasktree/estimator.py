"""``DaskTreeClassifier``: the scikit-learn-style face of :func:`dasktree.fit.fit`."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .errors import InputError, ParameterError
from .fit import fit_validated
from .engine.predict import predict_dataset
from .estimator_input import (
    check_fit_input,
    check_predict_input,
    dask_frame,
    folds_of_splits,
    is_dask,
    is_dataset,
    join_dask,
    with_column,
)
from .fitted import FittedModel, NotFittedError
from .model.export import export_dot, export_text
from .model.grid import GridResults
from .model.model import Model
from .model.model import load as load_model
from .model.predict import as_table, predict_table, prediction_columns
from .params import declared_params, install_estimator_params, validate

__all__ = ["DaskTreeClassifier", "NotFittedError", "load"]


_DOC = """A decision tree grown one level pass at a time, on Dask or in process.

    The parameters are declared once, in :mod:`dasktree.params.declared`; this
    class's ``__init__`` (keyword-only, storing them) and the section below are
    made from that declaration.

    Parameters
    ----------
    {parameters}
    """


class DaskTreeClassifier(FittedModel, GridResults, ClassifierMixin, BaseEstimator):
    # __init__ and the docstring: dasktree.params.install_estimator_params, below the class

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value follows the test's learned default child
        tags.input_tags.string = True  # a DataFrame's string columns are nominal attributes
        tags.input_tags.categorical = True
        return tags

    def __sklearn_clone__(self):
        """A clone shares the ``client`` (a connection, not a parameter to copy)."""
        from sklearn.base import clone

        params = self.get_params(deep=False)
        return type(self)(**{k: v if k == "client" else clone(v, safe=False) for k, v in params.items()})

    def _settings(self):
        """The parameters validated (once per fit), all but the runtime ones; ``cv`` given as
        (train, test) splits counts as ``cv=len(splits)`` (the splits are checked against the rows later)."""
        values = {p.name: getattr(self, p.name) for p in declared_params() if p.layer != "runtime"}
        if _are_splits(values["cv"]):
            try:
                values["cv"] = len(values["cv"])
            except TypeError:
                raise ParameterError("cv must be an integer >= 2, a list of (train, test) index splits, "
                                     f"or None, got {values['cv']!r}") from None
        return validate(values)

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, folds: str | None = None, storage_options: dict | None = None,
            checkpoint: str | None = None) -> "DaskTreeClassifier":
        """Learn from ``X, y`` in memory or on dask, or from a dataset ``X`` with ``target=COLUMN``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features), DataFrame, dask collection, or dataset
            numpy / pandas (validated as scikit-learn does); a dask DataFrame or
            2-D dask array (with ``y`` a dask Series or array of the same
            partitions, or ``target=`` a column of the frame); or a Parquet file,
            directory, glob or fsspec URL (with ``storage_options``) and ``target=``; or the
            same of CSV files (``*.csv`` / ``*.tsv``, compressed or not, or :class:`dasktree.CSV`).
        y : array-like of shape (n_rows,), optional
            Class labels.
        sample_weight : array-like of shape (n_rows,), dask Series or array, or str, optional
            Row weights, counted as whole rows (:mod:`dasktree.io.weights`: integer
            weights as they are, others in fixed point; weight 0 leaves a row out):
            an array beside in-memory ``X``; a dask Series or array of ``X``'s
            partitions beside dask ``X``; or the name of a column of ``X`` (a
            dataset's way).
        key, folds : str, optional
            With ``cv``: a column keying the rows for the fold hash (default: each
            row's values in the columns the fit uses), or a column
            of the user's own folds ``0..cv-1``.
        checkpoint : str or path, optional
            A Parquet dataset's fit saves what it needs to continue here after every
            level (:mod:`dasktree.engine.checkpoint`); the same fit started again
            goes on from the last complete level, with the same model.
        """
        settings = self._settings()
        splits = _are_splits(self.cv)
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        in_memory = not (is_dataset(X) or is_dask(X))
        data, labels = X, y
        if in_memory and target is None:
            data, labels = check_fit_input(self, X, y)
        if splits:  # scikit-learn's habit: cv as (train, test) splits; their test sets become the folds
            if not (in_memory and target is None) or folds is not None:
                raise ParameterError("cv as a list of (train, test) splits is for in-memory X, y; with a dataset "
                                 "give cv=K and folds=COLUMN")
            _, fold = folds_of_splits(self.cv, len(labels))
            data, folds = with_column(data, fold, "fold")
        elif is_dask(X) and y is not None:
            data, target = join_dask(X, y, target)
            labels = None
        if is_dask(X) and sample_weight is not None and not isinstance(sample_weight, str):
            data, sample_weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
        model = fit_validated(
            data, labels, settings, target=target, features=features, exclude=exclude, nominal=nominal, key=key,
            folds=folds, storage_options=storage_options, sample_weight=sample_weight, client=self.client,
            scheduler=self.scheduler, cache=self.cache, progress=self.progress, checkpoint=checkpoint,
            security=self.security, memory_limit=self.memory_limit,
        )
        self._set_model(model, names=not (in_memory and target is None))
        self._sklearn_input = in_memory and target is None
        return self

    def _set_model(self, model: Model, names: bool = True) -> None:
        self.model_ = model
        self.classes_ = np.asarray(model.classes)
        if names:  # in-memory X: scikit-learn's validation set these from X itself
            self.n_features_in_ = len(model.features)
            self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_ = model.report
        self.run_ = model.run
        self.tree_ = model.tree

    def _table(self, X):
        model = self._check_fitted()
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return as_table(model, X)

    # ---------------------------------------------------------------- predict
    def predict_proba(self, X):
        """Class probabilities, shape (n_rows, n_classes), columns in ``classes_`` order.

        On a dask DataFrame or array: a dask array, computed lazily partition by partition.
        """
        model = self._check_fitted()
        if is_dask(X):
            frame = dask_frame(X, model.features)
            return frame.map_partitions(_proba_frame, model=model,
                                        meta=np.zeros((0, len(model.classes)), dtype=np.float64))
        if is_dataset(X):
            from .io.sources import open_path

            source = open_path(X)
            parts = [model.predict_proba_table(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts) if parts else np.zeros((0, len(model.classes)))
        return model.predict_proba_table(self._table(X))

    def predict(self, X, *, out: str | None = None, keep: Sequence[str] = (), overwrite: bool = False):
        """Predicted class labels.

        On a dask DataFrame or array: a dask Series of labels named
        ``prediction``, lazy, one partition per input partition (dask-ml's
        habit; :meth:`predict_columns` gives the probabilities too). On a
        dataset path with ``out``: writes Parquet (``prediction`` and one
        ``proba_<class>`` column per class, plus ``keep`` columns) into the
        directory ``out`` atomically and returns the files written.
        """
        model = self._check_fitted()
        if out is not None:
            if not is_dataset(X):
                raise InputError("out= is for dataset inputs (a Parquet path or URL)")
            return predict_dataset(model, X, out, keep=keep, overwrite=overwrite,
                                   client=self.client, scheduler=self.scheduler, security=self.security)
        if is_dask(X):
            return self.predict_columns(X)["prediction"]
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)] if len(proba) else self.classes_[:0]

    def predict_columns(self, X, *, keep: Sequence[str] = ()):
        """``prediction`` and ``proba_<class>`` columns (plus ``keep`` columns of ``X``), as the
        Parquet output of :meth:`predict`: a dask DataFrame for dask ``X`` (lazy), else pandas."""
        import pandas as pd

        model = self._check_fitted()
        if is_dask(X):
            frame = dask_frame(X, model.features)
            meta = pd.DataFrame({c: pd.Series(dtype=frame._meta[c].dtype) for c in keep})
            for c in prediction_columns(model):
                meta[c] = pd.Series(dtype="float64")
            meta["prediction"] = pd.Series(np.asarray(model.classes)[:0])
            return frame.map_partitions(_predict_frame, model=model, keep=tuple(keep), meta=meta)
        return predict_table(model, self._table(X) if not keep else as_table(model, X), keep).to_pandas()

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy on ``X, y`` (weighted by ``sample_weight``); on dask collections, computed
        on the cluster, partition by partition (``y`` and ``sample_weight`` paired with ``X`` row by row,
        whatever their partitions: :func:`~dasktree.estimator_input.join_dask`)."""
        if is_dask(X):
            from .engine.score import dask_score

            return dask_score(self._check_fitted(), X, y, sample_weight, client=self.client)
        return super().score(X, y, sample_weight=sample_weight)

    # ---------------------------------------------------------------- pruning
    def prune_model(self, alpha: float | None = None, *, mode: str | None = None,
                    confidence: float | None = None) -> "DaskTreeClassifier":
        """Prune the grown tree again, without a pass: at ``alpha``, or by ``mode``
        ("cv", "cv-min", "pessimistic", "none"). The CV report and the cp table
        follow. Returns ``self``."""
        model = self._check_fitted()
        confidence = self.confidence if confidence is None else confidence
        from .model.pruning import prune_model

        self._set_model(prune_model(model, alpha, mode=mode, confidence=confidence))
        return self

    @property
    def cp_table_(self):
        """rpart's ``printcp`` as a DataFrame: per subtree of the weakest-link sequence,
        ``alpha``, ``leaves``, ``train_error``, ``cv_error``, ``cv_se`` (NaN without ``cv``)."""
        import pandas as pd

        from .model.pruning import cp_rows

        table = cp_rows(self._check_fitted())
        return pd.DataFrame(table, columns=["alpha", "leaves", "train_error", "cv_error", "cv_se"]).astype(
            {"cv_error": "float64", "cv_se": "float64"})

    @property
    def ccp_alpha_(self) -> float | None:
        """The alpha the tree was pruned at (None: pessimistic pruning or none)."""
        return (self._check_fitted().report.get("prune") or {}).get("alpha")

    # ---------------------------------------------------------------- model
    @property
    def fold_trees_(self) -> list["DaskTreeClassifier"]:
        """Each fold tree of the cross-validation forest as a fitted classifier (repeat-major),
        pruned as the main tree was (as the CV report counts it). A model keeps them only when fitted
        with ``cv`` and ``keep_fold_trees=True``: otherwise the list is empty, with a warning saying why."""
        import warnings

        from .model.pruning import pruned_fold_trees

        model = self._check_fitted()
        if not model.fold_trees:
            why = ("it was fitted with cv but not keep_fold_trees=True, so its fold trees were not kept (its CV "
                   "report and cp table were)") if model.report.get("cv") else \
                "it was fitted without cv, so it has no fold trees"
            warnings.warn(f"fold_trees_ is empty: {why}", UserWarning, stacklevel=2)
        out = []
        for tree in pruned_fold_trees(model):
            fold = Model(spec=model.spec, target=model.target, tree=tree, params=model.params)
            out.append(DaskTreeClassifier.from_model(fold))
        return out

    @property
    def cv_report_(self) -> dict | None:
        """The cross-validation report (accuracy mean and std, per fold, confusion matrix), or None."""
        return self._check_fitted().report.get("cv")

    def export_dot(self) -> str:
        return export_dot(self._check_fitted())


install_estimator_params(DaskTreeClassifier, _DOC)


def _are_splits(cv) -> bool:
    """Whether ``cv`` is scikit-learn's (train, test) splits rather than a number of folds."""
    return cv is not None and not isinstance(cv, (int, np.integer))


def _predict_frame(frame, *, model: Model, keep: tuple):
    from .io.sources import frame_to_table

    out = predict_table(model, frame_to_table(frame.reset_index(drop=True)), keep).to_pandas()
    out.index = frame.index
    return out


def _proba_frame(frame, *, model: Model) -> np.ndarray:
    from .io.sources import frame_to_table

    return model.predict_proba_table(frame_to_table(frame.reset_index(drop=True)))


def load(path):
    """A fitted :class:`DaskTreeClassifier` (or, for a regression model,
    :class:`~dasktree.regress.estimator.DaskTreeRegressor`) from a JSON model file."""
    model = load_model(path)
    if model.task == "regression":
        from .regress.estimator import DaskTreeRegressor

        return DaskTreeRegressor.from_model(model)
    return DaskTreeClassifier.from_model(model)
