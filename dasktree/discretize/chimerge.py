"""Kerber's ChiMerge (AAAI-92) on one attribute's histogram."""

from __future__ import annotations

import heapq
import math
from numbers import Real

import numpy as np

from ..errors import InputError
from .counts import KERBER_ZERO_EXPECTED, check_counts, check_int, check_values, no_cuts
from .stats import chi2_isf


def _chi2_pair(upper: list[float], lower: list[float]) -> float:
    """Kerber's chi-square of two adjacent non-empty intervals (class-count lists)."""
    r1 = sum(upper)
    r2 = sum(lower)
    n = r1 + r2
    stat = 0.0
    for a1, a2 in zip(upper, lower):
        c = a1 + a2
        if c > 0:
            e1 = r1 * c / n
            e2 = r2 * c / n
        else:  # Kerber: E_ij = 0.1 if R_i or C_j is 0 (R_i > 0 here)
            e1 = e2 = KERBER_ZERO_EXPECTED
        stat += (a1 - e1) ** 2 / e1 + (a2 - e2) ** 2 / e2
    return stat


def chimerge(
    counts,
    values=None,
    *,
    significance: float = 0.05,
    max_intervals: int | None = None,
    min_intervals: int = 1,
) -> np.ndarray:
    r"""Kerber's ChiMerge: bottom-up merging of adjacent intervals.

    Start with one interval per non-empty bin. For each pair of adjacent
    intervals compute

    .. math::

        \chi^2 = \sum_{i=1}^{2} \sum_{j=1}^{k} \frac{(A_{ij} - E_{ij})^2}{E_{ij}},
        \qquad E_{ij} = \frac{R_i C_j}{N},

    with ``A_ij`` the count of class ``j`` in interval ``i`` of the pair,
    ``R_i`` the interval's size, ``C_j`` the class's count in the pair,
    ``N`` the pair's size and ``k = n_classes`` (all class columns). Kerber's
    rule for empty margins is applied as in the paper: if ``R_i`` or ``C_j``
    is 0, ``E_ij`` is set to 0.1 (so each class absent from both intervals of
    a pair adds ``2 * 0.1**2 / 0.1 = 0.2``).

    Repeatedly merge the pair with the lowest ``chi2`` (ties: the leftmost
    pair) while

    * the number of intervals exceeds ``max_intervals`` (merged regardless of
      the statistic), or
    * the lowest ``chi2`` is below the threshold
      ``chi2_isf(significance, n_classes - 1)`` (``+inf`` when
      ``n_classes == 1``: one class never opposes a merge),

    and never below ``min_intervals`` intervals.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin, bins in increasing value order.
    values : array_like of shape (n_bins,), optional
        Ignored (checked for shape if given).
    significance : float, default 0.05
        Significance level of the chi-square test, in (0, 1). Larger values
        give a lower threshold, hence fewer merges and more intervals.
    max_intervals : int or None, default None
        Keep merging while there are more intervals than this (>= 1).
    min_intervals : int, default 1
        Stop merging when this many intervals remain (>= 1, <= max_intervals).

    Returns
    -------
    ndarray of intp
        Sorted cut indices; cut ``j`` separates bin ``j`` from bin ``j + 1``.

    Notes
    -----
    ``O(m log m)`` for ``m`` non-empty bins: a heap of pair statistics with
    lazy invalidation, and only the two pairs next to a merge recomputed.
    The threshold is :func:`dasktree.discretize.stats.chi2_isf` (the same
    quantile as ``scipy.stats.chi2.isf``, without the scipy dependency).
    """
    counts = check_counts(counts)
    check_values(values, counts.shape[0], required=False)
    if (
        isinstance(significance, (bool, np.bool_))
        or not isinstance(significance, Real)
        or not 0.0 < float(significance) < 1.0
    ):
        raise InputError(
            f"significance must be a float in the open interval (0, 1); got {significance!r}"
        )
    min_intervals = check_int("min_intervals", min_intervals, 1)
    if max_intervals is not None:
        max_intervals = check_int("max_intervals", max_intervals, 1)
        if max_intervals < min_intervals:
            raise InputError(
                f"max_intervals must be >= min_intervals = {min_intervals}; "
                f"got {max_intervals}"
            )

    n_classes = counts.shape[1]
    if n_classes > 1:
        threshold = chi2_isf(float(significance), n_classes - 1)
    else:
        threshold = math.inf

    bins = np.flatnonzero(counts.sum(axis=1) > 0)
    m = bins.size
    if m <= 1:
        return no_cuts()
    # Doubly linked list of intervals, each named by its first non-empty bin's
    # rank i in 0..m-1 (so smaller name = further left); m means "none".
    table = counts[bins].tolist()  # class counts of interval i
    last = bins.tolist()  # original index of interval i's last bin
    nxt = list(range(1, m + 1))
    prv = list(range(-1, m - 1))
    alive = [True] * m
    version = [0] * m  # of the pair (i, nxt[i]); stale heap entries are skipped

    heap = [(_chi2_pair(table[i], table[i + 1]), i, 0) for i in range(m - 1)]
    heapq.heapify(heap)
    n_intervals = m
    upper = m if max_intervals is None else max_intervals
    while n_intervals > min_intervals and heap:
        stat, i, ver = heap[0]
        if not alive[i] or ver != version[i] or nxt[i] >= m:
            heapq.heappop(heap)
            continue
        if stat >= threshold and n_intervals <= upper:
            break
        heapq.heappop(heap)
        j = nxt[i]
        table[i] = [x + y for x, y in zip(table[i], table[j])]
        last[i] = last[j]
        alive[j] = False
        nxt[i] = nxt[j]
        if nxt[j] < m:
            prv[nxt[j]] = i
        n_intervals -= 1
        for p in (prv[i], i):  # the two pairs that changed
            if p >= 0 and nxt[p] < m:
                version[p] += 1
                heapq.heappush(heap, (_chi2_pair(table[p], table[nxt[p]]), p, version[p]))
    cuts = [last[i] for i in range(m) if alive[i]][:-1]
    return np.asarray(cuts, dtype=np.intp)
