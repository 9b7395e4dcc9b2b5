"""``DaskForestClassifier``: the scikit-learn face of :func:`dasktree.forest_fit.fit_forest`."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .errors import InputError
from .estimator_input import check_fit_input, check_predict_input, dask_frame, is_dask, is_dataset, join_dask
from .forest_fit import fit_forest
from .fitted import NotFittedError
from .model.forest_model import ForestModel, load_forest
from .model.predict import as_table
from .params import declared_params, install_estimator_params
from .params.forest import FOREST_PARAMS, NOT_FOR_FORESTS

__all__ = ["DaskForestClassifier", "load_forest_estimator"]

_DOC = """A random forest whose trees grow together, one level pass for all of them, on Dask or in process.

    Each member counts each row its Poisson(1) multiplicity drawn from a hash of the row's content
    (the same bags whatever the files, parts or workers: the same model, byte for byte), and
    searches ``max_features`` attributes drawn per (member, node). ``predict_proba`` averages the
    members' leaf class probabilities, as scikit-learn's ``RandomForestClassifier`` does.

    Parameters
    ----------
    {parameters}
    """

MEMBER_PARAMS = tuple(p for p in declared_params() if p.name not in NOT_FOR_FORESTS)
"""The single tree's parameters a forest's members take (and the runtime ones)."""


class DaskForestClassifier(ClassifierMixin, BaseEstimator):
    # __init__ and the docstring: dasktree.params.install_estimator_params, below the class

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def __sklearn_clone__(self):
        """A clone shares the ``client`` (a connection, not a parameter to copy)."""
        from sklearn.base import clone

        params = self.get_params(deep=False)
        return type(self)(**{k: v if k == "client" else clone(v, safe=False) for k, v in params.items()})

    def _values(self) -> dict:
        runtime = {p.name for p in MEMBER_PARAMS if p.layer == "runtime"}
        return {p.name: getattr(self, p.name) for p in (*FOREST_PARAMS, *MEMBER_PARAMS) if p.name not in runtime}

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, storage_options: dict | None = None) -> "DaskForestClassifier":
        """Learn from ``X, y`` in memory or on dask, or from a dataset ``X`` with ``target=COLUMN``
        (the input forms of :meth:`dasktree.DaskTreeClassifier.fit`). ``key``: a column keying the
        rows for the bags' hash (default: each row's values in the features and the target). With
        ``X, y`` in memory the hash names the columns by their places (an array and a DataFrame of
        the same values give one forest); a dataset's, a dask frame's and ``target=``'s by their names."""
        values = self._values()
        for name in ("n_features_in_", "feature_names_in_", "oob_decision_function_", "oob_score_"):
            self.__dict__.pop(name, None)
        in_memory = not (is_dataset(X) or is_dask(X))
        data, labels = X, y
        if in_memory and target is None:
            data, labels = check_fit_input(self, X, y)
        elif is_dask(X) and y is not None:
            data, target = join_dask(X, y, target)
            labels = None
        if is_dask(X) and sample_weight is not None and not isinstance(sample_weight, str):
            data, sample_weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
        model = fit_forest(data, labels, target=target, features=features, exclude=exclude, nominal=nominal, key=key,
                           storage_options=storage_options, sample_weight=sample_weight, client=self.client,
                           scheduler=self.scheduler, cache=self.cache, progress=self.progress,
                           security=self.security, memory_limit=self.memory_limit,
                           positional=in_memory and target is None, **values)
        self._set_model(model, names=not (in_memory and target is None))
        self._sklearn_input = in_memory and target is None
        return self

    def _set_model(self, model: ForestModel, names: bool = True) -> None:
        self.model_ = model
        self.classes_ = np.asarray(model.classes)
        self.n_classes_ = len(model.classes)
        if names:
            self.n_features_in_ = len(model.features)
            self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_ = model.report
        self.run_ = model.run
        if "oob_score" in model.report:
            self.oob_score_ = model.report["oob_score"]
        if "oob_decision_function" in model.run:
            self.oob_decision_function_ = model.run["oob_decision_function"]

    @classmethod
    def from_model(cls, model: ForestModel) -> "DaskForestClassifier":
        """A fitted estimator around a forest model (its parameters as the model says)."""
        known = {p.name for p in (*FOREST_PARAMS, *MEMBER_PARAMS)}
        est = cls(**{k: v for k, v in model.params.items() if k in known})
        est._set_model(model)
        return est

    def _check_fitted(self) -> ForestModel:
        model = getattr(self, "model_", None)
        if model is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' first.")
        return model

    @property
    def estimators_(self) -> list:
        """The members as flat trees (:class:`~dasktree.model.model.TreeModel`)."""
        return self._check_fitted().members

    @property
    def feature_importances_(self) -> np.ndarray:
        return self._check_fitted().feature_importances()

    def _table(self, X):
        model = self._check_fitted()
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return as_table(model, X)

    # ---------------------------------------------------------------- predict
    def predict_proba(self, X):
        """The members' mean class probabilities, shape (n_rows, n_classes), in ``classes_`` order;
        a dask array for a dask ``X`` (lazy, partition by partition)."""
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

    def predict(self, X):
        """Predicted class labels: the class of the highest mean probability (a dask array for dask ``X``)."""
        proba = self.predict_proba(X)
        if is_dask(X):
            return proba.argmax(axis=1).map_blocks(lambda i: self.classes_[i], dtype=self.classes_.dtype)
        return self.classes_[np.argmax(proba, axis=1)] if len(proba) else self.classes_[:0]

    def save(self, path) -> None:
        """Write the forest as one JSON model file (:func:`load_forest_estimator` reads it)."""
        self._check_fitted().save(path)

    def to_sql(self, **options) -> str:
        """The forest as one SQL ``SELECT`` (:func:`dasktree.export.forest_sql.forest_sql_select`:
        ``table=``, ``dialect=``, ``keep=``...), equal to :meth:`predict_proba` and :meth:`predict`."""
        from .export.forest_sql import forest_sql_select

        return forest_sql_select(self._check_fitted(), **options)

    def to_pmml(self) -> str:
        """The forest as PMML 4.4 text: a ``MiningModel`` averaging a ``TreeModel`` segment per member
        (:func:`dasktree.export.forest_pmml.forest_pmml_text`)."""
        from .export.forest_pmml import forest_pmml_text

        return forest_pmml_text(self._check_fitted())

    def to_onnx(self) -> bytes:
        """The forest as ONNX bytes: a ``TreeEnsemble`` per member and their mean
        (:mod:`dasktree.export.forest_onnx`), equal to :meth:`predict_proba` on every row."""
        from .export.forest_onnx import forest_onnx_bytes

        return forest_onnx_bytes(self._check_fitted())


def _proba_frame(frame, *, model: ForestModel) -> np.ndarray:
    from .io.sources import frame_to_table

    return model.predict_proba_table(frame_to_table(frame.reset_index(drop=True)))


def load_forest_estimator(path) -> DaskForestClassifier:
    """A fitted :class:`DaskForestClassifier` from a forest's JSON model file."""
    try:
        return DaskForestClassifier.from_model(load_forest(path))
    except NotFittedError as exc:  # pragma: no cover - a loaded model is fitted
        raise InputError(str(exc)) from None


install_estimator_params(DaskForestClassifier, _DOC, (*FOREST_PARAMS, *MEMBER_PARAMS))
