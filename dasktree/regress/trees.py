"""The grown regression forest's nodes as one :class:`~dasktree.model.model.TreeModel` per tree."""

from __future__ import annotations

import numpy as np

from ..model.model import TreeModel

__all__ = ["tree_models", "node_squares"]

#: The leaf reasons given before a pass counts the node (:func:`dasktree.regress.grow._leaf_before`).
UNCOUNTED = ("max_depth", "min_samples")


def tree_models(nodes: list, n_trees: int) -> tuple[list[TreeModel], int, list[int]]:
    """Tree ``t``'s nodes in breadth-first order, with ``counts`` (n, s) and, for a fold tree,
    ``validation`` (held-out n, s). Also the main tree's training sum of squares at its root and
    each fold tree's held-out one (fixed point, exact): what the CV and training errors need."""
    trees = []
    for t in range(n_trees):
        order = [t]
        for e in order:  # grows while iterated: breadth first
            order.extend(nodes[e].children)
        index = {e: i for i, e in enumerate(order)}
        sums = np.array([nodes[e].sums for e in order], dtype=np.int64).reshape(len(order), 4)
        trees.append(TreeModel(
            tests=[nodes[e].test for e in order],
            children=[[index[c] for c in nodes[e].children] for e in order],
            counts=np.ascontiguousarray(sums[:, :2]),
            depth=np.array([nodes[e].depth for e in order], dtype=np.int64),
            validation=None if t == 0 else np.ascontiguousarray(sums[:, 2:]),
            leaf_reason=[nodes[e].leaf if nodes[e].test is None else "" for e in order],
        ))
    train_q = nodes[0].squares[0] if nodes[0].squares else 0
    fold_qs = [nodes[t].squares[1] if nodes[t].squares else 0 for t in range(1, n_trees)]
    return trees, train_q, fold_qs


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
