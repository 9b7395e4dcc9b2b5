"""``DaskTreeRegressor``: the scikit-learn-style face of :func:`dasktree.fit.fit` with ``task="regression"``."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from .engine.predict import predict_dataset
from .errors import InputError
from .estimator_input import dask_frame, is_dask, is_dataset
from .fit import fit_validated
from .fitted import FittedModel
from .params import install_estimator_params
from .params.regression import REGRESSION_PARAMS, validate_regression
from .regress.task import REGRESSION

__all__ = ["DaskTreeRegressor"]

_DOC = """A regression tree grown one level pass at a time, on Dask or in process.

    Every node's statistics are exact integer sums (the target in fixed point,
    :mod:`dasktree.binning.target`), so the tree is the same bit for bit whatever
    the partitioning, the runner or the number of workers. With ``cv`` the fold
    trees grow in the same passes and choose the pruning (rpart's ``anova``
    cp table, :mod:`dasktree.regress.prune`).

    Parameters
    ----------
    {parameters}
    """


class DaskTreeRegressor(FittedModel, RegressorMixin, BaseEstimator):
    _task = REGRESSION
    # __init__ and the docstring: dasktree.params.install_estimator_params, below the class

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value follows the test's learned default child
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    _declared = staticmethod(lambda: REGRESSION_PARAMS)

    def _settings(self, values: dict) -> dict:
        """The parameters validated, once per fit, before the input is read."""
        return validate_regression(values)

    @staticmethod
    def _fit_model(data, values, settings: dict, **options):
        return fit_validated(data, values, settings, task=REGRESSION, **options)

    def predict(self, X, *, out: str | None = None, keep: Sequence[str] = (), overwrite: bool = False):
        """Predicted values (float64). On a dask DataFrame or array: a lazy dask Series named
        ``prediction``. On a dataset path with ``out``: Parquet (``prediction`` plus ``keep`` columns)
        written into the directory ``out`` atomically; returns the files."""
        model = self._check_fitted()
        if out is not None:
            if not is_dataset(X):
                raise InputError("out= is for dataset inputs (a Parquet path or URL)")
            return predict_dataset(model, X, out, keep=keep, overwrite=overwrite, client=self.client,
                                   scheduler=self.scheduler, security=self.security)
        if is_dask(X):
            import pandas as pd

            frame = dask_frame(X, model.features)
            return frame.map_partitions(_predict_frame, model=model, meta=pd.Series(dtype="float64",
                                                                                    name="prediction"))
        if is_dataset(X):
            from .io.sources import open_path

            source = open_path(X)
            parts = [model.predict_values(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts) if parts else np.zeros(0)
        return model.predict_values(self._table(X))

    @property
    def cp_table_(self):
        """rpart's ``printcp`` for ``anova`` as a DataFrame: per subtree of the weakest-link sequence,
        ``alpha``, ``leaves``, ``train_mse``, ``cv_mse``, ``cv_se`` (NaN without ``cv``)."""
        import pandas as pd

        rows = self._check_fitted().report["prune"]["cp_table"]
        return pd.DataFrame(rows).rename(columns={"cv_error": "cv_mse"}).astype({"cv_mse": "float64",
                                                                                 "cv_se": "float64"})

    @property
    def ccp_alpha_(self) -> float:
        """The alpha the tree was pruned at (0: not pruned)."""
        return self._check_fitted().report["prune"]["alpha"]




install_estimator_params(DaskTreeRegressor, _DOC, REGRESSION_PARAMS)


def _predict_frame(frame, *, model):
    import pandas as pd

    from .io.sources import frame_to_table

    values = model.predict_values(frame_to_table(frame.reset_index(drop=True)))
    return pd.Series(values, index=frame.index, name="prediction")
