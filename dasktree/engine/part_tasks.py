"""The per-part work of every pass, as plain functions a runner maps over parts.

Module-level, keyword-only, no Dask: the in-process runner calls them in a
loop, the Dask runner submits them as tasks. Each handles an empty part.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..binning.encode import Encoded, encode_blocks
from ..binning.spec import BinSpec
from ..binning.summary import Summary, merge_all, summarize
from ..hook_points import point
from ..io.schema import Roles
from ..io.sources import Part, Source
from ..kernels.regression_pass import RegressionPlan, node_order, regression_histogram
from ..kernels.histogram import level_histogram, order_by_node
from ..kernels.plans import PassPlan
from ..kernels.subtraction import fill_derived

__all__ = ["PassShape", "summarize_part", "read_parts", "summarize_tables", "encode_part", "encode_parts",
           "encode_frames", "histogram_of", "histogram_of_many", "summarize_parts", "histogram_of_parts", "cells_of", "search_cells"]


@dataclass(frozen=True)
class PassShape:
    """Dimensions of a level pass's histogram besides the slots."""

    n_folds: int
    offsets: np.ndarray
    total_bins: int
    n_classes: int

    @classmethod
    def of(cls, spec: BinSpec, n_folds: int) -> "PassShape":
        return cls(n_folds, spec.offsets, spec.total_bins, spec.n_classes)


def _where(source: Source, part: Part) -> str:
    return part.key if part.key != "table" else source.description


def summarize_part(part: Part, *, source: Source, roles: Roles, max_bins: int) -> Summary:
    """Pass 0 over one part."""
    point("summary")
    table = source.read(part, roles.columns)
    return summarize(table, roles, max_bins=max_bins, where=_where(source, part),
                     part=(part.key, part.offset, table.num_rows))


def summarize_parts(parts: list[Part], *, source: Source, roles: Roles, max_bins: int) -> Summary:
    """Pass 0 over a group of parts read one at a time, each summary added to the group's as it comes
    (:func:`~dasktree.binning.summary_stream.merge_streaming`): one part in memory at a time."""
    from ..binning.summary_stream import merge_streaming

    return merge_streaming(summarize_part(part, source=source, roles=roles, max_bins=max_bins) for part in parts)


def summarize_frame(frame, *, roles: Roles, max_bins: int, index: int) -> Summary:
    """Pass 0 over one pandas partition of a dask DataFrame."""
    from ..io.sources import frame_to_table

    table = frame_to_table(frame[roles.columns])
    return summarize(table, roles, max_bins=max_bins, where=f"partition {index}",
                     part=(f"partition-{index}", 0, table.num_rows))


def read_parts(parts: list[Part], *, source: Source, roles: Roles) -> list:
    """A group of parts as Arrow tables, read in pass 0 and kept for the first level pass."""
    return [source.read(part, roles.columns) for part in parts]


def summarize_tables(tables: list, *, parts: list[Part], source: Source, roles: Roles, max_bins: int) -> Summary:
    """Pass 0 over a group of parts already read (:func:`read_parts`): their summaries, merged
    (a single part's as it is: merging one summary would only sort its sketches again)."""
    point("summary")
    summaries = [
        summarize(table, roles, max_bins=max_bins, where=_where(source, part),
                  part=(part.key, part.offset, table.num_rows))
        for table, part in zip(tables, parts)
    ]
    return summaries[0] if len(summaries) == 1 else merge_all(summaries)


def encode_part(part: Part, *, source: Source, roles: Roles, spec: BinSpec, folds=None, table=None) -> Encoded:
    """Encode one part for the level passes: ``table`` when pass 0 kept it, else read now."""
    [encoded] = encode_parts(None if table is None else [table], parts=[part], source=source, roles=roles,
                             spec=spec, folds=folds)
    return encoded


def encode_parts(tables: list | None, *, parts: list[Part], source: Source, roles: Roles, spec: BinSpec,
                 folds=None) -> list[Encoded]:
    """A group of parts encoded as one block of rows (one cached value per group;
    :func:`~dasktree.binning.encode.encode_blocks`): from pass 0's ``tables`` when kept, else read one at a time."""
    tables = [None] * len(parts) if tables is None else tables
    return encode_blocks([(part.n_rows, functools.partial(_part_table, part, table, source, roles, folds))
                          for part, table in zip(parts, tables)], spec, roles.target)


def _part_table(part: Part, table, source: Source, roles: Roles, folds) -> tuple:
    """A part's table (read now unless given) and its fold parts: an :func:`encode_blocks` load."""
    table = source.read(part, roles.columns) if table is None else table
    return table, None if folds is None else folds.parts_of(table, part)


def encode_frames(*frames, indices: list[int], offsets: list[int], roles: Roles, spec: BinSpec,
                  folds=None) -> list[Encoded]:
    """A group of a dask DataFrame's partitions (held by one worker), encoded as one block of rows
    (one cached value); ``offsets[i]`` is partition ``indices[i]``'s first row's global index."""
    return encode_blocks([(len(frame), functools.partial(_frame_table, frame, i, o, roles, folds))
                          for frame, i, o in zip(frames, indices, offsets)], spec, roles.target)


def _frame_table(frame, index: int, offset: int, roles: Roles, folds) -> tuple:
    """A pandas partition's table and its fold parts (hashes of its rows' content)."""
    from ..io.sources import frame_to_table

    table = frame_to_table(frame[roles.columns])
    return _part_table(Part(index, "frame", offset, table.num_rows), table, None, roles, folds)


GROUP_ROWS_BYTES = 8 << 20  # histograms larger than this get rows grouped by node (below it, grouping gains nothing)
REGROUP_GROWTH = 8  # rows grouped by node are grouped again once the counted nodes grew this much


def group_rows(encoded: Encoded, plan: PassPlan) -> None:
    """Put an encoded part's rows in order of their first start node, in place (all arrays alike).

    The counts do not depend on row order; the time does once the histogram
    outgrows the cache (see :mod:`dasktree.kernels.histogram`). The starts are those
    the last pass left, not yet moved down: the kernel moves them (once), and
    rows of one start node count into its children, which are adjacent slots.

    Rows in order of their nodes at one level are in order of subtrees at the
    next ones: a node's descendants are created together, so they hold adjacent
    slots. The rows of a node then count into a window of slots that doubles
    each level, and stays in the cache for a few levels. So once grouped in a
    forest, rows are grouped again only when the pass counts ``REGROUP_GROWTH``
    times the slots it counted then: each grouping gathers every array of the
    part anew (:meth:`~dasktree.binning.encode.Encoded.reorder`), and counting a level
    with the last level's order is no slower than grouping anew.
    """
    first = encoded.start_nodes(plan.forest_id, plan.start_width, plan.node_slot.size)[0]
    grouped = encoded.grouped
    if grouped is not None and grouped[0] == plan.forest_id and plan.n_slots < REGROUP_GROWTH * grouped[1]:
        return
    encoded.grouped = (plan.forest_id, plan.n_slots)
    if first.size < 2 or bool(np.all(first[1:] >= first[:-1])):
        return
    encoded.reorder(order_by_node(first, plan.node_slot.size + 1))  # node + 1 (0: a row without starts)


def histogram_of(encoded: Encoded, *, plan, shape: PassShape, out: np.ndarray | None = None) -> np.ndarray:
    """The level histogram of one encoded part, or added to ``out``: the kernel of the plan's kind
    (:data:`COUNTERS`): a classification plan's class counts (int32 while its rows, weighted, count below
    2**31; its rows' start nodes move down in place), a regression plan's target sums (int64)."""
    return COUNTERS[type(plan)](encoded, plan, shape, out)


def _sums_of(encoded: Encoded, plan: RegressionPlan, shape: PassShape, out: np.ndarray | None) -> np.ndarray:
    """A regression plan's pass over one encoded part: every tree walked, targets summed in fixed point."""
    order = node_order(encoded.codes, plan)
    if order is not None:  # rows of a node together, kept so for the passes after (the sums do not change)
        encoded.reorder(order)
    return regression_histogram(encoded.codes, encoded.y, encoded.part, plan, weight=encoded.weight, out=out)


def _counts_of(encoded: Encoded, plan: PassPlan, shape: PassShape, out: np.ndarray | None) -> np.ndarray:
    """A classification plan's pass over one encoded part: the forest's distinct nodes walked from the
    rows' start nodes, class counts per bin."""
    if plan.hist_bytes > GROUP_ROWS_BYTES:
        group_rows(encoded, plan)
    if out is None:
        out = plan.zeros(_cell_dtype(encoded.total))
    return level_histogram(
        encoded.codes, encoded.y, encoded.part, plan, n_folds=shape.n_folds, offsets=shape.offsets,
        total_bins=shape.total_bins, n_classes=shape.n_classes,
        starts=encoded.start_nodes(plan.forest_id, plan.start_width, plan.node_slot.size), out=out,
        weight=encoded.weight,
    )


COUNTERS = {PassPlan: _counts_of, RegressionPlan: _sums_of}
"""The kernel of a level pass over one encoded part, by the plan's kind (the task's pass)."""


def _cell_dtype(total: int) -> type:
    """Cells that count ``total`` rows (weighted) without overflow: int32, else int64."""
    return np.int64 if total >= 2**31 else np.int32


def histogram_of_many(encoded: list[Encoded], *, plan: PassPlan, shape: PassShape, last: tuple = ()) -> np.ndarray:
    """The level histogram of a group's blocks of encoded rows (one worker thread's; one block but
    past 2**31 rows, :func:`~dasktree.binning.encode.encode_blocks`), counted into one array (int32 while
    the rows fit; a mixed plan's uint16 units). ``plan.fills`` (derived slots) are filled from
    ``last``, the last pass's histograms of the same parts (:func:`dasktree.kernels.subtraction.fill_derived`)."""
    total = plan.zeros(_cell_dtype(sum(e.total for e in encoded)))
    for e in encoded:
        histogram_of(e, plan=plan, shape=shape, out=total)
    if plan.fills:
        fill_derived(total, list(last), plan.fills, plan.cells)
    return total


def histogram_of_parts(parts: list[Part], *, source: Source, roles: Roles, spec: BinSpec, folds,
                       plan: PassPlan, shape: PassShape) -> np.ndarray:
    """Read, encode and count a group of parts one at a time into one histogram: a level pass
    without a cache, one part in memory at a time (int32 cells while the rows fit; a mixed plan's units)."""
    total = plan.zeros(_cell_dtype(sum(p.n_rows for p in parts)))
    for part in parts:
        histogram_of(encode_part(part, source=source, roles=roles, spec=spec, folds=folds),
                     plan=plan, shape=shape, out=total)
    return total


def cells_of(hist: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Cells ``lo:hi`` of a flat histogram: one search chunk's share of a worker's counts."""
    return hist[lo:hi]


def search_cells(*hists: np.ndarray, lo: int, hi: int, chunk, context, **options):
    """Sum cells ``lo:hi`` of every worker's histogram (a search chunk's share) and search the chunk
    there: the task's own way (``context.search_cells``, e.g.
    :func:`dasktree.levels.search_chunks.search_cells`); only its results go back."""
    return context.search_cells(*hists, lo=lo, hi=hi, chunk=chunk, **options)