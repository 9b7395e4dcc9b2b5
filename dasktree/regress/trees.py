"""The grown regression forest's nodes as one :class:`~dasktree.model.model.TreeModel` per tree.

The nodes come two ways: the level loop's :class:`~dasktree.regress.grow.RNode` s, and the subtrees
grown in memory from small nodes (:mod:`dasktree.levels.small`), kept as the grower's arrays
(*blocks*, hundreds of thousands of nodes in a deep tree: no object per node until the model's
lists). Both become one set of columns, put in breadth-first order a depth at a time (a node's
place: its parent's, then its index among the parent's children), as the level-wise walk orders them.
"""

from __future__ import annotations

import numpy as np

from ..gc_pause import collector_paused
from ..levels.to_model import block_columns, models_of
from ..model.model import TreeModel

__all__ = ["tree_models", "node_squares"]

#: The leaf reasons given before a pass counts the node (:func:`dasktree.regress.grow._leaf_before`).
UNCOUNTED = ("max_depth", "min_samples")


def tree_models(nodes: list, n_trees: int, blocks: list = ()) -> tuple[list[TreeModel], int, list[int]]:
    """Tree ``t``'s nodes in breadth-first order, with ``counts`` (n, s) and, for a fold tree,
    ``validation`` (held-out n, s). Also the main tree's training sum of squares at its root and
    each fold tree's held-out one (fixed point, exact): what the CV and training errors need.
    ``blocks``: the subtrees grown in memory (:class:`~dasktree.levels.small.GrownBlock`)."""
    with collector_paused():  # hundreds of thousands of lists and tests, no cycles: nothing to collect
        return _tree_models(nodes, n_trees, blocks)


def _tree_models(nodes: list, n_trees: int, blocks) -> tuple[list[TreeModel], int, list[int]]:
    n0 = len(nodes)
    parent = [-1] * n0
    child = [0] * n0
    for e, node in enumerate(nodes):
        for i, c in enumerate(node.children):
            parent[c], child[c] = e, i
    tests = np.empty(n0, dtype=object)
    tests[:] = [node.test for node in nodes]
    reasons = np.empty(n0, dtype=object)
    reasons[:] = [node.leaf if node.test is None else "" for node in nodes]
    sums = np.array([node.sums for node in nodes], dtype=np.int64).reshape(n0, 4)
    tree, depth = (np.asarray([getattr(node, name) for node in nodes], np.int64) for name in ("tree", "depth"))
    columns = [(tree, depth, np.asarray(parent, np.int64), np.asarray(child, np.int64), sums[:, :2], sums[:, 2:],
                tests, reasons)]
    place = np.arange(n0, dtype=np.int64)  # a job's own node is the loop's node of that number
    first = n0
    for block in blocks:
        columns.append(block_columns(block, place, first))
        first += columns[-1][0].size
    tree_of, depth_of, parent_of, child_of, train, held, tests, reasons = (np.concatenate(c) for c in zip(*columns))
    out = models_of(tree_of, depth_of, parent_of, child_of, train, held, tests, reasons,
                    [t > 0 for t in range(n_trees)])  # a fold tree keeps its held-out sums
    train_q = nodes[0].squares[0] if nodes[0].squares else 0
    fold_qs = [nodes[t].squares[1] if nodes[t].squares else 0 for t in range(1, n_trees)]
    return out, train_q, fold_qs


def node_squares(nodes: list, n_trees: int) -> list[list[int | None]]:
    """Per tree, each node's training sum of squares (fixed point, exact; the breadth-first order of
    :func:`tree_models`), or None for a leaf no pass counted (made before its level's pass: depth or
    row limits): what pessimistic pruning (:func:`dasktree.regress.prune.pessimistic_leaves`) reads."""
    out = []
    for t in range(n_trees):
        order = [t]
        for e in order:
            order.extend(nodes[e].children)
        # a leaf made before its level's pass (depth or row limits) was not counted: a fold tree's keeps
        # only its held-out sums there, and a 0 for the training ones
        out.append([None if not nodes[e].squares or nodes[e].leaf in UNCOUNTED else nodes[e].squares[0]
                    for e in order])
    return out
