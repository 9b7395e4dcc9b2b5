"""Subtrees grown in memory joined to the forest they grew from: each grown node's test made once
(:func:`binary_test`), fold trees that chose an identical test given the lowest tree's (:func:`share_groups`,
as the level loop shares nodes), and a chunk's nodes attached below their jobs (:func:`attach`, kept as
:class:`GrownBlock` arrays), and a finished fit's blocks cut by tree so that each tree lets go of its own
once its model is made (:func:`by_tree`, :func:`let_go`). The gathering and growing itself is
:mod:`dasktree.levels.small`'s."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..split.api import Test, threshold_tables
from ..split.api import small_grower as kernel

__all__ = ["binary_test", "share_groups", "GrownBlock", "REASON_NAMES", "attach", "by_tree", "let_go"]


def _threshold_tests(keys: list[tuple[int, int, int]], uppers) -> dict:
    """:func:`~dasktree.split.api.numeric_test` of each (attribute, cut, default) of ``keys``, binary, their
    code tables made at once (:func:`~dasktree.split.api.threshold_tables`: a few hundred tests a chunk)."""
    if not keys:
        return {}
    n_codes = np.asarray([uppers[a].size + 2 for a, _, _ in keys], dtype=np.int64)
    cuts = np.asarray([c for _, c, _ in keys], dtype=np.int64)
    defaults = np.asarray([d for _, _, d in keys], dtype=np.int64)
    tables = threshold_tables(n_codes, cuts, defaults)
    bounds = np.concatenate([[0], np.cumsum(n_codes)]).tolist()
    return {(a, c, d): Test(a, "numeric", tables[bounds[k]:bounds[k + 1]], d, (float(uppers[a][c - 1]),))
            .knowing_arity(max(d, 1) + 1, c) for k, (a, c, d) in enumerate(keys)}


def binary_test(spec, a: int, cut: int, default: int, tables: np.ndarray | None = None, start: int = 0) -> Test:
    """The test of attribute ``a`` the grower and the regression search give as numbers, missing to
    ``default``: with ``cut >= 0`` a threshold (codes ``1..cut`` to child 0, the others to 1), else a
    subset test, its code table in ``tables`` at ``start`` (a category marked ``kernel.ABSENT + default``, one
    without training rows at a classification node, goes to ``default`` and is in no group, as the level
    search's test has it)."""
    if cut >= 0:
        return _threshold_tests([(a, cut, default)], [f.upper for f in spec.features])[(a, cut, default)]
    table = tables[start:start + int(spec.features[a].n_bins) + 1].copy()
    absent = table >= kernel.ABSENT
    table[absent] = default
    groups = tuple(tuple(int(x) for x in np.flatnonzero((table[1:] == child) & ~absent[1:]) + 1) for child in (0, 1))
    return Test(a, "nominal", table, default, groups=groups)


def share_groups(store, job_nodes: np.ndarray) -> None:
    """The nominal tests of the subtrees grown from ``job_nodes`` (store nodes) as the level loop shares
    them: below a node it shares, trees choosing identical tests (the same code table) share one branch,
    and its test is the lowest tree's, whose groups list the categories *its* training rows hold there
    (:func:`~dasktree.levels.forest.sharing`). Each job grows its tree alone, so a tree's test lists its
    own categories: here, walking the trees of each job node together (every block attached so far: a
    node's jobs may be in several chunks, a grid's settings in several passes), the test of every tree
    but the lowest of each group becomes the lowest's. Run at every attach of such a node, it ends with
    the lowest tree of each group over every job."""
    wanted = set(np.asarray(job_nodes, dtype=np.int64).tolist())
    starts: dict[int, list] = {v: [] for v in wanted}  # job node -> [(tree, block, row of the job's node)]
    kids: dict[int, dict] = {}
    for b, block in enumerate(store.grown):
        own = np.flatnonzero(block.parent < 0)
        for k in own[np.isin(block.job_node[block.job[own]], list(wanted))].tolist():
            starts[int(block.job_node[block.job[k]])].append((int(block.job_tree[block.job[k]]), b, k))
    for v, items in starts.items():
        node = store.nodes[v]
        stack = [sorted(items)]
        while stack:
            items = stack.pop()
            if len(items) < 2:
                continue
            by_test: dict[tuple, list] = {}
            for t, b, k in items:  # in tree order: each group's first is its lowest tree
                test = store.grown[b].tests[k]
                if test is not None:
                    by_test.setdefault(test.identity, []).append((t, b, k))
            for group in by_test.values():
                lowest = store.grown[group[0][1]].tests[group[0][2]]
                for t, b, k in group[1:]:
                    block = store.grown[b]
                    if block.tests[k] is not lowest and lowest.kind == "nominal":
                        block.tests[k] = lowest
                        if block.parent[k] < 0:  # the job's own node: the store's branch
                            node.branches[node.branch_index[t]].test = lowest
                for child in range(lowest.arity):
                    stack.append([(t, b, _child_row(store.grown[b], b, k, child, kids)) for t, b, k in group])


def _child_row(block: "GrownBlock", b: int, k: int, child: int, kids: dict) -> int:
    """The row of child ``child`` of row ``k`` of ``block`` (the ``b``-th; ``kids`` caches its rows by
    (parent, child))."""
    table = kids.get(b)
    if table is None:
        inner = np.flatnonzero(block.parent >= 0)
        table = kids[b] = dict(zip(zip(block.parent[inner].tolist(), block.child[inner].tolist()), inner.tolist()))
    return table[(k, child)]


#: A grown node's leaf reason by its index (:attr:`GrownBlock.reasons`).
REASON_NAMES = np.empty(len(kernel.REASONS), dtype=object)
REASON_NAMES[:] = kernel.REASONS


@dataclass
class GrownBlock:
    """A chunk's subtrees grown in memory (either task's), kept as arrays (one row per grown node, the
    grower's preorder; no node object each): a deep tree's hundreds of thousands of nodes become its
    model's columns at once (:func:`dasktree.levels.to_model.block_columns`). Row ``k`` belongs to job
    ``job[k]`` of the chunk (the store's node ``job_node``, tree ``job_tree``); ``parent[k]`` is its
    parent's row (-1: the job's own node, the store's, which takes its test or leaf from here).
    ``train`` and ``held``: the row's training and held-out statistics in its tree (class counts, or a
    regression's exact (n, s)); ``tests`` and ``reasons``: its test (None at a leaf) and leaf reason (its
    index in :data:`dasktree.split.small_grower.REASONS`, 0: a split). Rows, parents, children and depths in
    the narrow types they need (a deep fit keeps millions of grown nodes)."""

    job_node: np.ndarray
    job_tree: np.ndarray
    job: np.ndarray
    parent: np.ndarray
    child: np.ndarray
    depth: np.ndarray
    train: np.ndarray
    held: np.ndarray
    tests: np.ndarray
    reasons: np.ndarray


def attach(store, jobs: list[tuple[int, int]], chunk_jobs: np.ndarray, nodes: dict, spec) -> int:
    """The grown subtrees of a chunk's jobs ((node, tree) pairs), kept by ``store`` as one
    :class:`GrownBlock` (``store.grown``); each job's own node gets its statistics and its test or leaf
    (``store.finish_job(node, tree, test, reason, stats)``); no pass routes into the rest. The tests are
    made once per (attribute, cut, default) in ``store.made_tests``, for the fit's next chunks (a deep
    forest makes tens of thousands of nodes from a few thousand distinct tests, and a test costs a
    millisecond to make). Returns the nodes made (the jobs' own not counted: they were the store's)."""
    width = store.stats_width
    job_of = [jobs[j] for j in chunk_jobs.tolist()]
    parent, attribute, cut, default, reason = (
        np.asarray(nodes[k]) for k in ("parent", "attribute", "cut", "default", "reason"))
    job = np.asarray(nodes["job"]).astype(np.int64)
    stats = nodes["stats"]
    made = np.empty(parent.size, dtype=object)
    split = np.flatnonzero(attribute >= 0)
    threshold = split[cut[split] >= 0]
    if threshold.size:  # by one number per (attribute, cut, default): hundreds of thousands of nodes
        key = (attribute[threshold].astype(np.int64) * 65536 + cut[threshold]) * 65536 + default[threshold]
        unique, inverse = np.unique(key, return_inverse=True)
        tests = store.made_tests
        new = [k for k in unique.tolist() if k not in tests]
        made_now = _threshold_tests([(k >> 32, (k >> 16) & 65535, k & 65535) for k in new],
                                    [f.upper for f in spec.features])
        tests.update(zip(new, made_now.values()))
        these = np.empty(unique.size, dtype=object)
        for i, k in enumerate(unique.tolist()):
            these[i] = tests[k]
        made[threshold] = these[inverse.ravel()]
    for k in split[cut[split] < 0].tolist():  # a subset test once per (attribute, default, code table) too
        a, d, start = int(attribute[k]), int(default[k]), int(nodes["table_start"][k])
        key = (a, d, nodes["tables"][start:start + int(spec.features[a].n_bins) + 1].tobytes())
        test = store.made_tests.get(key)
        if test is None:
            test = store.made_tests[key] = binary_test(spec, a, -1, d, nodes["tables"], start)
        made[k] = test
    reasons = reason.astype(np.int8)  # a copy: the grower's arrays have room for twice the rows
    reasons[split] = 0  # kernel.REASONS[0]: "" (a split)
    # copies in narrow types: a deep fit keeps millions of grown nodes, and a view would keep the grower's
    # room (its stats most: ten numbers a node in a regression's) for every one of them
    block = GrownBlock(np.asarray([n for n, _ in job_of], dtype=np.int64),
                       np.asarray([t for _, t in job_of], dtype=np.int64), job.astype(np.int32),
                       parent.astype(np.int32), np.array(nodes["child"], dtype=np.int8),
                       np.array(nodes["depth"], dtype=np.int16), stats[:, :width].copy(),
                       stats[:, width:2 * width].copy(), made, reasons)
    for k in np.flatnonzero(parent < 0).tolist():  # each job's own node
        store.finish_job(int(block.job_node[job[k]]), int(block.job_tree[job[k]]), made[k],
                         kernel.REASONS[reasons[k]], stats[k])
    store.grown.append(block)
    nominal = split[cut[split] < 0]
    if nominal.size and hasattr(store.nodes[int(block.job_node[0])], "branch_index"):  # trees that share nodes
        share_groups(store, np.unique(block.job_node[job[nominal]]))
    count = int(np.count_nonzero(parent >= 0))
    store.grown_nodes += count
    return count


def by_tree(store) -> None:
    """``store``'s grown blocks cut so that each holds one tree's jobs (in their order, each tree's rows in
    theirs): the same columns for every tree (:func:`dasktree.levels.to_model.block_columns`), and a tree's
    blocks can be let go once its model is made (:func:`let_go`) while the others wait. A block is cut as it
    is reached and dropped, so the cut costs one block's copy at a time."""
    blocks, out = store.grown, []
    for b in range(len(blocks)):
        block, blocks[b] = blocks[b], None  # let go as its pieces are made
        trees = np.unique(block.job_tree)
        if trees.size == 1:
            out.append(block)
            continue
        for t in trees.tolist():
            jobs = np.flatnonzero(block.job_tree == t)
            renumber = np.full(block.job_tree.size, -1, dtype=np.int32)
            renumber[jobs] = np.arange(jobs.size, dtype=np.int32)
            rows = np.flatnonzero(renumber[block.job] >= 0)  # a job's rows are its tree's: parents among them
            place = np.full(block.parent.size, -1, dtype=np.int32)
            place[rows] = np.arange(rows.size, dtype=np.int32)
            parent = block.parent[rows]
            out.append(GrownBlock(block.job_node[jobs], block.job_tree[jobs], renumber[block.job[rows]],
                                  np.where(parent >= 0, place[np.maximum(parent, 0)], -1).astype(np.int32),
                                  block.child[rows], block.depth[rows], block.train[rows], block.held[rows],
                                  block.tests[rows], block.reasons[rows]))
    store.grown = out


_LET_GO = threading.Lock()


def let_go(store, tree: int) -> None:
    """``store``'s grown blocks of ``tree`` dropped (blocks cut :func:`by_tree`), once its model is made:
    a deep fit's fold trees are most of its nodes, and each lets go of its own as it is read."""
    with _LET_GO:  # the trees' models are made on threads
        store.grown = [block for block in store.grown if block.job_tree[0] != tree]
