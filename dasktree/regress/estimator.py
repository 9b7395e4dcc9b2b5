"""``DaskTreeRegressor``: the scikit-learn-style face of :func:`dasktree.regress.fit.fit_regression`."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from ..engine.predict import predict_dataset
from ..errors import InputError
from ..fitted import FittedModel
from ..errors import ParameterError
from ..estimator_input import (check_fit_input, check_predict_input, dask_frame, folds_of_splits, is_dask, is_dataset,
                               join_dask, with_column)
from ..model.predict import as_table
from ..params import install_estimator_params
from ..params.regression import REGRESSION_PARAMS
from .fit import fit_regression
from .model import RegressionModel

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
    # __init__ and the docstring: dasktree.params.install_estimator_params, below the class

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # a missing value follows the test's learned default child
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags

    def _params(self) -> dict:
        return {p.name: getattr(self, p.name) for p in REGRESSION_PARAMS if p.layer != "runtime"}

    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, folds: str | None = None, storage_options: dict | None = None,
            checkpoint: str | None = None):
        """Learn the tree from in-memory ``X, y``, a dask DataFrame (``y`` a dask Series or ``target``),
        or a Parquet or CSV dataset (path or URL) with its ``target`` column; the arguments as
        :meth:`dasktree.DaskTreeClassifier.fit`'s (``checkpoint``: :mod:`dasktree.regress.checkpoint`)."""
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        in_memory = not (is_dataset(X) or is_dask(X))
        data, values = X, y
        params = self._params()
        if in_memory and target is None:
            data, values = check_fit_input(self, X, y, regression=True)
        if params["cv"] is not None and not isinstance(params["cv"], (int, np.integer)):
            # scikit-learn's habit: cv as (train, test) splits; their test sets become the folds
            if not (in_memory and target is None) or folds is not None:
                raise ParameterError("cv as a list of (train, test) splits is for in-memory X, y; with a dataset "
                                     "give cv=K and folds=COLUMN")
            params["cv"], fold = folds_of_splits(params["cv"], len(values))
            data, folds = with_column(data, fold, "fold")
        elif is_dask(X) and y is not None:
            data, target = join_dask(X, y, target)
            values = None
        if is_dask(X) and sample_weight is not None and not isinstance(sample_weight, str):
            data, sample_weight = join_dask(data, sample_weight, "sample_weight", what="sample_weight")
        model = fit_regression(data, values, target=target, features=features, exclude=exclude, nominal=nominal,
                               key=key, folds=folds, storage_options=storage_options, sample_weight=sample_weight,
                               client=self.client, scheduler=self.scheduler, cache=self.cache,
                               progress=self.progress, security=self.security, memory_limit=self.memory_limit,
                               checkpoint=checkpoint, **params)
        self._set_model(model, names=not (in_memory and target is None))
        self._sklearn_input = in_memory and target is None
        return self

    def _set_model(self, model: RegressionModel, names: bool = True) -> None:
        self.model_ = model
        if names:
            self.n_features_in_ = len(model.features)
            self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_, self.run_, self.tree_ = model.report, model.run, model.tree

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
            from ..io.sources import open_path

            source = open_path(X)
            parts = [model.predict_values(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts) if parts else np.zeros(0)
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return model.predict_values(as_table(model, X))

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

    @property
    def cv_report_(self) -> dict | None:
        """The CV report (MSE, RMSE, R^2 per fold and pooled), or None without ``cv``."""
        return self._check_fitted().report.get("cv")



install_estimator_params(DaskTreeRegressor, _DOC, REGRESSION_PARAMS)


def _predict_frame(frame, *, model: RegressionModel):
    import pandas as pd

    from ..io.sources import frame_to_table

    values = model.predict_values(frame_to_table(frame.reset_index(drop=True)))
    return pd.Series(values, index=frame.index, name="prediction")
