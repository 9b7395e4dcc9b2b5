"""What a regression fit reads of its grown trees beside their models: the roots' exact sums of squares and,
for pessimistic pruning, every node's.

The level loop's nodes are a :class:`~dasktree.levels.forest.Forest` whose trees share none, each node's
statistic its exact sums (n, s); each tree becomes a model as a classification forest's do
(:func:`~dasktree.levels.to_model.tree_model`: its nodes walked, the subtrees grown in memory joined as
columns, breadth first), one at a time (:func:`dasktree.regress.fitting`).
"""

from __future__ import annotations

from ..levels.forest import Forest

__all__ = ["root_squares", "node_squares"]

#: The leaf reasons given before a pass counts the node (:func:`dasktree.regress.grow._leaf_before`).
UNCOUNTED = ("max_depth", "min_samples")


def root_squares(forest: Forest) -> tuple[list[int], list[int]]:
    """Each tree's training sum of squares at its root (the main tree's first) and each fold tree's
    held-out one (fixed point, exact): what the CV and training errors need beside the trees' models
    (:func:`~dasktree.levels.to_model.tree_model`: tree ``t``'s nodes in breadth-first order, with
    ``counts`` (n, s) and, for a fold tree, ``validation`` (held-out n, s))."""
    squares = [node.squares or (0, 0) for node in forest.nodes[:forest.n_trees]]  # the roots'
    return [q[0] for q in squares], [q[1] for q in squares[1:]]


def node_squares(forest: Forest) -> list[list[int | None]]:
    """Per tree, each node's training sum of squares (fixed point, exact; the breadth-first order of
    :func:`~dasktree.levels.to_model.tree_model`), or None for a leaf no pass counted (made before its level's pass: depth or
    row limits): what pessimistic pruning (:func:`dasktree.regress.prune.pessimistic_leaves`) reads."""
    # a leaf made before its level's pass (depth or row limits) was not counted: a fold tree's keeps
    # only its held-out sums there, and a 0 for the training ones
    return [[None if not node.squares or node.leaf_reason.get(t) in UNCOUNTED else node.squares[0]
             for node, _, _ in forest.tree_nodes(t)] for t in range(forest.n_trees)]
