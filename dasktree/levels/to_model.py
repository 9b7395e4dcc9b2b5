"""One tree of the forest as a :class:`~dasktree.model.TreeModel`: flat arrays in breadth-first order.

Training counts are the tree's own (``total - part[t]``); a fold tree also gets
its held-out part's counts at every node (004, Section 2.2.2), from which its
cross-validated error, and that of every pruned subtree, follows without a pass.

The level loop's nodes are walked (:meth:`~dasktree.levels.forest.Forest.tree_nodes`); the
subtrees grown in memory below them (:class:`~dasktree.levels.small.GrownBlock`) join as columns,
and every node takes its breadth-first place at once (a depth at a time: by its parent's place,
then its index among the parent's children), as the walk would order them.
"""

from __future__ import annotations

import numpy as np

from ..model.model import TreeModel
from .forest import Forest

__all__ = ["tree_model"]


def tree_model(forest: Forest, tree: int) -> TreeModel:
    """Tree ``tree`` of ``forest`` (0: the main tree) as flat arrays (under ``monotonic_cst``, its values
    clipped to their bounds from here on: ``TreeModel.monotonic``)."""
    out = _tree_model(forest, tree)
    out.monotonic = forest.monotonic
    return out


def _tree_model(forest: Forest, tree: int) -> TreeModel:
    walked = forest.tree_nodes(tree)
    n_walked = len(walked)
    tests = np.empty(n_walked, dtype=object)
    tests[:] = [None if branch is None else branch.test for _, branch, _ in walked]
    reasons = np.empty(n_walked, dtype=object)
    reasons[:] = [node.leaf_reason.get(tree, "") if branch is None else "" for node, branch, _ in walked]
    depth = np.fromiter((node.depth for node, _, _ in walked), dtype=np.int64, count=n_walked)
    stacked = np.asarray([node.counts for node, _, _ in walked], dtype=np.int64)  # (nodes, n_parts + 1, C)
    held = forest.validation_counts(stacked, tree)
    counts = forest.train_counts(stacked, tree)
    grown = [block for block in forest.grown if (block.job_tree == tree).any()]
    if not grown:  # the walk's order is breadth first already
        return TreeModel(tests.tolist(), [kids for _, _, kids in walked], np.ascontiguousarray(counts), depth,
                         None if held is None else np.ascontiguousarray(held), reasons.tolist())
    parent = np.full(n_walked, -1, dtype=np.int64)
    child = np.zeros(n_walked, dtype=np.int64)
    for i, (_, _, kids) in enumerate(walked):
        for j, k in enumerate(kids):
            parent[k], child[k] = i, j
    place = {node.id: i for i, (node, _, _) in enumerate(walked)}
    columns = [(depth, parent, child, counts, held, tests, reasons)]
    first = n_walked
    for block in grown:
        mine = block.job_tree[block.job] == tree
        new = np.flatnonzero(mine & (block.parent >= 0))
        roots = np.flatnonzero(mine & (block.parent < 0))
        index = np.full(block.parent.size, -1, dtype=np.int64)
        index[roots] = [place[n] for n in block.job_node[block.job[roots]].tolist()]
        index[new] = first + np.arange(new.size, dtype=np.int64)
        first += new.size
        columns.append((block.depth[new], index[block.parent[new]], block.child[new], block.train[new],
                        None if held is None else block.held[new], block.tests[new], block.reasons[new]))
    depth, parent, child, counts, held_all, tests, reasons = (
        None if c[0] is None else np.concatenate(c) for c in zip(*columns))
    order, position = _breadth_first(depth, parent, child)
    n = order.size
    kids = np.zeros(n, dtype=np.int64)
    first_kid = np.zeros(n, dtype=np.int64)
    if n > 1:
        p = position[parent[order[1:]]]  # nondecreasing: children follow their parents' order
        parents, at, count = np.unique(p, return_index=True, return_counts=True)
        kids[parents], first_kid[parents] = count, at + 1
    children = [[f, f + 1] if k == 2 else list(range(f, f + k)) if k else []
                for f, k in zip(first_kid.tolist(), kids.tolist())]
    return TreeModel(tests[order].tolist(), children, np.ascontiguousarray(counts[order]), depth[order],
                     None if held_all is None else np.ascontiguousarray(held_all[order]), reasons[order].tolist())


def _breadth_first(depth: np.ndarray, parent: np.ndarray, child: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nodes (node 0 the root) in breadth-first order, and each node's place in it: a depth at a
    time, by the parent's place, then the child's index."""
    position = np.zeros(depth.size, dtype=np.int64)
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
    layers = [np.zeros(1, dtype=np.int64)]
    placed = 1
    for d in range(1, bounds.size - 1):
        at = by_depth[bounds[d]:bounds[d + 1]]
        at = at[np.lexsort((child[at], position[parent[at]]))]
        position[at] = placed + np.arange(at.size)
        placed += at.size
        layers.append(at)
    return np.concatenate(layers), position
