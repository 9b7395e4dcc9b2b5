"""Pass 0's summaries merged one at a time as they come, in memory bounded by the grid.

A part's numeric sketch on the fine grid (:mod:`dasktree.binning.summary`) holds
a cell per distinct cell its values fall in: on continuous data, about as many
as the part's rows, three times its values' bytes. Gathering every part's
sketch before merging them takes memory in proportion to the rows. Here each
sketch is added, as it arrives, to one :class:`GridCounter` per column, and let
go: the counter holds a dense block of :data:`~dasktree.binning.summary.MANTISSA_CELLS`
cells (a count and a largest value each) per sign and exponent well taken, and
the few cells of the other exponents as they are, so its size is bounded by the
grid (the exponents the data spans), not by the rows.

The result is the summary :func:`~dasktree.binning.summary.merge_all` gives of
them all, bit for bit, in any order: counts add exactly, largest values are
maxima, and a column's exact distinct values turn to the grid when their union
exceeds ``max_bins``, as they do there.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Iterable

import numpy as np

from .summary import GRID_BITS, MANTISSA_CELLS, NumericSketch, Summary, _to_grid, merge_all, merge_numeric

__all__ = ["GridCounter", "merge_streaming"]

_HIGH_SHIFT = np.uint64(GRID_BITS - 12)  # a cell id's high 12 bits: its sign and exponent


DENSE_CELLS = MANTISSA_CELLS // 3  # a sign and exponent with this many cells taken gets a dense block


class GridCounter:
    """One column's sketches added up: exact distinct values while their union has at most
    ``max_bins``, then on the grid: a dense block (a count and a largest value per cell) for
    each sign and exponent with at least :data:`DENSE_CELLS` cells taken, the cells of the
    others as a sparse sketch. A dense block takes 16 bytes a cell, a sparse cell 24: the
    counter is never much larger than the sparse sum, and bounded by the grid."""

    def __init__(self, max_bins: int):
        self.max_bins = max_bins
        self.exact: NumericSketch | None = None  # the exact union so far (None: empty, or on the grid)
        self.sparse: NumericSketch | None = None  # on the grid: the cells of exponents without a block
        self.block_of: dict[int, int] = {}  # high bits -> row of ``counts`` / ``maxes``
        self.row_of = np.full(1 << 12, -1, dtype=np.intp)  # the same as an array (-1: no block)
        self.counts = np.zeros((0, MANTISSA_CELLS), dtype=np.int64)
        self.maxes = np.zeros((0, MANTISSA_CELLS), dtype=np.float64)

    @property
    def on_grid(self) -> bool:
        return self.sparse is not None

    def add(self, sketch: NumericSketch) -> None:
        """Add one part's sketch."""
        if not self.on_grid and sketch.exact:
            merged = sketch if self.exact is None else merge_numeric([self.exact, sketch], self.max_bins)
            if merged.exact:
                self.exact = merged
                return
            sketch = merged  # the union turned to the grid
        elif self.exact is not None:
            sketch = merge_numeric([self.exact, sketch], self.max_bins)  # on the grid: exact plus grid
        self.exact = None
        grid = _to_grid(sketch)
        if self.sparse is None:
            self.sparse = NumericSketch(False, grid.keys[:0], grid.counts[:0], grid.maxes[:0])
        highs = (grid.keys >> _HIGH_SHIFT).astype(np.int64)
        in_block = self.row_of[highs] >= 0
        if in_block.any():
            self._add_dense(grid.keys[in_block], grid.counts[in_block], grid.maxes[in_block])
        if not in_block.all():
            self.sparse = _sum_cells(self.sparse, grid.keys[~in_block], grid.counts[~in_block], grid.maxes[~in_block])
        self._promote()

    def _promote(self) -> None:
        """Give a dense block to each sign and exponent of the sparse cells with DENSE_CELLS cells taken."""
        highs = (self.sparse.keys >> _HIGH_SHIFT).astype(np.int64)
        present, taken = np.unique(highs, return_counts=True)
        full = present[taken >= DENSE_CELLS]
        if not full.size:
            return
        for h in full.tolist():
            self.row_of[h] = self.block_of[h] = len(self.block_of)
        self.counts = np.concatenate([self.counts, np.zeros((full.size, MANTISSA_CELLS), np.int64)])
        self.maxes = np.concatenate([self.maxes, np.full((full.size, MANTISSA_CELLS), -np.inf)])
        moving = np.isin(highs, full)
        s = self.sparse
        self._add_dense(s.keys[moving], s.counts[moving], s.maxes[moving])
        self.sparse = NumericSketch(False, s.keys[~moving], s.counts[~moving], s.maxes[~moving])

    def _add_dense(self, keys: np.ndarray, counts: np.ndarray, maxes: np.ndarray) -> None:
        """Add grid cells (sorted, distinct) whose exponents have blocks."""
        highs = (keys >> _HIGH_SHIFT).astype(np.int64)
        cells = self.row_of[highs] * MANTISSA_CELLS + (keys & np.uint64(MANTISSA_CELLS - 1)).astype(np.intp)
        flat_counts, flat_maxes = self.counts.reshape(-1), self.maxes.reshape(-1)  # views
        flat_counts[cells] += counts  # distinct cells: each added once
        flat_maxes[cells] = np.maximum(flat_maxes[cells], maxes)

    def sketch(self) -> NumericSketch | None:
        """The sum of every sketch added (None: none was)."""
        if not self.on_grid:
            return self.exact
        highs = np.array(sorted(self.block_of), dtype=np.int64)
        rows = np.array([self.block_of[h] for h in highs.tolist()], dtype=np.intp)
        counts, maxes = self.counts[rows].ravel(), self.maxes[rows].ravel()
        used = np.flatnonzero(counts)
        keys = (highs[used // MANTISSA_CELLS].astype(np.uint64) << _HIGH_SHIFT) \
            | (used % MANTISSA_CELLS).astype(np.uint64)
        keys = np.concatenate([keys, self.sparse.keys])
        order = np.argsort(keys, kind="stable")  # the blocks' cells and the sparse ones are disjoint
        return NumericSketch(False, keys[order], np.concatenate([counts[used], self.sparse.counts])[order],
                             np.concatenate([maxes[used], self.sparse.maxes])[order])


def _sum_cells(sparse: NumericSketch, keys: np.ndarray, counts: np.ndarray, maxes: np.ndarray) -> NumericSketch:
    """A sparse grid sketch plus some cells (sorted, distinct): summed by sorting (few cells: the
    exponents without a block), as :func:`~dasktree.binning.summary.merge_numeric` sums them."""
    keys = np.concatenate([sparse.keys, keys])
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    first = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if keys.size else order
    return NumericSketch(False, keys[first],
                         np.add.reduceat(np.concatenate([sparse.counts, counts])[order], first).astype(np.int64)
                         if keys.size else sparse.counts,
                         np.maximum.reduceat(np.concatenate([sparse.maxes, maxes])[order], first)
                         if keys.size else sparse.maxes)


def merge_streaming(summaries: Iterable[Summary]) -> Summary:
    """The merged summary of ``summaries``, each added as it comes and let go (numeric sketches
    into a :class:`GridCounter` per column; the rest merged as :func:`merge_all` merges it). A
    single summary is returned as it is."""
    summaries = iter(summaries)
    first = next(summaries, None)
    second = next(summaries, None)
    if first is None:
        raise ValueError("no summaries to merge")
    if second is None:
        return first
    summaries = itertools.chain([first, second], summaries)
    rest: Summary | None = None
    counters: list[GridCounter | None] = []
    for summary in summaries:
        if rest is None:
            counters = [None if s is None else GridCounter(summary.max_bins) for s in summary.numeric]
        for counter, sketch in zip(counters, summary.numeric):
            if counter is not None:
                counter.add(sketch)
        bare = dataclasses.replace(summary, numeric=[None] * len(summary.numeric))
        rest = bare if rest is None else merge_all([rest, bare])
    sketches = []
    for j, counter in enumerate(counters):  # each counter let go as its sketch is made: not all at once beside them
        counters[j] = None
        sketches.append(None if counter is None else counter.sketch())
        del counter
    return dataclasses.replace(rest, numeric=sketches)
