"""Small nodes grown in memory: a node's subtree from its own rows, depth first, at a cost of its rows.

Once a frontier node holds few rows, a level pass costs it a full histogram (attributes x bins x
statistics) and a search over every bin, and each level of its subtree one more pass over all the
rows. RainForest's RF-Hybrid (Gehrke, Ramakrishnan and Ganti, VLDB 1998) and PLANET's
InMemoryBuild (Panda et al., VLDB 2009) switch such a node to in-memory growth instead. Here the
pass that reaches the node *gathers* its rows (:func:`gather_slots`: the node each row reaches in
each tree), and :func:`grow_jobs` grows each (node, tree) *job* to the end, depth first, from the
rows alone: at each node, per attribute, the codes its training rows occupy are counted (a sort of
the few occupied codes, no pass over every bin), scanned in code order (or a nominal attribute's
categories in order of their mean target) and the chosen test's rows partitioned to its children.

One grower serves both tasks; only the statistic differs (``task``):

- ``CLASSIFY``: per class, the rows' multiplicities; the binary threshold test of the compiled scan
  (:func:`dasktree.split.binary_kernel._scan`), gini or entropy, with its operations in its order
  and its compiled ``|S| I(S)`` (entropy: from the same ``log2`` table), so every gain is the same
  float; the parent's gini as :func:`dasktree.split.criteria.gini` sums it (numpy's sum: sequential
  below 8 classes, 8 accumulators from 8 to 128), its entropy and a test's split information as
  :func:`dasktree.split.search.entropy_of_counts` takes them (integers' ``log2`` only); gain ratio
  chooses across the attributes by C4.5's rule, the level search's own compiled function
  (:func:`dasktree.split.gain_ratio_kernel._pick`). A nominal attribute's subset test is the level
  search's (:func:`dasktree.split.search.nominal_binary_columns`): the same candidates (2 classes: the
  prefixes of the categories ordered by the second class's proportion; more: every subset up to
  :data:`EXHAUSTIVE_CATEGORIES` categories present, else each class's order's prefixes) and the same
  gains' floats (:func:`dasktree.split.small_scans.nominal_class_scan`).
- ``REGRESS``: the multiplicity ``w``, ``w q`` and the pieces of ``w q**2``
  (:mod:`dasktree.kernels.regression_pass`); the scan of
  :func:`dasktree.split.regression.best_splits` (squared error or Friedman's), a nominal
  attribute's categories ordered by their mean target (a stable sort).

The searches skip the codes without training rows, which the level-wise searches skip too (a cut
after an empty bin is never chosen: its gain equals the cut before it, and the first of equal gains
wins), so each node gets the level-wise path's test, and the model its bytes. A job's held-out rows
(its fold tree's part) follow the tests and are summed at every node for the CV error. The rules
that end a node (depth, sizes, purity, no test, too small a decrease) are the level loops'. A
regression fit pruned at rpart's complexity (``prune="cp"``) also stops a node of its main tree that
would split but whose own sum of squared errors is below that pruning's cut (:func:`sse_bound` below
:func:`cp_limit`: cost-complexity pruning at that alpha collapses it whatever grows below it), with the
reason ``"cp"``; the level loop stops the same nodes by the same compiled test.

Pure numba (GIL released), beside the searches it repeats: the grow loops reach it through
:mod:`dasktree.split.api` (:mod:`dasktree.levels.small`); the tests compare the models with the
level-wise path's, byte for byte.
"""

from __future__ import annotations

import numpy as np

from ..io.row_hash import _finalise
from ..kernels.jit import jit, numba
from .binary_kernel import log2_table
from .compiled import LOG2_TABLE_MAX
from .gain_ratio_kernel import _pick as c45_pick
from .monotonic import middle
from .search import SplitParams
from .small_scans import (FRIEDMAN, SQUARED_ERROR, class_scan, entropy_of, gini, nominal_class_scan, regression_scan,
                          split_information)

__all__ = ["CLASSIFY", "REGRESS", "SQUARED_ERROR", "FRIEDMAN", "GINI", "ENTROPY", "GAIN_RATIO", "CLASS_CRITERIA",
           "ENTROPY_ROWS", "REASONS", "ABSENT", "EXHAUSTIVE_CATEGORIES", "gather_slots", "grow_jobs", "available",
           "sse_bound", "cp_limit"]

CLASSIFY, REGRESS = 0, 1
GINI, ENTROPY, GAIN_RATIO = 0, 1, 2
CLASS_CRITERIA = {"gini": GINI, "entropy": ENTROPY, "gain_ratio": GAIN_RATIO}
"""Classification's ``criterion`` as the grower's number."""
ENTROPY_ROWS = LOG2_TABLE_MAX
"""Entropy and gain ratio: a job's rows (multiplicities summed) must be fewer (the ``log2`` table's reach)."""
EXHAUSTIVE_CATEGORIES = SplitParams.exhaustive_categories
"""Classification's nominal subsets: every subset up to this many categories present (more than 2 classes);
the level search's default (:class:`~dasktree.split.search.SplitParams`)."""
ABSENT = 2
"""In a classification's nominal code table: ``ABSENT + default`` for a category without training rows at the
node (its rows go to the default child, and the level search's test lists it in no group)."""
# why a node is a leaf (0: it has a test)
REASONS = ("", "max_depth", "min_samples_split", "min_samples_leaf", "pure", "no_split", "min_samples",
           "min_impurity_decrease", "cp")
R_DEPTH, R_SPLIT, R_LEAF, R_PURE, R_NO_SPLIT, R_MIN_SAMPLES, R_DECREASE, R_CP = 1, 2, 3, 4, 5, 6, 7, 8
HALF = 15
EPSILON = float(np.finfo(np.float64).eps)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MOVE_ROWS = 4096
"""Own rows (:func:`grow_jobs`' ``own``): their data moved with them at the splits of nodes of at least this
many rows (the default). A node's ancestors are larger, so every one of them moved its rows' data too, and the data of a
node's rows lie within its range (what moving needs: no other node's there); a smaller node's lie within
its smallest ancestor that moved, a few thousand rows, and are read there without moving them."""

_mix = jit(_finalise, inline="always")


@jit
def _sample(key, salt, n_sampled, score, active):
    """``active[a]``: whether attribute ``a`` is among the ``n_sampled`` a forest member searches at the
    node of path key ``key`` (:func:`dasktree.levels.sampling.feature_mask`: the least scores
    ``mix64(mix64(key ^ salt) + (a + 1) * golden)``, equal scores the lower attribute first)."""
    node = _mix(key ^ salt)
    for a in range(score.size):
        score[a] = _mix(node + np.uint64(a + 1) * GOLDEN)
    order = np.argsort(score, kind="mergesort")
    active[:] = False
    for k in range(min(n_sampled, score.size)):
        active[order[k]] = True


@jit
def _child_key(key, index):
    """:func:`dasktree.levels.sampling.child_key` in uint64: ``mix64(key * golden + index + 1)``."""
    return _mix(key * GOLDEN + np.uint64(index + 1))


@jit
def _square_float(hh, hl, ll):
    """``Q`` of :func:`dasktree.binning.target.square_sum`'s pieces, as a float (within 3 roundings)."""
    return float(hh) * 1073741824.0 + float(hl) * 65536.0 + float(ll)


@jit
def sse_bound(n, s, hh, hl, ll):
    """At least a node's training sum of squared errors ``Q - S**2 / N`` (fixed point squared units), from
    its exact sums: ``n`` rows (weighted), their sum ``s`` and the pieces of ``Q``
    (:func:`~dasktree.binning.target.square_pieces`): in floats, plus ``1e-12 Q`` (their error is below
    ``1e-15 Q``, as ``S**2 / N <= Q``). One compiled function for the level loop and the grower, so
    both decide alike to the bit. A node without rows: 0."""
    if n <= 0:
        return 0.0
    q = _square_float(hh, hl, ll)
    fs = float(s)
    return q - fs * fs / float(n) + 1e-12 * q


@jit
def cp_limit(n, s, hh, hl, ll, cp):
    """Below what :func:`sse_bound` a node of the tree whose root has these sums stops, when the tree is
    pruned at ``alpha = cp`` times its root's mean squared error (``prune="cp"``): at most ``cp`` times
    the root's sum of squared errors, less a relative 1e-6 (pruning compares effective alphas in floats).
    A node whose own sum of squared errors ``R(t)`` is below it is always cut by that pruning: its
    effective alpha ``(R(t) - R(T_t)) / (|T_t| - 1)`` is at most ``R(t)`` however its subtree is pruned.
    0 (no stop) when the root's error is 0."""
    if n <= 0 or cp <= 0.0:
        return 0.0
    q = _square_float(hh, hl, ll)
    fs = float(s)
    sse = q - fs * fs / float(n) - 1e-12 * q
    return cp * sse * (1.0 - 1e-6) if sse > 0.0 else 0.0


def available() -> bool:
    return numba is not None


@jit
def _walk_slots(codes, root, attribute, offset, table, slot, out):
    """``out[t, i]``: the slot of the node row ``i`` reaches in tree ``t`` (-1: none)."""
    for i in range(codes.shape[1]):
        for t in range(root.size):
            e = root[t]
            a = attribute[e]
            while a >= 0:
                e = table[offset[e] + codes[a, i]]
                a = attribute[e]
            out[t, i] = slot[e]


def gather_slots(codes: np.ndarray, root: np.ndarray, attribute: np.ndarray, offset: np.ndarray,
                 table: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """The slot each row reaches in each tree: (n_trees, n_rows) int32, -1 where none.

    The trees are flat arrays: tree ``t`` starts at entry ``root[t]``; entry ``e`` tests attribute
    ``attribute[e]`` (-1: none) and sends code ``c`` to entry ``table[offset[e] + c]``; ``slot[e]``
    is the gathered node's slot (-1: not gathered)."""
    out = np.empty((root.size, codes.shape[1]), dtype=np.int32)
    if codes.shape[1]:
        _walk_slots(np.ascontiguousarray(codes), np.asarray(root, np.int64), np.asarray(attribute, np.int32),
                    np.asarray(offset, np.int64), np.asarray(table, np.int32), np.asarray(slot, np.int32), out)
    return out


@jit
def _grow(task, codes, y, weight, rows, held, job_start, job_depth, offsets, widths, numeric, upper, upper_start,
          values, values_start, n_classes, criterion, min_split, min_leaf, max_depth, min_decrease,
          job_root_size, job_leaf, lo_start, out_parent, out_child, out_depth, out_attribute, out_cut, out_default,
          out_reason, out_stats, out_table_start, tables, out_job, out_gain, log2, job_key, job_salt, n_sampled,
          monotonic, job_lo, job_hi, job_cp, cp, exhaustive, own, move_codes, move_y, move_w):
    """Every job's subtree, depth first, into the ``out_*`` arrays from position ``lo_start``; returns
    (nodes written, table cells written). See :func:`grow_jobs`."""
    n_attributes = codes.shape[0]
    width = 2
    for a in range(n_attributes):
        width = max(width, widths[a])
    weighted = weight.size > 0
    regress = task == REGRESS
    entropy = not regress and criterion != GINI
    ratio_rule = not regress and criterion == GAIN_RATIO
    n_stats = out_stats.shape[1]
    bin_counts = np.zeros((width, max(n_classes, 1)), dtype=np.int64)
    bin_n = np.zeros(width, dtype=np.int64)
    bin_s = np.zeros(width, dtype=np.int64)
    seen = np.zeros(width, dtype=np.bool_)
    touched = np.zeros(width, dtype=np.int64)
    side = np.full(width, -1, dtype=np.int64)  # a nominal test's child of each occupied code (-1: none)
    best_side = np.full(width, -1, dtype=np.int64)
    miss = np.zeros(max(n_classes, 1), dtype=np.int64)
    squares = np.zeros(max(n_classes, 2))
    train = np.zeros(max(n_classes, 1), dtype=np.int64)
    result = np.zeros(4)
    terms = np.zeros((4, max(n_classes, 2)))
    # gain ratio: each attribute's test at a node, for C4.5's rule across them
    a_gain = np.empty(n_attributes)
    a_ratio = np.empty(n_attributes)
    a_found = np.empty(n_attributes, dtype=np.int64)
    a_cut = np.empty(n_attributes, dtype=np.int64)
    a_default = np.empty(n_attributes, dtype=np.int64)
    sampled = n_sampled > 0 and n_sampled < n_attributes  # a forest member's features per node
    active = np.ones(n_attributes, dtype=np.bool_)
    score = np.empty(n_attributes, dtype=np.uint64)
    scratch_rows = np.empty(rows.size, dtype=rows.dtype)
    scratch_held = np.empty(held.size, dtype=held.dtype)
    position = lo_start
    table_used = 0
    # stack: (row range lo, hi, parent node, child index, depth)
    stack_lo = np.empty(256, dtype=np.int64)
    stack_hi = np.empty(256, dtype=np.int64)
    stack_parent = np.empty(256, dtype=np.int64)
    stack_child = np.empty(256, dtype=np.int64)
    stack_depth = np.empty(256, dtype=np.int64)
    stack_key = np.zeros(256, dtype=np.uint64)  # the node's path key (a forest member's feature sample)
    constrained = monotonic.size > 0  # monotonic_cst: each node's value bounds (dasktree.split.monotonic)
    stack_blo = np.full(256, -np.inf)
    side_n = np.zeros(2, dtype=np.int64)  # a constrained split's children's training rows and value sums
    side_v = np.zeros(2, dtype=np.int64)
    stack_bhi = np.full(256, np.inf)
    for job in range(job_start.size - 1):
        job_n = np.int64(0)  # the job's node's training rows: the tree's root size when the job is its root
        stop = job_cp[job]  # the cp stop: below what sse_bound a node stops (0: none; < 0: from the root)
        top = 0
        stack_lo[0], stack_hi[0], stack_parent[0], stack_child[0], stack_depth[0] = \
            job_start[job], job_start[job + 1], -1, 0, job_depth[job]
        stack_key[0] = job_key[job] if sampled else np.uint64(0)
        if constrained:
            stack_blo[0], stack_bhi[0] = job_lo[job], job_hi[job]
        top = 1
        while top > 0:
            top -= 1
            lo, hi, parent_node, child, depth = (stack_lo[top], stack_hi[top], stack_parent[top], stack_child[top],
                                                 stack_depth[top])
            key = stack_key[top]
            b_lo = stack_blo[top] if constrained else -np.inf
            b_hi = stack_bhi[top] if constrained else np.inf
            e = position
            position += 1
            out_parent[e] = parent_node
            out_child[e] = child
            out_depth[e] = depth
            out_attribute[e] = -1
            out_cut[e] = -1
            out_default[e] = 0
            out_table_start[e] = -1
            out_job[e] = job
            out_gain[e] = 0.0
            for s in range(n_stats):
                out_stats[e, s] = 0
            # the node's statistics: training, then held out
            q_min = np.int64(0)
            q_max = np.int64(0)
            first = True
            for r in range(lo, hi):
                i = rows[r]
                w = np.int64(weight[i]) if weighted else np.int64(1)
                if regress:
                    qi = np.int64(y[i])
                    hi_q, lo_q = qi >> HALF, qi & ((1 << HALF) - 1)
                    base = 2 if held[r] else 0
                    out_stats[e, base] += w
                    out_stats[e, base + 1] += w * qi
                    pieces = 7 if held[r] else 4
                    out_stats[e, pieces] += w * hi_q * hi_q
                    out_stats[e, pieces + 1] += w * hi_q * lo_q
                    out_stats[e, pieces + 2] += w * lo_q * lo_q
                    if not held[r]:
                        if first:
                            q_min, q_max, first = qi, qi, False
                        else:
                            q_min, q_max = min(q_min, qi), max(q_max, qi)
                else:
                    out_stats[e, (n_classes if held[r] else 0) + y[i]] += w
            # the rules that end a node before its search
            reason = 0
            is_root = parent_node < 0
            if is_root and job_leaf[job] != 0:  # a leaf already, gathered for its held-out sums
                out_reason[e] = job_leaf[job]
                continue
            if regress:
                n = out_stats[e, 0]
                if not is_root:
                    if max_depth >= 0 and depth >= max_depth:
                        reason = R_DEPTH
                    elif n < min_split or n < 2 * min_leaf:
                        reason = R_MIN_SAMPLES
                if is_root and stop < 0.0:  # the tree's root: the stop from its sums
                    stop = cp_limit(n, out_stats[e, 1], out_stats[e, 4], out_stats[e, 5], out_stats[e, 6], cp)
                if reason == 0 and (n == 0 or q_min == q_max):
                    reason = R_PURE
            else:
                n = np.int64(0)
                nonzero = 0
                for c in range(n_classes):
                    train[c] = out_stats[e, c]
                    n += train[c]
                    nonzero += train[c] != 0
                if not is_root and max_depth >= 0 and depth >= max_depth:
                    reason = R_DEPTH
                elif n < min_split:
                    reason = R_SPLIT
                elif n < 2 * min_leaf:
                    reason = R_LEAF
                elif nonzero <= 1:
                    reason = R_PURE
                if is_root:
                    job_n = n
            if reason != 0:
                out_reason[e] = reason
                continue
            # the search
            if regress:
                fn, fs = float(out_stats[e, 0]), float(out_stats[e, 1])
                parent = fs * fs / fn if criterion == SQUARED_ERROR else 0.0
                size = 0.0
            elif entropy:
                parent = entropy_of(train[:n_classes], n, log2, squares)
                size = float(n)
            else:
                parent = gini(train[:n_classes], squares)
                size = float(n)
            n_found = 0
            best = -np.inf
            best_a = -1
            best_cut = -1
            best_default = 0
            if sampled:
                _sample(key, job_salt[job], n_sampled, score, active)
            for a in range(n_attributes):
                if not active[a]:
                    continue
                upper_a = upper[upper_start[a]:upper_start[a + 1]]
                values_a = values[values_start[a]:values_start[a + 1]]
                c_a = monotonic[a] if constrained else 0
                if regress:
                    found = regression_scan(codes[a], rows, lo, hi, held, y, weight, numeric[a], bin_n, bin_s, seen,
                                             touched, parent, criterion, min_leaf, upper_a, values_a, result, side,
                                             c_a, b_lo, b_hi)
                elif numeric[a]:
                    found = class_scan(codes[a], rows, lo, hi, held, y, weight, widths[a], n_classes, miss,
                                        bin_counts, seen, touched, parent, size, min_leaf, upper_a, values_a, result,
                                        entropy, log2, terms, c_a, b_lo, b_hi)
                else:  # its categories' sides asked for again if it wins (below)
                    found = nominal_class_scan(codes[a], rows, lo, hi, held, y, weight, n_classes, miss, bin_counts,
                                               seen, touched, parent, size, min_leaf, exhaustive, result, side,
                                               entropy, log2, terms[0])
                if ratio_rule:  # every attribute's test kept, chosen below
                    if found and np.isfinite(result[0]):
                        left_size = np.int64(result[3])
                        info = split_information(left_size, n - left_size, log2, squares)
                        a_gain[n_found] = result[0]
                        a_ratio[n_found] = result[0] / info if info > 0 else -np.inf
                        a_found[n_found] = a
                        a_cut[n_found] = np.int64(result[1])
                        a_default[n_found] = np.int64(result[2])
                        n_found += 1
                elif found and result[0] > best:
                    best = result[0]
                    best_a = a
                    best_cut = np.int64(result[1])
                    best_default = np.int64(result[2])
                    if regress and not numeric[a]:
                        for c in range(widths[a]):
                            best_side[c] = side[c]
                if regress and not numeric[a]:
                    for c in range(widths[a]):
                        side[c] = -1
            if ratio_rule:  # C4.5's rule, the level search's (gain_ratio_kernel._pick)
                at = c45_pick(a_gain, a_ratio, n_found)
                if at >= 0:
                    best, best_a, best_cut, best_default = a_gain[at], a_found[at], a_cut[at], a_default[at]
            if best_a < 0 or not np.isfinite(best):
                out_reason[e] = R_NO_SPLIT
                continue
            if not regress and not numeric[best_a]:  # a nominal winner: its categories' children
                for c in range(widths[best_a]):
                    best_side[c] = -1
                nominal_class_scan(codes[best_a], rows, lo, hi, held, y, weight, n_classes, miss, bin_counts, seen,
                                   touched, parent, size, min_leaf, exhaustive, result, best_side, entropy, log2,
                                   terms[0])
            if not regress:
                # the level loop's rule: the gain weighted by the node's share of the tree's root
                root_n = job_root_size[job] if job_root_size[job] > 0 else job_n
                weighted_gain = float(n) / float(root_n) * best
                if weighted_gain + EPSILON < min_decrease:
                    out_reason[e] = R_DECREASE
                    continue
            elif stop > 0.0 and sse_bound(out_stats[e, 0], out_stats[e, 1], out_stats[e, 4], out_stats[e, 5],
                                          out_stats[e, 6]) < stop:
                out_reason[e] = R_CP  # it would split, and pruning at cp cuts it whatever grows below
                continue
            out_reason[e] = 0
            out_attribute[e] = best_a
            out_cut[e] = best_cut
            out_default[e] = best_default
            out_gain[e] = best
            w_a = widths[best_a]
            if best_cut < 0:  # a nominal test: its code table
                if table_used + w_a > tables.size:
                    return position - lo_start, -1  # the caller gives more room
                # missing, and categories without training rows here: the default (classification's marked
                # ABSENT + default: the level search's test lists them in no group)
                absent = best_default if regress else ABSENT + best_default
                for c in range(w_a):
                    tables[table_used + c] = best_side[c] if c > 0 and best_side[c] >= 0 else (
                        absent if c > 0 else best_default)
                out_table_start[e] = table_used
                table_used += w_a
            # the rows to the children: child 0 first, stably
            k0 = 0
            k1 = 0
            c_best = monotonic[best_a] if constrained else 0
            side_n[0], side_n[1], side_v[0], side_v[1] = 0, 0, 0, 0
            for r in range(lo, hi):
                code = codes[best_a, rows[r]]
                if best_cut >= 0:
                    to = best_default if code == 0 else (0 if code <= best_cut else 1)
                else:
                    to = tables[out_table_start[e] + code]
                    if to >= ABSENT:
                        to -= ABSENT
                if c_best != 0 and not held[r]:
                    w_r = np.int64(weight[rows[r]]) if weighted else np.int64(1)
                    side_n[to] += w_r
                    if regress:
                        side_v[to] += w_r * np.int64(y[rows[r]])
                    elif y[rows[r]] == 1:
                        side_v[to] += w_r
                if to == 0:
                    rows[lo + k0] = rows[r]
                    held[lo + k0] = held[r]
                    k0 += 1
                else:
                    scratch_rows[k1] = rows[r]
                    scratch_held[k1] = held[r]
                    k1 += 1
            for j in range(k1):
                rows[lo + k0 + j] = scratch_rows[j]
                held[lo + k0 + j] = scratch_held[j]
            if own > 0 and hi - lo >= own:  # the rows' data moved with them: rows[r] is r again
                m = hi - lo
                for a in range(n_attributes):
                    for j in range(m):
                        move_codes[j] = codes[a, rows[lo + j]]
                    for j in range(m):
                        codes[a, lo + j] = move_codes[j]
                for j in range(m):
                    move_y[j] = y[rows[lo + j]]
                for j in range(m):
                    y[lo + j] = move_y[j]
                if weighted:
                    for j in range(m):
                        move_w[j] = weight[rows[lo + j]]
                    for j in range(m):
                        weight[lo + j] = move_w[j]
                for j in range(m):
                    rows[lo + j] = lo + j
            if top + 2 > stack_lo.size:
                stack_lo = _grown(stack_lo)
                stack_hi = _grown(stack_hi)
                stack_parent = _grown(stack_parent)
                stack_child = _grown(stack_child)
                stack_depth = _grown(stack_depth)
                stack_key = _grown(stack_key)
                stack_blo = _grown(stack_blo)
                stack_bhi = _grown(stack_bhi)
            # the children's bounds: a constrained split's at its middle value, else the node's
            lo0, hi0, lo1, hi1 = b_lo, b_hi, b_lo, b_hi
            if c_best != 0:
                mid = middle(float(side_v[0]) / float(side_n[0]), float(side_v[1]) / float(side_n[1]))
                if c_best > 0:
                    hi0, lo1 = mid, mid
                else:
                    lo0, hi1 = mid, mid
            # child 1 pushed first: child 0 comes out first (preorder)
            stack_lo[top], stack_hi[top], stack_parent[top], stack_child[top], stack_depth[top] = \
                lo + k0, hi, e, 1, depth + 1
            if sampled:
                stack_key[top] = _child_key(key, 1)
            if constrained:
                stack_blo[top], stack_bhi[top] = lo1, hi1
            top += 1
            stack_lo[top], stack_hi[top], stack_parent[top], stack_child[top], stack_depth[top] = \
                lo, lo + k0, e, 0, depth + 1
            if sampled:
                stack_key[top] = _child_key(key, 0)
            if constrained:
                stack_blo[top], stack_bhi[top] = lo0, hi0
            top += 1
    return position - lo_start, table_used


@jit
def _grown(x):
    out = np.empty(2 * x.size, dtype=x.dtype)
    out[:x.size] = x
    return out


def _flat(arrays) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(arrays) + 1, dtype=np.int64)
    parts = []
    for a, x in enumerate(arrays):
        x = np.zeros(0) if x is None else np.asarray(x, dtype=np.float64)
        parts.append(x)
        start[a + 1] = start[a] + x.size
    return (np.concatenate(parts) if parts else np.zeros(0)), start


def _check_bins(widths, numeric, upper, values) -> None:
    """Each numeric attribute's bins as :class:`~dasktree.binning.spec.FeatureBins` keeps them: ``widths[a] - 2``
    upper edges and ``widths[a] - 1`` values (one per bin; code 0 is missing). The compiled search reads
    them unchecked (a centred cut reads the value of the next occupied bin, up to the last), so a shorter
    array would be read past its end."""
    for a, (w, is_numeric) in enumerate(zip(np.asarray(widths).tolist(), np.asarray(numeric).tolist())):
        if not is_numeric:
            continue
        n_upper = 0 if upper[a] is None else np.size(upper[a])
        n_values = 0 if values[a] is None else np.size(values[a])
        if n_upper != max(w - 2, 0) or n_values != w - 1:
            raise ValueError(f"attribute {a} of width {w}: {n_upper} upper edges and {n_values} values, "
                             f"where its {w - 1} bins have {w - 2} and {w - 1}")


def grow_jobs(task: int, codes: np.ndarray, y: np.ndarray, weight: np.ndarray | None, rows: np.ndarray,
              held: np.ndarray, job_start: np.ndarray, job_depth: np.ndarray, *, offsets, widths, numeric, upper,
              values, n_classes: int = 0, criterion: int = SQUARED_ERROR, min_samples_split: int = 2,
              min_samples_leaf: int = 1, max_depth: int | None = None, min_decrease: float = 0.0,
              job_root_size: np.ndarray | None = None, job_leaf: np.ndarray | None = None,
              job_key: np.ndarray | None = None, job_salt: np.ndarray | None = None, n_sampled: int = 0,
              monotonic: np.ndarray | None = None, job_lo: np.ndarray | None = None,
              job_hi: np.ndarray | None = None, job_cp: np.ndarray | None = None, cp: float = 0.0,
              exhaustive_categories: int = EXHAUSTIVE_CATEGORIES, own: int = 0) -> dict:
    """Grow each job's subtree to the end.

    codes : (n_attributes, n_rows) the gathered rows' codes (0: missing)
    offsets, widths, numeric, upper, values : the bins (:class:`~dasktree.binning.spec.BinSpec`'s): attribute
        ``a``'s codes are ``0 .. widths[a] - 1``; a numeric one's ``widths[a] - 2`` upper edges and
        ``widths[a] - 1`` values (one per bin), as :class:`~dasktree.binning.spec.FeatureBins` keeps them
        (ValueError otherwise: the compiled search reads them unchecked); a nominal one's None
    y : (n_rows,) class codes (``CLASSIFY``) or targets in fixed point (``REGRESS``)
    weight : (n_rows,) multiplicities (>= 1), or None
    rows, held : job ``j``'s rows are ``rows[job_start[j]:job_start[j + 1]]`` (indices into the gathered
        rows), ``held`` True for those its tree holds out; both are reordered in place
    job_depth : (jobs,) depth of each job's node
    job_root_size : (jobs,) training rows of the job's tree at its root (classification's
        ``min_impurity_decrease``); 0: the job's node is the tree's root (its own rows)
    job_leaf : (jobs,) a reason (:data:`REASONS`) when the job's node is a leaf already (only its sums
        are wanted), else 0
    job_key, job_salt, n_sampled : a bagged forest's members search ``n_sampled`` attributes per node
        (0: all), drawn from the node's path key (the job's node's ``job_key``, a child's
        :func:`~dasktree.levels.sampling.child_key` of its parent's) and the job's member's salt
        (:mod:`dasktree.levels.sampling`), as the level search draws them
    monotonic, job_lo, job_hi : ``monotonic_cst`` per attribute (int8; None: no constraint) and each job's
        node's value bounds: a numeric attribute's cut whose children's values break its constraint or
        leave the node's bounds is not a candidate, and a constrained split's children get the bounds
        split at their middle value (:mod:`dasktree.split.monotonic`), as the level searches do
    job_cp, cp : regression's stop at rpart's complexity (``prune="cp"``): a node of job ``j`` that would
        split becomes a leaf (reason ``"cp"``) when its :func:`sse_bound` is below ``job_cp[j]`` (0: no
        stop); ``job_cp[j] < 0``: the job's node is its tree's root, and the stop is its :func:`cp_limit`
        at ``cp``
    exhaustive_categories : classification's nominal subsets with more than 2 classes: every subset when at
        most this many categories are present at the node (the level search's ``exhaustive_categories``)
    own : 0, or the rows are the jobs' own, in order (``rows`` is ``0 .. n_rows - 1``: no row in two jobs),
        and ``codes``, ``y`` and ``weight`` (int64) may be reordered in place: the splits of nodes of
        ``own`` rows or more (:data:`MOVE_ROWS`) move their rows' data with them, so that a node's rows lie close
        together and are read nearly in order (a node deep in a large job otherwise reads its few rows
        scattered over all of them). The same nodes either way: a node's
        statistics and scans do not depend on its rows' order
    criterion : regression's :data:`SQUARED_ERROR` or :data:`FRIEDMAN`; classification's :data:`GINI`,
        :data:`ENTROPY` or :data:`GAIN_RATIO` (:data:`CLASS_CRITERIA`). Entropy reads ``log2`` of the
        counts from the level scan's table (:func:`~dasktree.split.binary_kernel.log2_table`): a job's
        rows (their multiplicities summed) must be within it

    Returns the nodes, preorder per job, as arrays: ``job``, ``parent`` (-1: the job's node), ``child``
    (its index among its parent's children), ``depth``, ``attribute`` (-1: a leaf), ``cut`` (a threshold
    test's centred cut, -1: a nominal table), ``default``, ``reason`` (:data:`REASONS`), ``gain``,
    ``stats`` (classification: training then held-out counts per class; regression: training n, s,
    held-out n, s, then the pieces of the training and the held-out q**2), ``table_start`` and ``tables``
    (a nominal test's child of each code; in a classification's, :data:`ABSENT` + the default for a
    category without training rows at the node, which goes to the default child).
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    held = np.ascontiguousarray(held, dtype=np.bool_)
    n_jobs = job_start.size - 1
    capacity = 2 * int(rows.size) + n_jobs + 1
    if max_depth is not None and n_jobs:  # a job of depth d makes at most 2**(levels left + 1) - 1 nodes
        left = np.clip(int(max_depth) - np.asarray(job_depth, dtype=np.int64), 1, 40)
        capacity = min(capacity, int(np.sum((np.int64(1) << (left + 1)) - 1)) + 1)
    n_stats = 10 if task == REGRESS else 2 * n_classes
    upper_flat, upper_start = _flat(upper)
    values_flat, values_start = _flat(values)
    out = {name: np.empty(capacity, dtype=dtype) for name, dtype in (
        ("parent", np.int64), ("child", np.int8), ("depth", np.int64), ("attribute", np.int64),
        ("cut", np.int64), ("default", np.int64), ("reason", np.int8), ("table_start", np.int64),
        ("job", np.int64), ("gain", np.float64))}
    out["stats"] = np.empty((capacity, n_stats), dtype=np.int64)
    table_room = 0 if all(numeric) else max(1024, int(np.max(widths)) * 64)
    weight_ = np.zeros(0, dtype=np.int64) if weight is None else np.ascontiguousarray(weight, dtype=np.int64)
    root_size = np.ones(max(n_jobs, 1), dtype=np.int64) if job_root_size is None else \
        np.ascontiguousarray(job_root_size, dtype=np.int64)
    leaf = np.zeros(max(n_jobs, 1), dtype=np.int8) if job_leaf is None else np.ascontiguousarray(job_leaf, np.int8)
    log2 = np.zeros(1)
    if task == CLASSIFY and criterion != GINI and n_jobs:
        w = np.ones(rows.size, dtype=np.int64) if weight is None else np.asarray(weight, np.int64)[rows]
        largest = int(np.diff(np.concatenate([[0], np.cumsum(w)])[np.asarray(job_start, np.int64)]).max())
        log2 = log2_table(float(largest))
        if log2.size <= largest:
            raise ValueError(f"a job of {largest} rows is beyond the log2 table ({log2.size} entries): "
                             "entropy's small nodes must be smaller")
    keys = np.zeros(max(n_jobs, 1), dtype=np.uint64) if job_key is None else np.ascontiguousarray(job_key, np.uint64)
    salts = np.zeros(max(n_jobs, 1), dtype=np.uint64) if job_salt is None else np.ascontiguousarray(job_salt, np.uint64)
    cst = np.zeros(0, dtype=np.int8) if monotonic is None else np.ascontiguousarray(monotonic, np.int8)
    b_lo = np.full(max(n_jobs, 1), -np.inf) if job_lo is None else np.ascontiguousarray(job_lo, np.float64)
    b_hi = np.full(max(n_jobs, 1), np.inf) if job_hi is None else np.ascontiguousarray(job_hi, np.float64)
    stops = np.zeros(max(n_jobs, 1)) if job_cp is None else np.ascontiguousarray(job_cp, np.float64)
    _check_bins(widths, numeric, upper, values)
    codes, y = np.ascontiguousarray(codes), np.ascontiguousarray(y)
    if own and not np.array_equal(rows, np.arange(rows.size)):
        raise ValueError("own rows must be 0 .. n_rows - 1 in order")
    saved_rows, saved_held = rows.copy(), held.copy()
    saved_data = (codes.copy(), y.copy(), weight_.copy()) if own and table_room else None
    empty = np.zeros(0, dtype=np.int64)
    moves = ((np.empty(rows.size, dtype=codes.dtype), np.empty(rows.size, dtype=y.dtype),
              np.empty(rows.size if weight_.size else 0, dtype=np.int64)) if own
             else (np.zeros(0, dtype=codes.dtype), np.zeros(0, dtype=y.dtype), empty))
    while True:
        tables = np.zeros(table_room, dtype=np.int16)
        written, used = _grow(
            task, codes, y, weight_, rows, held,
            np.asarray(job_start, np.int64), np.asarray(job_depth, np.int64), np.asarray(offsets, np.int64),
            np.asarray(widths, np.int64), np.asarray(numeric, np.bool_), upper_flat, upper_start, values_flat,
            values_start, int(n_classes), int(criterion), int(min_samples_split), int(min_samples_leaf),
            -1 if max_depth is None else int(max_depth), float(min_decrease), root_size, leaf, 0,
            out["parent"], out["child"], out["depth"], out["attribute"], out["cut"], out["default"], out["reason"],
            out["stats"], out["table_start"], tables, out["job"], out["gain"], log2, keys, salts, int(n_sampled),
            cst, b_lo, b_hi, stops, float(cp), int(exhaustive_categories), max(0, int(own)), *moves)
        if used >= 0:
            break
        table_room *= 4  # nominal tables outgrew the room: again with more (the rows as they came)
        rows[:], held[:] = saved_rows, saved_held
        if saved_data is not None:
            codes[:], y[:], weight_[:] = saved_data
    result = {name: array[:written] for name, array in out.items()}
    result["tables"] = tables[:used]
    return result
