"""C4.5's choice among the attributes' best binary tests by gain ratio, for a batch of histograms, compiled.

Quinlan's rule (C4.5, Section 2.2), as :func:`dasktree.split.choices._choose` applies it to one
histogram: among the attributes that have a test, those whose gain is at least the mean of their
gains are eligible; the winner is the eligible test of the largest ``gain / split information``
(a test of split information 0 has no ratio); when no eligible test has a ratio, the largest ratio
of all; ties go to the lower attribute. :func:`c45_rank` applies it to M histograms at once in one
loop that releases the GIL, from the gains and the split information of every (attribute,
histogram) pair; :func:`c45_rank_numpy` is its twin, histogram by histogram with numpy.

Bit for bit the twin's: the mean gain is numpy's (``np.mean`` of the histogram's gains in
attribute order: :func:`~dasktree.split.compiled.pairwise_sum`, then a division by their number),
the ratio one IEEE division, and the comparisons are the same. The split information itself is
computed by the caller with numpy (:func:`dasktree.split.search.entropy_of_counts`, from the
children's sizes, whose ``log2`` is numpy's). The rule for one histogram, :func:`_pick`, is also
the small-node grower's.
"""

from __future__ import annotations

import numpy as np

from ..kernels.jit import jit, numba
from .compiled import jitable, pairwise_leaf, pairwise_sum


__all__ = ["c45_rank", "c45_rank_numpy"]


def c45_rank(gains: np.ndarray, info: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The winning attribute of each histogram by C4.5's rule, and its score (its gain ratio).

    Parameters
    ----------
    gains : ndarray of shape (attributes, M)
        Each attribute's best gain at each histogram; not finite where the attribute has no test.
    info : ndarray of shape (attributes, M)
        The split information of each of those tests (read where ``gains`` is finite).
    n : ndarray of shape (M,)
        Each histogram's size: one of size 0 chooses nothing.

    Returns
    -------
    winner : ndarray of shape (M,), int64
        The chosen attribute, -1 where there is none.
    score : ndarray of shape (M,)
        The chosen test's gain ratio, ``-inf`` where there is none.
    """
    gains = np.ascontiguousarray(gains, dtype=np.float64)
    info = np.ascontiguousarray(info, dtype=np.float64)
    winner = np.full(gains.shape[1], -1, dtype=np.int64)
    score = np.full(gains.shape[1], -np.inf)
    if numba is None:  # pragma: no cover
        return c45_rank_numpy(gains, info, n)
    _rank(gains, info, np.asarray(n, dtype=np.float64), winner, score)
    return winner, score


def c45_rank_numpy(gains: np.ndarray, info: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`c45_rank`'s twin: each histogram's choice on its own, as ``_choose`` makes it."""
    winner = np.full(gains.shape[1], -1, dtype=np.int64)
    score = np.full(gains.shape[1], -np.inf)
    for m in range(gains.shape[1]):
        found = np.flatnonzero(np.isfinite(gains[:, m]))
        if not n[m] > 0 or found.size == 0:
            continue
        g, i = gains[found, m], info[found, m]
        ratio = np.where(i > 0, g / np.where(i > 0, i, 1.0), -np.inf)
        scores = np.where(g >= g.mean(), ratio, -np.inf)
        if not np.isfinite(scores).any():
            scores = ratio
        best = int(np.argmax(scores))
        if np.isfinite(scores[best]):
            winner[m], score[m] = found[best], scores[best]
    return winner, score


def _mean_loop(g, k):
    """``np.mean(g[:k])``, bit for bit (numpy's pairwise sum, then the division by ``k``)."""
    return (0.0 + pairwise_sum(g, 0, k)) / k


def _rank_loops(gains, info, n, winner, score):
    n_attributes, m_total = gains.shape
    g = np.empty(n_attributes)
    ratio = np.empty(n_attributes)
    found = np.empty(n_attributes, np.int64)
    for m in range(m_total):
        if not n[m] > 0:
            continue
        k = 0
        for a in range(n_attributes):
            x = gains[a, m]
            if np.isfinite(x):
                g[k] = x
                i = info[a, m]
                ratio[k] = x / i if i > 0 else -np.inf
                found[k] = a
                k += 1
        at = _pick(g, ratio, k)
        if at >= 0:
            winner[m] = found[at]
            score[m] = ratio[at]


def _pick_loop(g, ratio, k):
    """C4.5's rule over the first ``k`` tests (gains ``g``, gain ratios ``ratio``, -inf: none): the
    index of the first largest ratio among those of at least the mean gain, else of the first largest
    ratio of all; -1 when none has a ratio. The small-node grower (:mod:`dasktree.split.small_grower`)
    calls it too: one rule, one arithmetic, for both paths."""
    if k == 0:
        return -1
    mean = _mean(g, k)
    best = -np.inf
    at = -1
    for j in range(k):  # the first largest ratio among the eligible tests
        if g[j] >= mean and ratio[j] > best:
            best = ratio[j]
            at = j
    if at < 0:  # none eligible has a ratio: the first largest ratio of all
        for j in range(k):
            if ratio[j] > best:
                best = ratio[j]
                at = j
    return at


if numba is not None:
    jitable(pairwise_leaf, pairwise_sum)
    _mean = jit(_mean_loop)
    _pick = jit(_pick_loop)
    _rank = jit(_rank_loops)
else:  # pragma: no cover
    _mean, _pick, _rank = _mean_loop, _pick_loop, _rank_loops
