"""The grown tree in a model file, compactly: what re-pruning needs, as arrays and runs.

A pruned model keeps its grown tree so that ``prune`` needs no pass; that tree can have
thousands of times the pruned tree's nodes, and each test's code -> child table
(``bin_children``, one entry per bin, up to 256) made up nearly all of the file. Here the nodes
are columns (``depth``, ``counts``, ``children``, ``leaf``, ``tests``), each test a list
``[attribute, kind, default, runs, thresholds or groups]`` whose code -> child table is written
as runs ``[child, length, child, length, ...]``: a binary numeric test is two or three runs. The
arrays are the same as :meth:`TreeModel.to_json`'s; :func:`grown_from_json` reads both forms,
so model files of format versions 1 and 2 load as before.
"""

from __future__ import annotations

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
    """``tree`` (a :class:`~dasktree.model.model.TreeModel`) as columns, tests' tables as runs."""
    tests = []
    for test in tree.tests:
        if test is None:
            tests.append(None)
            continue
        d = test.to_json()  # a list, not a dict: no names repeated per node
        extra = d["thresholds"] if d["kind"] == "numeric" else d["groups"]
        tests.append([d["attribute"], d["kind"], d["default"], runs(d["bin_children"]), extra])
    out = {"layout": "columns", "depth": tree.depth.tolist(), "counts": tree.counts.tolist(),
           "children": [list(c) for c in tree.children], "tests": tests,
           "leaf": [tree.leaf_reason[i] if i < len(tree.leaf_reason) and tree.tests[i] is None else ""
                    for i in range(tree.n_nodes)]}
    if tree.validation is not None:
        out["validation"] = tree.validation.tolist()
    return out


def grown_from_json(d: dict):
    """A :class:`~dasktree.model.model.TreeModel` from :func:`grown_to_json`'s form or the node list of
    :meth:`TreeModel.to_json` (model files of versions 1 and 2)."""
    from ..split.api import Test
    from .model import TreeModel

    if d.get("layout") != "columns":
        return TreeModel.from_json(d)
    tests = []
    for t in d["tests"]:
        if t is None:
            tests.append(None)
            continue
        attribute, kind, default, pairs, extra = t
        tests.append(Test.from_json({"attribute": attribute, "kind": kind, "default": default,
                                     "bin_children": from_runs(pairs).tolist(),
                                     ("thresholds" if kind == "numeric" else "groups"): extra}))
    n_classes = len(d["counts"][0]) if d["counts"] else 0
    return TreeModel(
        tests, [list(c) for c in d["children"]],
        np.asarray(d["counts"], dtype=np.int64).reshape(-1, n_classes),
        np.asarray(d["depth"], dtype=np.int64),
        np.asarray(d["validation"], dtype=np.int64) if "validation" in d else None,
        list(d["leaf"]),
    )
