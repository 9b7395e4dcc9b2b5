"""``DaskForestRegressor``: the scikit-learn face of :func:`dasktree.forest_fit.fit_forest_regression`."""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.base import RegressorMixin

from .estimator_input import dask_frame, is_dask, is_dataset
from .forest_base import ForestEstimator
from .forest_fit import fit_forest_regression
from .regress.forest import REGRESSION_MAX_FEATURES
from .model.forest_model import ForestModel
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

MEMBER_REGRESSION_PARAMS = tuple(p for p in REGRESSION_PARAMS if p.name not in (*NOT_FOR_FORESTS, "max_leaf_nodes")
                                 and p.name not in {q.name for q in FOREST_PARAMS})
"""A regression tree's parameters a regression forest's members take (and the runtime ones)."""


class DaskForestRegressor(RegressorMixin, ForestEstimator):
    # __init__ and the docstring: dasktree.params.install_estimator_params, below the class
    _fit_forest = staticmethod(fit_forest_regression)
    _forest_params = FOREST_REGRESSION_PARAMS
    _member_params = MEMBER_REGRESSION_PARAMS
    _oob_attribute = "oob_prediction"
    _numeric_target = True

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
        return model.predict_values(self._table(X))


def _predict_frame(frame, *, model: ForestModel):
    import pandas as pd

    from .io.sources import frame_to_table

    values = model.predict_values(frame_to_table(frame.reset_index(drop=True)))
    return pd.Series(values, index=frame.index, name="prediction")


install_estimator_params(DaskForestRegressor, _DOC, (*FOREST_REGRESSION_PARAMS, *MEMBER_REGRESSION_PARAMS))
