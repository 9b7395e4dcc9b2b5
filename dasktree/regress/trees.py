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
from ..levels.to_model import models_of
from ..model.model import TreeModel
from ..split.api import Test
from ..split.api import small_grower as kernel

__all__ = ["tree_models", "Block", "node_squares", "regression_test"]

#: The leaf reasons given before a pass counts the node (:func:`dasktree.regress.grow._leaf_before`).
UNCOUNTED = ("max_depth", "min_samples")


class Block:
    """Subtrees grown in memory: the grower's arrays (:func:`~dasktree.split.small_grower.grow_jobs`)
    and the forest node of each of its jobs (the row with ``parent`` -1 is that node itself)."""

    def __init__(self, jobs: list[int], nodes: dict):
        self.jobs, self.nodes = jobs, nodes


def tree_models(nodes: list, n_trees: int, blocks: list[Block] = (), spec=None) -> tuple[list[TreeModel], int, list[int]]:
    """Tree ``t``'s nodes in breadth-first order, with ``counts`` (n, s) and, for a fold tree,
    ``validation`` (held-out n, s). Also the main tree's training sum of squares at its root and
    each fold tree's held-out one (fixed point, exact): what the CV and training errors need.
    ``blocks`` (with the ``spec`` their tests' thresholds come from): the subtrees grown in memory."""
    with collector_paused():  # hundreds of thousands of lists and tests, no cycles: nothing to collect
        return _tree_models(nodes, n_trees, blocks, spec)


def _tree_models(nodes: list, n_trees: int, blocks, spec) -> tuple[list[TreeModel], int, list[int]]:
    n0 = len(nodes)
    tree = [node.tree for node in nodes]
    depth = [node.depth for node in nodes]
    parent = [-1] * n0
    child = [0] * n0
    for e, node in enumerate(nodes):
        for i, c in enumerate(node.children):
            parent[c], child[c] = e, i
    tests = np.empty(n0, dtype=object)
    tests[:] = [node.test for node in nodes]
    reasons = np.empty(n0, dtype=object)
    reasons[:] = [node.leaf if node.test is None else "" for node in nodes]
    columns = [(np.asarray(tree, np.int64), np.asarray(depth, np.int64), np.asarray(parent, np.int64),
                np.asarray(child, np.int64), np.array([node.sums for node in nodes], dtype=np.int64).reshape(n0, 4),
                tests, reasons)]
    first = n0
    made: dict = {}  # the threshold tests made, by (attribute, cut, default): the trees share most
    widths = None if spec is None else spec.widths
    for block in blocks:
        columns.append(_block_columns(block, nodes, first, spec, made, widths))
        first += columns[-1][0].size
    tree_of, depth_of, parent_of, child_of, sums, tests, reasons = (np.concatenate(c) for c in zip(*columns))
    out = models_of(tree_of, depth_of, parent_of, child_of, sums[:, :2], sums[:, 2:], tests, reasons,
                    [t > 0 for t in range(n_trees)])  # a fold tree keeps its held-out sums
    train_q = nodes[0].squares[0] if nodes[0].squares else 0
    fold_qs = [nodes[t].squares[1] if nodes[t].squares else 0 for t in range(1, n_trees)]
    return out, train_q, fold_qs


def _block_columns(block: Block, nodes: list, first: int, spec, made: dict, widths: np.ndarray) -> tuple:
    """A block's nodes (its jobs' own rows left out: they are forest nodes) as the columns, numbered
    from ``first``; ``made``: the threshold tests made so far, by their key here, added to."""
    g = block.nodes
    parent, job = g["parent"], g["job"]
    own = parent < 0
    new = ~own
    ids = np.empty(parent.size, dtype=np.int64)
    job_ids = np.asarray(block.jobs, dtype=np.int64)
    ids[own] = job_ids[job[own]]
    ids[new] = first + np.arange(int(new.sum()))
    tree = np.asarray([nodes[e].tree for e in block.jobs], dtype=np.int64)[job[new]]
    attribute, cut, default = g["attribute"][new], g["cut"][new], g["default"][new]
    tests = np.empty(int(new.sum()), dtype=object)
    split = np.flatnonzero(attribute >= 0)
    numeric = split[cut[split] >= 0]
    if numeric.size:
        key = (attribute[numeric] * 65536 + cut[numeric]) * 2 + default[numeric]
        unique, inverse = np.unique(key, return_inverse=True)
        these = np.empty(unique.size, dtype=object)
        for i, k in enumerate(unique.tolist()):
            test = made.get(k)
            if test is None:
                test = made[k] = regression_test(spec, k // 2 // 65536, k // 2 % 65536, k % 2, width=widths)
            these[i] = test
        tests[numeric] = these[inverse.ravel()]
    table_start = g["table_start"][new]
    for k in split[cut[split] < 0].tolist():
        tests[k] = regression_test(spec, int(attribute[k]), -1, int(default[k]), g["tables"], int(table_start[k]),
                                   width=widths)
    names = np.empty(len(kernel.REASONS), dtype=object)
    names[:] = kernel.REASONS
    reasons = names[g["reason"][new].astype(np.int64)]
    reasons[split] = ""
    return (tree, g["depth"][new].astype(np.int64), ids[parent[new]], g["child"][new].astype(np.int64),
            g["stats"][new, :4], tests, reasons)


def regression_test(spec, a: int, cut: int, default: int, tables: np.ndarray | None = None, start: int = 0,
                    width: np.ndarray | None = None) -> Test:
    """The level loop's test of attribute ``a``, missing to ``default``: with ``cut >= 0`` a threshold (codes
    ``1..cut`` to child 0, the others to 1), else a subset test, its code table in ``tables`` at ``start``.
    ``width``: ``spec.widths`` when the caller has it (made anew on every read)."""
    widths = spec.widths if width is None else width
    if cut >= 0:
        table = np.ones(int(widths[a]), dtype=np.int16)
        table[1:cut + 1] = 0
        table[0] = default
        return Test(a, "numeric", table, default, (float(spec.features[a].upper[cut - 1]),))
    table = tables[start:start + int(widths[a])].copy()
    groups = tuple(tuple(int(x) for x in np.flatnonzero(table[1:] == child) + 1) for child in (0, 1))
    return Test(a, "nominal", table, default, groups=groups)


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
