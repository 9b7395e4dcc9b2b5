"""The kernels of the optimal multi-way split search (Elomaa & Rousu, 000 Table 2).

:mod:`dasktree.split.optimal` owns the public functions and the input checks;
this module owns the dynamic programs that fill the paper's ``P``, ``L`` (and
``N``) arrays, in two twins each, the per-process ``log2`` table the entropy
costs read, and the loader that compiles them together with the extraction of
units and the read-back of cuts (:mod:`dasktree.split.unit_kernels`).
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np

from ..kernels.jit import jit, numba
from .compiled import jitable, pairwise_leaf, pairwise_sum
from .unit_kernels import cuts_loops, tse_cuts_loops, units_loops, units_numpy

# ---------------------------------------------------------------------------
# Kernels: Table 2 of 000 and the one-pass TSE optimiser
#
# Each kernel exists twice: a scalar loop (compiled by numba when available,
# and the reference implementation of the paper's pseudo-code) and a numpy
# version vectorised over the candidates. Both take ``units`` (U, m) float64,
# the class counts of the units (non-empty bins or blocks) in value order, and
# return the same arrays bit for bit. Arrays are 1-based like the paper:
# row 0 is unused.
# ---------------------------------------------------------------------------


def table2_loops(units, max_arity, crit, prune, margin, log2tab):
    """Table 2 of 000 (``Search``), line by line.

    ``crit``: 0 entropy, 1 gini, 2 tse. ``prune`` False gives Block-Opt (or
    Bin-Opt on bins): nothing is ever unlinked, the N lists stay
    ``i-1, i-2, ..``, so lines 7-15 become a plain loop over ``j``. ``log2tab``:
    log2 of the integers ``0 .. n`` (entry 0 unused), or empty to call log2.

    Returns ``P`` and ``L`` of shape (U+1, A+1) and the number of line-9
    evaluations. The arrays are stored level-major (``Pt[k, i]`` is the
    paper's ``P_{i,k}``) so that a scan over ``j`` reads contiguous memory.

    Errata of the printed table, fixed here: line 2 must also set
    ``cost_i = g(mu_i)`` (j runs to i); line 8 must read ``j >= k - 1`` (the
    first j blocks must hold k - 1 intervals; with ``j >= k`` the 2-split of
    two blocks is never tried); line 10 must unlink through ``l``
    (``N[l, k-1]``), the last kept node, which line 14 maintains; line 10's
    test gets a margin (see ``PRUNE_MARGIN``).
    """
    n_units = units.shape[0]
    m = units.shape[1]
    A = max_arity
    inf = np.inf
    Pt = np.full((A + 1, n_units + 1), inf)
    Lt = np.zeros((A + 1, n_units + 1), np.int64)
    Nt = np.zeros((A + 1, n_units + 1), np.int64)
    mu = np.zeros((n_units + 1, m))
    cost = np.zeros(n_units + 2)
    use_table = log2tab.shape[0] > 0
    evaluations = 0
    for i in range(1, n_units + 1):  # line 1
        # line 2: mu_j <- mu_j + mu_i, cost_j <- g(mu_j), for j = 1 .. i:
        # mu_j is now the class distribution of blocks b_j .. b_i.
        for j in range(1, i + 1):
            n = 0.0
            for c in range(m):
                mu[j, c] += units[i - 1, c]
                n += mu[j, c]
            if crit == 0:  # |S| H(S) = sum_c n_c (log2 n - log2 n_c)
                if use_table:
                    ln = log2tab[int(n)]
                else:
                    ln = math.log2(n)
                s = 0.0
                for c in range(m):
                    x = mu[j, c]
                    if x > 0.0:
                        if use_table:
                            s += x * (ln - log2tab[int(x)])
                        else:
                            s += x * (ln - math.log2(x))
                cost[j] = s
            elif crit == 1:  # |S| gini(S) = sum_c n_c (n - n_c) / n
                s = 0.0
                for c in range(m):
                    x = mu[j, c]
                    s += x * (n - x)
                cost[j] = s / n
            else:  # training set error: n - max_c n_c
                mx = 0.0
                for c in range(m):
                    if mu[j, c] > mx:
                        mx = mu[j, c]
                cost[j] = n - mx
        Pt[1, i] = cost[1]  # line 3
        Nt[1, i] = i - 1
        limit = A if i == n_units else A - 1  # line 4
        for k in range(2, min(i, limit) + 1):  # line 5
            minimum = inf  # line 6
            rejectlevel = Pt[k - 1, i]
            indexofmin = 0
            if prune:
                l = i  # line 7
                j = Nt[k - 1, i]
                while j >= k - 1:  # line 8 (printed: j >= k)
                    current = Pt[k - 1, j] + cost[j + 1]  # line 9
                    evaluations += 1
                    if current >= rejectlevel + margin:  # line 10: prune
                        Nt[k - 1, l] = Nt[k - 1, j]
                    else:  # line 11
                        if current < minimum:  # line 12
                            minimum = current  # line 13
                            indexofmin = j
                        l = j  # line 14
                    j = Nt[k - 1, j]  # line 15
            else:  # Block-Opt / Bin-Opt: lines 7-15 without pruning
                for j in range(i - 1, k - 2, -1):
                    current = Pt[k - 1, j] + cost[j + 1]  # line 9
                    if current < minimum:  # line 12
                        minimum = current  # line 13
                        indexofmin = j
                evaluations += i - k + 1
            Pt[k, i] = minimum  # line 16
            Lt[k, i] = indexofmin
            Nt[k, i] = i - 1
    return Pt.T.copy(), Lt.T.copy(), evaluations


def _interval_costs_numpy(mu, crit, log2tab):
    """``g`` of every row of ``mu`` (r, m) with the operations of ``table2_loops``."""
    m = mu.shape[1]
    n = mu[:, 0].copy()
    for c in range(1, m):
        n += mu[:, c]
    if crit == 0:
        if log2tab.shape[0] > 0:
            ln = log2tab[n.astype(np.int64)]
            s = np.zeros(mu.shape[0])
            for c in range(m):
                x = mu[:, c]
                s += np.where(x > 0.0, x * (ln - log2tab[x.astype(np.int64)]), 0.0)
        else:
            ln = np.log2(n)
            s = np.zeros(mu.shape[0])
            for c in range(m):
                x = mu[:, c]
                pos = x > 0.0
                lx = np.log2(x, out=np.zeros_like(x), where=pos)
                s += np.where(pos, x * (ln - lx), 0.0)
        return s
    if crit == 1:
        s = np.zeros(mu.shape[0])
        for c in range(m):
            x = mu[:, c]
            s += x * (n - x)
        return s / n
    return n - mu.max(axis=1)


def _table2_numpy(units, max_arity, crit, prune, margin, log2tab):
    """``table2_loops`` vectorised over the candidates ``j`` of each cell.

    The N linked lists become boolean masks: ``alive[k-1, j]`` is true while
    ``j`` is in the level-(k-1) list (nodes enter it when first reached, and
    leave it only when line 10 unlinks them). The scan order of Table 2
    (decreasing ``j``) and its strict ``<`` are reproduced by taking the
    first minimum of the reversed candidate vector.
    """
    n_units, m = units.shape
    A = max_arity
    P = np.full((n_units + 1, A + 1), np.inf)
    L = np.zeros((n_units + 1, A + 1), np.int64)
    alive = np.ones((A + 1, n_units + 1), dtype=bool)
    mu = np.zeros((n_units + 1, m))
    cost = np.zeros(n_units + 2)
    evaluations = 0
    for i in range(1, n_units + 1):  # line 1
        mu[1 : i + 1] += units[i - 1]  # line 2
        cost[1 : i + 1] = _interval_costs_numpy(mu[1 : i + 1], crit, log2tab)
        P[i, 1] = cost[1]  # line 3
        limit = A if i == n_units else A - 1  # line 4
        kmax = min(i, limit)
        if kmax < 2:
            continue
        if not prune:
            # Block-Opt: every candidate j = k-1 .. i-1 of every level at once;
            # P[j, k-1] = inf for j < k-1, which never wins.
            cand = P[1:i, 1:kmax] + cost[2 : i + 1, None]  # row j-1, column k-2
            rev = cand[::-1]
            t = np.argmin(rev, axis=0)
            P[i, 2 : kmax + 1] = rev[t, np.arange(kmax - 1)]
            L[i, 2 : kmax + 1] = (i - 1) - t
            ks = np.arange(2, kmax + 1)
            evaluations += int(np.sum(i - ks + 1))
            continue
        for k in range(2, kmax + 1):  # line 5
            rejectlevel = P[i, k - 1]  # line 6
            js = np.arange(i - 1, k - 2, -1)  # lines 7, 8, 15: j = i-1 down to k-1
            js = js[alive[k - 1, js]]
            current = P[js, k - 1] + cost[js + 1]  # line 9
            evaluations += int(js.size)
            pruned = current >= rejectlevel + margin  # line 10
            alive[k - 1, js[pruned]] = False
            kept = ~pruned
            js = js[kept]
            current = current[kept]
            if js.size:  # lines 12-13: first strict minimum in scan order
                t = int(np.argmin(current))
                if current[t] < np.inf:
                    P[i, k] = current[t]
                    L[i, k] = js[t]
    return P, L, evaluations


def _tse_loops(units, max_arity):
    """One-pass optimiser of training set error (000, Section 2, Table 1).

    A left-to-right pass over the units keeps, for every arity ``k`` and class
    ``c``, the largest number of correctly classified examples of a split of
    the prefix into ``k`` intervals whose last interval predicts ``c``
    (``best``): the unit either continues the last interval or starts
    interval ``k`` after the best ``(k-1)``-split of the previous prefix
    (``top[k-1]``). Choosing each label freely is the same as predicting the
    majority class. ``O(k m U)`` time; ``start`` and ``argtop`` keep what the
    split is read back from. Ties prefer starting a new interval, then the
    lower class.
    """
    n_units, m = units.shape
    A = max_arity
    ninf = -np.inf
    best = np.full((A + 1, m), ninf)
    top = np.full(A + 1, ninf)
    top[0] = 0.0
    start = np.zeros((n_units + 1, A + 1, m), np.bool_)
    argtop = np.zeros((n_units + 1, A + 1), np.int64)
    evaluations = 0
    for t in range(1, n_units + 1):
        kmax = min(t, A)
        for k in range(1, kmax + 1):
            new = top[k - 1]
            for c in range(m):
                cont = best[k, c]
                evaluations += 1
                if new >= cont:
                    best[k, c] = new + units[t - 1, c]
                    start[t, k, c] = True
                else:
                    best[k, c] = cont + units[t - 1, c]
        top[0] = ninf
        for k in range(1, kmax + 1):
            bt = ninf
            bc = 0
            for c in range(m):
                if best[k, c] > bt:
                    bt = best[k, c]
                    bc = c
            top[k] = bt
            argtop[t, k] = bc
    return top, start, argtop, evaluations


def _tse_numpy(units, max_arity):
    """``_tse_loops`` vectorised over arities and classes."""
    n_units, m = units.shape
    A = max_arity
    best = np.full((A + 1, m), -np.inf)
    top = np.full(A + 1, -np.inf)
    top[0] = 0.0
    start = np.zeros((n_units + 1, A + 1, m), dtype=bool)
    argtop = np.zeros((n_units + 1, A + 1), np.int64)
    evaluations = 0
    for t in range(1, n_units + 1):
        kmax = min(t, A)
        new = top[0:kmax, None]
        cont = best[1 : kmax + 1]
        st = new >= cont
        best[1 : kmax + 1] = np.where(st, new, cont) + units[t - 1]
        start[t, 1 : kmax + 1] = st
        evaluations += kmax * m
        top[0] = -np.inf
        b = best[1 : kmax + 1]
        a = np.argmax(b, axis=1)
        argtop[t, 1 : kmax + 1] = a
        top[1 : kmax + 1] = b[np.arange(kmax), a]
    return top, start, argtop, evaluations


_KERNEL_LOCK = threading.Lock()
_KERNELS: dict | None = None


def _load_kernels() -> dict:
    """The kernels by name: compiled by numba when it imports and compiles, else numpy.

    ``units`` (:func:`units_loops`), ``table2``, ``cuts`` (the read-back
    through ``L``), ``tse`` and ``tse_cuts``. The compiled loops call their
    helpers (``pairwise_sum``) by name; numba compiles such a call only when
    the helper is registered as jitable, which is done here, once.
    """
    numpy_kernels = {
        "backend": "numpy", "units": units_numpy, "table2": _table2_numpy, "cuts": cuts_loops,
        "tse": _tse_numpy, "tse_cuts": tse_cuts_loops,
    }
    if numba is None:
        return numpy_kernels
    if numba.config.DISABLE_JIT or os.environ.get("DASKTREE_DISABLE_NUMBA"):
        return numpy_kernels
    try:
        jitable(pairwise_leaf, pairwise_sum)
        kernels = {
            "backend": "numba", "units": jit(units_loops), "table2": jit(table2_loops),
            "cuts": jit(cuts_loops), "tse": jit(_tse_loops), "tse_cuts": jit(tse_cuts_loops),
        }
        # Compile now (or load from the cache), so that a numba that cannot
        # compile here falls back to numpy instead of failing a split search.
        one = np.ones((1, 2))
        kernels["units"](one, True)
        _, L, _ = kernels["table2"](one, 2, 0, True, 0.0, np.zeros(0))
        kernels["cuts"](L, np.zeros(1, np.int64), 1)
        top, start, argtop, _ = kernels["tse"](one, 2)
        kernels["tse_cuts"](start, argtop, np.zeros(1, np.int64), 1)
    except Exception:  # pragma: no cover - depends on the installed numba
        return numpy_kernels
    return kernels


def loaded_kernels() -> dict:
    global _KERNELS
    if _KERNELS is None:
        with _KERNEL_LOCK:
            if _KERNELS is None:
                _KERNELS = _load_kernels()
    return _KERNELS


def kernel_backend() -> str:
    """``"numba"`` when the compiled kernels are in use, else ``"numpy"``."""
    return loaded_kernels()["backend"]
