"""What a pass or a prediction needs of the forest, as flat arrays.

:class:`PassPlan` is a level pass's forest and histogram layout (built by
:meth:`dasktree.levels.forest.Forest.pass_plan`); :class:`RoutingPlan` routes rows
through every tree (prediction, and the reference walk of the tests).
Plain data: the workers receive them; they know nothing of how they were made.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .ragged import firsts
from .subtraction import Derivation, Fills, slot_cells

__all__ = ["PassPlan", "RoutingPlan", "expand_slices", "NARROW_ROWS"]

NARROW_ROWS = 1 << 16  # a node with fewer rows has uint16 counts in the mixed layout (PassPlan.narrowed)


@dataclass(frozen=True)
class PassPlan:
    """What one level pass needs: the forest as flat arrays and the histogram layout.

    Rows walk the forest's *distinct* nodes: from a node, every branch (one
    per distinct test among its trees) sends the row to one child, so a row
    visits each node it reaches exactly once, whatever the number of trees
    sharing it. Node ``n`` has branches ``branch_start[n]:branch_start[n+1]``;
    branch ``b`` tests attribute ``branch_attribute[b]`` and sends code ``c``
    to node ``children[branch_child[b] + i]``, its child of index ``i``: for a
    threshold branch (``branch_cut[b] >= 0``) ``branch_default[b]`` when ``c``
    is 0 (missing), else 0 for ``c <= branch_cut[b]`` and 1 above; for another,
    ``table[branch_offset[b] + c]`` (the table holds child indices, uint8 or
    uint16).

    A counted node (``node_slot[n] = s >= 0``) gets ``slot_slices[s]`` slices
    of ``total_bins x n_classes`` cells from ``slot_base[s]`` in the flat
    histogram: one per part held out by its trees, plus, unless every part of
    the first repetition is among them, a *rest* slice (slice 0) for the other
    rows of the first repetition. A row of repetition ``r`` in part ``p``
    goes to slice ``part_slice[s, r * n_folds + p]`` (-1: not counted there).
    So a node of the main tree alone costs one slice, not one per fold.

    *Bagged* (``bagged``, a forest of bootstrap members, :mod:`dasktree.io.bagging`): the rows'
    ``part`` holds each row's multiplicity in each member (one line per member), and member ``m``'s
    slice of slot ``s`` is ``part_slice[s, m]`` (-1: the member does not reach the node); the row
    adds its multiplicity there (times its weight), nothing where it is 0.

    *Mixed layout* (``slot_wide`` set, :meth:`narrowed`): the histogram is a
    uint16 array and ``slot_base``, ``size`` count its 2-byte units. A slot of
    a node with fewer than ``NARROW_ROWS`` rows holds uint16 counts (no cell
    can count more rows than its node has); a *wide* slot holds int32 counts
    in twice the units, read through an int32 view. Every slot starts at an
    even unit, so that view is aligned. A deep forest level is mostly small
    nodes: half the memory to fault in, fill, send and add.
    """

    node_slot: np.ndarray  # (n_nodes,) int32
    branch_start: np.ndarray  # (n_nodes + 1,) int64
    branch_attribute: np.ndarray  # (n_branches,) int32
    branch_offset: np.ndarray  # (n_branches,) int64
    table: np.ndarray  # uint8 (uint16) child index of each code of each branch that is not a threshold
    branch_cut: np.ndarray  # (n_branches,) int32 cut of a threshold branch, -1 for a table
    branch_default: np.ndarray  # (n_branches,) int32 child index of code 0 of a threshold branch
    branch_child: np.ndarray  # (n_branches,) int64 first child of each branch in children
    children: np.ndarray  # int32 child node ids
    slot_base: np.ndarray  # (n_slots,) int64 first cell of each slot
    slot_slices: np.ndarray  # (n_slots,) int64
    part_slice: np.ndarray  # (n_slots, n_parts) int16
    slot_parts: tuple  # per slot: the tracked parts, in slice order after the rest slice
    slot_rest: tuple  # per slot: whether slice 0 is the rest slice
    total_bins: int
    n_classes: int
    size: int  # cells of the whole flat histogram
    node_open: np.ndarray | None = None  # (n_nodes,) uint8: 1 for the frontier's nodes (all groups of the level)
    start_width: int = 1  # start nodes kept per row: up to one per tree, at most MAX_STARTS
    forest_id: str = ""  # the forest's identity: start nodes kept between passes are valid within it
    derived: tuple[Derivation, ...] = ()  # slots not counted (node_slot -1) but derived (dasktree.kernels.subtraction)
    fills: Fills | tuple = ()  # the derived slots in cells, for the workers (set by the Dask runner)
    slot_wide: np.ndarray | None = None  # (n_slots,) bool: the mixed layout's int32 slots; None: uniform
    bagged: bool = False  # a bagged forest's pass: ``part[m, row]`` is the row's multiplicity in member m
    keeps_starts: ClassVar[bool] = True  # rows keep their start nodes between passes (a pass walks from there)

    @classmethod
    def root(cls, widths: np.ndarray, n_classes: int, n_folds: int = 1, n_repeats: int = 1) -> "PassPlan":
        """The plan of a single pass at the root of a one-tree forest: every row counted once, in slot 0.

        ``plan.view(hist, 0)[0]`` is the whole data's (total_bins, n_classes) class-count histogram
        (discretization's one histogram pass). Where the rows carry fold parts (``n_folds`` per
        repetition), the root's one *rest* slice takes the first repetition's parts together: every
        row once. Equal, field for field, to :meth:`dasktree.levels.forest.Forest.pass_plan` of a
        new one-tree forest's root (tested).
        """
        import uuid

        total_bins = int(np.sum(widths))
        empty = np.zeros(0, dtype=np.int64)
        part_slice = np.full((1, n_folds * n_repeats), -1, dtype=np.int16)
        part_slice[0, :n_folds] = 0
        return cls(
            node_slot=np.zeros(1, dtype=np.int32), branch_start=np.zeros(2, dtype=np.int64),
            branch_attribute=empty.astype(np.int32), branch_offset=empty, table=np.zeros(0, dtype=np.uint8),
            branch_cut=empty.astype(np.int32), branch_default=empty.astype(np.int32), branch_child=empty,
            children=empty.astype(np.int32), slot_base=np.zeros(1, dtype=np.int64),
            slot_slices=np.ones(1, dtype=np.int64), part_slice=part_slice, slot_parts=((),),
            slot_rest=(True,), total_bins=total_bins, n_classes=n_classes, size=total_bins * n_classes,
            node_open=np.ones(1, dtype=np.uint8), start_width=1, forest_id=uuid.uuid4().hex,
        )

    @property
    def mixed(self) -> bool:
        return self.slot_wide is not None

    @property
    def hist_bytes(self) -> int:
        """Bytes of one worker's histogram of the pass (int32 cells, or the mixed layout's units)."""
        return self.size * (2 if self.mixed else 4)

    def zeros(self, dtype=np.int32) -> np.ndarray:
        """A histogram to count into: the mixed layout's uint16 units, else ``dtype`` cells."""
        return np.zeros(self.size, dtype=np.uint16 if self.mixed else dtype)

    def slot_units(self) -> np.ndarray:
        """Each slot's length in the histogram (cells, or units of the mixed layout, padding included)."""
        cells = self.slot_slices * self.cells
        if not self.mixed:
            return cells
        units = cells * np.where(self.slot_wide, 2, 1)
        return units + units % 2

    def uniform_base(self) -> np.ndarray:
        """Each slot's first cell in the uniform layout (slices of ``cells`` back to back, in slot order)."""
        return firsts(self.slot_slices * self.cells)

    def narrowed(self, rows) -> "PassPlan":
        """This plan in the mixed layout, given the rows of each slot's node (exact, from the last pass);
        itself when a node's rows are unknown (0) or 2**31 or more, or when it is mixed already."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.mixed or rows.size != self.n_slots or not rows.size or rows.min() <= 0 or rows.max() >= 2**31:
            return self
        narrowed = dataclasses.replace(self, slot_wide=rows >= NARROW_ROWS)
        units = narrowed.slot_units()
        return dataclasses.replace(narrowed, slot_base=firsts(units), size=int(units.sum()))

    def counting_all(self) -> "PassPlan":
        """This plan with its derived slots counted like the others (when the last pass's counts are not at hand)."""
        if not self.derived:
            return self
        node_slot = self.node_slot.copy()
        for d in self.derived:
            node_slot[d.node] = d.slot
        return dataclasses.replace(self, node_slot=node_slot, derived=(), fills=())

    def for_workers(self, fills) -> "PassPlan":
        """This plan as the workers count it: ``fills`` (the derived slots in cells) set, and what only
        the search reads (the derivations, each slot's parts) left behind."""
        return dataclasses.replace(self, derived=(), slot_parts=(), slot_rest=(), fills=fills)

    def kept_slots(self) -> tuple:
        """Where this pass's nodes are in its histogram (every node's slot, derived ones included; each
        slot's first cell; the mixed layout's wide slots), for the next pass to derive from."""
        return self.counting_all().node_slot, self.slot_base, self.slot_wide

    @property
    def n_slots(self) -> int:
        return int(self.slot_base.size)

    @property
    def cells(self) -> int:
        """Cells of one slice: total_bins x n_classes."""
        return self.total_bins * self.n_classes

    def child(self, b, code):
        """Child node(s) of branch(es) ``b`` for code(s) ``code`` (numpy)."""
        b, code = np.asarray(b, dtype=np.int64), np.asarray(code, dtype=np.int64)
        cut = self.branch_cut[b]
        index = np.where(code == 0, self.branch_default[b], (code > cut).astype(np.int64))
        if self.table.size:
            in_table = self.table[np.where(cut < 0, self.branch_offset[b] + code, 0)]
            index = np.where(cut < 0, in_table, index)
        return self.children[self.branch_child[b] + index]

    def view(self, hist: np.ndarray, slot: int) -> np.ndarray:
        """Slot ``slot`` of a flat histogram as (slices, total_bins, n_classes)."""
        n = int(self.slot_slices[slot])
        wide = bool(self.slot_wide[slot]) if self.mixed else False
        return slot_cells(hist, int(self.slot_base[slot]), n * self.cells, wide).reshape(
            n, self.total_bins, self.n_classes)


def expand_slices(sliced: np.ndarray, parts: tuple[int, ...], rest: bool, n_parts: int, n_folds: int) -> np.ndarray:
    """A node's per-slice arrays (slices, ...) as (n_parts + 1, ...): each part, then the total.

    Parts the node does not track stay zero; the total is the rest slice plus
    the tracked parts of the first repetition.
    """
    out = np.zeros((n_parts + 1, *sliced.shape[1:]), dtype=sliced.dtype)
    first = int(rest)
    if rest:
        out[n_parts] += sliced[0]
    for j, p in enumerate(parts):
        out[p] = sliced[first + j]
        if p < n_folds:
            out[n_parts] += sliced[first + j]
    return out


@dataclass(frozen=True)
class RoutingPlan:
    """Flat arrays that route rows through every tree of the forest.

    An *entry* is one tree's view of one node. ``entry_attribute[e]`` is the
    tested attribute (-1 when the tree has no test there); the child of code
    ``c`` is entry ``table[entry_offset[e] + c]``. ``slot_of_entry[e]`` is the
    histogram slot of the entry's node in this pass, -1 when it is not counted.
    """

    root_entry: np.ndarray  # (n_trees,)
    entry_attribute: np.ndarray  # (n_entries,) int32
    entry_offset: np.ndarray  # (n_entries,) int64
    slot_of_entry: np.ndarray  # (n_entries,) int32
    table: np.ndarray  # int32
    depth: int  # number of tests on the longest path
    n_slots: int
