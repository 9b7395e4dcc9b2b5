"""Multi-way numeric tests of one attribute for a batch of histograms, compiled.

The reference, :func:`dasktree.split.multiway.numeric_multiway_reference`,
spends its time per (node, tree, attribute) in small numpy calls:
Block-Opt-P, then for every arity ``k`` the children, the ``k`` placements
of the missing values, the ``min_samples_leaf`` check and the selection score.
:func:`dasktree.split.multiway.multiway_choices` makes the same choices for the M histograms
of one attribute in two compiled passes with one ``np.log2`` call between them
(:func:`run_kernels`):

1. :func:`_prepare_loops`, per histogram: the blocks, Block-Opt-P (the loops of
   :mod:`dasktree.split.optimal_kernels` and :mod:`dasktree.split.unit_kernels`,
   compiled into this one), the cuts of every arity up to the first infinite
   optimal cost, the children's class counts, and every proportion whose
   ``log2`` an entropy of step 3 reads.
2. ``np.log2`` of all those proportions at once.
3. :func:`_choose_loops`, per histogram and arity: the impurity decrease of
   each placement of the missing values and the best one (largest gain, then
   the larger child, then the lower index), the ``min_samples_leaf`` check, the
   selection score, the best arity (the first strictly greater score), and the
   winner's cuts centred by the rule of :func:`dasktree.split.search._centered_cut`
   (:func:`dasktree.split.binary_kernel.centred`).

Why numpy computes the logarithms. The reference's entropies read numpy's
``log2`` of proportions ``p = n_c / n``; the C library's ``log2``, which
compiled code calls, differs from numpy's SIMD one in the last bit for about
one argument in 5,000 on AVX-512 machines, and a table of ``log2`` of the
integers (what :mod:`dasktree.split.binary_kernel` reads) cannot give
``log2(n_c / n)`` rounded as numpy rounds it. numpy's ``log2`` of a value does
not depend on the array it sits in, so one call gives the reference's values.

Bit for bit with the reference (same tests, gains, children; the tests check
it): every float is computed with the reference's operations in its order.
Sums are numpy's (:func:`dasktree.split.unit_kernels.pairwise_sum`: in order
below 8 terms, pairwise above); entropy ``-(sum_c p_c log2 p_c)``, gini
``1 - sum_c p_c**2`` with ``p_c = n_c / n``; the gain of a placement
``I(parent) - (sum_i |S_i| I(S_i)) / n``; the balanced gain divides by numpy's
``log2 k``. Counts must be integers (int64 sums are exact); the callers send
float histograms to the reference.

numba's cache is keyed on this file alone: after a change to the loops of
``optimal_kernels.py`` or ``unit_kernels.py``, which are compiled into these,
touch this file or delete its ``__pycache__/multiway_kernel*.nb[ic]`` files
(the property test against the reference reports stale code).
"""

from __future__ import annotations

import threading

import numpy as np

from ..kernels.jit import jit
from .binary_kernel import centred
from .compiled import (
    LOG2_TABLE_MAX,
    NO_TABLE,
    jitable,
    log2_cache,
    log2_table_for,
    pairwise_sum,
)
from .optimal import PRUNE_MARGIN
from .optimal_kernels import loaded_kernels, table2_loops
from .unit_kernels import units_loops

__all__ = ["INVALID", "SELECTION_CODES", "multiway_kernel_available", "multiway_kernels", "run_kernels"]

SELECTION_CODES = {"balanced_gain": 0, "gain_ratio": 1, "distance": 2}

INVALID = -1
"""``arity`` of a histogram with a negative count (the reference raises for it)."""


def _proportions(flat, M, S, C, need_g, need_z, need_j):
    """The four arrays of proportions (or their logarithms) laid out in ``flat``, as views.

    ``g`` (M, S, 2, C), ``z`` (M, S, 2), ``j`` (M, S, 2, C), ``t`` (M, C);
    an array not needed has no rows.
    """
    g = M * S * 2 * C if need_g else 0
    z = M * S * 2 if need_z else 0
    j = M * S * 2 * C if need_j else 0
    t = M * C if need_j else 0
    return (flat[:g].reshape((g // max(S * 2 * C, 1), S, 2, C)),
            flat[g:g + z].reshape((z // max(S * 2, 1), S, 2)),
            flat[g + z:g + z + j].reshape((j // max(S * 2 * C, 1), S, 2, C)),
            flat[g + z + j:g + z + j + t].reshape((t // max(C, 1), C)))


def _prepare_loops(h, max_arity, crit, table, table_max, margin_rate, need_g, need_z, need_j):
    """Step 1: Block-Opt-P, the cuts and children of every arity, the proportions to take log2 of.

    ``h`` (M, w, C) int64: row 0 missing values, then the bins. Returns
    ``kmax`` (M,): the largest arity of finite optimal cost (0: fewer than
    two non-empty bins; :data:`INVALID`), ``cuts`` (M, S) and ``children``
    (M, S, C), where slot ``k (k - 1) / 2 - 1 + i`` holds 1-based cut / child
    ``i`` of the optimal k-split, the flat proportions (see
    :func:`_proportions`; 1.0 where the count is 0), and ``need``: 0, or the
    largest total whose ``log2`` table ``table`` does not cover (run again
    with a larger one). Proportions: ``g[m, s, 0 | 1]`` the class counts of
    child ``s`` without / with the missing values over its size (entropy
    gains); ``z`` its size over the node's (split information); ``j`` its
    class counts over the node's size (joint entropy of the distance); ``t``
    the node's class proportions.
    """
    M, w, C = h.shape
    S = max_arity * (max_arity + 1) // 2 - 1
    kmax = np.zeros(M, np.int64)
    cuts = np.zeros((M, S), np.int64)
    children = np.zeros((M, S, C), np.int64)
    size = M * S * 2 * C * need_g + M * S * 2 * need_z + (M * S * 2 * C + M * C) * need_j
    flat = np.ones(size)
    pg, pz, pj, pt = _proportions(flat, M, S, C, need_g, need_z, need_j)
    no_table = np.zeros(0)
    need = 0.0
    n_bins = w - 1
    nonempty = np.empty(max(n_bins, 1), np.int64)
    for m in range(M):
        bins = h[m, 1:]
        status, units, last_bin, n_nonempty, total, integral = units_loops(bins, True)
        if status != 0:
            kmax[m] = INVALID
            continue
        kmax[m] = 0
        if n_nonempty < 2:
            continue
        n_units = units.shape[0]
        arity = min(max_arity, n_units)
        log2tab = no_table
        if crit == 0 and integral and total <= table_max:
            if total >= table.shape[0]:
                need = max(need, total)
                continue
            log2tab = table
        P, L, _ = table2_loops(units, arity, crit, True, margin_rate * total, log2tab)
        # Arities above the number of blocks (optimal._extend_beyond_blocks): all boundary
        # points plus the rightmost cuts inside uniform blocks, at the cost of all blocks.
        beyond = max_arity > n_units and n_nonempty > n_units
        if beyond:
            found = 0
            for b in range(n_bins):
                for c in range(C):
                    if bins[b, c] > 0:
                        nonempty[found] = b
                        found += 1
                        break
        for k in range(2, max_arity + 1):
            if k <= arity:
                cost = P[n_units, k]
            elif beyond and k <= n_nonempty:
                cost = P[n_units, n_units]
            else:
                cost = np.inf
            if not np.isfinite(cost):
                break
            o = k * (k - 1) // 2 - 1
            if k <= arity:  # read back through L: rightmost last cut, then that prefix's, ...
                i = n_units
                for kk in range(k, 1, -1):
                    i = L[i, kk]
                    cuts[m, o + kk - 2] = last_bin[i - 1] + 1
            else:
                skip = (n_nonempty - n_units) - (k - n_units)  # inner cuts left of the ones taken
                pos = 0
                boundary = 0
                for j in range(n_nonempty - 1):
                    b = nonempty[j]
                    if boundary < n_units - 1 and last_bin[boundary] == b:
                        boundary += 1
                    elif skip > 0:
                        skip -= 1
                        continue
                    cuts[m, o + pos] = b + 1
                    pos += 1
            lo = 0
            for i in range(k):
                hi = cuts[m, o + i] if i < k - 1 else n_bins
                for c in range(C):
                    s = 0
                    for b in range(lo, hi):
                        s += bins[b, c]
                    children[m, o + i, c] = s
                lo = hi
            kmax[m] = k
        miss_n = 0
        for c in range(C):
            miss_n += h[m, 0, c]
        node = miss_n
        for c in range(C):
            node += children[m, 0, c] + children[m, 1, c]
        size_n = float(node)
        for s in range(kmax[m] * (kmax[m] + 1) // 2 - 1):
            size = 0
            for c in range(C):
                size += children[m, s, c]
            for c in range(C):
                x = children[m, s, c]
                xm = x + h[m, 0, c]
                if need_g:
                    pg[m, s, 0, c] = float(x) / float(size) if x > 0 else 1.0
                    pg[m, s, 1, c] = float(xm) / float(size + miss_n) if xm > 0 else 1.0
                if need_j:
                    pj[m, s, 0, c] = float(x) / size_n if x > 0 else 1.0
                    pj[m, s, 1, c] = float(xm) / size_n if xm > 0 else 1.0
            if need_z:
                pz[m, s, 0] = float(size) / size_n if size > 0 else 1.0
                pz[m, s, 1] = float(size + miss_n) / size_n if size + miss_n > 0 else 1.0
        if need_j:
            for c in range(C):
                t = children[m, 0, c] + children[m, 1, c] + h[m, 0, c]
                pt[m, c] = float(t) / size_n if t > 0 else 1.0
    return kmax, cuts, children, flat, need


def _child_impurity(child, miss, add, size, lg, entropy, terms):
    """``I(S)`` of ``child (+ miss)`` of ``size`` examples, as criteria.entropy / gini compute it.

    ``lg``: numpy's ``log2`` of the proportions (entropy only).
    """
    C = child.shape[0]
    for c in range(C):
        x = child[c] + miss[c] if add else child[c]
        p = float(x) / float(size)
        if entropy:
            terms[c] = p * lg[c] if x > 0 else 0.0
        else:
            terms[c] = p * p
    if entropy:
        return -(0.0 + pairwise_sum(terms, 0, C))
    return 1.0 - (0.0 + pairwise_sum(terms, 0, C))


def _choose_loops(h, max_arity, kmax, cuts, children, logs, parent, n, entropy, selection, min_leaf, log2k,
                  upper, values):
    """Step 3: per histogram, the placement of missing values, the scores and the best arity.

    ``logs``: numpy's ``log2`` of step 1's flat proportions. Returns the
    arrays of :class:`dasktree.split.multiway.MultiwayChoices`.
    """
    M, w, C = h.shape
    S = cuts.shape[1]
    A = max_arity
    lg, lz, lj, lt = _proportions(logs, M, S, C, entropy, selection > 0, selection == 2)
    out_k = np.zeros(M, np.int64)
    out_default = np.zeros(M, np.int64)
    out_gain = np.full(M, -np.inf)
    out_score = np.full(M, -np.inf)
    out_children = np.zeros((M, A, C), np.int64)
    out_raw = np.zeros((M, max(A - 1, 1)), np.int64)
    out_cuts = np.zeros((M, max(A - 1, 1)), np.int64)
    terms = np.empty(A * C)
    plain = np.empty(A)
    with_miss = np.empty(A)
    gains = np.empty(A)
    sizes = np.empty(A, np.int64)
    for m in range(M):
        K = kmax[m]
        if K < 2:
            out_k[m] = min(K, 0)  # INVALID stays
            continue
        miss = h[m, 0]
        miss_n = 0
        node = 0
        for c in range(C):
            miss_n += miss[c]
            node += children[m, 0, c] + children[m, 1, c] + miss[c]
        size_n = float(node)
        found = False
        best_score = -np.inf
        best_k = 0
        best_d = 0
        best_gain = 0.0
        for k in range(2, K + 1):
            o = k * (k - 1) // 2 - 1
            for i in range(k):
                s = o + i
                size = 0
                for c in range(C):
                    size += children[m, s, c]
                sizes[i] = size
                plain[i] = _child_impurity(children[m, s], miss, False, size,
                                           lg[m, s, 0] if entropy else terms, entropy, terms)
                with_miss[i] = _child_impurity(children[m, s], miss, True, size + miss_n,
                                               lg[m, s, 1] if entropy else terms, entropy, terms)
            for d in range(k):  # multiway._place_missing: the missing values join child d
                for i in range(k):
                    if i == d:
                        terms[i] = float(sizes[i] + miss_n) * with_miss[i]
                    else:
                        terms[i] = float(sizes[i]) * plain[i]
                gains[d] = parent[m] - (0.0 + pairwise_sum(terms, 0, k)) / n[m]
            d = 0
            for j in range(1, k):
                if gains[j] > gains[d] or (gains[j] == gains[d] and sizes[j] > sizes[d]):
                    d = j
            gain = gains[d]
            present = 0
            small = False
            for i in range(k):
                size = sizes[i] + (miss_n if i == d else 0)
                present += size > 0
                small = small or size < min_leaf
            if small:
                continue
            # multiway.selection_score
            if present < 2:
                score = -np.inf
            elif selection == 0:
                score = gain / log2k[present]
            else:
                for i in range(k):
                    size = sizes[i] + (miss_n if i == d else 0)
                    terms[i] = float(size) / size_n * lz[m, o + i, 1 if i == d else 0] if size > 0 else 0.0
                split_info = -(0.0 + pairwise_sum(terms, 0, k))
                if selection == 1:
                    score = gain / split_info if split_info > 0 else -np.inf
                else:
                    for i in range(k):
                        for c in range(C):
                            x = children[m, o + i, c] + (miss[c] if i == d else 0)
                            terms[i * C + c] = (float(x) / size_n * lj[m, o + i, 1 if i == d else 0, c]
                                                if x > 0 else 0.0)
                    joint = -(0.0 + pairwise_sum(terms, 0, k * C))
                    if joint <= 0:
                        score = -np.inf
                    else:
                        for c in range(C):
                            t = children[m, 0, c] + children[m, 1, c] + miss[c]
                            terms[c] = float(t) / size_n * lt[m, c] if t > 0 else 0.0
                        classes = -(0.0 + pairwise_sum(terms, 0, C))
                        score = 1.0 - (2.0 * joint - split_info - classes) / joint
            if not found or score > best_score:
                found = True
                best_score = score
                best_k = k
                best_d = d
                best_gain = gain
        if not found:
            continue
        out_k[m] = best_k
        out_default[m] = best_d
        out_gain[m] = best_gain
        out_score[m] = best_score
        o = best_k * (best_k - 1) // 2 - 1
        for i in range(best_k):
            for c in range(C):
                out_children[m, i, c] = children[m, o + i, c] + (miss[c] if i == best_d else 0)
        for j in range(best_k - 1):
            cut = cuts[m, o + j]
            out_raw[m, j] = cut
            q = cut + 1
            for b in range(cut, w - 1):  # the next non-empty bin (1-based q)
                size = 0
                for c in range(C):
                    size += h[m, 1 + b, c]
                if size > 0:
                    q = b + 1
                    break
            out_cuts[m, j] = centred(cut, q, upper, values)
    return out_k, out_default, out_gain, out_score, out_children, out_raw, out_cuts


_LOCK = threading.Lock()
_LOADED: list = []  # [the compiled kernels, or None], once loaded
_LOG2_ARITY: dict[int, np.ndarray] = {}


def _load() -> dict | None:
    if loaded_kernels()["backend"] != "numba":
        return None
    try:
        jitable(units_loops, table2_loops, _child_impurity, _proportions)
        kernels = {"prepare": jit(_prepare_loops), "choose": jit(_choose_loops)}
        # Compile now (or load from the cache), so that a numba that cannot compile
        # these loops leaves the search on the reference instead of failing it.
        probe = np.array([[[1, 0], [2, 0], [0, 0], [0, 2], [1, 1]]])
        run_kernels(kernels, probe, np.ones(1), np.full(1, 6.0), impurity="entropy", max_arity=3,
             selection="distance", min_samples_leaf=1, upper=np.arange(3.0) + 0.5,
             values=np.arange(4.0))
    except Exception:  # pragma: no cover - depends on the installed numba
        return None
    return kernels


def multiway_kernels() -> dict | None:
    """The compiled loops (``prepare``, ``choose``), or None without a working numba."""
    if not _LOADED:
        with _LOCK:
            if not _LOADED:
                _LOADED.append(_load())
    return _LOADED[0]


def multiway_kernel_available() -> bool:
    """True when the compiled multi-way search is in use (numba imports and compiles)."""
    return multiway_kernels() is not None


def _log2_arities(max_arity: int) -> np.ndarray:
    """``np.log2(k)`` for ``k = 1 .. max_arity`` (entry 0 unused), as the reference computes it."""
    table = _LOG2_ARITY.get(max_arity)
    if table is None:
        table = np.array([0.0] + [np.log2(k) for k in range(1, max_arity + 1)])
        _LOG2_ARITY[max_arity] = table
    return table


def run_kernels(kernels: dict, h: np.ndarray, parent_impurity: np.ndarray, n: np.ndarray, *, impurity: str,
                max_arity: int, selection: str, min_samples_leaf: float, upper: np.ndarray,
                values: np.ndarray) -> tuple:
    """Steps 1-3 for the histograms ``h`` (M, w, C): the fields of
    :class:`dasktree.split.multiway.MultiwayChoices`, in order."""
    h = np.ascontiguousarray(h, dtype=np.int64)
    entropy = impurity == "entropy"
    crit = 0 if entropy else 1
    code = SELECTION_CODES[selection]
    table = log2_cache() if entropy else NO_TABLE  # as large as it has grown
    kmax, cuts, children, p, need = kernels["prepare"](h, max_arity, crit, table, float(LOG2_TABLE_MAX),
                                                       PRUNE_MARGIN, entropy, code > 0, code == 2)
    if need:  # a histogram the cached table does not cover: grow it, run again
        table = log2_table_for(need, True, crit)
        kmax, cuts, children, p, need = kernels["prepare"](h, max_arity, crit, table, float(LOG2_TABLE_MAX),
                                                           PRUNE_MARGIN, entropy, code > 0, code == 2)
    return kernels["choose"](
        h, max_arity, kmax, cuts, children, np.log2(p), np.asarray(parent_impurity, dtype=np.float64),
        np.asarray(n, dtype=np.float64), entropy, code, float(min_samples_leaf), _log2_arities(max_arity),
        np.asarray(upper, dtype=np.float64), np.asarray(values, dtype=np.float64))
