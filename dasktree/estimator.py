"""``DaskTreeClassifier``: the scikit-learn-style face of :func:`dasktree.fit.fit`."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .errors import InputError
from .fit import fit_validated
from .engine.predict import predict_dataset, proba_of
from .estimator_input import check_predict_input, dask_frame, is_dask, is_dataset
from .fitted import FittedModel, NotFittedError
from .model.text import export_dot, export_text
from .model.grid import GridResults
from .model.model import Model
from .model.model import load as load_model
from .model.predict import as_table, predict_table, prediction_columns
from .model.task import CLASSIFICATION
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
    _task = CLASSIFICATION

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

    _declared = staticmethod(declared_params)  # read at each fit: the declaration is the one place

    def _settings(self, values: dict):
        """The parameters validated, once per fit, before the input is read."""
        return validate(values)

    _fit_model = staticmethod(fit_validated)

    def _set_model(self, model: Model, names: bool = True) -> None:
        super()._set_model(model, names)
        self.classes_ = np.asarray(model.classes)

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
        return proba_of(self._check_fitted(), X, self._table)

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

    def export_dot(self) -> str:
        return export_dot(self._check_fitted())


install_estimator_params(DaskTreeClassifier, _DOC)


def _predict_frame(frame, *, model: Model, keep: tuple):
    from .io.sources import frame_to_table

    out = predict_table(model, frame_to_table(frame.reset_index(drop=True)), keep).to_pandas()
    out.index = frame.index
    return out


def load(path):
    """A fitted :class:`DaskTreeClassifier` (or, for a regression model,
    :class:`~dasktree.regressor.DaskTreeRegressor`) from a JSON model file."""
    from .regressor import DaskTreeRegressor

    model = load_model(path)
    return next(cls for cls in (DaskTreeClassifier, DaskTreeRegressor) if cls._task is model.task).from_model(model)
