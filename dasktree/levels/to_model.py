"""One tree of the forest as a :class:`~dasktree.model.TreeModel`: flat arrays in breadth-first order.

Training counts are the tree's own (``total - part[t]``); a fold tree also gets
its held-out part's counts at every node (004, Section 2.2.2), from which its
cross-validated error, and that of every pruned subtree, follows without a pass.
"""

from __future__ import annotations

import numpy as np

from ..model.model import TreeModel
from .forest import Forest

__all__ = ["tree_model"]


def tree_model(forest: Forest, tree: int) -> TreeModel:
    """Tree ``tree`` of ``forest`` (0: the main tree) as flat arrays."""
    tests, children, per_part, depth, reasons = [], [], [], [], []
    for node, branch, kids in forest.tree_nodes(tree):
        tests.append(None if branch is None else branch.test)
        children.append(kids)
        per_part.append(node.counts)
        depth.append(node.depth)
        reasons.append(node.leaf_reason.get(tree, "") if branch is None else "")
    stacked = np.asarray(per_part, dtype=np.int64)  # (nodes, n_parts + 1, C)
    held = forest.validation_counts(stacked, tree)
    counts = np.ascontiguousarray(forest.train_counts(stacked, tree))
    return TreeModel(tests, children, counts, np.asarray(depth, dtype=np.int64),
               None if held is None else np.ascontiguousarray(held), reasons)
