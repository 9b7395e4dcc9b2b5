"""A fitted regression tree: a :class:`~dasktree.model.model.Model` whose leaves predict numbers.

The tree is the same flat arrays as a classification tree's, with two sums per
node in place of class counts: ``counts[:, 0]`` the training rows (weighted)
and ``counts[:, 1]`` the sum of their targets in fixed point
(:mod:`dasktree.binning.target`); a fold tree's ``validation`` holds the same of its
held-out rows. A leaf predicts its training mean, ``lo + step * S / N``. The
model file says ``"task": "regression"`` and keeps the fixed point
(``"target_scale"``); :func:`dasktree.model.model.load` reads either task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..model.model import Model, TreeModel
from .prune import node_means

__all__ = ["RegressionModel"]


@dataclass
class RegressionModel(Model):
    """A regression tree and what it was fitted with; ``predict_values`` gives numbers."""

    task = "regression"

    def node_values(self, tree: TreeModel | None = None) -> np.ndarray:
        """Every node's prediction (its training mean; an empty node its parent's), in the target's units."""
        return self.spec.target.value(node_means(tree or self.tree))

    def predict_values(self, table: pa.Table, tree: TreeModel | None = None) -> np.ndarray:
        tree = tree or self.tree
        return self.node_values(tree)[self.leaves(table, tree)]

    def predict_proba_table(self, table, tree=None):
        raise TypeError("a regression model predicts numbers: predict_values, not class probabilities")

    def pruning_path(self) -> tuple[np.ndarray, np.ndarray]:
        """scikit-learn's ``cost_complexity_pruning_path`` of the tree the cp table is of (the grown tree,
        or with ``max_leaf_nodes`` its best-first subtree): ``ccp_alphas`` (0, then each collapse's
        effective alpha) and ``impurities`` (the training MSE of the leaves, ``sum N_t / N * MSE_t``,
        before the first collapse and after each), from the node sums and the training sum of squares."""
        from ..model.prune import weakest_link_of
        from ..model.pruning import path_impurities
        from .prune import best_first, risk
        from .reprune import _squares

        tree, step = self.grown_tree, self.spec.target.step
        if self.params.get("max_leaf_nodes") is not None:
            tree = best_first(tree, int(self.params["max_leaf_nodes"]), self.params.get("criterion", "squared_error"),
                              self.spec.target.lo, step)
        r = risk(tree, step)  # -(S - c N)**2 / N per node, scaled: centred on the root's mean c (an integer)
        path = weakest_link_of(tree.children, r)
        n, s = int(tree.counts[0, 0]), int(tree.counts[0, 1])
        c = s // max(n, 1)
        # the leaves' sum of squared errors is Q - sum S**2 / N = (Q - 2 c S + c**2 N) + sum -(S - c N)**2 / N
        constant = (_squares(self)[0] - 2 * c * s + c * c * n) * step * step / max(n, 1)
        return np.concatenate([[0.0], path.step_alphas]), constant + path_impurities(tree.children, r, path)

    def feature_importances(self) -> np.ndarray:
        """Total decrease of the sum of squared errors per feature, normalised to sum 1 (as scikit-learn)."""
        tree = self.tree
        from .prune import risk

        r = risk(tree, 1.0)
        out = np.zeros(self.spec.n_features)
        for i, test in enumerate(tree.tests):
            if test is not None:
                out[test.attribute] += r[i] - sum(r[c] for c in tree.children[i])
        total = out.sum()
        return out / total if total > 0 else out
