"""The units of the optimal-split dynamic programs, and the read-back of their cut points.

:mod:`dasktree.split.optimal` runs Table 2 of 000 over *units*: the non-empty
bins (Bin-Opt) or the blocks (Block-Opt, Block-Opt-P, the one-pass TSE
optimiser; 001 Definition 2). This module turns a node's bins into units and
reads the optimal splits back from the dynamic program's arrays, each in two
twins: a scalar loop, compiled by :func:`dasktree.split.optimal_kernels._load_kernels`
when numba is available, and a numpy (or plain Python) version that is the
readable reference. :func:`dasktree.split.blocks.bins_to_blocks` stays the
definition of a block; the compiled extraction gives exactly its arrays.

Why compiled: on a small domain (iris, 8-24 blocks) numpy's fixed cost per
call (``bins_to_blocks`` alone is ~28 us) is several times the compiled dynamic
program (3-18 us), and the multi-way learner calls the optimiser once per
node, tree and attribute.

Bit-for-bit agreement with numpy, including non-integer counts: a uniform
block's counts are summed as ``np.add.reduceat`` sums them (the first bin, plus
numpy's pairwise sum of the others), and the units' total as ``ndarray.sum``
does (``0.0`` plus the pairwise sum of the flattened units); see
:func:`pairwise_sum`. For integer counts (below 2**53) every order gives the
same floats anyway.
"""

from __future__ import annotations

import numpy as np

from .blocks import bins_to_blocks
from .compiled import pairwise_sum

#: Status of :func:`units_loops`: the counts hold a non-finite or a negative value.
NOT_FINITE, NEGATIVE = 1, 2


def units_loops(counts, on_blocks):
    """The units of a node's bins ``counts`` (n_bins, m), in one pass plus the block sums.

    Returns ``(status, units, last_bin, n_nonempty, total, integral)``:
    ``status`` 0, or :data:`NOT_FINITE` / :data:`NEGATIVE` when some count is
    (the caller reports which); ``units`` (U, m) float64, the class counts of
    the non-empty bins (``on_blocks`` False) or of the blocks; ``last_bin``
    (U,) int64, the index of each unit's last bin; the number of non-empty
    bins; ``total``, ``units.sum()`` as numpy computes it; and whether every
    unit count is an integer (the entropy costs then read a ``log2`` table).

    A bin is non-empty when some count is positive (the counts are
    non-negative, so exactly when its sum is). A block (001, Definition 2)
    starts at every non-empty bin except a uniform one (a single class
    present) whose class is that of the previous non-empty bin, itself uniform.
    """
    n_bins, m = counts.shape
    nonempty = np.empty(n_bins, np.int64)  # the non-empty bins, then the first bin of each block
    starts = np.empty(n_bins + 1, np.int64)  # positions in ``nonempty`` where a block starts
    n_nonempty = 0
    n_units = 0
    previous = -2  # class of the previous non-empty bin if it is uniform, else -1
    for b in range(n_bins):
        present = 0
        label = -1
        for c in range(m):
            x = counts[b, c]
            if not np.isfinite(x):
                return NOT_FINITE, np.zeros((0, m)), np.zeros(0, np.int64), 0, 0.0, True
            if x < 0:
                return NEGATIVE, np.zeros((0, m)), np.zeros(0, np.int64), 0, 0.0, True
            if x > 0:
                present += 1
                label = c
        if present == 0:
            continue
        if present != 1:
            label = -1
        if not on_blocks or label < 0 or label != previous:
            starts[n_units] = n_nonempty
            n_units += 1
        previous = label
        nonempty[n_nonempty] = b
        n_nonempty += 1
    starts[n_units] = n_nonempty
    units = np.empty((n_units, m))
    last_bin = np.empty(n_units, np.int64)
    run = np.empty(n_nonempty)
    integral = True
    for u in range(n_units):
        first = starts[u]
        size = starts[u + 1] - first
        last_bin[u] = nonempty[first + size - 1]
        for c in range(m):
            x = float(counts[nonempty[first], c])
            if size > 1:  # np.add.reduceat: the first bin plus the pairwise sum of the others
                for j in range(1, size):
                    run[j - 1] = counts[nonempty[first + j], c]
                x = x + pairwise_sum(run, 0, size - 1)
            units[u, c] = x
            if x != np.floor(x):
                integral = False
    total = 0.0 + pairwise_sum(units.ravel(), 0, n_units * m)
    return 0, units, last_bin, n_nonempty, total, integral


def units_numpy(counts, on_blocks):
    """:func:`units_loops` in numpy: :func:`bins_to_blocks` and friends."""
    m = counts.shape[1]
    if counts.size and not np.all(np.isfinite(counts)):
        return NOT_FINITE, np.zeros((0, m)), np.zeros(0, np.int64), 0, 0.0, True
    if counts.size and counts.min() < 0:
        return NEGATIVE, np.zeros((0, m)), np.zeros(0, np.int64), 0, 0.0, True
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    if on_blocks:
        blocks = bins_to_blocks(counts)
        units = np.ascontiguousarray(blocks.counts, dtype=np.float64)
        last_bin = np.asarray(blocks.last_bin, dtype=np.int64)
    else:
        last_bin = nonempty.astype(np.int64)
        units = np.ascontiguousarray(counts[last_bin], dtype=np.float64)
    integral = bool(np.all(units == np.floor(units)))
    return 0, units, last_bin, int(nonempty.size), float(units.sum()), integral


def cuts_loops(L, last_bin, arity):
    """The cut bins of every optimal k-split, read back through Table 2's ``L``.

    ``L[i, k]`` is the last cut (a unit count ``j``: the cut follows unit
    ``j``) of the best k-split of the first ``i`` units. Row ``k`` of the
    result (shape (arity + 1, max(arity - 1, 1))) holds the ``k - 1`` cut bins
    of the k-split of all units, increasing: cut ``j`` follows bin ``j``.
    """
    n_units = L.shape[0] - 1
    out = np.full((arity + 1, max(arity - 1, 1)), -1, np.int64)
    for k in range(2, arity + 1):
        i = n_units
        for kk in range(k, 1, -1):  # rightmost last cut, then that prefix's, ...
            i = L[i, kk]
            out[k, kk - 2] = last_bin[i - 1]  # cut after unit i (1-based)
    return out


def tse_cuts_loops(start, argtop, last_bin, arity):
    """The cut bins of the one-pass TSE optimiser's k-splits, and how many were found.

    Walks the pass backwards: interval ``kk`` of the split predicting class
    ``c`` started at unit ``t`` when ``start[t, kk, c]``; the cut then follows
    unit ``t - 1``. Row ``k`` of ``cuts`` holds the cuts in its last
    ``found[k]`` places (all ``k - 1`` of them for a finite cost).
    """
    n_units = start.shape[0] - 1
    cuts = np.full((arity + 1, max(arity - 1, 1)), -1, np.int64)
    found = np.zeros(arity + 1, np.int64)
    for k in range(2, arity + 1):
        kk = k
        c = argtop[n_units, k]
        for t in range(n_units, 1, -1):
            if kk == 1:
                break
            if start[t, kk, c]:  # interval kk starts at unit t: cut after unit t-1
                cuts[k, kk - 2] = last_bin[t - 2]
                found[k] += 1
                kk -= 1
                c = argtop[t - 1, kk]
    return cuts, found
