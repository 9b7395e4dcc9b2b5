"""What both estimators (:class:`~dasktree.estimator.DaskTreeClassifier`,
:class:`~dasktree.regress.estimator.DaskTreeRegressor`) do with the model they hold: make one from a
model, check it is fitted, save, show and export it, and scikit-learn's tree methods on it (``apply``,
``decision_path``, ``get_depth``, ``get_n_leaves``, ``cost_complexity_pruning_path``)."""

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
        ``X, y`` (``fit_params`` as :meth:`fit`'s); without, of this fitted estimator's grown tree."""
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


def _leaves_frame(frame, *, model: Model) -> np.ndarray:
    from .io.sources import frame_to_table

    return model.leaves(frame_to_table(frame.reset_index(drop=True))).astype(np.intp)
