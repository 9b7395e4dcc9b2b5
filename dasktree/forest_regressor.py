"""``DaskForestRegressor``: the scikit-learn face of :func:`dasktree.forest_regress.fit_forest_regression`."""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .estimator_input import check_fit_input, check_predict_input, dask_frame, is_dask, is_dataset, join_dask
from .fitted import NotFittedError
from .forest_regress import REGRESSION_MAX_FEATURES, fit_forest_regression
from .model.forest_model import ForestModel
from .model.predict import as_table
from .params import install_estimator_params
from .params.forest import FOREST_PARAMS, NOT_FOR_FORESTS
from .params.regression import REGRESSION_PARAMS

__all__ = ["DaskForestRegressor"]

_DOC = """A random forest of regression trees grown together, one level pass for all of them, on Dask or in process.

    Each member counts each row its Poisson(1) multiplicity drawn from a hash of the row's content
    (the same bags whatever the files, parts or workers: the same model, byte for byte), its sums
    exact integers (the target in fixed point times the multiplicity), and searches
    ``max_features`` attributes drawn per (member, node) (default all, as scikit-learn's
    ``RandomForestRegressor``). ``predict`` averages the members' leaf means.

    Parameters
    ----------
    {parameters}
    """

FOREST_REGRESSION_PARAMS = tuple(
    dataclasses.replace(p, default=REGRESSION_MAX_FEATURES) if p.name == "max_features" else p for p in FOREST_PARAMS)
"""The forest's parameters for regression: ``max_features`` defaults to 1.0 (every attribute)."""

MEMBER_REGRESSION_PARAMS = tuple(p for p in REGRESSION_PARAMS if p.name not in (*NOT_FOR_FORESTS, "max_leaf_nodes"))
"""A regression tree's parameters a regression forest's members take (and the runtime ones)."""


class DaskForestRegressor(RegressorMixin, BaseEstimator):
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
        runtime = {p.name for p in MEMBER_REGRESSION_PARAMS if p.layer == "runtime"}
        return {p.name: getattr(self, p.name) for p in (*FOREST_REGRESSION_PARAMS, *MEMBER_REGRESSION_PARAMS)
                if p.name not in runtime}

    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, storage_options: dict | None = None) -> "DaskForestRegressor":
        """Learn from ``X, y`` in memory or on dask, or from a dataset ``X`` with ``target=COLUMN``
        (:meth:`dasktree.DaskForestClassifier.fit`'s input forms and bags)."""
        values = self._values()
        for name in ("n_features_in_", "feature_names_in_", "oob_prediction_", "oob_score_"):
            self.__dict__.pop(name, None)
        in_memory = not (is_dataset(X) or is_dask(X))
        data, labels = X, y
        if in_memory and target is None:
            data, labels = check_fit_input(self, X, y, regression=True)
        elif is_dask(X) and y is not None:
            data, target = join_dask(X, y, target)
            labels = None
        if is_dask(X) and sample_weight is not None and not isinstance(sample_weight, str):
            data, sample_weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
        model = fit_forest_regression(
            data, labels, target=target, features=features, exclude=exclude, nominal=nominal, key=key,
            storage_options=storage_options, sample_weight=sample_weight, client=self.client,
            scheduler=self.scheduler, cache=self.cache, progress=self.progress, security=self.security,
            memory_limit=self.memory_limit, positional=in_memory and target is None, **values)
        self._set_model(model, names=not (in_memory and target is None))
        self._sklearn_input = in_memory and target is None
        return self

    def _set_model(self, model: ForestModel, names: bool = True) -> None:
        self.model_ = model
        if names:
            self.n_features_in_ = len(model.features)
            self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_ = model.report
        self.run_ = model.run
        if "oob_score" in model.report:
            self.oob_score_ = model.report["oob_score"]
        if "oob_prediction" in model.run:
            self.oob_prediction_ = model.run["oob_prediction"]

    @classmethod
    def from_model(cls, model: ForestModel) -> "DaskForestRegressor":
        """A fitted estimator around a regression forest model (its parameters as the model says)."""
        known = {p.name for p in (*FOREST_REGRESSION_PARAMS, *MEMBER_REGRESSION_PARAMS)}
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
        """Each member's squared-error decrease per feature normalised, averaged, normalised again."""
        return self._check_fitted().feature_importances()

    def predict(self, X):
        """The members' mean leaf mean of each row (float64); a lazy dask Series for a dask ``X``."""
        model = self._check_fitted()
        if is_dask(X):
            import pandas as pd

            frame = dask_frame(X, model.features)
            return frame.map_partitions(_predict_frame, model=model,
                                        meta=pd.Series(dtype="float64", name="prediction"))
        if is_dataset(X):
            from .io.sources import open_path

            source = open_path(X)
            parts = [model.predict_values(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts) if parts else np.zeros(0)
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return model.predict_values(as_table(model, X))

    def save(self, path) -> None:
        """Write the forest as one JSON model file (:func:`dasktree.model.forest_model.load_forest` reads it)."""
        self._check_fitted().save(path)

    def to_sql(self, **options) -> str:
        """The forest as one SQL ``SELECT`` of ``prediction`` (:func:`dasktree.export.forest_sql.forest_sql_select`:
        ``table=``, ``dialect=``, ``keep=``...), equal to :meth:`predict` to the bit."""
        from .export.forest_sql import forest_sql_select

        return forest_sql_select(self._check_fitted(), **options)

    def to_pmml(self) -> str:
        """The forest as PMML 4.4 text: a regression ``MiningModel`` averaging a ``TreeModel`` segment
        per member (:func:`dasktree.export.forest_pmml.forest_pmml_text`)."""
        from .export.forest_pmml import forest_pmml_text

        return forest_pmml_text(self._check_fitted())

    def to_onnx(self) -> bytes:
        """The forest as ONNX bytes: a ``TreeEnsemble`` per member and their mean ``prediction``
        (:mod:`dasktree.export.forest_onnx`), equal to :meth:`predict` on every row."""
        from .export.forest_onnx import forest_onnx_bytes

        return forest_onnx_bytes(self._check_fitted())


def _predict_frame(frame, *, model: ForestModel):
    import pandas as pd

    from .io.sources import frame_to_table

    values = model.predict_values(frame_to_table(frame.reset_index(drop=True)))
    return pd.Series(values, index=frame.index, name="prediction")


install_estimator_params(DaskForestRegressor, _DOC, (*FOREST_REGRESSION_PARAMS, *MEMBER_REGRESSION_PARAMS))
