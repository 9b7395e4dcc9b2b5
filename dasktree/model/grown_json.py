"""A model file's trees, compactly: columns, each test's code table as runs.

A pruned model keeps its grown tree so that ``prune`` needs no pass; that tree can have
thousands of times the pruned tree's nodes, and each test's code -> child table
(``bin_children``, one entry per bin, up to 256) made up nearly all of the file. Here the nodes
are columns (``depth``, ``counts``, ``children``, ``leaf``, ``tests``), each test a list
``[attribute, kind, default, runs, thresholds or groups]`` whose code -> child table is written
as runs ``[child, length, child, length, ...]``: a binary numeric test is two or three runs. The
arrays are the same as :meth:`TreeModel.to_json`'s. Format version 3 wrote the grown tree so;
version 4 writes every tree of the file so (the main tree and the kept fold trees too: a
30,000-leaf tree's node list was most of ``dasktree show``'s time). :func:`grown_from_json` reads
both forms, so model files of every version load, into a tree whose tests stay columns
(:class:`~dasktree.model.node_table.NodeTests`).
"""

from __future__ import annotations

from itertools import chain

import numpy as np

__all__ = ["grown_to_json", "grown_from_json", "runs", "from_runs"]


def runs(values: np.ndarray) -> list[int]:
    """``values`` as ``[value, length, value, length, ...]`` (lengths >= 1)."""
    values = np.asarray(values, dtype=np.int64)
    if not values.size:
        return []
    starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    lengths = np.diff(np.append(starts, values.size))
    return np.column_stack([values[starts], lengths]).ravel().tolist()


def from_runs(pairs: list[int]) -> np.ndarray:
    """The inverse of :func:`runs`."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return np.repeat(pairs[:, 0], pairs[:, 1])


def grown_to_json(tree) -> dict:
    """``tree`` (a :class:`~dasktree.model.model.TreeModel`) as columns, tests' tables as runs: every
    table's runs found at once over the tree's :class:`~dasktree.model.node_table.NodeTests`."""
    from .node_table import node_tests_of

    table = node_tests_of(tree.tests)
    inner = np.flatnonzero(table.inner)
    pairs = np.column_stack([table.run_value, table.run_length]).ravel().tolist()
    first = (2 * table.run_start).tolist()  # node i's runs: pairs[first[i]:first[i + 1]]
    tests: list = [None] * tree.n_nodes
    kind, default, attribute = table.kind, table.default.tolist(), table.attribute.tolist()
    thresholds, cut = table.thresholds.tolist(), table.threshold_start.tolist()
    for i in inner.tolist():
        extra = thresholds[cut[i]:cut[i + 1]] if kind[i] == "numeric" else [list(g) for g in table.groups[i]]
        tests[i] = [attribute[i], kind[i], default[i], pairs[first[i]:first[i + 1]], extra]
    reasons = tree.leaf_reason
    out = {"layout": "columns", "depth": tree.depth.tolist(), "counts": tree.counts.tolist(),
           "children": [list(c) for c in tree.children], "tests": tests,
           "leaf": [reasons[i] if i < len(reasons) and tests[i] is None else "" for i in range(tree.n_nodes)]}
    if tree.validation is not None:
        out["validation"] = tree.validation.tolist()
    return out


def grown_from_json(d: dict):
    """A :class:`~dasktree.model.model.TreeModel` from :func:`grown_to_json`'s form or the node list of
    :meth:`TreeModel.to_json` (model files of versions 1 and 2, and the main tree and fold trees of version 3). Its tests
    stay columns (:class:`~dasktree.model.node_table.NodeTests`), each made when first read."""
    from .model import TreeModel
    from .node_table import NodeTests

    if d.get("layout") != "columns":
        return TreeModel.from_json(d)
    children = d["children"]
    if not isinstance(children, list) or not set(map(type, children)) <= {list}:
        raise TypeError("a node's children are not a list")
    return TreeModel(NodeTests.from_columns(d["tests"]), children, _rows(d["counts"]),
                     np.asarray(d["depth"], dtype=np.int64),
                     _rows(d["validation"]) if "validation" in d else None, list(d["leaf"]))


def _rows(rows: list) -> np.ndarray:
    """A column of equal-length lists of integers as an (n, k) int64 array (one pass, not one per row)."""
    if not isinstance(rows, list) or not set(map(type, rows)) <= {list}:
        raise TypeError("a node's counts are not a list")
    width = len(rows[0]) if rows else 0
    if len(set(map(len, rows))) > 1:
        raise ValueError("the nodes' counts are not all of one length")
    return np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=width * len(rows)).reshape(len(rows), width)
