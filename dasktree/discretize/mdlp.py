"""Fayyad & Irani's MDLP discretization (003) on one attribute's histogram."""

from __future__ import annotations

import numpy as np

from ..split.api import bins_to_blocks
from .counts import (
    bits,
    check_counts,
    check_values,
    class_entropy,
    cumulative,
    log2_3k_minus_2,
    n_classes_present,
    no_cuts,
    tie_slack,
    xlog2x,
)


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
    counts = check_counts(counts)
    check_values(values, counts.shape[0], required=False)
    blocks = bins_to_blocks(counts)
    n_blocks = blocks.n_blocks
    if n_blocks < 2:
        return no_cuts()
    cum = cumulative(blocks.counts)
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
            xlog2x(n_t - np.repeat(np.take(cum_n, a), lengths))
            + xlog2x(np.repeat(np.take(cum_n, b), lengths) - n_t)
            - xlog2x(left_cm).sum(axis=0)
            - xlog2x(right_cm).sum(axis=0)
        )

        whole = cum[b] - cum[a]
        n = whole.sum(axis=1)
        whole_bits = bits(whole)  # |S| Ent(S)
        ent = whole_bits / n
        tol = tie_slack(n)

        # Leftmost (near-)minimum of each interval's candidates.
        ok = cost <= np.repeat(np.minimum.reduceat(cost, starts) + tol, lengths)
        best = np.minimum.reduceat(np.where(ok, pos, pos.size), starts)

        left = left_cm[:, best].T
        right = right_cm[:, best].T
        k = n_classes_present(whole)
        k1 = n_classes_present(left)
        k2 = n_classes_present(right)
        delta = log2_3k_minus_2(k) - (k * ent - k1 * class_entropy(left) - k2 * class_entropy(right))
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
        return no_cuts()
    borders = np.sort(np.asarray(cuts, dtype=np.intp))
    return blocks.last_bin[borders - 1].astype(np.intp)
