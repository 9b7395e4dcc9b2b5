"""The estimators' base (:class:`~dasktree.estimator.DaskTreeClassifier`,
:class:`~dasktree.regressor.DaskTreeRegressor`, which differ by their task and parameters):
``fit`` (the input's habits: in-memory ``X, y``, dask collections joined row by row, scikit-learn's
``cv`` splits as a fold column, a weight array as a column), and what they do with the model they hold:
make one from a model, check it is fitted, re-prune, save, show and export it, and scikit-learn's tree
methods on it (``apply``, ``decision_path``, ``get_depth``, ``get_n_leaves``,
``cost_complexity_pruning_path``)."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError as SklearnNotFittedError

from typing import Sequence

from .errors import InputError, ParameterError
from .model.text import export_text
from .model.model import Model

__all__ = ["FittedModel", "NotFittedError"]


class NotFittedError(InputError, SklearnNotFittedError):
    """Predicting before fitting: scikit-learn's error, and a dasktree input error (one line)."""


class FittedModel:
    """What both estimators do: fit, and use the model they hold (``model_``): made from one, checked
    fitted, re-pruned, saved, shown, its feature importances. A subclass names its ``_task``
    (:mod:`dasktree.model.task`), its declared parameters (``_declared()``), their validation
    (``_settings``) and its fit (``_fit_model``)."""

    def _values(self) -> dict:
        """The parameters as set (all but the runtime ones); ``cv`` given as (train, test) splits counts
        as ``cv=len(splits)`` (the splits are checked against the rows later)."""
        values = {p.name: getattr(self, p.name) for p in self._declared() if p.layer != "runtime"}
        if _are_splits(values["cv"]):
            try:
                values["cv"] = len(values["cv"])
            except TypeError:
                raise ParameterError("cv must be an integer >= 2, a list of (train, test) index splits, "
                                     f"or None, got {values['cv']!r}") from None
        return values

    def fit(self, X, y=None, sample_weight=None, *, target: str | None = None,
            features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
            key: str | None = None, folds: str | None = None, storage_options: dict | None = None,
            checkpoint: str | None = None):
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
            Class labels (a classifier) or numbers (a regressor).
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
        from .estimator_input import fit_input, folds_of_splits, with_column

        settings = self._settings(self._values())
        for name in ("n_features_in_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        data, labels, target, sample_weight, sklearn_input = fit_input(
            self, X, y, target, sample_weight, regression=not self._task.predicts_classes)
        if _are_splits(self.cv):  # scikit-learn's habit: cv as (train, test) splits; their test sets become the folds
            if not sklearn_input or folds is not None:
                raise ParameterError("cv as a list of (train, test) splits is for in-memory X, y; with a dataset "
                                     "give cv=K and folds=COLUMN")
            _, fold = folds_of_splits(self.cv, len(labels))
            data, folds = with_column(data, fold, "fold")
        model = self._fit_model(
            data, labels, settings, target=target, features=features, exclude=exclude, nominal=nominal, key=key,
            folds=folds, storage_options=storage_options, sample_weight=sample_weight, client=self.client,
            scheduler=self.scheduler, cache=self.cache, progress=self.progress, checkpoint=checkpoint,
            security=self.security, memory_limit=self.memory_limit,
        )
        self._set_model(model, names=not sklearn_input)
        self._sklearn_input = sklearn_input
        return self

    def _set_model(self, model: Model, names: bool = True) -> None:
        self.model_ = model
        if names:  # in-memory X: scikit-learn's validation set these from X itself
            self.n_features_in_ = len(model.features)
            self.feature_names_in_ = np.asarray(model.features, dtype=object)
        self.report_, self.run_, self.tree_ = model.report, model.run, model.tree

    def prune_model(self, alpha: float | None = None, *, mode: str | None = None,
                    confidence: float | None = None):
        """Prune the grown tree again, without a pass: at ``alpha``, or by ``mode`` (a classifier's
        "cv", "cv-min", "pessimistic", "none"; a regressor's "cv", "cv-min", "none", from its cp table).
        The CV report and the cp table follow. Returns ``self``."""
        model = self._check_fitted()
        confidence = getattr(self, "confidence", None) if confidence is None else confidence
        self._set_model(model.task.reprune(model, alpha, mode=mode, confidence=confidence))
        return self

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
    def cv_report_(self) -> dict | None:
        """The cross-validation report, or None without ``cv``: a classifier's accuracy (mean, std, per
        fold) and metrics, a regressor's MSE, RMSE and R^2 per fold and pooled."""
        return self._check_fitted().report.get("cv")

    @property
    def feature_importances_(self) -> np.ndarray:
        return self._check_fitted().feature_importances()

    def _table(self, X):
        """In-memory ``X`` as the model's table (validated as scikit-learn does when the fit's was)."""
        from .estimator_input import check_predict_input
        from .model.predict import as_table

        model = self._check_fitted()
        if getattr(self, "_sklearn_input", False):
            X = check_predict_input(self, X, model.features)
        return as_table(model, X)

    # ---------------------------------------------------------------- scikit-learn's tree methods
    def apply(self, X):
        """The leaf each row reaches: its node id in ``tree_`` (node 0 the root, breadth-first order), as
        scikit-learn's ``apply``; ``predict`` is that leaf's value. ndarray of shape (n_rows,), int; on a
        dask DataFrame or array a lazy dask array, on a dataset path its parts' leaves in order."""
        from .estimator_input import dask_frame, is_dask, is_dataset

        model = self._check_fitted()
        if is_dask(X):
            return dask_frame(X, model.features).map_partitions(_leaves_frame, model=model,
                                                                meta=np.zeros(0, dtype=np.intp))
        if is_dataset(X):
            from .io.sources import ParquetSource

            source = ParquetSource(X)
            parts = [model.leaves(source.read(p, model.features)) for p in source.parts]
            return np.concatenate(parts).astype(np.intp) if parts else np.zeros(0, dtype=np.intp)
        return model.leaves(self._table(X)).astype(np.intp)

    def decision_path(self, X):
        """The nodes each row passes through, root to leaf, as scikit-learn's ``decision_path``: a
        ``scipy.sparse.csr_matrix`` of shape (n_rows, n_nodes) whose entry ``[i, j]`` is 1 when row ``i``
        goes through node ``j`` of ``tree_`` (in-memory ``X`` or a dataset path)."""
        from scipy.sparse import csr_matrix

        from .estimator_input import is_dask

        if is_dask(X):
            raise InputError("decision_path gives a scipy sparse matrix, for in-memory X or a dataset: "
                             "on dask, apply(X) gives each row's leaf lazily")
        tree = self._check_fitted().tree
        leaves = np.asarray(self.apply(X), dtype=np.intp)
        depth = tree.depth[leaves]
        parent = tree.parents()
        n = leaves.size
        indptr = np.zeros(n + 1, dtype=np.intp)
        np.cumsum(depth + 1, out=indptr[1:])
        indices = np.empty(int(indptr[-1]), dtype=np.intp)
        nodes, rows = leaves.copy(), np.arange(n)
        for level in range(int(depth.max()) + 1 if n else 0):  # from the leaves up: a node's ancestors precede it
            at = indptr[rows] + depth[rows] - level
            indices[at] = nodes
            going = nodes != 0
            nodes, rows = parent[nodes[going]], rows[going]
        return csr_matrix((np.ones(indices.size, dtype=np.intp), indices, indptr), shape=(n, tree.n_nodes))

    def get_depth(self) -> int:
        """The depth of the tree predictions use (the root alone: 0), as scikit-learn's ``get_depth``."""
        return int(self._check_fitted().tree.max_depth)

    def get_n_leaves(self) -> int:
        """The leaves of the tree predictions use, as scikit-learn's ``get_n_leaves``."""
        return int(self._check_fitted().tree.n_leaves)

    def cost_complexity_pruning_path(self, X=None, y=None, sample_weight=None, **fit_params):
        """scikit-learn's minimal cost-complexity pruning path, from the grown tree's weakest-link
        sequence (the one its cp table is made of): a ``Bunch`` of ``ccp_alphas`` (0, then the effective
        alpha of each node collapsed, in order) and ``impurities`` (the total impurity of the leaves,
        ``sum N_t / N * impurity(t)``: gini or entropy in bits, a regression tree's MSE, before the first
        collapse and after each). With ``X``, as scikit-learn: of a copy of this estimator fitted on
        ``X, y`` (``fit_params`` as :meth:`fit`'s); without, of this fitted estimator's grown tree. A
        regression tree pruned at cp grew only until that pruning must cut: its path starts at that alpha
        (``prune="none"`` grows the whole tree)."""
        from sklearn.base import clone
        from sklearn.utils import Bunch

        if X is not None:
            est = clone(self).fit(X, y, sample_weight=sample_weight, **fit_params)
            return est.cost_complexity_pruning_path()
        alphas, impurities = self._check_fitted().pruning_path()
        return Bunch(ccp_alphas=alphas, impurities=impurities)

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


def _are_splits(cv) -> bool:
    """Whether ``cv`` is scikit-learn's (train, test) splits rather than a number of folds."""
    return cv is not None and not isinstance(cv, (int, np.integer))


def _leaves_frame(frame, *, model: Model) -> np.ndarray:
    from .io.sources import frame_to_table

    return model.leaves(frame_to_table(frame.reset_index(drop=True))).astype(np.intp)
