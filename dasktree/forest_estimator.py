"""``DaskForestClassifier``: the scikit-learn face of :func:`dasktree.forest_fit.fit_forest`."""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin

from .errors import InputError
from .engine.predict import proba_of
from .estimator_input import is_dask
from .forest_base import ForestEstimator
from .forest_fit import fit_forest
from .fitted import NotFittedError
from .model.forest_model import ForestModel, load_forest
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

MEMBER_PARAMS = tuple(p for p in declared_params()
                      if p.name not in NOT_FOR_FORESTS and p.name not in {q.name for q in FOREST_PARAMS})
"""The single tree's parameters a forest's members take (and the runtime ones); ``max_features`` and
``random_state`` are the forest's own."""


class DaskForestClassifier(ClassifierMixin, ForestEstimator):
    # __init__ and the docstring: dasktree.params.install_estimator_params, below the class
    _fit_forest = staticmethod(fit_forest)
    _forest_params = FOREST_PARAMS
    _member_params = MEMBER_PARAMS

    def _set_model(self, model: ForestModel, names: bool = True) -> None:
        super()._set_model(model, names)
        self.classes_ = np.asarray(model.classes)
        self.n_classes_ = len(model.classes)

    # ---------------------------------------------------------------- predict
    def predict_proba(self, X):
        """The members' mean class probabilities, shape (n_rows, n_classes), in ``classes_`` order;
        a dask array for a dask ``X`` (lazy, partition by partition)."""
        return proba_of(self._check_fitted(), X, self._table)

    def predict(self, X):
        """Predicted class labels: the class of the highest mean probability (a dask array for dask ``X``)."""
        proba = self.predict_proba(X)
        if is_dask(X):
            return proba.argmax(axis=1).map_blocks(lambda i: self.classes_[i], dtype=self.classes_.dtype)
        return self.classes_[np.argmax(proba, axis=1)] if len(proba) else self.classes_[:0]


def load_forest_estimator(path) -> ForestEstimator:
    """A fitted :class:`DaskForestClassifier` or :class:`~dasktree.forest_regressor.DaskForestRegressor`
    from a forest's JSON model file, as its task says."""
    model = load_forest(path)
    if model.task.predicts_classes:
        estimator = DaskForestClassifier
    else:
        from .forest_regressor import DaskForestRegressor as estimator
    try:
        return estimator.from_model(model)
    except NotFittedError as exc:  # pragma: no cover - a loaded model is fitted
        raise InputError(str(exc)) from None


install_estimator_params(DaskForestClassifier, _DOC, (*FOREST_PARAMS, *MEMBER_PARAMS))
