"""The searches of :mod:`dasktree.split.small_grower`: one attribute at one node, from the node's rows.

Each repeats a level-wise search's operations in its order over the codes the node's training rows
occupy (counted in a scratch array and sorted, no pass over every bin): :func:`class_scan` the
compiled scan of :mod:`dasktree.split.binary_kernel` (gini, or entropy from the same ``log2`` table
through the same compiled ``|S| H(S)``), :func:`nominal_class_scan` the subset search of a nominal
attribute (:func:`dasktree.split.search.nominal_binary_columns`, each candidate's gain as
:func:`dasktree.split.search._binary_choices` takes it), :func:`regression_scan` the scan of
:func:`dasktree.split.regression.best_splits`; :func:`gini` the parent's gini as
:func:`dasktree.split.criteria.gini` sums it, :func:`entropy_of` its entropy and
:func:`split_information` a binary test's as :func:`dasktree.split.search.entropy_of_counts` does.
"""

from __future__ import annotations

import numpy as np

from ..kernels.jit import jit
from .binary_kernel import _gini_weighted, _weighted_of_terms, centred  # the level passes' own arithmetic: the same bytes
from .monotonic import allowed

__all__ = ["class_scan", "nominal_class_scan", "regression_scan", "gini", "entropy_of", "split_information", "SQUARED_ERROR",
           "FRIEDMAN"]

SQUARED_ERROR, FRIEDMAN = 0, 1

@jit
def _sum_sequential_or_pairwise(x, n):
    """numpy's ``sum`` of ``x[:n]`` (float64, contiguous): a plain loop below 8 items, 8 accumulators
    up to 128 (numpy's pairwise sum), halves above."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += x[i]
        return res
    if n <= 128:
        r0, r1, r2, r3, r4, r5, r6, r7 = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
        i = 8
        while i < n - (n % 8):
            r0 += x[i]
            r1 += x[i + 1]
            r2 += x[i + 2]
            r3 += x[i + 3]
            r4 += x[i + 4]
            r5 += x[i + 5]
            r6 += x[i + 6]
            r7 += x[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += x[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _sum_sequential_or_pairwise(x[:half], half) + _sum_sequential_or_pairwise(x[half:], n - half)


@jit
def gini(counts, squares_buffer):
    """:func:`dasktree.split.criteria.gini` of one count vector, bit for bit."""
    n = 0.0
    for c in range(counts.size):
        n += float(counts[c])
    if n <= 0:
        return 0.0
    for c in range(counts.size):
        p = float(counts[c]) / n
        squares_buffer[c] = p * p
    return 1.0 - _sum_sequential_or_pairwise(squares_buffer, counts.size)


@jit
def _proxy(criterion, nl, sl, nr, sr):
    """:func:`dasktree.split.regression.proxy` of one cut (float64; -inf where a child is empty)."""
    if nl <= 0 or nr <= 0:
        return -np.inf
    fnl, fsl, fnr, fsr = float(nl), float(sl), float(nr), float(sr)
    if criterion == SQUARED_ERROR:
        return fsl * fsl / fnl + fsr * fsr / fnr
    d = fsl / fnl - fsr / fnr
    return fnl * fnr * d * d


@jit
def entropy_of(counts, n, log2, terms):
    """The entropy of one count vector of total ``n`` > 0 as
    :func:`dasktree.split.search.entropy_of_counts` computes it, bit for bit (``terms``: scratch)."""
    for c in range(counts.size):
        x = counts[c]
        terms[c] = float(x) * log2[x]
    return _weighted_of_terms(terms[:counts.size], n, log2) / float(n)


@jit
def split_information(left, right, log2, terms):
    """A binary test's split information from its children's sizes (both > 0), as
    :func:`dasktree.split.search.entropy_of_counts` computes it from them."""
    terms[0] = float(left) * log2[left]
    terms[1] = float(right) * log2[right]
    return _weighted_of_terms(terms[:2], left + right, log2) / float(left + right)


@jit
def _count_classes(codes_a, rows, lo, hi, held, y, weight, n_classes, miss, bin_counts, seen, touched):
    """The class counts of one attribute at one node, from its training rows ``rows[lo:hi]`` (not ``held``):
    ``miss`` the missing code's, ``bin_counts[code]`` each occupied code's; the occupied codes marked
    ``seen`` and listed in ``touched`` in the order met. Returns how many codes are occupied."""
    weighted = weight.size > 0
    for c in range(n_classes):
        miss[c] = 0
    k = 0
    for r in range(lo, hi):
        if held[r]:
            continue
        i = rows[r]
        code = codes_a[i]
        w = np.int64(weight[i]) if weighted else np.int64(1)
        if code == 0:
            miss[y[i]] += w
            continue
        if not seen[code]:
            seen[code] = True
            touched[k] = code
            k += 1
        bin_counts[code, y[i]] += w
    return k


@jit
def class_scan(codes_a, rows, lo, hi, held, y, weight, o_width, n_classes, miss, bin_counts, seen, touched,
                parent, size, min_leaf, upper_a, values_a, result, entropy, log2, terms, c_a=0, b_lo=-np.inf,
                b_hi=np.inf):
    """The compiled scan's best threshold test of one attribute at one node (gini, or with ``entropy``
    entropy from the ``log2`` table), over the codes the node's training rows occupy. ``result`` gets
    (gain, centred cut, default, child 0's size); returns False when none. ``terms`` (4, n_classes):
    scratch for the classes' ``c log2 c`` in each child, without and with the missing values. ``c_a``:
    the attribute's monotonic constraint on the children's second-class shares, within ``b_lo``,
    ``b_hi`` (:func:`dasktree.split.monotonic.allowed`, as the level scan checks it)."""
    k = _count_classes(codes_a, rows, lo, hi, held, y, weight, n_classes, miss, bin_counts, seen, touched)
    order = np.sort(touched[:k])
    best = -np.inf
    best_i = -1
    best_default = 0
    best_left_n = np.int64(0)
    miss_n = np.int64(0)
    if k >= 2 and o_width - 1 >= 2:
        miss_squares = np.int64(0)
        total = np.zeros(n_classes, dtype=np.int64)
        left = np.zeros(n_classes, dtype=np.int64)
        right = np.zeros(n_classes, dtype=np.int64)
        left_terms, right_terms = terms[0, :n_classes], terms[1, :n_classes]
        left_miss_terms, right_miss_terms = terms[2, :n_classes], terms[3, :n_classes]
        for c in range(n_classes):
            x = miss[c]
            miss_n += x
            miss_squares += x * x
        for j in range(k):
            for c in range(n_classes):
                total[c] += bin_counts[order[j], c]
        total_n = np.int64(0)
        right_squares = np.int64(0)
        right_miss = np.int64(0)
        for c in range(n_classes):
            total_n += total[c]
            right[c] = total[c]
            right_squares += total[c] * total[c]
            right_miss += total[c] * miss[c]
        if entropy:  # the level scan's terms (binary_kernel._scan), kept as the cuts move
            for c in range(n_classes):
                x = total[c]
                left_terms[c] = 0.0
                right_terms[c] = float(x) * log2[x]
                x = miss[c]
                left_miss_terms[c] = float(x) * log2[x]
                x = total[c] + miss[c]
                right_miss_terms[c] = float(x) * log2[x]
        left_n = np.int64(0)
        left_squares = np.int64(0)
        left_miss = np.int64(0)
        for j in range(k - 1):
            b = order[j]
            s = np.int64(0)
            for c in range(n_classes):
                x = bin_counts[b, c]
                left_squares += x * (2 * left[c] + x)
                right_squares += x * (x - 2 * right[c])
                left_miss += x * miss[c]
                right_miss -= x * miss[c]
                left[c] += x
                right[c] -= x
                s += x
                if entropy and x != 0:
                    yl = left[c]
                    left_terms[c] = float(yl) * log2[yl]
                    zr = right[c]
                    right_terms[c] = float(zr) * log2[zr]
                    if miss_n > 0:
                        yl += miss[c]
                        left_miss_terms[c] = float(yl) * log2[yl]
                        zr += miss[c]
                        right_miss_terms[c] = float(zr) * log2[zr]
            left_n += s
            right_n = total_n - left_n
            larger_right = right_n > left_n
            if miss_n > 0:
                g0 = -np.inf
                if left_n + miss_n >= min_leaf and right_n >= min_leaf:
                    if entropy:
                        w2 = (_weighted_of_terms(left_miss_terms, left_n + miss_n, log2)
                              + _weighted_of_terms(right_terms, right_n, log2))
                    else:
                        w2 = (_gini_weighted(left_n + miss_n, left_squares + 2 * left_miss + miss_squares)
                              + _gini_weighted(right_n, right_squares))
                    g0 = parent - w2 / size
                    if c_a != 0 and not allowed(c_a, b_lo, b_hi, float(left[1] + miss[1]) / float(left_n + miss_n),
                                                float(right[1]) / float(right_n)):
                        g0 = -np.inf
                g1 = -np.inf
                if left_n >= min_leaf and right_n + miss_n >= min_leaf:
                    if entropy:
                        w2 = (_weighted_of_terms(left_terms, left_n, log2)
                              + _weighted_of_terms(right_miss_terms, right_n + miss_n, log2))
                    else:
                        w2 = (_gini_weighted(left_n, left_squares)
                              + _gini_weighted(right_n + miss_n, right_squares + 2 * right_miss + miss_squares))
                    g1 = parent - w2 / size
                    if c_a != 0 and not allowed(c_a, b_lo, b_hi, float(left[1]) / float(left_n),
                                                float(right[1] + miss[1]) / float(right_n + miss_n)):
                        g1 = -np.inf
                d = 1 if (g1 > g0 or (g1 == g0 and larger_right)) else 0
                g = g1 if d == 1 else g0
            else:
                g = -np.inf
                if left_n >= min_leaf and right_n >= min_leaf:
                    if entropy:
                        w2 = _weighted_of_terms(left_terms, left_n, log2) + _weighted_of_terms(right_terms, right_n,
                                                                                                log2)
                    else:
                        w2 = _gini_weighted(left_n, left_squares) + _gini_weighted(right_n, right_squares)
                    g = parent - w2 / size
                    if c_a != 0 and not allowed(c_a, b_lo, b_hi, float(left[1]) / float(left_n),
                                                float(right[1]) / float(right_n)):
                        g = -np.inf
                d = 1 if larger_right else 0
            if g > best:
                best = g
                best_i = j
                best_default = d
                best_left_n = left_n
    found = best_i >= 0
    if found:
        result[0] = best
        result[1] = centred(order[best_i], order[best_i + 1], upper_a, values_a)
        result[2] = best_default
        result[3] = best_left_n + (miss_n if best_default == 0 else 0)
    for j in range(k):  # the scratch counts back to zero, for the next attribute and node
        b = touched[j]
        seen[b] = False
        for c in range(n_classes):
            bin_counts[b, c] = 0
    return found


@jit
def regression_scan(codes_a, rows, lo, hi, held, q, weight, numeric, bin_n, bin_s, seen, touched, parent,
                     criterion, min_leaf, upper_a, values_a, result, side, c=0, b_lo=-np.inf, b_hi=np.inf):
    """:func:`dasktree.split.regression.best_splits`'s scan of one attribute at one node, over the codes
    the node's training rows occupy. ``result`` gets (gain, cut or -1, default, last position);
    ``side[code]`` the child of each occupied code (numeric and nominal). Returns False when none.
    ``c``: the attribute's monotonic constraint, the node's value within ``b_lo``, ``b_hi``
    (:func:`dasktree.split.monotonic.allowed`, on the children's means as the level search divides)."""
    weighted = weight.size > 0
    n0 = np.int64(0)
    s0 = np.int64(0)
    k = 0
    for r in range(lo, hi):
        if held[r]:
            continue
        i = rows[r]
        code = codes_a[i]
        w = np.int64(weight[i]) if weighted else np.int64(1)
        if code == 0:
            n0 += w
            s0 += w * np.int64(q[i])
            continue
        if not seen[code]:
            seen[code] = True
            touched[k] = code
            k += 1
        bin_n[code] += w
        bin_s[code] += w * np.int64(q[i])
    order = np.sort(touched[:k])
    if not numeric and k > 1:  # categories by mean target, stably (code order on ties)
        mean = np.empty(k)
        for j in range(k):
            mean[j] = float(bin_s[order[j]]) / float(bin_n[order[j]])
        order = order[np.argsort(mean, kind="mergesort")]
    best = -np.inf
    best_j = -1
    best_d = 0
    total_n = np.int64(0)
    total_s = np.int64(0)
    for j in range(k):
        total_n += bin_n[order[j]]
        total_s += bin_s[order[j]]
    nl = np.int64(0)
    sl = np.int64(0)
    for j in range(k):
        b = order[j]
        nl += bin_n[b]
        sl += bin_s[b]
        nr = total_n - nl
        sr = total_s - sl
        if nr <= 0:
            continue
        g0 = -np.inf
        if nl + n0 >= min_leaf and nr >= min_leaf:
            g0 = _proxy(criterion, nl + n0, sl + s0, nr, sr)
        g1 = -np.inf
        if nl >= min_leaf and nr + n0 >= min_leaf:
            g1 = _proxy(criterion, nl, sl, nr + n0, sr + s0)
        if c != 0:
            if g0 > -np.inf and not allowed(c, b_lo, b_hi, float(sl + s0) / float(nl + n0), float(sr) / float(nr)):
                g0 = -np.inf
            if g1 > -np.inf and not allowed(c, b_lo, b_hi, float(sl) / float(nl), float(sr + s0) / float(nr + n0)):
                g1 = -np.inf
        larger_right = nr > nl
        if n0 > 0:
            d = 1 if (g1 > g0 or (g1 == g0 and larger_right)) else 0
        else:
            d = 1 if larger_right else 0
        g = g1 if d == 1 else g0
        if g > best:
            best = g
            best_j = j
            best_d = d
    found = best_j >= 0
    if found:
        result[0] = best - parent
        result[2] = best_d
        result[3] = best_j
        if numeric:
            result[1] = centred(order[best_j], order[best_j + 1], upper_a, values_a)
        else:
            result[1] = -1
            for j in range(k):
                side[order[j]] = 0 if j <= best_j else 1
    for j in range(k):
        b = touched[j]
        seen[b] = False
        bin_n[b] = 0
        bin_s[b] = 0
    return found


@jit
def _weighted_child(counts, add, n_classes, entropy, log2, terms):
    """``|S| I(S)`` of the class counts ``counts + add`` (a child of at least one row) as the level
    search's ``_weighted`` takes it: gini from the size and the exact sum of squares, entropy from the
    classes' ``c log2 c`` in class order (``terms``: scratch)."""
    n = np.int64(0)
    squares = np.int64(0)
    for c in range(n_classes):
        x = counts[c] + add[c]
        n += x
        squares += x * x
        if entropy:
            terms[c] = float(x) * log2[x]
    if entropy:
        return _weighted_of_terms(terms[:n_classes], n, log2)
    return _gini_weighted(n, squares)


@jit
def _subset_gain(left, right, miss, no_miss, n_classes, left_n, right_n, miss_n, parent, size, min_leaf, entropy,
                 log2, terms, out):
    """One candidate of :func:`dasktree.split.search._binary_choices`: ``left`` to child 0, ``right`` to
    child 1 (both of at least one row), the missing values ``miss`` where they gain more (on a tie, and
    without missing values, the default child is the larger one, then the left). ``out`` gets the
    default child; returns the gain (-inf: a child below ``min_leaf``)."""
    if miss_n > 0:
        g0 = -np.inf
        if left_n + miss_n >= min_leaf and right_n >= min_leaf:
            w2 = (_weighted_child(left, miss, n_classes, entropy, log2, terms)
                  + _weighted_child(right, no_miss, n_classes, entropy, log2, terms))
            g0 = parent - w2 / size
        g1 = -np.inf
        if left_n >= min_leaf and right_n + miss_n >= min_leaf:
            w2 = (_weighted_child(left, no_miss, n_classes, entropy, log2, terms)
                  + _weighted_child(right, miss, n_classes, entropy, log2, terms))
            g1 = parent - w2 / size
        d = 1 if (g1 > g0 or (g1 == g0 and right_n > left_n)) else 0
        out[0] = d
        return g1 if d == 1 else g0
    out[0] = 1 if right_n > left_n else 0
    if left_n >= min_leaf and right_n >= min_leaf:
        w2 = (_weighted_child(left, no_miss, n_classes, entropy, log2, terms)
              + _weighted_child(right, no_miss, n_classes, entropy, log2, terms))
        return parent - w2 / size
    return -np.inf


@jit
def nominal_class_scan(codes_a, rows, lo, hi, held, y, weight, n_classes, miss, bin_counts, seen, touched, parent,
                       size, min_leaf, exhaustive, result, side, entropy, log2, terms):
    """The level search's best subset test of one nominal attribute at one node
    (:func:`dasktree.split.search.nominal_binary_columns`), over the categories the node's training rows
    occupy; the missing code (0) is no category. Its candidates: with 2 classes the prefixes of the
    categories ordered by the second class's proportion (a stable sort: code order on ties); with more,
    every subset (the last category always right) when at most ``exhaustive`` categories are present,
    else the prefixes of each class's order in turn, a later class's kept only when strictly better.
    The first best candidate wins, its gain the float of :func:`~dasktree.split.search._binary_choices`.
    ``result`` gets (gain, -1, default, child 0's size) and ``side[code]`` each present category's
    child; returns False when no candidate is valid. ``terms``: scratch of at least ``n_classes``."""
    k = _count_classes(codes_a, rows, lo, hi, held, y, weight, n_classes, miss, bin_counts, seen, touched)
    found = False
    if k >= 2:
        cats = np.sort(touched[:k])
        total = np.zeros(n_classes, dtype=np.int64)
        left = np.zeros(n_classes, dtype=np.int64)
        right = np.zeros(n_classes, dtype=np.int64)
        no_miss = np.zeros(n_classes, dtype=np.int64)
        sizes = np.zeros(k, dtype=np.int64)
        miss_n = np.int64(0)
        for c in range(n_classes):
            miss_n += miss[c]
        for j in range(k):
            for c in range(n_classes):
                x = bin_counts[cats[j], c]
                total[c] += x
                sizes[j] += x
        total_n = np.int64(0)
        for c in range(n_classes):
            total_n += total[c]
        default = np.zeros(1, dtype=np.int64)
        best = -np.inf
        best_default = 0
        best_left_n = np.int64(0)
        in_left = np.zeros(k, dtype=np.bool_)  # the best candidate's categories sent to child 0 (by rank)
        if n_classes > 2 and k <= exhaustive:
            # every subset s = 1 .. 2**(k-1) - 1 in order: bit i sends category i (code order) left
            now = np.zeros(k, dtype=np.bool_)
            left_n = np.int64(0)
            for s in range(1, 1 << (k - 1)):
                flipped = s ^ (s - 1)
                for i in range(k - 1):
                    if (flipped >> i) & 1:
                        sign = np.int64(1) if (s >> i) & 1 else np.int64(-1)
                        now[i] = sign > 0
                        for c in range(n_classes):
                            left[c] += sign * bin_counts[cats[i], c]
                        left_n += sign * sizes[i]
                for c in range(n_classes):
                    right[c] = total[c] - left[c]
                g = _subset_gain(left, right, miss, no_miss, n_classes, left_n, total_n - left_n, miss_n, parent,
                                 size, min_leaf, entropy, log2, terms, default)
                if g > best:
                    best, best_default, best_left_n = g, default[0], left_n
                    in_left[:] = now
        else:
            share = np.empty(k)
            for o in range(1 if n_classes == 2 else 0, 2 if n_classes == 2 else n_classes):
                for j in range(k):
                    share[j] = float(bin_counts[cats[j], o]) / float(sizes[j])
                order = np.argsort(share, kind="mergesort")
                for c in range(n_classes):
                    left[c] = 0
                left_n = np.int64(0)
                order_best = -np.inf
                order_default = 0
                order_j = -1
                order_left_n = np.int64(0)
                for j in range(k - 1):
                    b = cats[order[j]]
                    for c in range(n_classes):
                        left[c] += bin_counts[b, c]
                        right[c] = total[c] - left[c]
                    left_n += sizes[order[j]]
                    g = _subset_gain(left, right, miss, no_miss, n_classes, left_n, total_n - left_n, miss_n,
                                     parent, size, min_leaf, entropy, log2, terms, default)
                    if g > order_best:
                        order_best, order_default, order_j, order_left_n = g, default[0], j, left_n
                if order_best > best:  # a later class's order only when strictly better
                    best, best_default, best_left_n = order_best, order_default, order_left_n
                    in_left[:] = False
                    for j in range(order_j + 1):
                        in_left[order[j]] = True
        found = best > -np.inf
        if found:
            result[0] = best
            result[1] = -1
            result[2] = best_default
            result[3] = best_left_n + (miss_n if best_default == 0 else 0)
            for j in range(k):
                side[cats[j]] = 0 if in_left[j] else 1
    for j in range(k):  # the scratch counts back to zero, for the next attribute and node
        b = touched[j]
        seen[b] = False
        for c in range(n_classes):
            bin_counts[b, c] = 0
    return found
