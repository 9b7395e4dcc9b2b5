"""Pass 0's summaries merged one at a time as they come, in memory bounded by the grid.

A part's numeric sketch on the fine grid (:mod:`dasktree.binning.summary`) holds
a cell per distinct cell its values fall in: on continuous data, about as many
as the part's rows, three times its values' bytes. Gathering every part's
sketch before merging them takes memory in proportion to the rows. Here each
sketch is added, as it arrives, to one :class:`GridCounter` per column, and let
go: the counter holds a dense block of :data:`~dasktree.binning.summary.MANTISSA_CELLS`
cells (a count and a largest value each) per sign and exponent present, so its
size is bounded by the grid (the exponents the data spans), not by the rows.

The result is the summary :func:`~dasktree.binning.summary.merge_all` gives of
them all, bit for bit, in any order: counts add exactly, largest values are
maxima, and a column's exact distinct values turn to the grid when their union
exceeds ``max_bins``, as they do there.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

import numpy as np

from .summary import GRID_BITS, MANTISSA_CELLS, NumericSketch, Summary, _to_grid, merge_all, merge_numeric

__all__ = ["GridCounter", "merge_streaming"]

_HIGH_SHIFT = np.uint64(GRID_BITS - 12)  # a cell id's high 12 bits: its sign and exponent


class GridCounter:
    """One column's sketches added up: exact distinct values while their union has at most
    ``max_bins``, then dense grid blocks (one per sign and exponent present)."""

    def __init__(self, max_bins: int):
        self.max_bins = max_bins
        self.exact: NumericSketch | None = None  # the exact union so far (None: empty, or on the grid)
        self.block_of: dict[int, int] = {}  # high bits -> row of ``counts`` / ``maxes``
        self.counts = np.zeros((0, MANTISSA_CELLS), dtype=np.int64)
        self.maxes = np.zeros((0, MANTISSA_CELLS), dtype=np.float64)

    @property
    def on_grid(self) -> bool:
        return bool(self.block_of)

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
        self._add_grid(_to_grid(sketch))

    def _add_grid(self, grid: NumericSketch) -> None:
        if not grid.size:
            return
        highs = (grid.keys >> _HIGH_SHIFT).astype(np.int64)  # sorted keys: runs of one high
        starts = np.flatnonzero(np.concatenate([[True], highs[1:] != highs[:-1]]))
        ends = np.append(starts[1:], highs.size)
        new = [int(h) for h in highs[starts] if int(h) not in self.block_of]
        if new:
            for h in new:
                self.block_of[h] = len(self.block_of)
            self.counts = np.concatenate([self.counts, np.zeros((len(new), MANTISSA_CELLS), np.int64)])
            self.maxes = np.concatenate([self.maxes, np.full((len(new), MANTISSA_CELLS), -np.inf)])
        low = (grid.keys & np.uint64(MANTISSA_CELLS - 1)).astype(np.intp)
        for a, b in zip(starts.tolist(), ends.tolist()):
            row = self.block_of[int(highs[a])]
            cells = low[a:b]  # distinct within a sketch: plain fancy indexing adds and maxes each once
            self.counts[row, cells] += grid.counts[a:b]
            self.maxes[row, cells] = np.maximum(self.maxes[row, cells], grid.maxes[a:b])

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
        return NumericSketch(False, keys, counts[used], maxes[used])


def merge_streaming(summaries: Iterable[Summary]) -> Summary:
    """The merged summary of ``summaries``, each added as it comes and let go (numeric sketches
    into a :class:`GridCounter` per column; the rest merged as :func:`merge_all` merges it)."""
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
    if rest is None:
        raise ValueError("no summaries to merge")
    return dataclasses.replace(rest, numeric=[None if c is None else c.sketch() for c in counters])
