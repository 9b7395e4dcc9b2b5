"""Binary threshold tests on numeric attributes, for a batch of training histograms, in one compiled scan.

The numpy search (:func:`dasktree.split.search._binary_choices`) evaluates
every cut of every histogram at once through temporaries of shape
``(M, cuts, defaults, 2, C)``. At a wide forest frontier that is most of a
level's search time. :func:`numeric_binary_numba` computes the same choices
with one loop per histogram and attribute: running left counts over the bins,
both default children when the node has missing values, the best cut (the
first of equal gains), then the centred cut of :func:`_centered_cut
<dasktree.split.search._centered_cut>` and the children counts of the winner.

Bit-identical to the numpy reference. Each candidate's gain is computed with
the reference's operations in its order: ``|S| I(S)`` of a child is
``n - (sum_c c^2) / n`` (gini; exact integer numerator) or
``n log2 n - sum_c c log2 c`` (entropy in bits; classes summed in index
order), the gain is ``I(parent) - (w_left + w_right) / n``. Entropy takes its
``log2`` of integers from the table that :mod:`dasktree.split.optimal` caches
per process (numpy's ``log2``; the C library's differs in the last bit for
about one argument in 10^4 on AVX-512 machines). Histograms of more rows than
that table holds are left to the numpy reference by the caller. Each class's
``c log2 c`` in each child (with and without the missing values) is kept as
the cuts move and made again only for the classes of the bin crossed: the same
products, summed in the same order (an absent class adds 0.0, as the reference
skips it), for fewer table reads.

A cut after an empty bin gives the partition of the cut before it, so the
kernel skips it: its gain is equal and the first cut wins a tie anyway.

The training histograms come as :class:`~dasktree.split.types.TrainBatch`: differences of stored
slices (a node's total minus the part a fold tree holds out), so that a
forest's trees are searched without a copy of their histograms.
"""

from __future__ import annotations

import numpy as np

from ..kernels.jit import jit, numba
from .monotonic import allowed
from .types import TrainBatch


__all__ = ["numeric_binary_numba", "kernel_available", "log2_table", "threshold_children"]


def log2_table(size: float) -> np.ndarray:
    """numpy's ``log2`` of the integers ``0 .. >= size`` (entry 0 is 0), or of as many as it holds.

    The per-process table of :mod:`dasktree.split.optimal` (at most
    ``LOG2_TABLE_MAX`` integers), shared so that a worker holds one.
    """
    from .compiled import LOG2_TABLE_MAX, units_log2_table

    return units_log2_table(np.array([float(min(size, LOG2_TABLE_MAX))]), 0)


def kernel_available() -> bool:
    return numba is not None


def _flat(arrays: tuple, attributes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated float64 arrays of ``attributes`` and each one's start."""
    start = np.zeros(len(arrays) + 1, dtype=np.int64)
    parts = []
    for a, x in enumerate(arrays):
        x = np.zeros(0) if x is None or a not in attributes else np.asarray(x, dtype=np.float64)
        parts.append(x)
        start[a + 1] = start[a] + x.size
    return (np.concatenate(parts) if parts else np.zeros(0)), start


def numeric_binary_numba(batch: TrainBatch, layout, attributes: list[int], rows: np.ndarray,
                         parent_impurity: np.ndarray, n: np.ndarray, entropy: bool, min_samples_leaf: int,
                         log2: np.ndarray, active: np.ndarray | None = None, monotonic: np.ndarray | None = None,
                         bounds: np.ndarray | None = None):
    """Best binary threshold test of each attribute in ``attributes`` for each histogram in ``rows``.

    ``active`` (attributes, M) bool, when given, skips the (attribute,
    histogram) pairs it marks False (postponed attributes): their gain stays ``-inf``.
    ``monotonic`` (every attribute's constraint, int8) and ``bounds`` (M, 2): a cut whose children's
    second-class shares break its attribute's constraint or leave the histogram's bounds is not a
    candidate (:func:`dasktree.split.monotonic.allowed`; two classes).

    ``parent_impurity`` and ``n`` (M,) are each histogram's impurity and
    size (1 for an empty one); ``log2`` covers every size in ``rows`` when
    ``entropy``. Returns arrays over (attributes, M), filled for ``rows``
    only: the gain (``-inf``: no valid cut), the centred 1-based cut (-1: none),
    the default child, and the children counts (attributes, M, 2, C).
    """
    m_total = len(batch)
    n_classes = batch.plus.shape[2]
    k = len(attributes)
    gain = np.full((k, m_total), -np.inf)
    cut = np.full((k, m_total), -1, dtype=np.int64)
    default = np.zeros((k, m_total), dtype=np.int64)
    children = np.zeros((k, m_total, 2, n_classes), dtype=np.int64)
    if rows.size == 0 or k == 0:
        return gain, cut, default, children
    active = np.ones((k, m_total), dtype=np.bool_) if active is None else np.asarray(active, dtype=np.bool_)
    upper, upper_start = _flat(layout.uppers, attributes)
    values, values_start = _flat(layout.values, attributes)
    plus = batch.plus.astype(np.int64, copy=False)  # one compiled signature, exact integer sums
    minus = batch.minus.astype(np.int64, copy=False) if batch.minus.shape[0] else np.zeros((1,) + plus.shape[1:],
                                                                                              np.int64)
    cst = np.zeros(k, dtype=np.int8) if monotonic is None else np.asarray(monotonic, dtype=np.int8)[attributes]
    if bounds is None:
        bounds = np.tile(np.array([-np.inf, np.inf]), (m_total, 1))
    _scan(plus, batch.plus_index, minus, batch.minus_index, np.asarray(rows, dtype=np.int64),
          np.asarray(attributes, dtype=np.int64), np.asarray(layout.offsets, dtype=np.int64),
          np.asarray(layout.widths, dtype=np.int64), upper, upper_start, values, values_start,
          np.asarray(parent_impurity, dtype=np.float64), np.asarray(n, dtype=np.float64), bool(entropy),
          int(min_samples_leaf), log2 if entropy else np.zeros(1), active, gain, cut, default, children,
          cst, np.ascontiguousarray(bounds[:, 0], dtype=np.float64), np.ascontiguousarray(bounds[:, 1], dtype=np.float64))
    return gain, cut, default, children


@jit
def _gini_weighted(n, squares):
    """``|S| gini(S)`` from the size and the exact sum of squared class counts (both > 0)."""
    return float(n) - float(squares) / float(n)


@jit
def _weighted_of_terms(terms, n, log2):
    """``|S| H(S)`` from the classes' ``c log2 c`` terms (0 for an empty class): ``n log2 n - sum_c``, in order."""
    c_log_c = 0.0
    for c in range(terms.size):
        c_log_c += terms[c]
    return float(n) * log2[n] - c_log_c


@jit
def centred(cut, q, upper, values):
    """``search._centered_cut``: ``cut`` (1-based) is the first best cut, ``q`` the next non-empty bin."""
    if q == cut + 1:
        return cut
    middle = values[cut - 1] / 2.0 + values[q - 1] / 2.0
    lo, hi = cut - 1, q - 1  # searchsorted(upper[cut - 1:q - 1], middle, side="right")
    while lo < hi:
        mid = (lo + hi) // 2
        if upper[mid] <= middle:
            lo = mid + 1
        else:
            hi = mid
    return cut + max(0, lo - (cut - 1) - 1)


@jit
def _scan(plus, plus_index, minus, minus_index, rows, attributes, offsets, widths, upper, upper_start,
          values, values_start, parent_impurity, n, entropy, min_leaf, log2, active, out_gain, out_cut, out_default,
          out_children, cst, b_lo, b_hi):
    n_classes = plus.shape[2]
    width = max(1, widths.max())
    # The non-empty bins of the last ``plus`` histogram, per attribute: a training histogram
    # (plus minus a held-out part, both counts) is empty wherever its plus histogram is.
    node_bins = np.zeros((attributes.size, width), dtype=np.int64)
    node_n_bins = np.zeros(attributes.size, dtype=np.int64)
    node = -1
    bins = np.zeros(width, dtype=np.int64)  # the non-empty bins of the training histogram (0-based)
    counts = np.zeros((width, n_classes), dtype=np.int64)  # and their counts
    sizes = np.zeros(width, dtype=np.int64)
    miss = np.zeros(n_classes, dtype=np.int64)
    total = np.zeros(n_classes, dtype=np.int64)
    left = np.zeros(n_classes, dtype=np.int64)
    right = np.zeros(n_classes, dtype=np.int64)
    best_left = np.zeros(n_classes, dtype=np.int64)
    # entropy: each class's ``c log2 c`` in the left and right children, without and with the missing
    # values, kept as the cuts move (a class absent from the bins crossed keeps its terms)
    left_terms = np.zeros(n_classes)
    right_terms = np.zeros(n_classes)
    left_miss_terms = np.zeros(n_classes)
    right_miss_terms = np.zeros(n_classes)
    for r in range(rows.size):
        m = rows[r]
        hist = plus[plus_index[m]]
        if plus_index[m] != node:
            node = plus_index[m]
            node_n_bins[:] = -1  # each attribute's bins found when first searched at this node
        held = minus_index[m] >= 0
        held_hist = minus[max(minus_index[m], 0)]
        parent = parent_impurity[m]
        size = n[m]
        for k in range(attributes.size):
            a = attributes[k]
            o = offsets[a]
            nb = widths[a] - 1
            if nb < 2 or not active[k, m]:
                continue
            if node_n_bins[k] < 0:
                found = 0
                for b in range(nb):
                    s = 0
                    for c in range(n_classes):
                        s += hist[o + 1 + b, c]
                    node_bins[k, found] = b
                    found += s != 0
                node_n_bins[k] = found
            miss_n = 0
            miss_squares = 0
            for c in range(n_classes):
                x = hist[o, c] - held_hist[o, c] if held else hist[o, c]
                miss[c] = x
                miss_n += x
                miss_squares += x * x
                total[c] = 0
            n_bins = 0
            for i in range(node_n_bins[k]):
                b = node_bins[k, i]
                s = 0
                for c in range(n_classes):
                    x = hist[o + 1 + b, c] - held_hist[o + 1 + b, c] if held else hist[o + 1 + b, c]
                    counts[n_bins, c] = x
                    total[c] += x
                    s += x
                sizes[n_bins] = s
                bins[n_bins] = b
                n_bins += s != 0
            total_n = 0
            right_squares = 0
            right_miss = 0
            for c in range(n_classes):
                total_n += total[c]
                left[c] = 0
                right[c] = total[c]
                right_squares += total[c] * total[c]
                right_miss += total[c] * miss[c]
            left_n = 0
            left_squares = 0
            left_miss = 0
            if entropy:
                for c in range(n_classes):
                    x = total[c]
                    left_terms[c] = 0.0
                    right_terms[c] = float(x) * log2[x]
                    x = miss[c]
                    left_miss_terms[c] = float(x) * log2[x]
                    x = total[c] + miss[c]
                    right_miss_terms[c] = float(x) * log2[x]
            best = -np.inf
            best_i = -1
            best_default = 0
            # Cuts after the non-empty bins but the last: a cut after an empty bin gives the
            # partition of the cut before it (equal gain, and the first cut wins), or an empty side.
            for i in range(n_bins - 1):
                for c in range(n_classes):
                    x = counts[i, c]
                    left_squares += x * (2 * left[c] + x)
                    right_squares += x * (x - 2 * right[c])
                    left_miss += x * miss[c]
                    right_miss -= x * miss[c]
                    left[c] += x
                    right[c] -= x
                    if entropy and x != 0:
                        y = left[c]
                        left_terms[c] = float(y) * log2[y]
                        z = right[c]
                        right_terms[c] = float(z) * log2[z]
                        if miss_n > 0:
                            y += miss[c]
                            left_miss_terms[c] = float(y) * log2[y]
                            z += miss[c]
                            right_miss_terms[c] = float(z) * log2[z]
                left_n += sizes[i]
                right_n = total_n - left_n
                larger_right = right_n > left_n
                if miss_n > 0:
                    g0 = -np.inf
                    if left_n + miss_n >= min_leaf and right_n >= min_leaf:
                        if entropy:
                            w = (_weighted_of_terms(left_miss_terms, left_n + miss_n, log2)
                                 + _weighted_of_terms(right_terms, right_n, log2))
                        else:
                            w = (_gini_weighted(left_n + miss_n, left_squares + 2 * left_miss + miss_squares)
                                 + _gini_weighted(right_n, right_squares))
                        g0 = parent - w / size
                        if cst[k] != 0 and not allowed(cst[k], b_lo[m], b_hi[m],
                                                       float(left[1] + miss[1]) / float(left_n + miss_n),
                                                       float(right[1]) / float(right_n)):
                            g0 = -np.inf
                    g1 = -np.inf
                    if left_n >= min_leaf and right_n + miss_n >= min_leaf:
                        if entropy:
                            w = (_weighted_of_terms(left_terms, left_n, log2)
                                 + _weighted_of_terms(right_miss_terms, right_n + miss_n, log2))
                        else:
                            w = (_gini_weighted(left_n, left_squares)
                                 + _gini_weighted(right_n + miss_n, right_squares + 2 * right_miss + miss_squares))
                        g1 = parent - w / size
                        if cst[k] != 0 and not allowed(cst[k], b_lo[m], b_hi[m], float(left[1]) / float(left_n),
                                                       float(right[1] + miss[1]) / float(right_n + miss_n)):
                            g1 = -np.inf
                    d = 1 if (g1 > g0 or (g1 == g0 and larger_right)) else 0
                    g = g1 if d == 1 else g0
                else:
                    g = -np.inf
                    if left_n >= min_leaf and right_n >= min_leaf:
                        if entropy:
                            w = (_weighted_of_terms(left_terms, left_n, log2)
                                 + _weighted_of_terms(right_terms, right_n, log2))
                        else:
                            w = _gini_weighted(left_n, left_squares) + _gini_weighted(right_n, right_squares)
                        g = parent - w / size
                        if cst[k] != 0 and not allowed(cst[k], b_lo[m], b_hi[m], float(left[1]) / float(left_n),
                                                       float(right[1]) / float(right_n)):
                            g = -np.inf
                    d = 1 if larger_right else 0
                if g > best:
                    best = g
                    best_i = i
                    best_default = d
                    for c in range(n_classes):
                        best_left[c] = left[c]
            if best_i < 0:
                continue
            out_gain[k, m] = best
            out_default[k, m] = best_default
            out_cut[k, m] = centred(bins[best_i] + 1, bins[best_i + 1] + 1, upper[upper_start[a]:upper_start[a + 1]],
                                     values[values_start[a]:values_start[a + 1]])
            for c in range(n_classes):
                x = best_left[c]
                out_children[k, m, 0, c] = x + (miss[c] if best_default == 0 else 0)
                out_children[k, m, 1, c] = total[c] - x + (miss[c] if best_default == 1 else 0)

def threshold_children(hists: np.ndarray, index: np.ndarray, offset: np.ndarray, width: np.ndarray,
                       cut: np.ndarray, default: np.ndarray) -> np.ndarray:
    """Class counts of the two children of a threshold test in each of R histograms: (R, 2, C) int64.

    Row ``r`` tests the attribute whose ``width[r]`` codes start at
    ``offset[r]`` in ``hists[index[r]]`` (shape (total_bins, C); code 0 is
    missing): bins ``1 .. cut[r]`` go left (child 0), the others right, the
    missing values to ``default[r]``.
    """
    args = [np.asarray(x, dtype=np.int64) for x in (index, offset, width, cut, default)]
    out = np.zeros((args[0].size, 2, hists.shape[2]), dtype=np.int64)
    if numba is not None and np.issubdtype(hists.dtype, np.integer):
        _threshold_children(hists.astype(np.int64, copy=False), *args, out)
    else:
        threshold_children_numpy(hists, *args, out)
    return out


def threshold_children_numpy(hists, index, offset, width, cut, default, out) -> None:
    """The numpy twin of the compiled :func:`threshold_children` loop."""
    for r in range(index.size):
        rows = hists[index[r], offset[r]:offset[r] + width[r]]
        out[r, 0] = rows[1:cut[r] + 1].sum(axis=0)
        out[r, 1] = rows[cut[r] + 1:].sum(axis=0)
        out[r, default[r]] += rows[0]


@jit
def _threshold_children(hists, index, offset, width, cut, default, out):
    for r in range(index.size):
        hist = hists[index[r]]
        o = offset[r]
        for b in range(1, width[r]):
            child = 0 if b <= cut[r] else 1
            for c in range(hist.shape[1]):
                out[r, child, c] += hist[o + b, c]
        for c in range(hist.shape[1]):
            out[r, default[r], c] += hist[o, c]
