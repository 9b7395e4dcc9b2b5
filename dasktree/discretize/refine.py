"""The refinement: exact distinct values inside the bins where a boundary point may lie.

A column with more than ``max_bins`` distinct values gets quantile fine bins in
pass 0, and a method run on their counts can only cut at their edges. The
methods that cut on boundary points (``mdlp``, ``distance``, ``optimal``) see
the data only through its *blocks* (:func:`dasktree.split.blocks.bins_to_blocks`):
maximal runs of class-uniform values of one class, and single values holding
more than one class. A fine bin whose rows are all of one class (a *uniform*
bin) holds no boundary point inside: its values are one run of that class, and
they stay together in the exact blocks too. So the exact blocks are those of
the histogram in which every *mixed* fine bin (rows of two or more classes) is
replaced by its distinct values with their class counts, and every uniform or
empty bin is kept whole. Those *refined counts* give the method the exact
blocks, hence exactly its cuts on the raw values (Fayyad & Irani 1992: the
entropy-minimising cut is a boundary point; Elomaa & Rousu: so are the optimal
multisplit's).

The cut points are placed as for exact bins, midway between the largest value
left of the cut and the smallest value right of it
(:func:`dasktree.binning.summary.midpoints`). A bin's largest value is its
upper edge (pass 0's quantile edges are data values); its smallest value is
kept by the refinement for every whole bin whose left edge may be a cut (it
follows a mixed bin, or a uniform bin of another class).

:func:`refine_plan` decides the bins from the fine counts, :func:`refine_values`
is the kernel run on one part's rows (chunk), :func:`merge_refined` adds parts
(combine; exact, associative, commutative), :func:`refined_rows` assembles the
refined counts (aggregate). :func:`refine_table` is the chunk on an Arrow table,
the function a runner maps over parts. Pure numpy and Arrow: no Dask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..binning.summary import midpoints

__all__ = ["shortest_midpoints", "RefinePlan", "Refined", "RefinedRows", "refine_plan", "refine_values", "merge_refined",
           "refined_rows", "refine_table", "merge_tables", "REFINING_METHODS"]

REFINING_METHODS = ("mdlp", "distance", "optimal")
"""The methods whose cuts depend on the data only through its blocks: the refinement makes them exact."""


@dataclass(frozen=True)
class RefinePlan:
    """What the refinement keeps of one column: the fine bins' edges, the bins whose distinct values
    are kept (``refine``) and the whole bins whose smallest value is kept (``low``). Bins are 0-based
    (fine bin ``j`` is code ``j + 1``; code 0 is *missing*)."""

    name: str
    upper: np.ndarray  # (n_bins - 1,) fine-bin upper edges
    refine: np.ndarray  # (n_bins,) bool
    low: np.ndarray  # (n_bins,) bool


@dataclass
class Refined:
    """The refinement of one column over some rows: the distinct values inside the refined bins with
    their class counts, the smallest value of the ``low`` bins, and how many rows fell in refined bins."""

    values: np.ndarray  # (m,) float64, increasing
    counts: np.ndarray  # (m, n_classes) int64 (weighted: row multiplicities)
    low: np.ndarray  # (n_bins,) float64, +inf where no row (or not asked)
    rows: int  # rows read inside the refined bins


@dataclass(frozen=True)
class RefinedRows:
    """A column's refined histogram: rows in value order (a distinct value of a refined bin, or a
    whole fine bin), their class counts, and the smallest and largest value of each row."""

    counts: np.ndarray  # (r, n_classes) int64
    low: np.ndarray  # (r,) float64 (+inf: an empty whole bin, or a smallest value not kept)
    high: np.ndarray  # (r,) float64

    def cut_points(self, cuts: np.ndarray) -> np.ndarray:
        """The cut points of cut indices (cut ``j`` between rows ``j`` and ``j + 1``): midway between
        the largest value left and the smallest value right, as exact bins place them."""
        cuts = np.asarray(cuts, dtype=np.intp)
        nonempty = np.flatnonzero(self.counts.sum(axis=1) > 0)
        after = nonempty[np.minimum(np.searchsorted(nonempty, cuts + 1), nonempty.size - 1)]  # next row with rows
        left, right = self.high[cuts], self.low[after]
        right = np.where(np.isfinite(right), right, left)  # not kept (never at a cut of the methods): the edge
        return shortest_midpoints(left, right)


def refine_plan(name: str, counts: np.ndarray, upper: np.ndarray) -> RefinePlan | None:
    """The bins to refine of a column's fine counts ``(n_bins, n_classes)``; None when no cut is
    possible (one block of uniform bins: nothing to refine, nothing to place)."""
    counts = np.asarray(counts)
    present = counts > 0
    n_present = present.sum(axis=1)
    mixed = n_present > 1
    label = np.where(n_present == 1, present.argmax(axis=1), -1)
    nonempty = np.flatnonzero(n_present > 0)
    low = np.zeros(counts.shape[0], dtype=bool)
    if nonempty.size > 1:  # a whole bin after a mixed bin or a uniform bin of another class: a block starts there
        prev, cur = nonempty[:-1], nonempty[1:]
        starts = ~mixed[cur] & (mixed[prev] | (label[prev] != label[cur]))
        low[cur[starts]] = True
    if not mixed.any() and not low.any():
        return None
    return RefinePlan(name, np.asarray(upper, dtype=np.float64), mixed, low)


def refine_values(values: np.ndarray, codes: np.ndarray, y: np.ndarray, weight: np.ndarray | None,
                  plan: RefinePlan, n_classes: int) -> Refined:
    """The refinement of one part's rows (chunk).

    Parameters
    ----------
    values : (n,) float64 values of the column (NaN: missing)
    codes : (n,) the rows' fine-bin codes (0 missing, bin ``j`` is code ``j + 1``), as encoded
    y : (n,) class codes of the rows, all valid (>= 0)
    weight : (n,) row multiplicities (>= 1), or None: each row counts once
    plan : the column's :class:`RefinePlan`
    n_classes : number of classes
    """
    n_bins = plan.refine.size
    bins = np.asarray(codes).astype(np.intp) - 1
    present = bins >= 0
    safe = np.where(present, bins, 0)
    keep = present & plan.refine[safe]
    v = values[keep] + 0.0  # + 0.0 turns -0.0 into 0.0, as pass 0 does
    order = np.argsort(v)  # np.unique's return_inverse costs several sorts' time
    v = v[order]
    new = np.empty(v.size, dtype=bool)
    new[:1] = True
    np.not_equal(v[1:], v[:-1], out=new[1:])
    distinct = v[new]
    inverse = np.cumsum(new) - 1  # the distinct value of each sorted row
    w = None if weight is None else weight[keep][order]
    flat = np.bincount(inverse * n_classes + y[keep][order], weights=w, minlength=distinct.size * n_classes)
    counts = np.rint(flat).astype(np.int64).reshape(distinct.size, n_classes)
    low = np.full(n_bins, np.inf)
    asked = present & plan.low[safe]
    if asked.any():
        np.minimum.at(low, bins[asked], values[asked] + 0.0)
    return Refined(distinct, counts, low, int(keep.sum()))


def merge_refined(parts: list[Refined]) -> Refined:
    """The refinement of the rows of all ``parts`` (combine): exact, in any order or grouping."""
    if len(parts) == 1:
        return parts[0]
    values = np.concatenate([p.values for p in parts])
    order = np.argsort(values, kind="stable")  # sorted runs: timsort merges them
    values, counts = np.take(values, order), np.take(np.concatenate([p.counts for p in parts]), order, axis=0)
    first = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]])) if values.size else np.zeros(0, np.intp)
    summed = counts if first.size == values.size else np.add.reduceat(counts, first, axis=0)
    low = np.minimum.reduce([p.low for p in parts])
    return Refined(values[first], summed, low, sum(p.rows for p in parts))


def refined_rows(counts: np.ndarray, high: np.ndarray, plan: RefinePlan, refined: Refined) -> RefinedRows:
    """The refined histogram of a column (aggregate): the fine ``counts`` ``(n_bins, n_classes)``
    with each refined bin replaced by its distinct values; ``high`` is each fine bin's largest value.
    Raises ``AssertionError`` (a bug) when a refined bin's values do not add up to its count."""
    counts = np.asarray(counts, dtype=np.int64)
    n_bins = counts.shape[0]
    where = np.searchsorted(plan.upper, refined.values, side="left")  # the fine bin of each distinct value
    summed = np.zeros_like(counts)
    np.add.at(summed, where, refined.counts)
    if not np.array_equal(summed[plan.refine], counts[plan.refine]) or np.any(~plan.refine[where]):
        raise AssertionError(f"column {plan.name!r}: the refinement's counts differ from the histogram's; "
                             "it's a bug, please report it")
    whole = np.flatnonzero(~plan.refine)
    # The values are sorted, hence so are their bins: a whole bin goes before the values of later bins.
    at = np.searchsorted(where, whole, side="left") + np.arange(whole.size)
    mine = np.ones(whole.size + refined.values.size, dtype=bool)
    mine[at] = False
    rows = np.empty((mine.size, counts.shape[1]), dtype=np.int64)
    rows[at], rows[mine] = counts[whole], refined.counts
    low, high_of = np.empty(mine.size), np.empty(mine.size)
    low[at], low[mine] = refined.low[whole], refined.values
    high_of[at], high_of[mine] = np.asarray(high, dtype=np.float64)[whole], refined.values
    assert n_bins >= whole.size
    return RefinedRows(rows, low, high_of)


def refine_table(table, *, plans: list[RefinePlan], bins: dict, classes: tuple, target: str,
                 weighting=None) -> dict[str, Refined]:
    """The refinement of one part's Arrow ``table`` (chunk), for every column of ``plans``.

    Rows are taken as the histogram pass counts them: a null or unknown target, or a row of
    multiplicity 0, is left out; ``bins`` maps a column's name to its fine
    :class:`~dasktree.binning.spec.FeatureBins` (the codes are those of the encoder)."""
    from ..binning.encode import class_codes, encode_feature
    from ..io.schema import numeric_values
    from ..io.weights import weight_values

    y = class_codes(table.column(target), classes)
    valid = y >= 0
    weight = None
    if weighting is not None:
        column = weighting.column
        raw = np.ones(y.size) if column is None else weight_values(table.column(column), column, "")
        weight = weighting.multiplicities(raw, np.maximum(y, 0)).astype(np.float64)
        valid &= weight > 0
    keep = None if bool(valid.all()) else valid
    out = {}
    for plan in plans:
        column = table.column(plan.name)
        values = numeric_values(column, plan.name)
        codes = encode_feature(column, bins[plan.name], np.dtype(np.int32))
        if keep is not None:
            values, codes = values[keep], codes[keep]
        out[plan.name] = refine_values(values, codes, y if keep is None else y[keep],
                                       None if weight is None else (weight if keep is None else weight[keep]),
                                       plan, len(classes))
    return out


def merge_tables(*parts: dict[str, Refined]) -> dict[str, Refined]:
    """:func:`merge_refined` of every column of some parts' :func:`refine_table` results (combine)."""
    return {name: merge_refined([p[name] for p in parts]) for name in parts[0]}


def shortest_midpoints(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The cut points midway between each ``left`` and ``right`` value, as :func:`~dasktree.binning.summary.midpoints`
    places them, except where the exact midpoint lies as near another float of a shorter decimal: then
    that one (``left <= t < right`` still). 3.3 and 3.4's midpoint is exactly between the floats
    3.3499999999999996 and 3.35; ``3.3 / 2 + 3.4 / 2`` rounds to the first, the cut is the second, so
    the interval labels read ``(3.35, inf)``."""
    from fractions import Fraction

    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    mid = midpoints(np.column_stack([left, right]).ravel())[::2] if left.size else np.zeros(0)
    out = mid.copy()
    for i, (a, b, m) in enumerate(zip(left.tolist(), right.tolist(), mid.tolist())):
        if not (np.isfinite(a) and np.isfinite(b) and a < m < b):
            continue
        exact = (Fraction(a) + Fraction(b)) / 2
        off = abs(Fraction(m) - exact)
        near = [c for c in (np.nextafter(m, -np.inf), np.nextafter(m, np.inf))
                if a < c < b and abs(Fraction(float(c)) - exact) <= off]
        for c in near:
            if len(repr(float(c))) < len(repr(float(out[i]))):
                out[i] = c
    return out
