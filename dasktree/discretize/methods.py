"""Discretization methods as pure numpy kernels on one attribute's histogram.

The project computes, in one pass over the data, a histogram per numeric
attribute: bins in increasing value order, each with its class counts. Every
method here runs on that small histogram alone and shares one signature::

    method(counts, values, **params) -> cuts

``counts``
    array of shape ``(n_bins, n_classes)``, non-negative class counts per bin,
    bins in increasing value order. All-zero rows (empty bins) are allowed.
``values``
    array of shape ``(n_bins,)``, the bins' representative values in
    non-decreasing order (for exact bins, the distinct values). Only the
    unsupervised methods need it; the supervised ones accept ``None``.
``cuts``
    sorted ``intp`` array of cut indices; cut ``j`` separates bin ``j`` from
    bin ``j + 1`` (examples with bin index ``<= j`` go left), the convention of
    :mod:`dasktree.split.blocks`.

Empty bins hold no example, so a cut may be put anywhere between two non-empty
bins without changing the partition of the examples. Every method returns the
canonical position: the cut sits right after the last non-empty bin on its
left. Hence two non-empty bins are never separated by more than one cut, and
no cut lies before the first or after the last non-empty bin.

The supervised top-down methods (:func:`mdlp`, :func:`distance`) only consider
boundary points, the borders of the blocks of
:func:`dasktree.split.blocks.bins_to_blocks`: the cut minimising the class
information entropy lies on one (Fayyad & Irani 1992), so for :func:`mdlp` this
loses nothing. For :func:`distance` it is a restriction, see its notes.
:func:`chimerge` starts from the non-empty bins, as Kerber does.

Sources: 003 (Fayyad & Irani's MDLP), 002 (Cerquides & López de Mántaras'
distance-based discretization; also surveys equal width / frequency and
ChiMerge), Kerber (1992) "ChiMerge: Discretization of numeric attributes",
AAAI-92, pp. 123-128.
"""

from __future__ import annotations

import bisect
import heapq
import math
from numbers import Integral, Real

import numpy as np

from ..errors import InputError
from ..split.blocks import bins_to_blocks
from .stats import chi2_isf

__all__ = [
    "METHODS",
    "chimerge",
    "distance",
    "equal_frequency",
    "equal_width",
    "mdlp",
]

# Floating-point slack for comparisons that are exact in real arithmetic: two
# candidate costs that agree to this (relative) precision are a tie, broken to
# the left, and a strict inequality of the MDL criteria must hold by more than
# it. The scale is that of ``N log2 N``, the size of the bit counts compared.
_RTOL = 1e-9
# Absolute slack for ties of the normalized distance, which lies in [0, 1].
_DIST_TOL = 1e-12
# Kerber's replacement of a zero expected count (if R_i or C_j is 0).
_KERBER_ZERO_EXPECTED = 0.1


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


def _check_counts(counts) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise InputError(
            "counts must be a 2-D array of shape (n_bins, n_classes); "
            f"got an array of shape {arr.shape}"
        )
    if arr.shape[1] < 1:
        raise InputError(
            "counts must have at least 1 class column (n_classes >= 1); "
            f"got shape {arr.shape}"
        )
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise InputError(
            f"counts must hold integer or float class counts; got dtype {arr.dtype}"
        )
    given = arr
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError("counts must be finite; got NaN or infinite entries")
    if np.any(arr < 0):
        i, j = np.argwhere(arr < 0)[0]
        raise InputError(
            f"counts must be non-negative; got counts[{i}, {j}] = {given[i, j].item()!r}"
        )
    return arr


def _check_values(values, n_bins: int, *, required: bool) -> np.ndarray | None:
    if values is None:
        if required:
            raise InputError(
                f"values must be an array of shape ({n_bins},) with the bins' "
                "representative values; got None"
            )
        return None
    arr = np.asarray(values)
    if arr.shape != (n_bins,):
        raise InputError(
            f"values must have shape ({n_bins},), one per bin of counts; "
            f"got shape {arr.shape}"
        )
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise InputError(f"values must be numeric; got dtype {arr.dtype}")
    given = arr
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError("values must be finite; got NaN or infinite entries")
    if arr.size > 1 and np.any(np.diff(arr) < 0):
        i = int(np.flatnonzero(np.diff(arr) < 0)[0])
        raise InputError(
            "values must be in non-decreasing order; got "
            f"values[{i}] = {given[i].item()!r} > values[{i + 1}] = {given[i + 1].item()!r}"
        )
    return arr


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise InputError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _no_cuts() -> np.ndarray:
    return np.zeros(0, dtype=np.intp)


# --------------------------------------------------------------------------
# shared numerics
# --------------------------------------------------------------------------


def _tol(n):
    """Absolute slack for bit counts of a set of ``n`` examples."""
    n = np.asarray(n, dtype=np.float64)
    return _RTOL * (1.0 + n * np.log2(n + 1.0))


def _xlog2x(x) -> np.ndarray:
    """``x log2 x`` elementwise, 0 at 0 (``x >= 0``)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape)
    np.log2(x, out=out, where=x > 0)
    out *= x
    return out


def _bits(counts: np.ndarray) -> np.ndarray:
    """``|S| Ent(S)`` in bits for each row of class counts (last axis).

    ``|S| Ent(S) = F(|S|) - sum_c F(n_c)`` with ``F(x) = x log2 x``: the
    same value as ``|S| * criteria.entropy(S)`` with fewer passes over the
    candidates.
    """
    return _xlog2x(counts.sum(axis=-1)) - _xlog2x(counts).sum(axis=-1)


def _ent(counts: np.ndarray) -> np.ndarray:
    """``Ent(S)`` in bits for each row of class counts; 0 for an empty row."""
    n = counts.sum(axis=-1)
    return _bits(counts) / np.where(n > 0, n, 1.0)


def _log2_3k_minus_2(k: np.ndarray) -> np.ndarray:
    """``log2(3**k - 2)``, exact for k <= 30 and overflow-free beyond."""
    k = np.asarray(k, dtype=np.float64)
    small = np.minimum(k, 30.0)
    return np.where(k <= 30, np.log2(3.0**small - 2.0), k * np.log2(3.0))


def _cumulative(block_counts: np.ndarray) -> np.ndarray:
    """Prefix sums with a leading zero row: rows ``[a, b)`` sum to ``cum[b] - cum[a]``."""
    cum = np.zeros((block_counts.shape[0] + 1, block_counts.shape[1]))
    np.cumsum(block_counts, axis=0, out=cum[1:])
    return cum


def _n_classes_present(counts: np.ndarray) -> np.ndarray:
    return np.count_nonzero(counts > 0, axis=-1)


# --------------------------------------------------------------------------
# Fayyad & Irani MDLP
# --------------------------------------------------------------------------


def mdlp(counts, values=None) -> np.ndarray:
    r"""Fayyad & Irani's recursive minimal-entropy partitioning with MDLP stop.

    Each interval ``S`` (initially the whole histogram) is cut at the boundary
    point ``T`` that minimises the class information entropy of the partition

    .. math::

        E(T; S) = \frac{|S_1|}{|S|} \mathrm{Ent}(S_1)
                + \frac{|S_2|}{|S|} \mathrm{Ent}(S_2),

    and the cut is accepted iff (strict inequality; 003, Fayyad & Irani 1993)

    .. math::

        \mathrm{Gain}(T; S) = \mathrm{Ent}(S) - E(T; S)
            > \frac{\log_2(N - 1)}{N} + \frac{\Delta(T; S)}{N},

        \Delta(T; S) = \log_2(3^k - 2)
            - [k\,\mathrm{Ent}(S) - k_1 \mathrm{Ent}(S_1) - k_2 \mathrm{Ent}(S_2)],

    with ``N = |S|``, ``Ent`` the class entropy in bits and ``k``, ``k1``,
    ``k2`` the numbers of classes present in ``S``, ``S1``, ``S2``. An accepted
    cut sends both halves back to the work list; a rejected one closes ``S``.

    Only boundary points (block borders) are candidates: the entropy-minimising
    cut lies on one (Fayyad & Irani 1992). Ties go to the leftmost cut.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin, bins in increasing value order.
    values : array_like of shape (n_bins,), optional
        Ignored (checked for shape if given).

    Returns
    -------
    ndarray of intp
        Sorted cut indices; cut ``j`` separates bin ``j`` from bin ``j + 1``.

    Notes
    -----
    The recursion is an explicit work list processed a whole generation at a
    time: every pending interval's candidates are evaluated together in one
    vectorised pass over prefix sums, ``O(n_blocks * n_classes)`` per
    generation. The result is the recursion's, since intervals are independent.
    Exact ties and the strict inequality are judged up to a relative slack of
    ``1e-9`` on the bit counts ``N * Ent``, so floating-point rounding cannot
    decide them.
    """
    counts = _check_counts(counts)
    _check_values(values, counts.shape[0], required=False)
    blocks = bins_to_blocks(counts)
    n_blocks = blocks.n_blocks
    if n_blocks < 2:
        return _no_cuts()
    cum = _cumulative(blocks.counts)
    # Class-major copies for the candidate sweep: sums over the (few) classes
    # then run along the long axis, much faster than along a short last axis.
    cum_cm = np.ascontiguousarray(cum.T)  # (n_classes, n_blocks + 1)
    cum_n = cum.sum(axis=1)  # (n_blocks + 1,)

    cuts: list[int] = []  # block borders: border t separates block t-1 from block t
    work = [(0, n_blocks)]  # intervals of blocks [a, b) with b - a >= 2
    while work:
        a = np.array([w[0] for w in work], dtype=np.intp)
        b = np.array([w[1] for w in work], dtype=np.intp)
        lengths = b - a - 1  # candidate borders a+1 .. b-1
        starts = np.cumsum(lengths) - lengths
        pos = np.arange(int(lengths.sum()))
        t = pos + np.repeat(a + 1 - starts, lengths)  # candidates, interval by interval

        # (np.take and np.repeat are much faster than fancy indexing here.)
        at_t = np.take(cum_cm, t, axis=1)
        left_cm = at_t - np.repeat(np.take(cum_cm, a, axis=1), lengths, axis=1)
        right_cm = np.repeat(np.take(cum_cm, b, axis=1), lengths, axis=1) - at_t
        n_t = np.take(cum_n, t)
        cost = (  # |S| E(T; S) = |S1| Ent(S1) + |S2| Ent(S2), in bits
            _xlog2x(n_t - np.repeat(np.take(cum_n, a), lengths))
            + _xlog2x(np.repeat(np.take(cum_n, b), lengths) - n_t)
            - _xlog2x(left_cm).sum(axis=0)
            - _xlog2x(right_cm).sum(axis=0)
        )

        whole = cum[b] - cum[a]
        n = whole.sum(axis=1)
        whole_bits = _bits(whole)  # |S| Ent(S)
        ent = whole_bits / n
        tol = _tol(n)

        # Leftmost (near-)minimum of each interval's candidates.
        ok = cost <= np.repeat(np.minimum.reduceat(cost, starts) + tol, lengths)
        best = np.minimum.reduceat(np.where(ok, pos, pos.size), starts)

        left = left_cm[:, best].T
        right = right_cm[:, best].T
        k = _n_classes_present(whole)
        k1 = _n_classes_present(left)
        k2 = _n_classes_present(right)
        delta = _log2_3k_minus_2(k) - (k * ent - k1 * _ent(left) - k2 * _ent(right))
        # N * Gain > log2(N - 1) + Delta; no cut of a set of <= 1 example.
        log_n1 = np.log2(np.where(n > 1, n - 1.0, 1.0))
        margin = whole_bits - cost[best] - log_n1 - delta
        accept = (n > 1) & (margin > tol)

        work = []
        for i in np.flatnonzero(accept):
            cut = int(t[best[i]])
            cuts.append(cut)
            if cut - a[i] >= 2:
                work.append((int(a[i]), cut))
            if b[i] - cut >= 2:
                work.append((cut, int(b[i])))
    if not cuts:
        return _no_cuts()
    borders = np.sort(np.asarray(cuts, dtype=np.intp))
    return blocks.last_bin[borders - 1].astype(np.intp)


# --------------------------------------------------------------------------
# Cerquides & López de Mántaras distance-based discretization
# --------------------------------------------------------------------------


def distance(counts, values=None) -> np.ndarray:
    r"""Cerquides & López de Mántaras' distance-based top-down discretization.

    Cut points are added one at a time, each chosen over the WHOLE range (not
    by recursion into halves). With ``D`` the cuts chosen so far, ``P_D`` the
    partition of the examples into the intervals of ``D`` and ``P_C`` the
    partition by class, the next cut is the boundary point ``T`` minimising
    López de Mántaras' normalized distance (002, eq. 2)

    .. math::

        d(P_C, P_{D \cup \{T\}}) =
            \frac{H(P_C \mid P_{D'}) + H(P_{D'} \mid P_C)}{H(P_C \cap P_{D'})}
          = \frac{2 H(P_C \cap P_{D'}) - H(P_C) - H(P_{D'})}{H(P_C \cap P_{D'})},
        \qquad D' = D \cup \{T\},

    (entropies in bits of the joint, class and interval partitions; ties go to
    the leftmost cut). Each candidate's distance depends only on its own
    interval's contingency table, so all candidates are evaluated
    independently, the parallel form of 002 (here vectorised with numpy).

    Stopping rule (002, "The stopping criterion", reconstructed from the OCR,
    parallel to Fayyad & Irani): the description length of a ``p``-cut
    discretization with intervals ``S_0 .. S_p`` is

    .. math::

        L(D) = \underbrace{p \log_2(N - 1) + (p + 1) k
               + \sum_{i=0}^{p} k_i \mathrm{Ent}(S_i)}_{Len(Disc)}
             + \underbrace{\sum_{i=0}^{p} |S_i| \mathrm{Ent}(S_i)}_{Len(Classes | Disc)},

    with ``N`` the number of examples, ``k`` the number of classes present in
    the data and ``k_i`` the number present in ``S_i``. The new cut ``T``,
    which splits one interval ``S`` into ``S_1`` and ``S_2``, is kept iff
    ``L(D') < L(D)``, that is iff

    .. math::

        |S| \mathrm{Ent}(S) - |S_1| \mathrm{Ent}(S_1) - |S_2| \mathrm{Ent}(S_2)
        > \log_2(N - 1) + k
          - [k_S \mathrm{Ent}(S) - k_1 \mathrm{Ent}(S_1) - k_2 \mathrm{Ent}(S_2)];

    otherwise the algorithm stops (ties keep the shorter discretization).

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin, bins in increasing value order.
    values : array_like of shape (n_bins,), optional
        Ignored (checked for shape if given).

    Returns
    -------
    ndarray of intp
        Sorted cut indices; cut ``j`` separates bin ``j`` from bin ``j + 1``.

    Notes
    -----
    With prefix sums, the first round costs ``O(n_blocks * n_classes)``.
    A candidate's change of the joint and interval entropies depends on its
    own interval only, so after a cut only the candidates of the two new
    intervals are re-evaluated; each later round costs ``O(n_blocks)`` plus
    ``O(|interval| * n_classes)``, within 002's ``O(k i N)`` bound (eq. 3).

    Only boundary points are candidates. 002 evaluates every cut between
    distinct values; for the first cut the two agree (the distance's minimum
    over all cuts is then found on a boundary point), but once cuts exist the
    normalized distance can be minimised strictly inside a uniform block, e.g.
    bins ``[[1,0],[3,0],[2,0],[3,0],[1,0],[1,3],[3,3]]`` with a cut after bin
    4: the best boundary gives ``d = 0.7849``, a cut inside the run of class
    0 gives ``0.7699``. This implementation keeps to boundary points.

    The normalized distance favours few intervals: a cut must recover in
    mutual information a fraction ``1 - d`` of the joint entropy it adds, so
    with overlapping classes it stops earlier than :func:`mdlp` (on 003's
    "Mixture" case it finds the cuts near 1.0 and 1.5, not those near 0.5 and
    2.0: adding them increases the distance).
    """
    counts = _check_counts(counts)
    _check_values(values, counts.shape[0], required=False)
    blocks = bins_to_blocks(counts)
    n_blocks = blocks.n_blocks
    if n_blocks < 2:
        return _no_cuts()
    cum = _cumulative(blocks.counts)
    class_totals = cum[-1]
    n_total = float(class_totals.sum())
    if n_total <= 1.0:
        return _no_cuts()
    log2_n = math.log2(n_total)
    k = int(_n_classes_present(class_totals))
    h_class = log2_n - float(_xlog2x(class_totals).sum()) / n_total
    cut_cost = math.log2(n_total - 1.0) + k  # bits for one more cut point + interval
    tol_mdl = float(_tol(n_total))

    cum_cm = np.ascontiguousarray(cum.T)  # class-major, see mdlp
    cum_n = cum.sum(axis=1)

    # Running sums over the current intervals: sum_{i,c} F(n_ic), sum_i F(n_i),
    # with F(x) = x log2 x, so that N H(P_C cap P_D) = N log2 N - joint_f and
    # N H(P_D) = N log2 N - part_f.
    joint_f = float(_xlog2x(class_totals).sum())
    part_f = float(_xlog2x(n_total))
    # A candidate border t inside the interval [a, b) of blocks changes them by
    # d_joint[t] and d_part[t], which depend on that interval only: they are
    # recomputed for the two new intervals after each accepted cut, nowhere else.
    d_joint = np.zeros(n_blocks + 1)
    d_part = np.zeros(n_blocks + 1)

    def refresh(a: int, b: int) -> None:
        if b - a < 2:
            return
        at_t = cum_cm[:, a + 1 : b]
        n_t = cum_n[a + 1 : b]
        left = at_t - cum_cm[:, a : a + 1]
        right = cum_cm[:, b : b + 1] - at_t
        d_joint[a + 1 : b] = (
            _xlog2x(left).sum(axis=0)
            + _xlog2x(right).sum(axis=0)
            - _xlog2x(cum_cm[:, b] - cum_cm[:, a]).sum()
        )
        d_part[a + 1 : b] = (
            _xlog2x(n_t - cum_n[a])
            + _xlog2x(cum_n[b] - n_t)
            - _xlog2x(cum_n[b] - cum_n[a])
        )

    refresh(0, n_blocks)
    chosen = np.zeros(n_blocks + 1, dtype=bool)  # block borders 0..n_blocks
    chosen[[0, n_blocks]] = True
    borders = [0, n_blocks]
    while len(borders) < n_blocks + 1:
        h_joint = log2_n - (joint_f + d_joint) / n_total  # > 0: >= 2 intervals
        h_part = log2_n - (part_f + d_part) / n_total
        with np.errstate(invalid="ignore", divide="ignore"):
            dist = (2.0 * h_joint - h_class - h_part) / h_joint
        dist[chosen] = np.inf  # the ends and the cuts already made
        best = int(np.flatnonzero(dist <= dist.min() + _DIST_TOL)[0])

        j = bisect.bisect_right(borders, best)
        a, b = borders[j - 1], borders[j]
        tables = np.stack([cum[b] - cum[a], cum[best] - cum[a], cum[b] - cum[best]])
        ent = _ent(tables)
        sizes = tables.sum(axis=1)
        kk = _n_classes_present(tables)
        # L(D') - L(D): one more cut point and interval, class sets, data bits.
        delta_len = (
            cut_cost
            + (kk[1] * ent[1] + kk[2] * ent[2] - kk[0] * ent[0])
            + (sizes[1] * ent[1] + sizes[2] * ent[2] - sizes[0] * ent[0])
        )
        if not delta_len < -tol_mdl:
            break
        chosen[best] = True
        borders.insert(j, best)
        joint_f += float(d_joint[best])
        part_f += float(d_part[best])
        refresh(a, best)
        refresh(best, b)
    borders = np.flatnonzero(chosen[1:n_blocks]) + 1
    return blocks.last_bin[borders - 1].astype(np.intp)


# --------------------------------------------------------------------------
# Kerber's ChiMerge
# --------------------------------------------------------------------------


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
            e1 = e2 = _KERBER_ZERO_EXPECTED
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
    counts = _check_counts(counts)
    _check_values(values, counts.shape[0], required=False)
    if (
        isinstance(significance, (bool, np.bool_))
        or not isinstance(significance, Real)
        or not 0.0 < float(significance) < 1.0
    ):
        raise InputError(
            f"significance must be a float in the open interval (0, 1); got {significance!r}"
        )
    min_intervals = _check_int("min_intervals", min_intervals, 1)
    if max_intervals is not None:
        max_intervals = _check_int("max_intervals", max_intervals, 1)
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
        return _no_cuts()
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


# --------------------------------------------------------------------------
# unsupervised baselines
# --------------------------------------------------------------------------


def _cuts_between_groups(nonempty: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Cut after each non-empty bin whose group differs from the next one's."""
    change = np.flatnonzero(group[1:] != group[:-1])
    return nonempty[change].astype(np.intp)


def equal_width(counts, values, *, n_intervals: int = 10) -> np.ndarray:
    r"""Equal-width intervals on the value range of the non-empty bins.

    With ``lo`` and ``hi`` the smallest and largest value of a non-empty bin,
    a bin of value ``v`` falls in interval

    .. math::

        i(v) = \min\left(\left\lfloor n \frac{v - lo}{hi - lo} \right\rfloor,
                         n - 1\right), \qquad n = \text{n\_intervals},

    i.e. ``[lo + i w, lo + (i + 1) w)`` with ``w = (hi - lo) / n``, the last
    interval closed. A cut is put between consecutive non-empty bins in
    different intervals; intervals without a bin give no cut, so there are at
    most ``n - 1`` cuts, and none if ``hi == lo``.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin (only emptiness matters).
    values : array_like of shape (n_bins,)
        The bins' representative values, non-decreasing.
    n_intervals : int, default 10
        Number of equal-width intervals (>= 1).

    Returns
    -------
    ndarray of intp
        Sorted cut indices; cut ``j`` separates bin ``j`` from bin ``j + 1``.
    """
    counts = _check_counts(counts)
    values = _check_values(values, counts.shape[0], required=True)
    n = _check_int("n_intervals", n_intervals, 1)
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    if nonempty.size < 2 or n == 1:
        return _no_cuts()
    v = values[nonempty]
    lo, hi = v[0], v[-1]
    if hi <= lo:
        return _no_cuts()
    group = np.minimum(np.floor((v - lo) * n / (hi - lo)), n - 1)
    return _cuts_between_groups(nonempty, group)


def equal_frequency(counts, values, *, n_intervals: int = 10) -> np.ndarray:
    r"""Equal-frequency intervals on the cumulative counts of the bins.

    With ``N`` examples, ``cum(j)`` the number of examples in bins ``<= j`` and
    ``n = n_intervals``, the ``i``-th cut (``i = 1 .. n - 1``) goes right after
    the first non-empty bin at which the cumulative count reaches the quantile:

    .. math::

        j_i = \min \{ j : n \cdot cum(j) \ge i N \}.

    A bin is never split, so heavy bins make intervals unequal: cuts that land
    on the same bin are kept once, and a cut after the last non-empty bin
    (which would separate nothing) is dropped.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin (only bin sizes matter).
    values : array_like of shape (n_bins,)
        The bins' representative values, non-decreasing (checked, otherwise
        unused).
    n_intervals : int, default 10
        Number of intervals aimed at (>= 1).

    Returns
    -------
    ndarray of intp
        Sorted, distinct cut indices; cut ``j`` separates bin ``j`` from bin
        ``j + 1``.
    """
    counts = _check_counts(counts)
    _check_values(values, counts.shape[0], required=True)
    n = _check_int("n_intervals", n_intervals, 1)
    sizes = counts.sum(axis=1)
    nonempty = np.flatnonzero(sizes > 0)
    if nonempty.size < 2 or n == 1:
        return _no_cuts()
    cum = np.cumsum(sizes[nonempty])
    total = cum[-1]
    targets = np.arange(1, n) * total
    pos = np.searchsorted(cum * n, targets, side="left")
    pos = np.unique(pos[pos < nonempty.size - 1])
    return nonempty[pos].astype(np.intp)


METHODS = {
    "mdlp": mdlp,
    "distance": distance,
    "chimerge": chimerge,
    "equal_width": equal_width,
    "equal_frequency": equal_frequency,
}
"""Registry of discretization methods by name; all share the signature above."""
