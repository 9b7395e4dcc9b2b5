"""A tree's tests as arrays, each :class:`~dasktree.split.node_tests.Test` made only when it is read.

A model file's tree of 30,000 leaves holds about as many tests; making a ``Test`` object for each
(its code -> child table an array of its own, its thresholds a tuple) when the file loads took most
of ``dasktree show``'s time. :class:`NodeTests` keeps them as columns instead: each node's
attribute (leaves: -1), kind, default child, where its code table starts in one flat int16 array
of every table (``tables[table_start[i]:table_start[i + 1]]``: child of each code, code 0 the
missing values), its thresholds likewise in one flat float array, and a nominal test's groups. It is
a sequence of ``Test | None`` (None at a leaf) as the list a fit builds: ``tests[i]`` makes node
``i``'s test on first read and keeps it. What reads every node at once (the model check, the
routing plan, counting leaves) reads the columns and makes no ``Test``.

:meth:`NodeTests.from_arrays` takes the tests of a model file's arrays, :meth:`NodeTests.from_columns`
decodes those of its columns (older files; both :mod:`dasktree.model.grown_json`), :meth:`NodeTests.from_nodes` those of a node list (older files,
forest members), :meth:`NodeTests.from_tests` a list of ``Test`` objects. Malformed values raise
``ValueError`` or ``TypeError`` here, when the file loads, never later when a test is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import index as _index
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # made only when a test is read: the split search's package loads the compiled kernels
    from ..split.api import Test

__all__ = ["NodeTests", "node_tests_of", "runs_of"]

_INT16 = np.iinfo(np.int16)
MAX_CODES = 65536
"""The most codes a feature has (``max_bins`` and ``max_categories`` are at most 65535, and code 0)."""


def _offsets(lengths) -> np.ndarray:
    """``[0, l0, l0 + l1, ...]`` (int64, one more than ``lengths``)."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=out[1:])
    return out


def _ints(values, count: int) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64, count=count)


def runs_of(tables: np.ndarray, table_start: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every code table as runs, all at once: (each run's child, its length, node ``i``'s runs
    ``run_start[i]:run_start[i + 1]``); a run never crosses from one table into the next."""
    flat = np.asarray(tables, dtype=np.int64)
    bounds = np.zeros(flat.size, dtype=bool)
    sizes = np.diff(table_start)
    bounds[table_start[:-1][sizes > 0]] = True
    if flat.size:
        bounds[1:] |= flat[1:] != flat[:-1]
    starts = np.flatnonzero(bounds)
    return flat[starts], np.diff(np.append(starts, flat.size)), np.searchsorted(starts, table_start)


class NodeTests(Sequence):
    """Every node's test as columns (``n`` nodes); ``self[i]`` is node ``i``'s :class:`Test`, or None at a leaf.

    Attributes
    ----------
    inner : ndarray of bool, shape (n,)
        True where the node has a test.
    attribute, default : ndarray of int64, shape (n,)
        The tested attribute and the default child (-1 and 0 at a leaf).
    kind : list of str or None, length n
        ``"numeric"`` or ``"nominal"`` (None at a leaf).
    run_value, run_length : ndarray of int64; run_start : ndarray of int64, shape (n + 1,)
        The code -> child tables as runs: node ``i``'s table is ``run_length[k]`` times child
        ``run_value[k]`` for ``k`` in ``run_start[i]:run_start[i + 1]`` (none at a leaf), as a model
        file writes it; :attr:`tables` is them written out, made when first read.
    table_start : ndarray of int64, shape (n + 1,)
        Node ``i``'s table is ``tables[table_start[i]:table_start[i + 1]]``.
    threshold_start : ndarray of int64, shape (n + 1,); thresholds : ndarray of float64
        A numeric test's thresholds, ``thresholds[threshold_start[i]:threshold_start[i + 1]]``.
    groups : list, length n
        A nominal test's groups (a tuple of tuples of codes); ``()`` elsewhere.
    """

    __slots__ = ("inner", "attribute", "default", "kind", "run_value", "run_length", "run_start", "table_start",
                 "threshold_start", "thresholds", "groups", "_tables", "_made", "_lists")

    def __init__(self, inner, attribute, default, kind, run_value, run_length, run_start, threshold_start,
                 thresholds, groups, tables=None):
        self.inner, self.attribute, self.default, self.kind = inner, attribute, default, kind
        self.run_value, self.run_length, self.run_start = run_value, run_length, run_start
        ends = np.zeros(run_length.size + 1, dtype=np.int64)
        np.cumsum(run_length, out=ends[1:])
        self.table_start = ends[run_start]
        self.threshold_start, self.thresholds, self.groups = threshold_start, thresholds, groups
        self._tables = tables
        self._made: list = [None] * len(kind)
        self._lists: tuple | None = None  # the columns as Python lists, made on the first test made

    # ------------------------------------------------------------------ the sequence
    def __len__(self) -> int:
        return len(self.kind)

    def __getitem__(self, i):
        if type(i) is not int:
            if isinstance(i, slice):
                return [self[j] for j in range(*i.indices(len(self)))]
            i = _index(i)
        test = self._made[i]  # IndexError past the end, as a list's
        if test is None and self.kind[i] is not None:
            test = self._made[i] = self._make(i if i >= 0 else i + len(self.kind))
        return test

    def __iter__(self):
        return (self[i] for i in range(len(self.kind)))

    def __repr__(self) -> str:
        return f"<NodeTests: {len(self)} nodes, {int(np.count_nonzero(self.inner))} tests>"

    def _make(self, i: int) -> Test:
        from ..split.api import Test

        if self._lists is None:  # reading numpy scalars one by one costs more than the lists once
            lowest, highest = self.child_range()
            self._lists = (self.attribute.tolist(), self.default.tolist(), self.run_start.tolist(),
                           self.threshold_start.tolist(), self.thresholds.tolist(), (highest + 1).tolist(),
                           self.table_start.tolist())
        attribute, default, runs, cut, thresholds, arity, start = self._lists
        if self._tables is not None:
            table = self._tables[start[i]:start[i + 1]]
        else:
            a, b = runs[i], runs[i + 1]
            table = np.repeat(self.run_value[a:b], self.run_length[a:b]).astype(np.int16)
        test = Test(attribute[i], self.kind[i], table, default[i], tuple(thresholds[cut[i]:cut[i + 1]]), self.groups[i])
        return test.knowing_arity(arity[i]) if start[i + 1] > start[i] else test

    # ------------------------------------------------------------------ what reads every node at once
    @property
    def n_leaves(self) -> int:
        return int(len(self.kind) - np.count_nonzero(self.inner))

    @property
    def table_sizes(self) -> np.ndarray:
        return np.diff(self.table_start)

    @property
    def tables(self) -> np.ndarray:
        """Every code table written out, one after another (int16; made from the runs when first read)."""
        if self._tables is None:
            self._tables = np.repeat(self.run_value, self.run_length).astype(np.int16)
        return self._tables

    def child_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Each node's least and greatest child a code goes to (-1 and -1 where it has no table), from
        the runs: no table written out."""
        lowest = np.full(len(self.kind), -1, dtype=np.int64)
        highest = lowest.copy()
        has = np.flatnonzero(np.diff(self.run_start) > 0)
        if has.size:
            lowest[has] = np.minimum.reduceat(self.run_value, self.run_start[has])
            highest[has] = np.maximum.reduceat(self.run_value, self.run_start[has])
        return lowest, highest

    # ------------------------------------------------------------------ made from
    @classmethod
    def _build(cls, n: int, where: list[int], attribute, kind, default, runs: tuple, thresholds: list,
               groups: list, tables=None) -> "NodeTests":
        """From the inner nodes' fields (``where``: their indices, increasing) and their tables' runs
        ``(value, length, per inner node its number of runs)``."""
        pos = np.asarray(where, dtype=np.int64)
        inner = np.zeros(n, dtype=bool)
        inner[pos] = True
        att = np.full(n, -1, dtype=np.int64)
        att[pos] = np.asarray(attribute, dtype=np.int64).reshape(-1)
        dflt = np.zeros(n, dtype=np.int64)
        dflt[pos] = np.asarray(default, dtype=np.int64).reshape(-1)
        if not set(map(type, kind)) <= {str}:
            raise ValueError("a test's kind is not a text")
        kinds: list = [None] * n
        grps: list = [()] * n
        for k, i in enumerate(where):
            kinds[i] = kind[k]
            if groups[k]:
                grps[i] = tuple(tuple(_index(c) for c in g) for g in groups[k])
        value, length, count = runs
        if value.size and (value.min() < _INT16.min or value.max() > _INT16.max):
            raise ValueError("a code table names a child beyond int16")
        per_node = np.zeros(n, dtype=np.int64)
        per_node[pos] = count
        thr_lengths = np.zeros(n, dtype=np.int64)
        thr_lengths[pos] = [len(t) for t in thresholds]
        thr = np.fromiter(chain.from_iterable(thresholds), dtype=np.float64, count=int(thr_lengths.sum()))
        return cls(inner, att, dflt, kinds, value, length, _offsets(per_node), _offsets(thr_lengths), thr, grps,
                   tables)

    @classmethod
    def from_columns(cls, tests: list) -> "NodeTests":
        """From a model file's column of tests: per node None (a leaf) or ``[attribute, kind, default,
        runs, thresholds or groups]``, the code table as runs ``[child, length, child, length, ...]``."""
        if not isinstance(tests, list):
            raise TypeError(f"the tests are a list, not {type(tests).__name__}")
        where = [i for i, t in enumerate(tests) if t is not None]
        inner = [tests[i] for i in where]
        if not set(map(type, inner)) <= {list} or not set(map(len, inner)) <= {5}:
            raise ValueError("a test is [attribute, kind, default, runs, thresholds or groups]")
        attribute, kind, default, runs, extra = (list(c) for c in zip(*inner)) if inner else ([], [], [], [], [])
        run_counts = [len(r) for r in runs]
        if any(c % 2 for c in run_counts):
            raise ValueError("a code table's runs are not (child, length) pairs")
        pairs = _ints(chain.from_iterable(runs), sum(run_counts)).reshape(-1, 2)
        if np.any(pairs[:, 1] < 1) or np.any(pairs[:, 1] > MAX_CODES):
            raise ValueError(f"a code table's run has a length below 1 or above {MAX_CODES} (a feature's most codes)")
        numeric = [k == "numeric" for k in kind]
        thresholds = [e if num else () for e, num in zip(extra, numeric)]
        groups = [() if num else e for e, num in zip(extra, numeric)]
        return cls._build(len(tests), where, attribute, kind, default,
                          (pairs[:, 0].copy(), pairs[:, 1].copy(), [c // 2 for c in run_counts]), thresholds, groups)

    @classmethod
    def from_arrays(cls, inner: np.ndarray, attribute: np.ndarray, default: np.ndarray, kind: list,
                    run_value: np.ndarray, run_length: np.ndarray, run_count: np.ndarray,
                    threshold_count: np.ndarray, thresholds: np.ndarray, groups: list) -> "NodeTests":
        """From a model file's arrays (:func:`~dasktree.model.grown_json.arrays_to_json`): every column
        already an array, each node's runs and thresholds counted (``run_count``, ``threshold_count``)."""
        if run_length.size and (run_length.min() < 1 or run_length.max() > MAX_CODES):
            raise ValueError(f"a code table's run has a length below 1 or above {MAX_CODES} (a feature's most codes)")
        if run_value.size and (run_value.min() < _INT16.min or run_value.max() > _INT16.max):
            raise ValueError("a code table names a child beyond int16")
        return cls(inner, attribute, default, kind, run_value, run_length, _offsets(run_count),
                   _offsets(threshold_count), thresholds, groups)

    @classmethod
    def _from_tables(cls, n: int, where: list[int], attribute, kind, default, tables_of: list, thresholds,
                     groups) -> "NodeTests":
        lengths = np.zeros(n, dtype=np.int64)
        lengths[np.asarray(where, dtype=np.int64)] = [len(t) for t in tables_of]
        start = _offsets(lengths)
        if all(type(t) is list for t in tables_of):  # a node list's tables: one pass over every entry
            flat = _ints(chain.from_iterable(tables_of), int(lengths.sum()))
        else:
            flat = (np.concatenate([np.asarray(t, dtype=np.int64).reshape(-1) for t in tables_of])
                    if tables_of else np.zeros(0, dtype=np.int64))
        if flat.size and (flat.min() < _INT16.min or flat.max() > _INT16.max):
            raise ValueError("a code table names a child beyond int16")
        value, length, run_start = runs_of(flat, start)
        count = np.diff(run_start)[np.asarray(where, dtype=np.int64)]
        return cls._build(n, where, attribute, kind, default, (value, length, count), thresholds, groups,
                          flat.astype(np.int16))

    @classmethod
    def from_nodes(cls, tests: list) -> "NodeTests":
        """From the test dicts of a node list (None at a leaf): ``{"attribute", "kind", "default",
        "bin_children", "thresholds" | "groups"}``, as :meth:`Test.to_json` writes one."""
        where = [i for i, t in enumerate(tests) if t is not None]
        inner = [tests[i] for i in where]
        tables_of = [t["bin_children"] for t in inner]
        if not set(map(type, tables_of)) <= {list} or not all(set(map(type, t)) <= {int} for t in tables_of):
            raise ValueError("a code table is not a list of integers")
        return cls._from_tables(len(tests), where, [t["attribute"] for t in inner], [t["kind"] for t in inner],
                                [t["default"] for t in inner], tables_of,
                                [t.get("thresholds", ()) for t in inner], [t.get("groups", ()) for t in inner])

    @classmethod
    def from_tests(cls, tests: Sequence) -> "NodeTests":
        """From a list of :class:`Test` or None (a tree a fit built); the tests are kept, not made again.
        A fit's nodes share their tests (a deep tree's million nodes hold a few thousand distinct ones,
        :func:`dasktree.levels.attach.attach`): each distinct test's code table is read and cut into runs
        once, and the nodes take its runs by index (the tables written out for every node were gigabytes)."""
        if isinstance(tests, NodeTests):
            return tests
        tests = list(tests)
        where = [i for i, t in enumerate(tests) if t is not None]
        inner = [tests[i] for i in where]
        slot: dict[int, int] = {}
        of = np.fromiter((slot.setdefault(id(t), len(slot)) for t in inner), dtype=np.int64, count=len(inner))
        distinct = list({id(t): t for t in inner}.values())  # first seen first: slot's numbering
        once = cls._from_tables(len(distinct), list(range(len(distinct))), [t.attribute for t in distinct],
                                [t.kind for t in distinct], [t.default for t in distinct],
                                [t.bin_children for t in distinct], [t.thresholds for t in distinct],
                                [()] * len(distinct))
        count = np.diff(once.run_start)[of]  # each inner node's runs: its test's
        first = np.repeat(once.run_start[:-1][of] - _offsets(count)[:-1], count) + np.arange(int(count.sum()))
        out = cls._build(len(tests), where, [t.attribute for t in inner], [t.kind for t in inner],
                         [t.default for t in inner], (once.run_value[first], once.run_length[first], count),
                         [t.thresholds for t in inner], [()] * len(inner))
        for i in where:  # the tests themselves, groups and all
            out._made[i] = tests[i]
            out.groups[i] = tests[i].groups
        return out


def node_tests_of(tests: Sequence) -> NodeTests:
    """``tests`` (a tree's ``tests``: a list of ``Test | None``, or already a :class:`NodeTests`) as columns."""
    return NodeTests.from_tests(tests)
