"""The grown regression trees as one :class:`~dasktree.model.model.TreeModel` per tree.

The level loop's nodes are a :class:`~dasktree.levels.forest.Forest` whose trees share none, each node's
statistic its exact sums (n, s); each tree becomes a model as a classification forest's do
(:func:`~dasktree.levels.to_model.tree_model`: its nodes walked, the subtrees grown in memory joined as
columns, breadth first).
"""

from __future__ import annotations

from ..gc_pause import collector_paused
from ..levels.forest import Forest
from ..levels.to_model import tree_model
from ..model.model import TreeModel

__all__ = ["tree_models", "node_squares"]

#: The leaf reasons given before a pass counts the node (:func:`dasktree.regress.grow._leaf_before`).
UNCOUNTED = ("max_depth", "min_samples")


def tree_models(forest: Forest) -> tuple[list[TreeModel], int, list[int]]:
    """Tree ``t``'s nodes in breadth-first order, with ``counts`` (n, s) and, for a fold tree,
    ``validation`` (held-out n, s). Also the main tree's training sum of squares at its root and
    each fold tree's held-out one (fixed point, exact): what the CV and training errors need."""
    with collector_paused():  # hundreds of thousands of lists and tests, no cycles: nothing to collect
        trees = [tree_model(forest, t) for t in range(forest.n_trees)]
    squares = [node.squares or (0, 0) for node in forest.nodes[:forest.n_trees]]  # the roots'
    return trees, squares[0][0], [q[1] for q in squares[1:]]


def node_squares(forest: Forest) -> list[list[int | None]]:
    """Per tree, each node's training sum of squares (fixed point, exact; the breadth-first order of
    :func:`tree_models`), or None for a leaf no pass counted (made before its level's pass: depth or
    row limits): what pessimistic pruning (:func:`dasktree.regress.prune.pessimistic_leaves`) reads."""
    # a leaf made before its level's pass (depth or row limits) was not counted: a fold tree's keeps
    # only its held-out sums there, and a 0 for the training ones
    return [[None if not node.squares or node.leaf_reason.get(t) in UNCOUNTED else node.squares[0]
             for node, _, _ in forest.tree_nodes(t)] for t in range(forest.n_trees)]
