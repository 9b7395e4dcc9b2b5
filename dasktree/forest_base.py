"""What the forest estimators share (:class:`ForestEstimator`): the fit over the trees' input forms,
the fitted forest model, its members, importances, file and exports. ``DaskForestClassifier``
(:mod:`dasktree.forest_estimator`) and ``DaskForestRegressor`` (:mod:`dasktree.forest_regressor`)
name their fit, parameters, out-of-bag attribute and what they predict."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
from sklearn.base import BaseEstimator

from .estimator_input import check_predict_input, fit_input, is_dask
from .fitted import NotFittedError
from .model.forest_model import ForestModel
from .model.predict import as_table

__all__ = ["ForestEstimator", "oob_permutation_of"]


class ForestEstimator(BaseEstimator):
    """What the forest estimators share: their fit over the input forms, the fitted model, its
    members, importances, file and exports. A subclass names its fit function, its parameters, its
    out-of-bag attribute and what it predicts."""

    # __init__ and the docstring: dasktree.params.install_estimator_params, below each subclass
    _fit_forest = None  # the functional fit the estimator calls (a staticmethod)
    _forest_params: tuple = ()  # the forest's own parameters
    _member_params: tuple = ()  # the single tree's parameters its members take (and runtime ones)
    _oob_attribute = "oob_decision_function"  # model.run's out-of-bag array, as an attribute with "_"
    _numeric_target = False  # check_fit_input: y is numbers (regression), not labels

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
        runtime = {p.name for p in self._member_params if p.layer == "runtime"}
        return {p.name: getattr(self, p.name) for p in (*self._forest_params, *self._member_params)
                if p.name not in runtime}

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, storage_options: dict | None = None, checkpoint: str | None = None):
        """Learn from ``X, y`` in memory or on dask, or from a dataset ``X`` with ``target=COLUMN``
        (the input forms of :meth:`dasktree.DaskTreeClassifier.fit`). ``key``: a column keying the
        rows for the bags' hash (default: each row's values in the features and the target). With
        ``X, y`` in memory the hash names the columns by their places (an array and a DataFrame of
        the same values give one forest); a dataset's, a dask frame's and ``target=``'s by their names.
        ``checkpoint``: a dataset's fit saves every level pass there; the same fit started again goes
        on from the last one saved, to the same forest (:func:`dasktree.fit_forest`)."""
        values = self._values()
        for name in ("n_features_in_", "feature_names_in_", f"{self._oob_attribute}_", "oob_score_"):
            self.__dict__.pop(name, None)
        data, labels, target, sample_weight, sklearn_input = fit_input(self, X, y, target, sample_weight,
                                                                       regression=self._numeric_target)
        model = self._fit_forest(
            data, labels, target=target, features=features, exclude=exclude, nominal=nominal, key=key,
            storage_options=storage_options, sample_weight=sample_weight, client=self.client,
            scheduler=self.scheduler, cache=self.cache, progress=self.progress, security=self.security,
            memory_limit=self.memory_limit, positional=sklearn_input, checkpoint=checkpoint, **values)
        self._set_model(model, names=not sklearn_input)
        self._sklearn_input = sklearn_input
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
        if self._oob_attribute in model.run:
            setattr(self, f"{self._oob_attribute}_", model.run[self._oob_attribute])

    @classmethod
    def from_model(cls, model: ForestModel):
        """A fitted estimator around a forest model (its parameters as the model says)."""
        known = {p.name for p in (*cls._forest_params, *cls._member_params)}
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
        """Each member's impurity (classification) or squared-error (regression) decrease per feature
        normalised, averaged over the members, normalised again."""
        return self._check_fitted().feature_importances()

    def oob_permutation_importance(self, X, y=None, *, target: str | None = None, key: str | None = None,
                                   n_repeats: int = 5, random_state: int = 0, storage_options: dict | None = None):
        """Permutation importances on the out-of-bag rows: the out-of-bag score (``oob_score_``'s accuracy
        or R^2) lost when each feature's values are shuffled among the rows some member left out
        (:func:`dasktree.model.forest_permutation.oob_permutation_importance`: scikit-learn's
        ``permutation_importance`` semantics, seeded, the same whatever the partitioning or row order).

        ``X, y`` (or ``X`` a dataset or dask frame with ``target=``, and the fit's ``key=``) are the rows
        the forest was fit on, as :meth:`fit` took them; they are read into memory (the cost is
        ``n_features * n_repeats`` predictions of them by every member). The result is also kept in
        the model's report (``report_["oob_permutation_importance"]``), so :meth:`save` writes it and
        ``dasktree show`` reports it.

        Returns
        -------
        sklearn.utils.Bunch
            ``importances_mean``, ``importances_std`` (n_features,), ``importances`` (n_features,
            n_repeats), as scikit-learn's ``permutation_importance``; ``baseline`` the out-of-bag score.
        """
        from sklearn.utils import Bunch

        from .io.sources import open_source

        model = self._check_fitted()
        data, labels, target, _, positional = fit_input(type(self)(), X, y, target, None,
                                                        regression=self._numeric_target)
        if is_dask(data):  # its rows in memory, hashed by the columns' names as the fit hashed them
            data = data.compute()
        source, _ = open_source(data, labels, target=target, storage_options=storage_options)
        result = oob_permutation_of(model, source, key=key, positional=positional, n_repeats=n_repeats,
                                    random_state=random_state)
        self.report_ = model.report
        return Bunch(importances_mean=np.asarray(result["importances_mean"]),
                     importances_std=np.asarray(result["importances_std"]),
                     importances=np.asarray(result["importances"]), baseline=result["baseline"])

    def _table(self, X):
        model = self._check_fitted()
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return as_table(model, X)

    def save(self, path) -> None:
        """Write the forest as one JSON model file (:func:`dasktree.model.forest_model.load_forest` reads it)."""
        self._check_fitted().save(path)

    def to_sql(self, **options) -> str:
        """The forest as one SQL ``SELECT`` (:func:`dasktree.export.forest_sql.forest_sql_select`:
        ``table=``, ``dialect=``, ``keep=``...), equal to the estimator's predictions."""
        from .export.forest_sql import forest_sql_select

        return forest_sql_select(self._check_fitted(), **options)

    def to_pmml(self) -> str:
        """The forest as PMML 4.4 text: a ``MiningModel`` averaging a ``TreeModel`` segment per member
        (:func:`dasktree.export.forest_pmml.forest_pmml_text`)."""
        from .export.forest_pmml import forest_pmml_text

        return forest_pmml_text(self._check_fitted())

    def to_onnx(self) -> bytes:
        """The forest as ONNX bytes: a ``TreeEnsemble`` per member and their mean
        (:mod:`dasktree.export.forest_onnx`), equal to the estimator's predictions on every row."""
        from .export.forest_onnx import forest_onnx_bytes

        return forest_onnx_bytes(self._check_fitted())


def oob_permutation_of(model: ForestModel, source, *, key: str | None = None, positional: bool = False,
                       n_repeats: int = 5, random_state: int = 0) -> dict:
    """The permutation importances on the out-of-bag rows of ``source`` (a :class:`~dasktree.io.sources.Source`
    of the rows ``model`` was fit on, read into memory), kept in ``model.report["oob_permutation_importance"]``
    and returned (:func:`dasktree.model.forest_permutation.oob_permutation_importance`). The bags are drawn
    as the fit drew them (``key``: the fit's; ``positional``: the estimator's ``X, y``); rows other than the
    fit's are refused (their count, or their out-of-bag rows', is not the fit's)."""
    from .errors import InputError
    from .io.bagging import BagSpec
    from .model.forest_permutation import oob_permutation_importance
    from .params.forest import bag_mean

    params = model.params
    bag = BagSpec(params["n_estimators"], params["random_state"], bag_mean(params["max_samples"], source.n_rows),
                  params["bootstrap"], key, content=(*model.features, model.target), positional=positional)
    columns = [*model.features, model.target, *bag.columns]
    missing = [c for c in columns if c not in source.schema.names]
    if missing:
        raise InputError(f"column {missing[0]!r} is missing from {source.description}")
    table = pa.concat_tables([source.read(part, columns) for part in source.parts])
    if table.num_rows != model.report.get("rows", table.num_rows):
        raise InputError(f"{table.num_rows} rows, but the forest was fit on {model.report['rows']}: give the "
                         "rows it was fit on")
    result = oob_permutation_importance(model, table, bag, n_repeats=n_repeats, random_state=random_state)
    if model.report.get("oob_rows", result["rows"]) != result["rows"]:
        raise InputError(f"{result['rows']} of these rows are out of a member's bag, but "
                         f"{model.report['oob_rows']} of the fit's were: give the rows the forest was fit on "
                         "(and its key=)")
    model.report["oob_permutation_importance"] = result
    return result
