"""Histogram subtraction: one child of each branch is its parent minus its siblings.

The children of a branch partition the rows of their parent (every code,
missing included, goes to exactly one child), so the counts of any one child
are the parent's counts minus those of the others, cell for cell, exactly.
A level pass then need not count the rows of the branch's largest child: they
still move to it (it is on the frontier, so it stays a start node) but add
nothing to the histogram. This is the "histogram subtraction" of
LightGBM-style learners; in the forest it works per branch, since trees that
share a branch share its children.

The identity holds for the rows of any set of parts, so each group of parts
fills the derived slots of its own counts from its own counts of the last
pass (:func:`fill_derived`), where they already are: a worker's holder keeps
the last pass's histogram of each of its groups (:mod:`dasktree.engine.part_holders`),
and nothing travels. It needs the same groups as last pass: the groups are
fixed for a fit, and a holder refuses fills from a pass it did not count.

A child tracks the parts of its branch's trees, a subset of its parent's, so
its slices are sums of the parent's: a part's slice is the parent's slice of
that part; the child's rest slice is the parent's rest slice plus the parent's
slices of first-repetition parts the child does not track
(:func:`slice_map`).

Numpy, and one numba loop for the fills (:func:`fill_derived`); the runners decide where
the last pass's counts are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .jit import jit, numba
from .ragged import bounds


__all__ = ["Derivation", "Fills", "fills_of", "slice_map", "fill_derived", "fill_derived_numpy", "slot_cells",
           "units_and_wide"]


@dataclass(frozen=True)
class Derivation:
    """Slot ``slot`` (node ``node``) of a pass is node ``parent`` minus the slots ``siblings``.

    Child slice ``j`` is the sum of the parent's slices ``parent_slices[j]``.
    """

    node: int
    slot: int
    parent: int
    siblings: tuple[int, ...]
    parent_slices: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Fills:
    """The derived slots of a pass in cells, as flat arrays for the workers (a pass derives
    thousands at a deep forest level: as objects they took milliseconds to pickle and unpickle,
    and their fill a Python loop of 10 microseconds each).

    Fill ``f`` writes the child's ``n_slices[f]`` slices from ``base[f]`` of this pass's
    histogram: child slice ``map_child[m]`` is the sum of the parent's slices ``map_parent[m]``
    for ``m`` in ``map_first[f]:map_first[f + 1]`` (relative to ``parent_base[f]`` of the last
    pass's histogram), minus the siblings' slices from ``sibling_base[sibling_first[f]:
    sibling_first[f + 1]]``. The ``*_wide`` flags say which slots hold int32 in a mixed layout
    (:meth:`~dasktree.kernels.plans.PassPlan.narrowed`)."""

    base: np.ndarray  # (n,) int64
    n_slices: np.ndarray  # (n,) int64
    wide: np.ndarray  # (n,) uint8
    parent_base: np.ndarray  # (n,) int64
    parent_wide: np.ndarray  # (n,) uint8
    sibling_first: np.ndarray  # (n + 1,) int64
    sibling_base: np.ndarray  # int64
    sibling_wide: np.ndarray  # uint8
    map_first: np.ndarray  # (n + 1,) int64
    map_child: np.ndarray  # int64
    map_parent: np.ndarray  # int64

    def __len__(self) -> int:
        return int(self.base.size)


def slot_cells(hist: np.ndarray, base: int, n: int, wide: bool) -> np.ndarray:
    """``n`` cells from ``base`` of a histogram: read through an int32 view when ``wide`` and ``hist``
    holds a mixed layout's uint16 units (:class:`~dasktree.kernels.plans.PassPlan`), else as they are."""
    if wide and hist.dtype == np.uint16:
        return hist[base:base + 2 * n].view(np.int32)
    return hist[base:base + n]


def fills_of(plan, last_node_slot: np.ndarray, last_slot_base: np.ndarray,
             last_slot_wide: np.ndarray | None = None) -> Fills:
    """The fills of ``plan.derived`` (a :class:`~dasktree.kernels.plans.PassPlan`), given the last pass's
    slot of every node (``node_slot`` with its derived slots included), the slots' first cells and,
    in a mixed layout, which are wide."""
    base = plan.slot_base
    wide = plan.slot_wide if plan.mixed else np.zeros(plan.n_slots, dtype=bool)
    last_wide = np.zeros(len(last_slot_base), dtype=bool) if last_slot_wide is None else last_slot_wide
    derived = plan.derived
    slots = np.array([d.slot for d in derived], dtype=np.int64)
    parents = np.asarray(last_node_slot)[np.array([d.parent for d in derived], dtype=np.int64)]
    siblings = [s for d in derived for s in d.siblings]
    maps = [(j, s) for d in derived for j, sources in enumerate(d.parent_slices) for s in sources]
    return Fills(
        base=base[slots].astype(np.int64), n_slices=plan.slot_slices[slots].astype(np.int64),
        wide=wide[slots].astype(np.uint8), parent_base=np.asarray(last_slot_base)[parents].astype(np.int64),
        parent_wide=last_wide[parents].astype(np.uint8),
        sibling_first=bounds([len(d.siblings) for d in derived]),
        sibling_base=base[np.array(siblings, dtype=np.int64)].astype(np.int64),
        sibling_wide=wide[np.array(siblings, dtype=np.int64)].astype(np.uint8),
        map_first=bounds([sum(len(sources) for sources in d.parent_slices) for d in derived]),
        map_child=np.array([j for j, _ in maps], dtype=np.int64),
        map_parent=np.array([s for _, s in maps], dtype=np.int64),
    )


def slice_map(child_parts: tuple[int, ...], child_rest: bool, parent_parts: tuple[int, ...], parent_rest: bool,
              n_folds: int) -> tuple[tuple[int, ...], ...]:
    """For each slice of a child (rest slice first, then its parts), the parent slices that sum to it.

    Both layouts are :meth:`~dasktree.levels.forest.Forest.slices`: a rest slice (when
    present) holds the first-repetition rows of the parts not tracked.
    """
    parent_first = int(parent_rest)
    where = {p: parent_first + j for j, p in enumerate(parent_parts)}
    out: list[tuple[int, ...]] = []
    if child_rest:
        rest = [0] if parent_rest else []
        rest += [where[p] for p in parent_parts if p < n_folds and p not in child_parts]
        out.append(tuple(rest))
    for p in child_parts:
        if p not in where:
            raise RuntimeError(f"a child tracks part {p} that its parent does not: it's a bug, please report it")
        out.append((where[p],))
    return tuple(out)


def fill_derived(hist: np.ndarray, last: list[np.ndarray], fills: Fills, cells: int) -> None:
    """Write each derived slot of ``hist`` (this pass's counts of some rows), in place, from
    ``last``: the last pass's counts of the same rows, summed over the list. The siblings are
    read from ``hist`` itself, so they must be counted slots. Either histogram may be in a
    mixed layout (uint16 units, :meth:`~dasktree.kernels.plans.PassPlan.narrowed`); all of ``last``
    alike. One compiled loop over the fills (:func:`fill_derived_numpy` without numba)."""
    if not len(fills):
        return
    if numba is None:
        fill_derived_numpy(hist, last, fills, cells)
        return
    if len({h.dtype for h in last}) != 1:  # int32 and int64 counts (blocks past 2**31 rows): the compiled
        last = [h.astype(np.int64, copy=False) for h in last]  # loop takes one dtype; exact
    # Wide flags are set only for slots of a mixed plan, whose histograms are uint16 (PassPlan.zeros).
    _fill_numba(*units_and_wide(hist), tuple(last), tuple(units_and_wide(h)[1] for h in last), cells,
                fills.base, fills.n_slices, fills.wide, fills.parent_base, fills.parent_wide,
                fills.sibling_first, fills.sibling_base, fills.sibling_wide, fills.map_first, fills.map_child,
                fills.map_parent, np.empty(int(fills.n_slices.max()) * cells, dtype=np.int64))


def units_and_wide(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A histogram and what its wide slots are read through: an int32 view of a mixed layout's
    uint16 units (a wide slot's cell ``i`` from unit ``base`` is ``view[base // 2 + i]``), else
    the histogram itself (a uniform layout, where no slot is flagged wide)."""
    if hist.dtype == np.uint16:
        return hist, hist[:hist.size - hist.size % 2].view(np.int32)
    return hist, hist


def fill_derived_numpy(hist: np.ndarray, last: list[np.ndarray], fills: Fills, cells: int) -> None:
    """:func:`fill_derived` in numpy, a fill at a time (the reference the tests compare with)."""
    for f in range(len(fills)):
        n = int(fills.n_slices[f])
        child = np.zeros((n, cells), dtype=np.int64)
        m0, m1 = int(fills.map_first[f]), int(fills.map_first[f + 1])
        parent_span = (1 + int(fills.map_parent[m0:m1].max(initial=0))) * cells
        for counts in last:
            parent = slot_cells(counts, int(fills.parent_base[f]), parent_span,
                                bool(fills.parent_wide[f])).reshape(-1, cells)
            for j, s in zip(fills.map_child[m0:m1].tolist(), fills.map_parent[m0:m1].tolist()):
                child[j] += parent[s]
        for k in range(int(fills.sibling_first[f]), int(fills.sibling_first[f + 1])):
            child -= slot_cells(hist, int(fills.sibling_base[k]), n * cells,
                                bool(fills.sibling_wide[k])).reshape(n, cells)
        slot_cells(hist, int(fills.base[f]), n * cells, bool(fills.wide[f]))[:] = child.ravel()  # exact: fits


if numba is not None:

    @jit
    def _add(child, to, narrow, wide, base, start, n, is_wide, sign):
        """``child[to:to + n] += sign * cells start:start + n`` of the slot from ``base`` (see
        :func:`units_and_wide`); the width tested once, so each loop is a plain vector loop."""
        if is_wide:
            first = base // 2 + start
            for i in range(n):
                child[to + i] += sign * np.int64(wide[first + i])
        else:
            first = base + start
            for i in range(n):
                child[to + i] += sign * np.int64(narrow[first + i])

    @jit
    def _fill_numba(narrow, wide, last_narrow, last_wide, cells, base, n_slices, own_wide, parent_base,
                    parent_wide, sibling_first, sibling_base, sibling_wide, map_first, map_child, map_parent,
                    buffer):
        for f in range(base.size):
            span = n_slices[f] * cells
            child = buffer[:span]
            child[:] = 0
            for k in range(len(last_narrow)):
                for m in range(map_first[f], map_first[f + 1]):
                    _add(child, map_child[m] * cells, last_narrow[k], last_wide[k], parent_base[f],
                         map_parent[m] * cells, cells, parent_wide[f], 1)
            for k in range(sibling_first[f], sibling_first[f + 1]):
                _add(child, 0, narrow, wide, sibling_base[k], 0, span, sibling_wide[k], -1)
            if own_wide[f]:
                first = base[f] // 2
                for i in range(span):
                    wide[first + i] = child[i]
            else:
                first = base[f]
                for i in range(span):
                    narrow[first + i] = child[i]
