"""A loaded model file checked whole before anything uses it: a damaged or hand-edited file is one
line naming what is wrong (a :class:`~dasktree.errors.DataError`, exit 1), never an index error deep
in prediction or a tree that routes rows to nodes that do not exist.

What holds for every model :func:`dasktree.fit` writes, and is checked here: the bins of each
feature are a known kind; a numeric feature's ``upper`` edges are finite and increasing, one fewer
than its ``values``; each tree has nodes in breadth-first order, each non-root node the child of
exactly one earlier node; a test's attribute is a feature, its code table has one entry per code of
that feature (its bins and the missing code) and sends each to one of the node's two or more
children; a leaf has no children; class counts are whole numbers >= 0, one per class.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from ..binning.spec import NOMINAL, NUMERIC, BinSpec
from ..errors import DataError
from .node_table import node_tests_of

__all__ = ["check_model_parts"]


def check_model_parts(spec: BinSpec, trees: dict[str, object], where: str) -> None:
    """Raise :class:`DataError` unless ``spec`` and every tree of ``trees`` (name -> TreeModel) hold
    together as the module says."""
    n_classes = len(spec.classes) if spec.target is None else 2  # a regression node's sums: n and s
    if n_classes < 1:
        raise DataError(f"{where}: malformed model: no classes")
    for f in spec.features:
        if f.kind == NUMERIC:
            upper, values = np.asarray(f.upper), np.asarray(f.values)
            if upper.ndim != 1 or values.ndim != 1 or upper.size + 1 != values.size:
                raise DataError(f"{where}: malformed model: feature {f.name!r} has {upper.size} edges for "
                                f"{values.size} bins")
            if upper.size and (not np.all(np.isfinite(upper)) or np.any(np.diff(upper) <= 0)):
                raise DataError(f"{where}: malformed model: feature {f.name!r}'s bin edges are not finite "
                                "and increasing")
            if not np.all(np.isfinite(values)):
                raise DataError(f"{where}: malformed model: feature {f.name!r}'s bin values are not finite")
        elif f.kind != NOMINAL:
            raise DataError(f"{where}: malformed model: feature {f.name!r} of unknown kind {f.kind!r}")
    widths = spec.widths
    for name, tree in trees.items():
        _check_tree(tree, widths, n_classes, f"{where}: malformed model: {name}")


def _check_tree(tree, widths: np.ndarray, n_classes: int, where: str) -> None:
    n = tree.n_nodes
    if n < 1:
        raise DataError(f"{where} has no nodes")
    read = tree.__dict__.get("_links_read")  # read from a file's arrays: whole numbers already (TreeModel.links)
    if (tree.links()[0].size if read else len(tree.children)) != n or tree.counts.shape != (n, n_classes) \
            or tree.depth.shape != (n,):
        raise DataError(f"{where}: its node arrays disagree in length, or its counts are not one per class")
    if tree.validation is not None and tree.validation.shape != (n, n_classes):
        raise DataError(f"{where}: its validation counts are not one per node and class")
    if np.any(tree.counts < 0) or (tree.validation is not None and np.any(tree.validation < 0)):
        raise DataError(f"{where}: a class count is negative")
    table = node_tests_of(tree.tests)
    if read:  # its lists not made: the arrays are checked
        (lengths, flat), fault = tree.links(), False
    else:
        kids = tree.children
        fault = not set(map(type, kids)) <= {list}
        lengths = np.fromiter(map(len, kids), dtype=np.int64, count=n) if not fault else np.zeros(n, dtype=np.int64)
        try:
            flat = np.array(list(chain.from_iterable(kids)) if not fault else [])
        except (ValueError, TypeError):  # a child that is a list (nested: found by fuzzing), or of no number
            fault, flat = True, np.zeros(0, dtype=np.int64)
        fault = fault or (flat.size > 0 and flat.dtype.kind != "i")  # a child that is no integer (a bool is one)
    if not fault:  # every node's test and children at once; a fault found, the loop below names its node
        inner = table.inner
        child = flat.astype(np.int64)
        owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
        attribute = table.attribute
        known = (attribute >= 0) & (attribute < widths.size)
        width = np.where(known, widths[np.clip(attribute, 0, max(widths.size - 1, 0))] if widths.size else 0, -1)
        sizes = table.table_sizes
        fault = bool(
            np.any(~inner & (lengths > 0)) or np.any(inner & (lengths < 2))
            or np.any((child <= owner) | (child >= n)) or np.any(np.bincount(child, minlength=n) > 1)
            or np.any(inner & ~known) or np.any(inner & ((sizes != width) | (sizes == 0)))
            or np.any(inner & ((table.default < 0) | (table.default >= lengths)))
            or not set(table.kind) <= {None, NUMERIC, NOMINAL})
    parent = np.full(n, -1, dtype=np.int64)
    if fault:
        _name_the_fault(tree, widths, where)
    if flat.size:
        parent[flat.astype(np.int64)] = np.repeat(np.arange(n, dtype=np.int64), lengths)
    tested = np.flatnonzero(table.inner)
    if tested.size:  # every table's codes go to children it has: one reduction over all tables' runs
        lowest, highest = (r[tested] for r in table.child_range())
        bad = np.flatnonzero((lowest < 0) | (highest >= lengths[tested]))
        if bad.size:
            raise DataError(f"{where}: node {int(tested[bad[0]])}'s code table sends a code to a child it does not have")
    if np.any(parent[1:] == -1):
        raise DataError(f"{where}: node {int(np.flatnonzero(parent[1:] == -1)[0]) + 1} is no node's child")
    # every row of a node went to one child: a node's counts (and held-out counts) are its children's sum
    for name, counts in (("class counts", tree.counts), ("held-out counts", tree.validation)):
        if counts is None:
            continue
        summed = np.zeros_like(counts)
        np.add.at(summed, parent[1:], counts[1:])
        bad = np.flatnonzero(table.inner & np.any(summed != counts, axis=1))
        if bad.size:
            raise DataError(f"{where}: node {int(bad[0])}'s {name} are not the sum of its children's")


def _name_the_fault(tree, widths: np.ndarray, where: str) -> None:
    """Raise :class:`DataError` naming the first node whose test or children are wrong, node by node
    (read only when the checks of every node at once found one)."""
    n = tree.n_nodes
    parent = np.full(n, -1, dtype=np.int64)
    for i, (test, kids) in enumerate(zip(tree.tests, tree.children)):
        if not isinstance(kids, list):
            raise DataError(f"{where}: node {i}'s children are not a list")
        if test is None:
            if kids:
                raise DataError(f"{where}: leaf {i} has children")
            continue
        if len(kids) < 2 or any(not isinstance(c, int) or isinstance(c, bool) or not i < c < n for c in kids):
            raise DataError(f"{where}: node {i}'s children {kids[:5]} are not two or more later nodes")
        for c in kids:
            if parent[c] != -1:
                raise DataError(f"{where}: node {c} is the child of both node {parent[c]} and node {i}")
            parent[c] = i
        if not 0 <= test.attribute < widths.size:
            raise DataError(f"{where}: node {i} tests attribute {test.attribute}, of {widths.size}")
        table = test.bin_children
        if table.ndim != 1 or table.size != widths[test.attribute] or table.size == 0:
            raise DataError(f"{where}: node {i}'s code table has {table.size} entries for "
                            f"{int(widths[test.attribute])} codes")
        if not 0 <= test.default < len(kids):
            raise DataError(f"{where}: node {i}'s code table sends a code to a child it does not have")
        if test.kind not in (NUMERIC, NOMINAL):
            raise DataError(f"{where}: node {i}'s test is of unknown kind {test.kind!r}")
    raise AssertionError(f"{where}: the model check found a fault it cannot name: a dasktree bug, please report it")
