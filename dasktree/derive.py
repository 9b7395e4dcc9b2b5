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
the last pass's histogram of each of its groups (:mod:`dasktree.holders`),
and nothing travels. It needs the same groups as last pass: the groups are
fixed for a fit, and a holder refuses fills from a pass it did not count.

A child tracks the parts of its branch's trees, a subset of its parent's, so
its slices are sums of the parent's: a part's slice is the parent's slice of
that part; the child's rest slice is the parent's rest slice plus the parent's
slices of first-repetition parts the child does not track
(:func:`slice_map`).

Pure numpy; the runners decide where the last pass's counts are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Derivation", "Fill", "fills_of", "slice_map", "fill_derived", "slot_cells"]


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
class Fill:
    """A :class:`Derivation` in cells: the child's ``n_slices`` slices from ``base`` of this pass's
    histogram are the parent's slices (``parent_slices``, relative to ``parent_base`` of the last
    pass's histogram) minus the siblings' slices from ``sibling_bases``."""

    base: int
    n_slices: int
    sibling_bases: tuple[int, ...]
    parent_base: int
    parent_slices: tuple[tuple[int, ...], ...]
    wide: tuple[bool, ...]  # the child's, siblings', parent's slots hold int32 (mixed layouts: PassPlan.narrowed)


def slot_cells(hist: np.ndarray, base: int, n: int, wide: bool) -> np.ndarray:
    """``n`` cells from ``base`` of a histogram: read through an int32 view when ``wide`` and ``hist``
    holds a mixed layout's uint16 units (:class:`~dasktree.plans.PassPlan`), else as they are."""
    if wide and hist.dtype == np.uint16:
        return hist[base:base + 2 * n].view(np.int32)
    return hist[base:base + n]


def fills_of(plan, last_node_slot: np.ndarray, last_slot_base: np.ndarray,
             last_slot_wide: np.ndarray | None = None) -> tuple[Fill, ...]:
    """The fills of ``plan.derived`` (a :class:`~dasktree.plans.PassPlan`), given the last pass's
    slot of every node (``node_slot`` with its derived slots included), the slots' first cells and,
    in a mixed layout, which are wide."""
    base = plan.slot_base
    wide = plan.slot_wide if plan.mixed else np.zeros(plan.n_slots, dtype=bool)
    last_wide = np.zeros(len(last_slot_base), dtype=bool) if last_slot_wide is None else last_slot_wide
    fills = []
    for d in plan.derived:
        parent = last_node_slot[d.parent]
        fills.append(Fill(int(base[d.slot]), int(plan.slot_slices[d.slot]), tuple(int(base[s]) for s in d.siblings),
                          int(last_slot_base[parent]), d.parent_slices,
                          (bool(wide[d.slot]), *(bool(wide[s]) for s in d.siblings), bool(last_wide[parent]))))
    return tuple(fills)


def slice_map(child_parts: tuple[int, ...], child_rest: bool, parent_parts: tuple[int, ...], parent_rest: bool,
              n_folds: int) -> tuple[tuple[int, ...], ...]:
    """For each slice of a child (rest slice first, then its parts), the parent slices that sum to it.

    Both layouts are :meth:`~dasktree.forest.Forest.slices`: a rest slice (when
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


def fill_derived(hist: np.ndarray, last: list[np.ndarray], fills: tuple[Fill, ...], cells: int) -> None:
    """Write each derived slot of ``hist`` (this pass's counts of some rows), in place, from
    ``last``: the last pass's counts of the same rows, summed over the list. The siblings are
    read from ``hist`` itself, so they must be counted slots. Either histogram may be in a
    mixed layout (uint16 units, :meth:`~dasktree.plans.PassPlan.narrowed`)."""
    for f in fills:
        child_wide, *sibling_wide, parent_wide = f.wide
        span = f.n_slices * cells
        child = np.zeros((f.n_slices, cells), dtype=np.int64)
        parent_span = (1 + max((s for sources in f.parent_slices for s in sources), default=0)) * cells
        for counts in last:
            parent = slot_cells(counts, f.parent_base, parent_span, parent_wide).reshape(-1, cells)
            for j, sources in enumerate(f.parent_slices):
                for s in sources:
                    child[j] += parent[s]
        for b, w in zip(f.sibling_bases, sibling_wide):
            child -= slot_cells(hist, b, span, w).reshape(f.n_slices, cells)
        slot_cells(hist, f.base, span, child_wide)[:] = child.ravel()  # exact: the child's counts fit its slot
