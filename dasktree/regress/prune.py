"""Pruning regression trees and their cross-validated error, from the sums the passes kept.

A node's training sums are ``N`` (rows, weighted) and ``S`` (targets in fixed
point, :mod:`dasktree.binning.target`); a fold tree's nodes also hold the
held-out rows' ``HN`` and ``HS``. Every quantity here comes from them with no pass:

- *Cost complexity* (CART, Chapter 8.5; scikit-learn's ``ccp_alpha``): the risk
  of a node is its sum of squared errors per row of the data,
  ``(Q_t - S_t**2 / N_t) * step**2 / N``. The sums of squares ``Q`` of a node's
  leaves add up to its own, so they cancel in every effective alpha and are
  not needed: :func:`risk` is ``-(S_t - c N_t)**2 / N_t`` (scaled), centred on
  the root's mean ``c`` so the floats stay small. The weakest-link sequence is
  :func:`dasktree.model.prune.weakest_link_of`'s, shared with classification.
- *Held-out error* of a fold tree's leaf ``l`` predicting its training mean
  ``m_l = S_l / N_l``: ``sum (q - m_l)**2 = HQ_l - 2 m_l HS_l + m_l**2 HN_l``;
  over the leaves of any pruned subtree the ``HQ_l`` add up to the fold's
  held-out ``HQ`` at its root, kept by the root's pass. So the CV mean squared
  error of every subtree of the sequence (rpart's ``xerror`` for ``anova``) is
  known; its standard error is that of the folds' mean squared errors.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..model.prune import choose_alpha, fold_alpha, leaves_at, pruned_tree, sums_at, weakest_link_of
from ..split.regression import parent_proxy, proxy

__all__ = ["risk", "node_means", "cp_table", "prune_at", "best_first", "held_out_sse", "choose_alpha",
           "fold_alpha"]


def node_means(tree) -> np.ndarray:
    """Each node's training mean in fixed point; a node without training rows takes its parent's."""
    n, s = tree.counts[:, 0].astype(np.float64), tree.counts[:, 1].astype(np.float64)
    mean = np.divide(s, n, out=np.zeros(n.size), where=n > 0)
    for i, kids in enumerate(tree.children):  # parents first (breadth-first order)
        for c in kids:
            if n[c] == 0:
                mean[c] = mean[i]
    return mean


def risk(tree, step: float) -> np.ndarray:
    """``R(t)`` of every node, less its sum of squares term (which cancels), in the target's units."""
    n = tree.counts[:, 0]
    total = int(n[0]) if n.size else 0
    if total == 0:
        return np.zeros(n.size)
    centre = int(tree.counts[0, 1]) // total  # an integer: S - c N stays exact
    shifted = np.array([int(s) - centre * int(k) for k, s in tree.counts[:, :2].tolist()], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(n > 0, -shifted * shifted / np.maximum(n, 1), 0.0)
    return r * (step * step / total)


def path_of(tree, step: float):
    return weakest_link_of(tree.children, risk(tree, step))


def held_out_sse(tree, fold_q: int) -> np.ndarray:
    """Per node, its part of a fold tree's held-out sum of squared errors as a leaf (fixed point):
    ``m**2 HN - 2 m HS``; the subtree's total adds ``fold_q``, the held-out ``HQ``, once."""
    m = node_means(tree)
    hn, hs = tree.validation[:, 0].astype(np.float64), tree.validation[:, 1].astype(np.float64)
    return m * m * hn - 2.0 * m * hs


def cp_table(tree, fold_trees: Sequence, train_q: int, fold_qs: Sequence[int], step: float) -> list[dict]:
    """rpart's ``printcp`` of a regression tree: one row per subtree of the main tree's sequence,
    with ``alpha`` (scikit-learn's units), ``leaves``, ``train_mse`` and, with fold trees,
    ``cv_mse`` and ``cv_se`` (in the target's squared units), else None."""
    path = path_of(tree, step)
    alphas = path.alphas
    n_total = max(1, int(tree.counts[0, 0]))
    leaves = sums_at(path, np.ones(tree.n_nodes, dtype=np.int64), alphas)
    m = node_means(tree)
    own = m * m * tree.counts[:, 0] - 2.0 * m * tree.counts[:, 1]  # the training rows' part, as held_out_sse
    train = (float(train_q) + sums_at(path, own, alphas)) * step * step / n_total
    cv_mse = cv_se = [None] * len(alphas)
    if fold_trees:
        betas = np.append(np.sqrt(alphas[:-1] * alphas[1:]), np.inf)
        per_fold = []
        held = []
        for fold, q in zip(fold_trees, fold_qs):
            sse = float(q) + sums_at(path_of(fold, step), held_out_sse(fold, q), betas)
            per_fold.append(sse * step * step)
            held.append(max(1, int(fold.validation[0, 0])))
        per_fold_arr, held_arr = np.array(per_fold), np.array(held, dtype=np.float64)
        cv = per_fold_arr.sum(axis=0) / held_arr.sum()
        mse = per_fold_arr / held_arr[:, None]
        k = len(fold_trees)
        se = mse.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(len(alphas))
        cv_mse, cv_se = cv.tolist(), se.tolist()
    return [{"alpha": float(a), "leaves": int(nl), "train_mse": float(t), "cv_error": ce, "cv_se": se_}
            for a, nl, t, ce, se_ in zip(alphas, leaves, train, cv_mse, cv_se)]


def prune_at(tree, alpha: float, step: float):
    """``T(alpha)``: the smallest subtree minimising ``R(T) + alpha |leaves(T)|`` (scikit-learn's rule:
    a node whose effective alpha is at most ``alpha`` becomes a leaf)."""
    if alpha <= 0 and not np.isinf(alpha):
        return tree
    return pruned_tree(tree, leaves_at(path_of(tree, step), alpha))


def best_first(tree, max_leaf_nodes: int, criterion: str, lo: float, step: float):
    """The tree scikit-learn grows best first with ``max_leaf_nodes``: from the root, the split of
    the leaf with the largest impurity decrease is taken next, ``max_leaf_nodes - 1`` times. Each
    node's test does not depend on the order, so this selects among the grown tree's splits."""
    import heapq

    if tree.n_leaves <= max_leaf_nodes:
        return tree
    keep_split = np.zeros(tree.n_nodes, dtype=bool)
    heap: list = []

    def push(i: int) -> None:
        kids = tree.children[i]
        if tree.tests[i] is None:
            return
        (nl, sl), (nr, sr) = tree.counts[kids[0], :2], tree.counts[kids[1], :2]
        n, s = tree.counts[i, :2]
        gain = float(proxy(criterion, nl, sl, nr, sr, lo, step)) - float(parent_proxy(criterion, n, s, lo, step))
        if criterion == "friedman_mse":
            gain /= max(1.0, float(n))
        heapq.heappush(heap, (-gain, i))

    push(0)
    leaves = 1
    while heap and leaves < max_leaf_nodes:
        _, i = heapq.heappop(heap)
        keep_split[i] = True
        leaves += len(tree.children[i]) - 1
        for c in tree.children[i]:
            push(c)
    return pruned_tree(tree, ~keep_split)

