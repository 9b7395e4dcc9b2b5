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
- *Pessimistic pruning* in M5's manner (Quinlan 1992, "Learning with continuous classes"): a model
  of ``v`` parameters fitted to ``n`` rows is expected to err by its training error times
  ``(n + v) / (n - v)``. Bottom up, as C4.5's pessimistic pruning (:func:`dasktree.model.prune.
  pessimistic_leaves`), a node becomes a leaf when its own estimate (its sum of squared errors, one
  parameter) is at most its subtree's (the subtree's sum of squared errors, one parameter per leaf,
  over the node's rows). A node's sum of squared errors is ``Q - S**2 / N`` from its exact sums
  (:func:`pessimistic_leaves`); a leaf no pass counted has no ``Q`` of its own, but its subtree sum
  only needs its parent's ``Q`` less its counted siblings' (:func:`subtree_sse`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..model.model import children_given
from ..model.prune import (PruningPath, choose_alpha, fold_alpha, leaf_counts_at, leaves_at, positions_at,
                           pruned_tree, sums_at, tree_shape, weakest_link_of)
from ..split.regression import parent_proxy, proxy
from .task import node_means  # the model's side: loading a regression model must not load the kernels here

__all__ = ["risk", "node_means", "table_alphas", "betas_of", "FoldErrors", "FoldPath", "fold_path", "fold_errors", "cp_table", "prune_at", "best_first", "held_out_sse", "choose_alpha",
           "fold_alpha", "in_threads", "pessimistic_leaves", "subtree_sse", "root_mse"]


def risk(tree, step: float) -> np.ndarray:
    """``R(t)`` of every node, less its sum of squares term (which cancels), in the target's units."""
    n = tree.counts[:, 0]
    total = int(n[0]) if n.size else 0
    if total == 0:
        return np.zeros(n.size)
    centre = int(tree.counts[0, 1]) // total  # an integer: S - c N stays exact
    s = tree.counts[:, 1]
    if abs(centre) * int(n.max()) < 2**62 and max(int(s.max()), -int(s.min())) < 2**62:
        shifted = (s - centre * n).astype(np.float64)  # exact in int64, as in Python's integers
    else:
        shifted = np.array([int(v) - centre * int(k) for k, v in tree.counts[:, :2].tolist()], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(n > 0, -shifted * shifted / np.maximum(n, 1), 0.0)
    return r * (step * step / total)


_PATH = "_dasktree_path"


def path_of(tree, step: float):
    """``tree``'s weakest-link sequence (:func:`~dasktree.model.prune.weakest_link_of` of its :func:`risk`),
    made once per tree and step: the cp table and the prune at its chosen alpha read the same."""
    kept = getattr(tree, "__dict__", {}).get(_PATH)
    given = children_given(tree)[0]
    if kept is not None and kept[0] is given and kept[1] is tree.counts and kept[2] == step:
        return kept[3]
    path = weakest_link_of(tree_shape(tree), risk(tree, step))
    if hasattr(tree, "__dict__"):
        tree.__dict__[_PATH] = (given, tree.counts, step, path)
    return path


def held_out_sse(tree, fold_q: int) -> np.ndarray:
    """Per node, its part of a fold tree's held-out sum of squared errors as a leaf (fixed point):
    ``m**2 HN - 2 m HS``; the subtree's total adds ``fold_q``, the held-out ``HQ``, once."""
    m = node_means(tree)
    hn, hs = tree.validation[:, 0].astype(np.float64), tree.validation[:, 1].astype(np.float64)
    return m * m * hn - 2.0 * m * hs


def table_alphas(tree, step: float, floor: float | None = None) -> np.ndarray:
    """The alphas of the cp table's rows (:func:`cp_table`): those of ``tree``'s weakest-link sequence, from
    ``floor`` on when the tree grew only until pruning at that alpha must cut (``prune="cp"``: its subtrees at
    smaller alphas are not the whole tree's, and the table starts at ``T(floor)``, as rpart's ends at its cp)."""
    alphas = path_of(tree, step).alphas
    if floor is not None:
        alphas = np.concatenate([[float(floor)], alphas[alphas > floor]])
    return alphas


def betas_of(alphas: np.ndarray) -> np.ndarray:
    """CART's ``beta_k`` of each row: the geometric mean of its alpha and the next's (inf after the last),
    where the fold trees are pruned for that row's CV error (:func:`~dasktree.model.prune.fold_alpha`)."""
    return np.append(np.sqrt(alphas[:-1] * alphas[1:]), np.inf)


@dataclass(frozen=True)
class FoldErrors:
    """A fold tree as the CV error reads it, once its nodes are let go: its held-out rows ``rows``, their
    target sum ``sums`` and sum of squares ``q`` (``HN``, ``HS``, ``HQ`` at its root, fixed point), and for
    each row of the cp table (its ``beta``) the leaves of its subtree there and their held-out sum of
    squared errors less ``HQ`` (:func:`held_out_sse` summed over them: ``leaves``, ``sse``). ``fixed``:
    (leaves, held-out sum of squared errors with ``HQ``) of its subtree at an alpha known before any
    choice (its own cp, an alpha given, 0), or None."""

    rows: int
    sums: int
    q: int
    leaves: np.ndarray
    sse: np.ndarray
    fixed: tuple[int, float] | None = None

    def at(self, row: int | None) -> tuple[int, float]:
        """(leaves, held-out sum of squared errors, fixed point) of the subtree at the cp table's row
        ``row``'s beta, or (None) at the fixed alpha."""
        if row is None:
            return self.fixed
        return int(self.leaves[row]), float(self.q) + float(self.sse[row])


@dataclass(frozen=True)
class FoldPath:
    """A fold tree as its CV errors read it before the main tree's betas are known, once its nodes are let
    go: its held-out ``rows``, ``sums`` and ``q`` (as :class:`FoldErrors`), its weakest-link sequence as
    each node's ``leaf_from`` with its parent (``path``: no steps kept, parents in 32 bits), each node's
    held-out error as a leaf (``sse``, :func:`held_out_sse`) and ``fixed`` (:class:`FoldErrors`'s): 20
    bytes a node where the tree's model took hundreds, so a deep fit's fold trees need not wait for the
    main tree as models. :meth:`errors` gives its :class:`FoldErrors` at the betas."""

    rows: int
    sums: int
    q: int
    path: PruningPath
    sse: np.ndarray
    fixed: tuple[int, float] | None = None

    def errors(self, betas: np.ndarray) -> FoldErrors:
        """:class:`FoldErrors` at ``betas`` (the leaves' errors summed in node order, as over the tree's)."""
        at = positions_at(self.path, betas)
        return FoldErrors(self.rows, self.sums, self.q, leaf_counts_at(self.path, betas, at),
                          sums_at(self.path, self.sse, betas, at), self.fixed)


def fold_path(fold, q: int, step: float, fixed_alpha: float | None = None) -> FoldPath:
    """Fold tree ``fold`` (held-out sum of squares ``q``) as :class:`FoldPath`, with its errors at
    ``fixed_alpha`` when given (0: the tree as grown, as :func:`prune_at` leaves it; its leaves' errors
    summed in node order, as over the pruned tree's leaves)."""
    path = path_of(fold, step)
    sse = held_out_sse(fold, q)
    fixed = None
    if fixed_alpha is not None:
        mask = (~tree_shape(fold).internal if fixed_alpha <= 0 and not np.isinf(fixed_alpha)
                else leaves_at(path, fixed_alpha))
        fixed = (int(mask.sum()), float(q) + float(sse[mask].sum()))
    empty = np.zeros(0, dtype=np.int64)
    kept = PruningPath(empty, empty.astype(np.float64), path.leaf_from, path.parent.astype(np.int32))
    return FoldPath(int(fold.validation[0, 0]), int(fold.validation[0, 1]), int(q), kept, sse, fixed)


def fold_errors(fold, q: int, step: float, betas: np.ndarray, fixed_alpha: float | None = None) -> FoldErrors:
    """Fold tree ``fold`` (held-out sum of squares ``q``) as :class:`FoldErrors` at ``betas`` and, when given,
    at ``fixed_alpha`` (:func:`fold_path`, then :meth:`FoldPath.errors`)."""
    return fold_path(fold, q, step, fixed_alpha).errors(betas)


def cp_table(tree, alphas: np.ndarray, folds: Sequence[FoldErrors], train_q: int, step: float) -> list[dict]:
    """rpart's ``printcp`` of a regression tree: one row per alpha of :func:`table_alphas` (scikit-learn's
    units), with ``leaves``, ``train_mse`` and, with fold trees (:func:`fold_errors` at :func:`betas_of` the
    alphas), ``cv_mse`` and ``cv_se`` (in the target's squared units), else None."""
    path = path_of(tree, step)
    n_total = max(1, int(tree.counts[0, 0]))
    at = positions_at(path, alphas)
    leaves = leaf_counts_at(path, alphas, at)
    m = node_means(tree)
    own = m * m * tree.counts[:, 0] - 2.0 * m * tree.counts[:, 1]  # the training rows' part, as held_out_sse
    train = (float(train_q) + sums_at(path, own, alphas, at)) * step * step / n_total
    cv_mse = cv_se = [None] * len(alphas)
    if folds:
        per_fold_arr = np.array([(float(f.q) + f.sse) * step * step for f in folds])
        held_arr = np.array([max(1, f.rows) for f in folds], dtype=np.float64)
        cv = per_fold_arr.sum(axis=0) / held_arr.sum()
        mse = per_fold_arr / held_arr[:, None]
        k = len(folds)
        se = mse.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(len(alphas))
        cv_mse, cv_se = cv.tolist(), se.tolist()
    return [{"alpha": a, "leaves": nl, "train_mse": t, "cv_error": ce, "cv_se": se_}  # Python floats and ints
            for a, nl, t, ce, se_ in zip(alphas.astype(np.float64).tolist(), leaves.astype(np.int64).tolist(),
                                         train.astype(np.float64).tolist(), cv_mse, cv_se)]


#: A cv fit's fold trees become models (and their CV errors) on threads only while the models being made at
#: once take at most this much (about :data:`MODEL_BYTES_PER_NODE` per node each): a deep tree's fold
#: tree of a million nodes is made alone, so the finish adds one tree's arrays, not one per core.
THREADS_BUDGET_MB = 256.0
#: What making one tree's model and its pruning sequence takes per node, at its peak (measured: about
#: 220 bytes for the model's columns, the rest the weakest-link sequence's).
MODEL_BYTES_PER_NODE = 300


def in_threads(work, items: list, nodes_each: int = 0) -> list:
    """``[work(item) for item in items]``, the items shared among a thread per core (the pruning sequences
    and sums of a cv fit's trees: compiled kernels and numpy, which let go of the GIL), as many threads as
    :data:`THREADS_BUDGET_MB` holds trees of ``nodes_each`` nodes; each result is its item's own, whatever
    the thread."""
    from concurrent.futures import ThreadPoolExecutor

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    fit = int(THREADS_BUDGET_MB * 2**20 // max(1, nodes_each * MODEL_BYTES_PER_NODE))
    threads = min(len(items), cores, max(1, fit))
    if threads <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(work, items))


def prune_at(tree, alpha: float, step: float):
    """``T(alpha)``: the smallest subtree minimising ``R(T) + alpha |leaves(T)|`` (scikit-learn's rule:
    a node whose effective alpha is at most ``alpha`` becomes a leaf). A leaf where growth stopped for
    cp (reason ``"cp"``: it would have split) is ``"pruned"`` in it, as in the tree grown on and pruned."""
    if alpha <= 0 and not np.isinf(alpha):
        return tree
    pruned = pruned_tree(tree, leaves_at(path_of(tree, step), alpha))
    if "cp" in pruned.leaf_reason:  # stopped where pruning at cp cuts (it would have split): pruned, as grown on
        pruned.leaf_reason = ["pruned" if r == "cp" else r for r in pruned.leaf_reason]
    return pruned


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



# ---------------------------------------------------------------- M5's pessimistic estimate

def root_mse(tree, root_q: int, step: float) -> float:
    """The mean squared error of ``tree``'s root as one leaf, in the target's squared units (the units
    of :func:`cp_table`'s alpha), from its exact training sums and sum of squares ``root_q``."""
    n, s = int(tree.counts[0, 0]), int(tree.counts[0, 1])
    return _sse_of(int(root_q), n, s, s // n if n else 0) * step * step / max(1, n)


def _sse_of(q: int, n: int, s: int, centre: int) -> float:
    """``Q - S**2 / N`` about ``centre`` (fixed point squared units), from exact integers."""
    if n <= 0:
        return 0.0
    sc = s - centre * n
    qc = q - 2 * centre * s + centre * centre * n
    return (qc * n - sc * sc) / n  # the numerator exact (Python ints); one rounding


def subtree_sse(tree, squares: Sequence[int | None], leaves: np.ndarray) -> np.ndarray:
    """Per node, the training sum of squared errors of its subtree cut at the mask ``leaves`` (grown
    leaves are leaves), in fixed point squared units: ``Q_t - sum over its leaves of S_l**2 / N_l``.
    ``squares[i]``: node ``i``'s ``Q`` or None (a leaf no pass counted: only a parent's ``Q`` less its
    counted children's is known, which is all a sum over leaves needs)."""
    n_nodes = len(tree.children)
    counts = [(int(a), int(b)) for a, b in tree.counts[:, :2].tolist()]
    centre = counts[0][1] // counts[0][0] if n_nodes and counts[0][0] > 0 else 0
    out = np.zeros(n_nodes)
    cut = np.asarray(leaves, dtype=bool) | ~tree_shape(tree).internal
    for i in range(n_nodes - 1, -1, -1):  # breadth-first order: children after parents
        n, s = counts[i]
        if cut[i]:
            if squares[i] is not None:
                out[i] = _sse_of(int(squares[i]), n, s, centre)
            continue
        kids = tree.children[i]
        known = [c for c in kids if cut[c] and squares[c] is not None or not cut[c]]
        unknown = [c for c in kids if cut[c] and squares[c] is None]
        total = sum(out[c] for c in known)
        if unknown:  # their Q together: the parent's less the others' (every counted node has its Q)
            q_rest = int(squares[i]) - sum(int(squares[c]) for c in kids if squares[c] is not None)
            n_rest = sum(counts[c][0] for c in unknown)
            s_rest = sum(counts[c][1] for c in unknown)
            # sum over the unknown leaves of (Q_l - S_l^2/N_l): their Q total less each S^2/N
            total += _sse_of(q_rest, n_rest, s_rest, centre) - sum(
                _between(counts[c], n_rest, s_rest, centre) for c in unknown)
        out[i] = total
    return out


def _between(count: tuple[int, int], n_rest: int, s_rest: int, centre: int) -> float:
    """Leaf ``count``'s part of the spread between the pooled leaves' means (rows ``n_rest``, sum
    ``s_rest``): ``N_l (m_l - m)**2``; the pooled SSE less these is the leaves' own SSEs' sum."""
    n, s = count
    if n <= 0 or n_rest <= 0:
        return 0.0
    # N_l (S_l/N_l - S/N)^2 = (S_l N - S N_l)^2 / (N_l N^2), about any centre
    d = (s - centre * n) * n_rest - (s_rest - centre * n_rest) * n
    return d * d / (n * n_rest * n_rest)


#: Estimates within this relative difference are a tie, and a tie prunes (the smaller tree): the
#: floats from the exact sums then decide as exact fractions would.
TIE = 1e-9


def _inflated(sse: float, n: int, v: int) -> float:
    """M5's estimate: ``sse * (n + v) / (n - v)``; without rows to spare (``n <= v``) unbounded."""
    if n <= v:
        return 0.0 if sse <= 0 and v <= 1 else np.inf
    return sse * (n + v) / (n - v)


def pessimistic_leaves(tree, squares: Sequence[int | None]) -> np.ndarray:
    """Boolean mask of the nodes M5's pessimistic estimate makes leaves (grown leaves included):
    bottom up, node ``t`` (``N`` rows) becomes a leaf when ``SSE_t (N + 1) / (N - 1)`` is at most
    ``SSE_subtree (N + L) / (N - L)`` (to a relative :data:`TIE`), its subtree as pruned below it
    having ``L`` leaves (unbounded when ``N <= L``: no rows to spare). Every
    quantity from the exact sums (``counts``, ``squares``: :func:`dasktree.regress.trees.node_squares`)."""
    n_nodes = len(tree.children)
    is_leaf = ~tree_shape(tree).internal
    if n_nodes == 0:
        return is_leaf
    counts = [(int(a), int(b)) for a, b in tree.counts[:, :2].tolist()]
    centre = counts[0][1] // counts[0][0] if counts[0][0] > 0 else 0
    grown = is_leaf.copy()
    below = subtree_sse(tree, squares, grown)  # grown leaves without their own Q resolved once
    sse = below.copy()  # the subtree's SSE as pruned so far
    n_leaves = np.ones(n_nodes, dtype=np.int64)
    for i in np.flatnonzero(~is_leaf)[::-1].tolist():  # children before parents: bottom up
        n, s = counts[i]
        kids = tree.children[i]
        if all(not grown[c] or squares[c] is not None for c in kids):
            sub = float(sum(sse[c] for c in kids))
        else:  # some grown leaf without its own Q: its share as subtree_sse resolved it
            sub = below[i] + float(sum(sse[c] - below[c] for c in kids if not grown[c]))
        leaves = int(sum(n_leaves[c] for c in kids))
        own = _sse_of(int(squares[i]), n, s, centre)
        if _inflated(own, n, 1) <= _inflated(sub, n, leaves) * (1 + TIE):
            is_leaf[i] = True
            sse[i], n_leaves[i] = own, 1
        else:
            sse[i], n_leaves[i] = sub, leaves
    return is_leaf
