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

Format version 6 writes every tree as typed arrays (:func:`arrays_to_json`, ``"layout": "arrays"``):
each column one array of numbers, ``{"dtype": "<i2", "base64": ...}`` (the narrowest of ``<i1``,
``<i2``, ``<i4``, ``<i8`` that holds an integer column's values; ``<f8`` for the thresholds), so a
reader decodes a column of 100,000 nodes at once instead of parsing 100,000 numbers and as many
small lists (the JSON read of the columns layout was most of ``dasktree show``'s load). The columns:
``nodes`` (their number n); per node ``depth``, ``counts`` (n x k, row by row), ``child_count``,
``leaf`` (an index into ``leaf_reasons``, the texts of why a leaf stopped), ``kind`` (-1 at a leaf,
else an index into ``kinds``, ``["numeric", "nominal"]``), ``attribute`` (-1 at a leaf),
``default``, ``run_count``, ``threshold_count``; flat: ``children`` (node i's ``child_count[i]``
after those of the nodes before it), ``run_child`` and ``run_length`` (node i's code table as its
``run_count[i]`` runs), ``thresholds`` (node i's ``threshold_count[i]``); ``validation`` (n x k,
held-out counts) when the tree has them; ``groups``, ``[[node, groups], ...]`` of the nominal
tests. With ``binary=False`` (``dasktree show --format json``) each array is a plain list of
numbers instead, and a reader takes either.
"""

from __future__ import annotations

import base64
import binascii
from itertools import chain

import numpy as np

__all__ = ["grown_to_json", "grown_from_json", "arrays_to_json", "runs", "from_runs"]

KINDS = ("numeric", "nominal")
"""A test's kind as the arrays layout numbers it (``kind``: an index into this; -1 at a leaf)."""
_INTS = ("<i1", "<i2", "<i4", "<i8")


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


def _encoded(values: np.ndarray, binary: bool):
    """One column: ``{"dtype", "base64"}`` of its values (integers in the narrowest dtype holding them,
    floats as ``<f8``), or with ``binary`` False a list of numbers."""
    values = np.ascontiguousarray(values).reshape(-1)
    if not binary:
        return values.tolist()
    if values.dtype.kind == "f":
        dtype = "<f8"
    else:
        low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
        dtype = next(d for d in _INTS if np.iinfo(d).min <= low and high <= np.iinfo(d).max)
    return {"dtype": dtype, "base64": base64.b64encode(values.astype(dtype).tobytes()).decode("ascii")}


def _decoded(column, floats: bool = False) -> np.ndarray:
    """A column of :func:`_encoded` as int64 (or with ``floats``, finite float64) numbers."""
    want = np.float64 if floats else np.int64
    if isinstance(column, list):
        if not set(map(type, column)) <= ({int, float} if floats else {int}):
            raise TypeError(f"a column holds other than {'numbers' if floats else 'integers'}")
        values = np.array(column, dtype=want)
    else:
        if not isinstance(column, dict) or set(column) != {"dtype", "base64"} \
                or column["dtype"] not in (("<f8",) if floats else _INTS) or not isinstance(column["base64"], str):
            raise TypeError("a column is a list of numbers or {\"dtype\", \"base64\"} of one of "
                            + (str(["<f8"]) if floats else str(list(_INTS))))
        try:
            raw = base64.b64decode(column["base64"], validate=True)
        except binascii.Error as exc:
            raise ValueError(f"a column's base64 is damaged: {exc}") from None
        dtype = np.dtype(column["dtype"])
        if len(raw) % dtype.itemsize:
            raise ValueError(f"a column's bytes are not a whole number of {column['dtype']} values")
        values = np.frombuffer(raw, dtype=dtype).astype(want)
    if floats and not np.all(np.isfinite(values)):
        raise ValueError("a column holds a number that is not finite")
    return values


def arrays_to_json(tree, *, binary: bool = True) -> dict:
    """``tree`` (a :class:`~dasktree.model.model.TreeModel`) as the arrays layout of format version 6 (see
    the module): every column one array, read back by :func:`grown_from_json` at once."""
    from .node_table import node_tests_of

    table = node_tests_of(tree.tests)
    n = tree.n_nodes
    inner = table.inner
    kind = np.full(n, -1, dtype=np.int64)
    kind[inner] = [KINDS.index(table.kind[i]) for i in np.flatnonzero(inner).tolist()]
    reasons = tree.leaf_reason
    leaf = [reasons[i] if i < len(reasons) and not inner[i] else "" for i in range(n)]
    names = sorted(set(leaf))
    code = {r: k for k, r in enumerate(names)}
    col = (lambda a: _encoded(np.asarray(a), binary))
    sizes, flat = tree.links()  # the arrays themselves: a fit's trees make no list per node for this
    out = {"layout": "arrays", "nodes": n, "depth": col(tree.depth), "counts": col(tree.counts),
           "child_count": col(sizes), "children": col(flat),
           "leaf_reasons": names, "leaf": col(np.fromiter(map(code.__getitem__, leaf), dtype=np.int64, count=n)),
           "kinds": list(KINDS), "kind": col(kind), "attribute": col(table.attribute), "default": col(table.default),
           "run_count": col(np.diff(table.run_start)), "run_child": col(table.run_value),
           "run_length": col(table.run_length), "threshold_count": col(np.diff(table.threshold_start)),
           "thresholds": col(table.thresholds),
           "groups": [[i, [list(g) for g in table.groups[i]]] for i in np.flatnonzero(inner).tolist()
                      if table.groups[i]]}
    if tree.validation is not None:
        out["validation"] = col(tree.validation)
    return out


def _arrays_from_json(d: dict):
    """The tree of :func:`arrays_to_json`'s form; a damaged one raises ``ValueError`` or ``TypeError``."""
    from .model import ChildLinks, TreeModel
    from .node_table import NodeTests

    n = d["nodes"]
    if type(n) is not int or n < 0:
        raise ValueError("the number of nodes is not a whole number >= 0")
    per_node = {name: _decoded(d[name]) for name in ("depth", "child_count", "leaf", "kind", "attribute", "default",
                                                     "run_count", "threshold_count")}
    short = [name for name, a in per_node.items() if a.size != n]
    if short:
        raise ValueError(f"the column {short[0]} has {per_node[short[0]].size} entries for {n} nodes")
    children, run_child, run_length = _decoded(d["children"]), _decoded(d["run_child"]), _decoded(d["run_length"])
    thresholds = _decoded(d["thresholds"], floats=True)
    child_count, run_count, threshold_count = per_node["child_count"], per_node["run_count"], per_node["threshold_count"]
    for name, counts, flat in (("children", child_count, children), ("runs", run_count, run_child),
                               ("thresholds", threshold_count, thresholds)):
        if np.any(counts < 0) or int(counts.sum()) != flat.size:
            raise ValueError(f"the nodes' counts of {name} do not add up to the {flat.size} there are")
    if run_length.size != run_child.size:
        raise ValueError("the runs' children and lengths differ in number")
    kinds, reasons = d["kinds"], d["leaf_reasons"]
    if not isinstance(kinds, list) or not isinstance(reasons, list) or not set(map(type, [*kinds, *reasons])) <= {str}:
        raise TypeError("the kinds and leaf reasons are lists of texts")
    kind, leaf = per_node["kind"], per_node["leaf"]
    if np.any((kind < -1) | (kind >= len(kinds))) or np.any((leaf < 0) | (leaf >= max(len(reasons), 1))):
        raise ValueError("a node's kind or leaf reason is none of the file's")
    inner = kind >= 0
    if np.any(~inner & ((per_node["attribute"] != -1) | (per_node["default"] != 0) | (run_count > 0)
                        | (threshold_count > 0))):
        raise ValueError("a leaf has a test's attribute, default, code table or thresholds")
    groups: list = [()] * n
    named = d.get("groups", [])
    if not isinstance(named, list):
        raise TypeError("the groups are a list of [node, groups]")
    for entry in named:
        i, node_groups = entry  # ValueError or TypeError unless a pair
        if type(i) is not int or not 0 <= i < n or not inner[i]:
            raise ValueError(f"groups given for {i!r}, not a tested node")
        groups[i] = tuple(tuple(int(_whole(c)) for c in g) for g in node_groups)
    kind_names = np.array([None, *kinds], dtype=object)[kind + 1].tolist()
    table = NodeTests.from_arrays(inner, per_node["attribute"], per_node["default"], kind_names, run_child, run_length,
                                  run_count, threshold_count, thresholds, groups)
    width = lambda name: _rows_of(_decoded(d[name]), n, name)  # noqa: E731
    reason_of = np.array(reasons or [""], dtype=object)[leaf].tolist()
    # the children's lists made when first read (ChildLinks): pruning, checks and prediction read the arrays
    tree = TreeModel(table, ChildLinks(child_count, children), width("counts"), per_node["depth"],
                     width("validation") if "validation" in d else None, reason_of)
    tree.__dict__["_links_read"] = True  # TreeModel.links, as read: whole numbers
    return tree


def _whole(c):
    if type(c) is not int:
        raise TypeError("a group's code is not an integer")
    return c


def _rows_of(values: np.ndarray, n: int, name: str) -> np.ndarray:
    """A flat column of n rows of k numbers as an (n, k) array."""
    if n == 0:
        if values.size:
            raise ValueError(f"the column {name} has entries for no node")
        return values.reshape(0, 0)
    if values.size % n:
        raise ValueError(f"the column {name} has {values.size} entries, not a multiple of the {n} nodes")
    return values.reshape(n, values.size // n)


def grown_from_json(d: dict):
    """A :class:`~dasktree.model.model.TreeModel` from :func:`arrays_to_json`'s form (format version 6),
    :func:`grown_to_json`'s (versions 3 to 5) or the node list of :meth:`TreeModel.to_json` (model files of
    versions 1 and 2, and the main tree and fold trees of version 3). Its tests
    stay columns (:class:`~dasktree.model.node_table.NodeTests`), each made when first read."""
    from .model import TreeModel
    from .node_table import NodeTests

    if d.get("layout") == "arrays":
        return _arrays_from_json(d)
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


# ---------------------------------------------------------------- a report's long tables

def rows_to_json(rows: list) -> dict | list:
    """A table of rows (dicts of the same keys: a cp table, one row per subtree of the pruning sequence,
    thousands for a deep tree) as typed columns (format version 7): ``{"layout": "arrays", "rows": n,
    "keys": [...], "columns": {key: column}}`` (the keys sorted, each row's dict read back in that order),
    a column of whole numbers or of finite floats one base64 array (:func:`_encoded`), of None alone
    ``null``, any other a list. Reading it back
    (:func:`rows_from_json`) parses one string per column instead of a number per entry; rows that are
    not such a table come back as they are."""
    if not rows or not all(isinstance(r, dict) for r in rows):
        return rows
    if not all(isinstance(k, str) for k in rows[0]):
        return rows
    keys = sorted(rows[0])  # as a file's JSON orders them (sort_keys): the same bytes whatever the rows' order
    if any(sorted(r) != keys for r in rows):
        return rows
    columns: dict = {}
    for key in keys:
        values = [r[key] for r in rows]
        kinds = set(map(type, values))
        if kinds == {type(None)}:
            columns[key] = None
        elif kinds == {int} and all(-2**63 <= v < 2**63 for v in values):
            columns[key] = _encoded(np.array(values, dtype=np.int64), True)
        elif kinds == {float} and np.all(np.isfinite(values)):
            columns[key] = _encoded(np.array(values, dtype=np.float64), True)
        else:
            columns[key] = values
    return {"layout": "arrays", "rows": len(rows), "keys": keys, "columns": columns}


def rows_from_json(d) -> list:
    """The rows of :func:`rows_to_json` (a list, as files before version 7 hold it, comes back as it is);
    a damaged table raises ``ValueError`` or ``TypeError``."""
    if isinstance(d, list):
        return d
    if not isinstance(d, dict) or d.get("layout") != "arrays":
        raise TypeError("a table is a list of rows or {\"layout\": \"arrays\", ...}")
    n, keys, columns = d["rows"], d["keys"], d["columns"]
    if type(n) is not int or n < 0 or not isinstance(keys, list) or not isinstance(columns, dict) \
            or set(columns) != set(keys) or not all(isinstance(k, str) for k in keys):
        raise ValueError("a table's rows, keys and columns disagree")
    values = []
    for key in keys:
        column = columns[key]
        if column is None:
            column = [None] * n
        elif isinstance(column, dict):
            column = _decoded(column, floats=column.get("dtype") == "<f8").tolist()
        elif not isinstance(column, list):
            raise TypeError(f"the table's column {key!r} is not a list")
        if len(column) != n:
            raise ValueError(f"the table's column {key!r} has {len(column)} entries for {n} rows")
        values.append(column)
    return [dict(zip(keys, row)) for row in zip(*values)] if keys else [{} for _ in range(n)]
