"""Pass 0: a mergeable summary of every column, from which the bin spec is made.

Each part is summarised by :func:`summarize` (chunk); summaries add with
:func:`merge` (combine; associative and commutative, exact);
:func:`dasktree.binning.spec.bin_spec` turns the total into a
:class:`~dasktree.binning.spec.BinSpec` (aggregate). The result does not depend
on the partitioning or on the order of merging.

Numeric attributes. While a column has at most ``max_bins`` distinct values the
summary keeps them exactly, and each distinct value gets its own bin; the
thresholds between bins are then midpoints between adjacent distinct values,
exactly as scikit-learn places them. A column with more distinct values is
counted on a fixed fine grid instead: the top 24 bits of the order-preserving
integer image of each float64 (sign, exponent and 12 mantissa bits, a relative
resolution of 1/4096), keeping per cell the count and the largest value. The
grid adds exactly, so its quantile edges do not depend on merge order; they are
approximate quantiles (each edge is a data value within one cell of the exact
quantile). Bin ``b`` (1-based; code 0 is *missing*) holds the values ``x`` with
``upper[b - 2] < x <= upper[b - 1]``.

Nominal attributes: the summary counts every category (the spec keeps the
most frequent ``max_categories``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .target import TargetRange, target_range
from ..errors import DataError
from ..io.schema import NUMERIC, Roles, class_labels, nominal_values, numeric_values
from ..io.weights import WeightStats, merge_weight_stats, weight_stats, weight_values

__all__ = ["NumericSketch", "Summary", "summarize", "merge", "merge_all", "numeric_edges", "midpoints"]

GRID_BITS = 24
MAX_CLASSES = 1000


# ---------------------------------------------------------------- numeric sketch
@dataclass
class NumericSketch:
    """Exact distinct values with counts, or fine-grid cells with counts and maxima."""

    exact: bool
    keys: np.ndarray  # exact: the distinct values; grid: the cell ids (uint64)
    counts: np.ndarray  # int64
    maxes: np.ndarray | None = None  # grid only: largest value in each cell

    @property
    def size(self) -> int:
        return int(self.keys.size)


def _grid_cells(values: np.ndarray) -> np.ndarray:
    """Cell id of each finite value: the top bits of its order-preserving image."""
    bits = (values + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0
    sign = np.uint64(1) << np.uint64(63)
    image = np.where(bits & sign, ~bits, bits | sign)
    return image >> np.uint64(64 - GRID_BITS)


def _to_grid(sketch: NumericSketch) -> NumericSketch:
    if not sketch.exact:
        return sketch
    cells = _grid_cells(sketch.keys)  # sorted keys, an order-preserving map: sorted cells, no sort needed
    first = np.flatnonzero(np.concatenate([[True], cells[1:] != cells[:-1]])) if cells.size else np.zeros(0, np.int64)
    keys = cells[first]
    counts = np.add.reduceat(sketch.counts, first) if cells.size else sketch.counts
    last = np.append(first[1:], cells.size) - 1
    maxes = sketch.keys[last] if cells.size else sketch.keys
    return NumericSketch(False, keys, counts, maxes)


INTEGRAL_RANGE = 1 << 16  # integral values spanning at most this many are counted by bincount, not sorted
MANTISSA_CELLS = 1 << (GRID_BITS - 12)  # grid cells per sign and exponent (12 bits of the cell id)
GRID_SLOTS = 1 << 20  # grid cells counted by bincount at most (present exponents x MANTISSA_CELLS), else sorted


def _grid_sum(cells: np.ndarray, counts: np.ndarray | None, maxes: np.ndarray) -> NumericSketch | None:
    """The grid sketch of ``cells`` (uint64 cell ids, any order) with ``counts`` (None: one each) and
    ``maxes`` (a value per entry), counted without sorting: the present signs and exponents (the high
    12 bits) are ranked, and each cell gets a slot (rank x MANTISSA_CELLS + mantissa bits), which
    keeps the cells' order. The same sketch as sorting gives; None when the slots would exceed
    :data:`GRID_SLOTS` (many exponents present)."""
    high = (cells >> np.uint64(GRID_BITS - 12)).astype(np.intp)
    present_high = np.flatnonzero(np.bincount(high, minlength=1 << 12))
    if present_high.size * MANTISSA_CELLS > GRID_SLOTS:
        return None
    rank = np.zeros(1 << 12, dtype=np.intp)
    rank[present_high] = np.arange(present_high.size)
    slot = rank[high] * MANTISSA_CELLS + (cells & np.uint64(MANTISSA_CELLS - 1)).astype(np.intp)
    n_slots = present_high.size * MANTISSA_CELLS
    total = (np.bincount(slot, minlength=n_slots) if counts is None
             else np.bincount(slot, counts, n_slots).astype(np.int64))
    used = np.flatnonzero(total)
    largest = np.full(n_slots, -np.inf)
    np.maximum.at(largest, slot, maxes)
    keys = (present_high[used // MANTISSA_CELLS].astype(np.uint64) << np.uint64(GRID_BITS - 12)) \
        | (used % MANTISSA_CELLS).astype(np.uint64)
    return NumericSketch(False, keys, total[used].astype(np.int64), largest[used])


def _whole(values: np.ndarray) -> bool:
    """Whether every value is a whole number (a float column of counts, pixels or codes): its first
    values looked at first, so that a column of fractions costs no pass over all of them."""
    head = values[:64]
    return bool(np.array_equal(head, np.trunc(head))) and bool(np.array_equal(values, np.trunc(values)))


def sketch_numeric(values: np.ndarray, max_bins: int, integral: bool = False) -> NumericSketch:
    """Summary of the non-missing values of one part. ``integral``: the values are whole numbers
    (an integer column; a float column's are looked at); within a small range they are counted in
    one ``bincount``, not sorted (the same sketch as :func:`numpy.unique` gives, at a fraction of
    the time)."""
    values = values[~np.isnan(values)]
    if values.size and (integral or _whole(values)):
        low, high = float(values.min()), float(values.max())
        if high - low < INTEGRAL_RANGE and max(-low, high) < 2.0**53:
            counts = np.bincount((values - low).astype(np.int64))
            present = np.flatnonzero(counts)
            sketch = NumericSketch(True, present + low, counts[present].astype(np.int64))
            return sketch if sketch.size <= max_bins else _to_grid(sketch)
    if values.size > 4 * max_bins:  # many values: on the grid without sorting, unless few cells are used
        values = values + 0.0
        grid = _grid_sum(_grid_cells(values), None, values)
        if grid is not None and grid.size > max_bins:  # more cells than bins: more distinct values too
            return grid
    distinct, counts = np.unique(values + 0.0, return_counts=True)
    sketch = NumericSketch(True, distinct, counts.astype(np.int64))
    return sketch if sketch.size <= max_bins else _to_grid(sketch)


def sketch_numeric_sorted(values: np.ndarray, max_bins: int) -> NumericSketch:
    """The naive twin of :func:`sketch_numeric`: every value sorted (:func:`numpy.unique`)."""
    values = values[~np.isnan(values)]
    distinct, counts = np.unique(values + 0.0, return_counts=True)
    sketch = NumericSketch(True, distinct, counts.astype(np.int64))
    return sketch if sketch.size <= max_bins else _to_grid(sketch)


def merge_numeric(sketches: Sequence[NumericSketch], max_bins: int) -> NumericSketch:
    """The sum of some sketches in one step: exact while all are and their union has at most
    ``max_bins`` values, else on the grid (as merging them two by two would give, in any order)."""
    if all(s.exact for s in sketches):
        keys = np.concatenate([s.keys for s in sketches])
        counts = np.concatenate([s.counts for s in sketches])
        distinct, inverse = np.unique(keys, return_inverse=True)
        merged = NumericSketch(True, distinct, np.bincount(inverse, counts, distinct.size).astype(np.int64))
        return merged if merged.size <= max_bins else _to_grid(merged)
    grids = [_to_grid(s) for s in sketches]
    summed = _grid_sum(np.concatenate([g.keys for g in grids]), np.concatenate([g.counts for g in grids]),
                       np.concatenate([g.maxes for g in grids]))
    if summed is not None:
        return summed
    distinct, inverse = np.unique(np.concatenate([g.keys for g in grids]), return_inverse=True)
    counts = np.bincount(inverse, np.concatenate([g.counts for g in grids]), distinct.size).astype(np.int64)
    maxes = np.full(distinct.size, -np.inf)
    np.maximum.at(maxes, inverse, np.concatenate([g.maxes for g in grids]))
    return NumericSketch(False, distinct, counts, maxes)


def midpoints(values: np.ndarray) -> np.ndarray:
    """Thresholds between adjacent sorted distinct values, as scikit-learn computes them."""
    low, high = values[:-1], values[1:]
    mid = low / 2.0 + high / 2.0
    return np.where((mid == high) | ~np.isfinite(mid), low, mid)


def numeric_edges(sketch: NumericSketch, max_bins: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(upper, values, exact)``: bin upper edges (n_bins - 1) and a value per bin."""
    if sketch.exact:
        return midpoints(sketch.keys), sketch.keys.copy(), True
    cumulative = np.cumsum(sketch.counts)
    total = cumulative[-1]
    ranks = total * np.arange(1, max_bins) / max_bins
    cells = np.searchsorted(cumulative, ranks, side="left")
    edges = np.unique(sketch.maxes[cells])
    edges = edges[edges < sketch.maxes[-1]]
    values = np.append(edges, sketch.maxes[-1])
    return edges, values, False


# ---------------------------------------------------------------- summary
@dataclass
class Summary:
    """Pass-0 statistics of some rows; ``merge`` adds two of them."""

    n_rows: int
    n_null_target: int
    classes: dict[Any, int]
    numeric: list[NumericSketch | None]
    nominal: list[dict[str, int] | None]
    n_missing: np.ndarray
    max_bins: int = 255
    parts: list[tuple[str, int, int]] = field(default_factory=list)  # (key, offset, rows)
    weights: WeightStats | None = None  # with a weight column: its statistics (:mod:`dasktree.io.weights`)
    target_range: TargetRange | None = None  # a regression target's range (:mod:`dasktree.binning.target`)

    @property
    def n_zero_weight(self) -> int:
        """Rows of weight 0: left out of the sketches and of every count."""
        return 0 if self.weights is None else self.weights.n_zero


def _value_counts(array: pa.Array) -> dict[Any, int]:
    if len(array) == 0:
        return {}
    counts = pc.value_counts(array.drop_null())
    return {v.as_py(): int(c.as_py()) for v, c in zip(counts.field("values"), counts.field("counts"))}


def summarize(table: pa.Table, roles: Roles, *, max_bins: int, where: str = "",
              part: tuple[str, int, int] | None = None) -> Summary:
    """Summary of one part (chunk). Raises :class:`DataError` on infinities (and on a weight
    that is null, negative or not finite). Rows of weight 0 are left out of everything but
    ``n_rows`` and the class counts (``classes``: the rows with a target, as "balanced" class
    weights count them)."""
    target = table.column(roles.target)
    if pa.types.is_dictionary(target.type):
        target = target.cast(target.type.value_type)
    target = target.combine_chunks() if isinstance(target, pa.ChunkedArray) else target
    if not roles.regression:  # a NaN label is no class: the row is skipped, as a null label's
        target = class_labels(target)
    seen = None
    if roles.regression:  # a number per row: its range, and one "class" for the weights' statistics
        seen = target_range(target, roles.target, where)
        classes: dict = {}
        target = pa.array(np.zeros(len(target), dtype=np.int8), mask=np.asarray(target.is_null()))
    else:
        classes = _value_counts(target)
    if len(classes) > MAX_CLASSES:
        raise DataError(
            f"target {roles.target!r} has more than {MAX_CLASSES} distinct values in {where}: "
            "this looks like a regression target, and dasktree classifies"
        )
    stats = None
    if roles.weight is not None:
        weights = weight_values(table.column(roles.weight), roles.weight, where)
        positive = weights > 0
        n_zero = int(weights.size - positive.sum())
        if n_zero:
            keep = pa.array(positive)
            table, weights = table.filter(keep), weights[positive]
            stats = weight_stats(weights, target.filter(keep), n_zero)
        else:
            stats = weight_stats(weights, target)
    numeric: list[NumericSketch | None] = []
    nominal: list[dict[str, int] | None] = []
    missing = np.zeros(len(roles.features), dtype=np.int64)
    for j, (name, kind) in enumerate(zip(roles.features, roles.kinds)):
        column = table.column(name)
        missing[j] = column.null_count
        if kind == NUMERIC:
            values = numeric_values(column, name)
            if np.isinf(values).any():
                raise DataError(
                    f"column {name!r} has infinite values{' in ' + where if where else ''}; "
                    "replace them by null to mean missing"
                )
            missing[j] = int(np.isnan(values).sum())
            numeric.append(sketch_numeric(values, max_bins, integral=_integral(column.type)))
            nominal.append(None)
        else:
            numeric.append(None)
            nominal.append(_value_counts(nominal_values(column)))
    return Summary(
        n_rows=len(target),
        n_null_target=target.null_count,
        classes=classes,
        numeric=numeric,
        nominal=nominal,
        n_missing=missing,
        max_bins=max_bins,
        parts=[part] if part is not None else [],
        weights=stats,
        target_range=seen,
    )


def _integral(type_: pa.DataType) -> bool:
    """Whether a column of this type holds whole numbers only (as :func:`numeric_values` reads it)."""
    if pa.types.is_dictionary(type_):
        type_ = type_.value_type
    return pa.types.is_integer(type_) or pa.types.is_boolean(type_) or pa.types.is_date(type_)


def _add_counts(counts: Sequence[dict]) -> dict:
    out = dict(counts[0])
    for more in counts[1:]:
        for k, v in more.items():
            out[k] = out.get(k, 0) + v
    return out


def merge(a: Summary, b: Summary) -> Summary:
    """Sum of two summaries (combine). Exact, associative and commutative."""
    return merge_all([a, b])


def merge_all(summaries: Sequence[Summary]) -> Summary:
    """Sum of any number of summaries in one step (each sketch merged once, not pairwise)."""
    first = summaries[0]
    numeric = [None if column[0] is None else merge_numeric(column, first.max_bins)
               for column in zip(*(s.numeric for s in summaries))]
    nominal = [None if column[0] is None else _add_counts(column)
               for column in zip(*(s.nominal for s in summaries))]
    return Summary(
        n_rows=sum(s.n_rows for s in summaries),
        n_null_target=sum(s.n_null_target for s in summaries),
        classes=_add_counts([s.classes for s in summaries]),
        numeric=numeric,
        nominal=nominal,
        n_missing=np.sum([s.n_missing for s in summaries], axis=0),
        max_bins=first.max_bins,
        parts=sorted(p for s in summaries for p in s.parts),
        weights=merge_weight_stats([s.weights for s in summaries]),
        target_range=_merge_ranges([s.target_range for s in summaries]),
    )


def _merge_ranges(ranges: list) -> TargetRange | None:
    if ranges[0] is None:
        return None
    out = ranges[0]
    for more in ranges[1:]:
        out = out.merge(more)
    return out
