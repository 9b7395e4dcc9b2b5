"""What both estimators (:class:`~dasktree.estimator.DaskTreeClassifier`,
:class:`~dasktree.regress.estimator.DaskTreeRegressor`) do with the model they hold: make one from a
model, check it is fitted, save, show and export it."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError as SklearnNotFittedError

from .errors import InputError
from .model.export import export_text
from .model.model import Model

__all__ = ["FittedModel", "NotFittedError"]


class NotFittedError(InputError, SklearnNotFittedError):
    """Predicting before fitting: scikit-learn's error, and a dasktree input error (one line)."""


class FittedModel:
    """What both estimators do with the model they hold (``model_``): made from one, checked fitted,
    saved, shown, its feature importances."""

    @classmethod
    def from_model(cls, model: Model):
        """A fitted estimator holding ``model``, with the parameters it was learned with."""
        names = set(cls._get_param_names())
        est = cls(**{k: v for k, v in model.params.items() if k in names})
        est._set_model(model)
        return est

    def _check_fitted(self) -> Model:
        if not hasattr(self, "model_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return self.model_

    @property
    def feature_importances_(self) -> np.ndarray:
        return self._check_fitted().feature_importances()

    def export_text(self, max_depth: int | None = None) -> str:
        return export_text(self._check_fitted(), max_depth=max_depth)

    def save(self, path) -> None:
        """Save the model as versioned JSON (atomically)."""
        self._check_fitted().save(path)

    def to_sql(self, **options) -> str:
        """A SQL ``SELECT`` predicting as this estimator does (:func:`dasktree.export.sql.sql_select`)."""
        return self._check_fitted().export("sql", **options)

    def to_onnx(self, **options) -> bytes:
        """An ONNX model predicting as this estimator does (:mod:`dasktree.export.onnx_model`)."""
        return self._check_fitted().export("onnx", **options)

    def to_pmml(self, **options) -> str:
        """A PMML 4.4 ``TreeModel`` predicting as this estimator does (:mod:`dasktree.export.pmml`)."""
        return self._check_fitted().export("pmml", **options)
