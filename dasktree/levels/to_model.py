"""One tree of the forest as a :class:`~dasktree.model.TreeModel`: flat arrays in breadth-first order.

Training counts are the tree's own (``total - part[t]``); a fold tree also gets
its held-out part's counts at every node (004, Section 2.2.2), from which its
cross-validated error, and that of every pruned subtree, follows without a pass.

The level loop's nodes are walked (:meth:`~dasktree.levels.forest.Forest.tree_nodes`); the
subtrees grown in memory below them (:class:`~dasktree.levels.attach.GrownBlock`) join as columns,
and every node takes its breadth-first place at once (a depth at a time: by its parent's place,
then its index among the parent's children), as the walk would order them: :func:`models_of`. The
regression trees are such a forest too (:func:`dasktree.regress.fitting`, a tree at a time).
"""

from __future__ import annotations

import numpy as np

from ..model.model import ChildLinks, TreeModel
from ..model.prune import Shape
from ..model.prune import _keep_shape as keep_shape
from .forest import Forest
from .attach import REASON_NAMES, GrownBlock

__all__ = ["tree_model", "models_of", "block_columns"]


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
    place = np.full(len(forest.nodes), -1, dtype=np.int64)
    place[[node.id for node, _, _ in walked]] = np.arange(n_walked)
    columns = [(depth, parent, child, counts, held, tests, reasons)]
    first = n_walked
    for block in grown:
        _, *block_part = block_columns(block, place, first, tree)
        first += block_part[0].size
        if held is None:
            block_part[4] = None
        columns.append(tuple(block_part))
    depth, parent, child, counts, held_all, tests, reasons = (
        None if c[0] is None else np.concatenate(c) for c in zip(*columns))
    [model] = models_of(np.zeros(depth.size, dtype=np.int64), depth, parent, child, counts, held_all, tests, reasons,
                        [held_all is not None])
    return model


def block_columns(block: GrownBlock, place: np.ndarray, first: int, tree: int | None = None) -> tuple:
    """A block's grown nodes (of tree ``tree``, or of every tree) as the columns :func:`models_of` reads
    (tree, depth, parent, child, train, held, tests, reasons), its jobs' own rows left out: they are the
    store's nodes, each at ``place[node]`` among the columns; the others numbered from ``first``."""
    mine = np.ones(block.parent.size, dtype=bool) if tree is None else block.job_tree[block.job] == tree
    new = np.flatnonzero(mine & (block.parent >= 0))
    own = np.flatnonzero(mine & (block.parent < 0))
    index = np.full(block.parent.size, -1, dtype=np.int64)
    index[own] = place[block.job_node[block.job[own]]]
    index[new] = first + np.arange(new.size, dtype=np.int64)
    return (block.job_tree[block.job[new]], block.depth[new].astype(np.int64), index[block.parent[new]],
            block.child[new].astype(np.int64), block.train[new], block.held[new], block.tests[new],
            REASON_NAMES[block.reasons[new]])


def models_of(tree: np.ndarray, depth: np.ndarray, parent: np.ndarray, child: np.ndarray, counts: np.ndarray,
              held: np.ndarray | None, tests: np.ndarray, reasons: np.ndarray, validated) -> list[TreeModel]:
    """Trees given as columns over all their nodes (either task's, any order) as one
    :class:`~dasktree.model.model.TreeModel` each, in breadth-first order: node ``i`` of tree
    ``tree[i]`` at ``depth[i]``, child ``child[i]`` of node ``parent[i]`` (-1: the tree's root), its
    training ``counts[i]`` and held-out ``held[i]`` (None: none), its test (None at a leaf) and leaf
    reason. ``validated[t]``: whether tree ``t``'s model keeps the held-out counts. Each model's children
    are given as arrays (:class:`~dasktree.model.model.ChildLinks`: breadth first, the children of the
    nodes in order are nodes 1, 2, ...; the lists made only if ``children`` is read) and it keeps its
    :class:`~dasktree.model.prune.Shape`: pruning and the report read the arrays."""
    order, position = _breadth_first(tree, depth, parent, child, len(validated))
    out = []
    for t, keeps in enumerate(validated):
        mine = order[t]
        n = mine.size
        kids = np.zeros(n, dtype=np.int64)
        up = np.full(n, -1, dtype=np.int64)
        if n > 1:
            p = up[1:] = position[parent[mine[1:]]]  # nondecreasing: breadth first, children follow their parents
            runs = np.flatnonzero(np.append(True, p[1:] != p[:-1]))  # each parent's first child (less one)
            kids[p[runs]] = np.diff(np.append(runs, p.size))
        # breadth first, the children of the nodes in order are nodes 1, 2, ...: the children given as
        # arrays, their lists made when first read (ChildLinks); pruning and the report read the arrays
        flat = np.arange(1, n, dtype=np.int64)
        model = TreeModel(tests[mine].tolist(), ChildLinks(kids, flat), np.ascontiguousarray(counts[mine]),
                          depth[mine].copy(), np.ascontiguousarray(held[mine]) if keeps and held is not None else None,
                          reasons[mine].tolist())
        start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(kids, out=start[1:])
        keep_shape(model, Shape(up, start, flat))
        out.append(model)
    return out


def _breadth_first(tree: np.ndarray, depth: np.ndarray, parent: np.ndarray, child: np.ndarray, n_trees: int):
    """Each tree's nodes in breadth-first order (per tree an index array), and every node's place in
    its tree's order: a depth at a time, by the parent's place, then the child's index. Every node's
    children are put in order first (``child`` numbers them 0, 1, ... under their parent), so each depth
    is the children of the one above taken in its order, with no sort."""
    n = tree.size
    position = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n_trees, dtype=np.int64)
    below = np.flatnonzero(parent >= 0)
    sizes = np.bincount(parent[below], minlength=n)
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=start[1:])
    slot = start[parent[below]] + child[below]
    kids = np.empty(below.size, dtype=np.int64)
    if below.size and (child[below].min() < 0 or np.any(child[below] >= sizes[parent[below]])
                       or np.any(np.bincount(slot, minlength=below.size) != 1)):
        kids = below[np.lexsort((child[below], parent[below]))]  # children not numbered 0, 1, ...: in order
    else:
        kids[slot] = below
    at = np.flatnonzero((parent < 0) & (depth == 0))
    at = at[np.argsort(tree[at], kind="stable")]
    layers = []
    while at.size:
        t = tree[at]  # sorted: each depth holds the trees in order, as the one above did
        first = np.searchsorted(t, np.arange(n_trees))  # the first of each tree among them
        position[at] = placed[t] + np.arange(at.size) - first[t]
        placed += np.bincount(t, minlength=n_trees)
        layers.append(at)
        k = sizes[at]
        ends = np.cumsum(k)
        at = kids[np.repeat(start[at] - (ends - k), k) + np.arange(int(ends[-1]) if ends.size else 0)]
    flat = np.concatenate(layers) if layers else np.zeros(0, np.int64)
    # each tree's nodes by depth, then place: the concatenation, stably by tree (place grows along it)
    flat = flat[np.argsort(tree[flat].astype(np.int32 if n_trees >= 2**15 else np.int16), kind="stable")]
    starts = np.searchsorted(tree[flat], np.arange(n_trees + 1))
    return [flat[starts[t]:starts[t + 1]] for t in range(n_trees)], position
