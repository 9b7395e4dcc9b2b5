"""Pruning a grown tree: CART's cost complexity (weakest link) and C4.5's pessimistic pruning.

Pure numpy on a tree's flat arrays (``children``, ``counts`` and, for a fold
tree, ``validation``); nothing here knows of Dask or the forest.

Cost complexity (Breiman et al., CART, Chapter 3; scikit-learn's definition).
The risk of a node is ``R(t) = N_t / N * impurity(t)`` (gini, or entropy for
"entropy" and "gain_ratio"), ``N`` the tree's training rows. The weakest link
of a tree is the internal node ``t`` with the least effective alpha
``(R(t) - R(T_t)) / (|leaves(T_t)| - 1)``, ``T_t`` the branch below ``t``;
collapsing weakest links one by one gives the nested subtrees ``T(alpha)``,
``T(alpha)`` being the smallest subtree minimising
``R_alpha(T) = R(T) + alpha * |leaves(T)|``. A node is a leaf of ``T(alpha)``
iff the alpha at which it collapses is ``<= alpha`` (scikit-learn's
``ccp_alpha`` rule), which :attr:`PruningPath.leaf_from` holds per node.

Cross-validated choice (CART's Section 3.4; Blockeel & Struyf, 004, Section 1).
Each fold tree of the forest has its own sequence; the main tree's subtree
``T_k`` (alphas ``alpha_k <= alpha < alpha_{k+1}``) is scored by pruning every
fold tree at the geometric mean ``beta_k = sqrt(alpha_k * alpha_{k+1})``
(``beta`` of the last, the root alone, is infinite) and counting the held-out
rows misclassified at the leaves that remain. The forest knows the held-out
counts at EVERY node of a fold tree (004, Section 2.2.2), so no row is read
again. Each leaf predicts ``argmax`` of its training class probabilities
(ties to the first class, as prediction), under monotonic_cst of those probabilities clipped to
the node's bounds (:func:`predicted_value`): the errors counted, here and by the pessimistic
rule, are those of what the tree predicts. The CV error of ``T_k`` is the
misclassified held-out rows over all held-out rows (with repeats: the mean
of the repetitions, each of which holds out every row once); its standard
error is the binomial ``sqrt(e (1 - e) / N)``, ``N`` the rows of one
repetition (rpart's ``xstd`` is the same binomial figure for the
misclassification risk). "cv" picks the largest alpha whose CV error is at most
the minimum plus the minimum's standard error (the 1-SE rule), "cv-min" the
minimum (the larger alpha, the smaller tree, on ties, as rpart's ``which.min``
over its table ordered from the root).

Pessimistic pruning (Quinlan, C4.5: Programs for Machine Learning, Section 4.2).
A node with ``N`` training rows of which ``E`` are not of its majority class
is estimated to err on ``N * U_CF(E, N)`` rows, ``U_CF`` the upper limit of
the binomial confidence interval at confidence ``CF``, computed as C4.5's
``AddErrs`` does (exact for ``E = 0``, interpolated for ``E < 1``, the normal
approximation with continuity correction above). Bottom up, a node becomes a
leaf when its estimate is at most its (already pruned) branch's estimate plus
0.1 (C4.5's rule). C4.5's subtree raising (grafting the largest child in the
node's place) is not done: it re-distributes the node's rows down the raised
branch, which needs those rows routed again, a further pass over the data.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..kernels.jit import jit
from .model import ChildLinks, children_given
from ..split.api import entropy, gini

__all__ = [
    "MODES",
    "Shape",
    "shape_of",
    "tree_shape",
    "PruningPath",
    "leaf_errors",
    "predicted_value",
    "node_risk",
    "weakest_link",
    "weakest_link_of",
    "path_risks",
    "leaves_at",
    "sums_at",
    "positions_at",
    "leaf_counts_at",
    "cp_table",
    "choose_alpha",
    "fold_alpha",
    "c45_added_errors",
    "pessimistic_leaves",
    "pruned_tree",
]

MODES = ("cv", "cv-min", "pessimistic", "none", "alpha")
"""Pruning modes: CV with the 1-SE rule, CV minimum, C4.5's pessimistic, none, a fixed alpha."""


@dataclass(frozen=True)
class Shape:
    """A tree's shape as arrays: node ``i``'s children are ``flat[start[i]:start[i + 1]]`` (in order),
    its parent ``parent[i]`` (-1 at the root). What pruning walks instead of a list per node."""

    parent: np.ndarray
    start: np.ndarray
    flat: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.parent.size)

    @property
    def arity(self) -> np.ndarray:
        return np.diff(self.start)

    @property
    def internal(self) -> np.ndarray:
        return self.start[1:] > self.start[:-1]


def shape_of(children) -> Shape:
    """The :class:`Shape` of a tree given as its children lists (a :class:`Shape` is returned as it is)."""
    if isinstance(children, Shape):
        return children
    n = len(children)
    sizes = np.fromiter(map(len, children), dtype=np.int64, count=n)
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=start[1:])
    flat = np.fromiter(itertools.chain.from_iterable(children), dtype=np.int64, count=int(start[-1]))
    parent = np.full(n, -1, dtype=np.int64)
    parent[flat] = np.repeat(np.arange(n, dtype=np.int64), sizes)
    return Shape(parent, start, flat)


_SHAPE = "_dasktree_shape"


def tree_shape(tree) -> Shape:
    """The :class:`Shape` of ``tree`` (a TreeModel), made once: kept with the tree while its
    ``children`` list is the same object of the same length (trees are not edited in place)."""
    kept = getattr(tree, "__dict__", {}).get(_SHAPE)
    given, n = children_given(tree)
    if kept is not None and kept[0] is given and kept[1] == n:
        return kept[2]
    links = getattr(tree, "__dict__", {}).get("_links")  # TreeModel.links: no list per node read
    shape = shape_of(tree.children) if links is None else _shape_of_links(*links)
    _keep_shape(tree, shape)
    return shape


def _shape_of_links(sizes: np.ndarray, flat: np.ndarray) -> Shape:
    n = sizes.size
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=start[1:])
    flat = np.asarray(flat, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    parent[flat] = np.repeat(np.arange(n, dtype=np.int64), sizes)
    return Shape(parent, start, flat)


def _keep_shape(tree, shape: Shape) -> None:
    if hasattr(tree, "__dict__"):
        tree.__dict__[_SHAPE] = (*children_given(tree), shape)


def _parents(children) -> np.ndarray:
    return shape_of(children).parent


def node_risk(counts: np.ndarray, criterion: str) -> np.ndarray:
    """``R(t) = N_t / N * impurity(t)`` per node, ``N`` the root's rows (scikit-learn's definition)."""
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=1)
    impurity = gini(counts) if criterion == "gini" else entropy(counts)
    total = n[0] if n.size and n[0] > 0 else 1.0
    return n * impurity / total


def _value(children, counts: np.ndarray) -> np.ndarray:
    """Class probabilities per node; a node without training rows takes its parent's (as prediction).
    ``children``: the children lists or the tree's :class:`Shape`."""
    counts = np.asarray(counts)
    total = counts.sum(axis=1)
    value = np.zeros(counts.shape, dtype=np.float64)
    np.divide(counts, total[:, None], out=value, where=total[:, None] > 0)
    empty = np.flatnonzero(total == 0)
    if empty.size:
        parent = shape_of(children).parent
        for c in empty.tolist():  # parents come first (breadth-first order)
            if parent[c] >= 0:
                value[c] = value[parent[c]]
    return value


def leaf_errors(children, counts: np.ndarray, rows: np.ndarray | None = None, *,
                value: np.ndarray | None = None) -> np.ndarray:
    """Rows each node misclassifies as a leaf: of ``rows`` (default: the training counts) per node,
    those not of the class the node predicts: ``argmax`` of ``value``, the class probabilities the tree
    predicts per node (:func:`predicted_value`; default: its training class probabilities)."""
    rows = np.asarray(counts if rows is None else rows, dtype=np.int64)
    predicted = np.argmax(_value(children, counts) if value is None else value, axis=1)
    return rows.sum(axis=1) - rows[np.arange(len(rows)), predicted]


def predicted_value(tree) -> np.ndarray | None:
    """The class probabilities ``tree`` predicts per node where they are not its training counts': under
    monotonic_cst, clipped to each node's bounds (:meth:`~dasktree.model.model.TreeModel.value`), so the
    predicted class can differ from the majority; else None (the counts say it). A node's bounds come from
    its ancestors and their children alone, so it predicts the same as a leaf of any pruned subtree."""
    return tree.value if getattr(tree, "monotonic", None) is not None else None


@dataclass(frozen=True)
class PruningPath:
    """The weakest-link sequence of one tree.

    Attributes
    ----------
    step_nodes : (n_steps,) int
        The node collapsed at each step (the last is the root).
    step_alphas : (n_steps,) float
        Its effective alpha when collapsed: scikit-learn's
        ``cost_complexity_pruning_path(...).ccp_alphas[1:]``.
    leaf_from : (n_nodes,) float
        The least alpha at which the node is a leaf of ``T(alpha)`` or gone
        (``-inf`` at the grown tree's leaves). Non-decreasing from a node to its
        parent; ``T(alpha)``'s leaves are the nodes with
        ``leaf_from[i] <= alpha < leaf_from[parent(i)]``.
    parent : (n_nodes,) int
        Each node's parent (-1 at the root).
    """

    step_nodes: np.ndarray
    step_alphas: np.ndarray
    leaf_from: np.ndarray
    parent: np.ndarray

    @property
    def alphas(self) -> np.ndarray:
        """The distinct alphas ``alpha_0 = 0 < alpha_1 < ...`` at which ``T(alpha)`` changes."""
        internal = self.leaf_from[np.isfinite(self.leaf_from)]
        return np.unique(np.concatenate([[0.0], np.maximum(internal, 0.0)]))


def weakest_link(children, counts: np.ndarray, criterion: str) -> PruningPath:
    """Collapse weakest links until only the root is left (CART's pruning sequence).

    The least effective alpha is taken first (the lower node number on ties);
    after a collapse only the ancestors' alphas change (they rise), kept in a
    heap of the internal nodes whose entries move when they come to the top:
    the compiled :func:`_collapse_order`.
    """
    return weakest_link_of(children, node_risk(counts, criterion))


def weakest_link_of(children, risk: np.ndarray) -> PruningPath:
    """:func:`weakest_link` from each node's risk ``R(t)`` as a leaf (any additive cost: a regression
    tree's sum of squared errors per row, :mod:`dasktree.regress.prune`). ``children``: the children
    lists or the tree's :class:`Shape` (:func:`tree_shape`)."""
    shape = shape_of(children)
    parent, start, flat, internal = shape.parent, shape.start, shape.flat, shape.internal
    steps, step_alphas = _collapse_order(parent, start, flat, np.asarray(risk, dtype=np.float64), internal)
    leaf_from = np.where(internal, np.inf, -np.inf)
    leaf_from[steps] = np.maximum.accumulate(step_alphas) if steps.size else step_alphas
    _inherit(leaf_from, parent, internal)
    return PruningPath(steps, step_alphas, leaf_from, parent)


@jit
def _inherit(leaf_from, parent, internal):
    """A node below a collapsed one is gone from the same alpha on (parents first: breadth-first)."""
    for i in range(1, leaf_from.size):
        if internal[i] and leaf_from[parent[i]] < leaf_from[i]:
            leaf_from[i] = leaf_from[parent[i]]


@jit
def _before(a1, n1, a2, n2):
    return a1 < a2 or (a1 == a2 and n1 < n2)


@jit
def _sift_up(h_alpha, h_node, where, j):
    """Move heap entry ``j`` up while it comes before its parent; keeps ``where`` (a node's slot)."""
    alpha, node = h_alpha[j], h_node[j]
    while j > 0:
        up = (j - 1) // 2
        if not _before(alpha, node, h_alpha[up], h_node[up]):
            break
        h_alpha[j], h_node[j] = h_alpha[up], h_node[up]
        where[h_node[j]] = j
        j = up
    h_alpha[j], h_node[j] = alpha, node
    where[node] = j


@jit
def _sift_down(h_alpha, h_node, where, j, size):
    """Move heap entry ``j`` down while a child comes before it; keeps ``where``."""
    alpha, node = h_alpha[j], h_node[j]
    while True:
        c = 2 * j + 1
        if c >= size:
            break
        if c + 1 < size and _before(h_alpha[c + 1], h_node[c + 1], h_alpha[c], h_node[c]):
            c += 1
        if not _before(h_alpha[c], h_node[c], alpha, node):
            break
        h_alpha[j], h_node[j] = h_alpha[c], h_node[c]
        where[h_node[j]] = j
        j = c
    h_alpha[j], h_node[j] = alpha, node
    where[node] = j


@jit
def _collapse_order(parent, start, flat, risk, internal):
    """The weakest-link steps: (nodes collapsed in order, their effective alphas).

    One heap entry per internal node, keyed (alpha, node), its slot kept in ``where``, so the heap stays
    as small as the internal nodes (it fits in cache where a heap of pushed copies did not); the nodes
    of a collapsed branch stay in it and are skipped when they come up. A collapse below a node can
    only raise its effective alpha (it removed a branch of alpha at most the node's: ``(N - a k) / (D -
    k) >= N / D`` when ``a <= N / D``), so an ancestor's entry is left where it is, its key a lower bound,
    and set to its alpha when it comes to the top; a key that rounding lowers is moved at once. The
    top's key is then always its alpha and no smaller than any other node's, so the steps are those of
    moving every ancestor at each collapse (a deep tree's collapses cost their depth in additions, not
    in heap moves)."""
    n = parent.size
    r_branch = np.where(internal, 0.0, risk)
    n_leaves = np.where(internal, 0, 1).astype(np.int64)
    for i in range(n - 1, 0, -1):  # children come after their parents (breadth-first order)
        r_branch[parent[i]] += r_branch[i]
        n_leaves[parent[i]] += n_leaves[i]
    n_internal = int(internal.sum())
    h_alpha = np.empty(n_internal, dtype=np.float64)
    h_node = np.empty(n_internal, dtype=np.int64)
    where = np.full(n, -1, dtype=np.int64)
    gone = np.zeros(n, dtype=np.bool_)
    size = 0
    steps = np.empty(n_internal, dtype=np.int64)
    alphas = np.empty(n_internal, dtype=np.float64)
    n_steps = 0
    stack = np.empty(n, dtype=np.int64)
    for node in range(n):
        if internal[node]:
            h_alpha[size] = (risk[node] - r_branch[node]) / (n_leaves[node] - 1) if n_leaves[node] > 1 else 0.0
            h_node[size] = node
            _sift_up(h_alpha, h_node, where, size)
            size += 1
    while size > 0:
        alpha, node = h_alpha[0], h_node[0]
        if not gone[node]:
            now = (risk[node] - r_branch[node]) / (n_leaves[node] - 1) if n_leaves[node] > 1 else 0.0
            if now != alpha:  # raised by collapses below since it was keyed: to its place
                h_alpha[0] = now
                _sift_down(h_alpha, h_node, where, 0, size)
                continue
        size -= 1
        where[node] = -1
        if size > 0:
            h_alpha[0], h_node[0] = h_alpha[size], h_node[size]
            _sift_down(h_alpha, h_node, where, 0, size)
        if gone[node]:
            continue
        steps[n_steps] = node
        alphas[n_steps] = alpha
        n_steps += 1
        top = 0
        for k in range(start[node], start[node + 1]):
            stack[top] = flat[k]
            top += 1
        while top > 0:  # the branch below leaves the tree
            top -= 1
            c = stack[top]
            if not gone[c]:
                gone[c] = True
                for k in range(start[c], start[c + 1]):
                    stack[top] = flat[k]
                    top += 1
        gone[node] = True  # a leaf from now on: never a candidate again
        removed = n_leaves[node] - 1
        diff = risk[node] - r_branch[node]
        r_branch[node] = risk[node]
        n_leaves[node] = 1
        anc = parent[node]
        while anc >= 0:
            n_leaves[anc] -= removed
            r_branch[anc] += diff
            now = (risk[anc] - r_branch[anc]) / (n_leaves[anc] - 1) if n_leaves[anc] > 1 else 0.0
            j = where[anc]
            if now < h_alpha[j]:  # lowered by rounding only: moved now, so every key stays a lower bound
                h_alpha[j] = now
                _sift_up(h_alpha, h_node, where, j)
            anc = parent[anc]
    return steps[:n_steps], alphas[:n_steps]


@jit
def path_risks(parent, internal, risk, steps):
    """The total risk of the leaves before the first of ``steps`` (nodes collapsed in order) and after
    each: branch risks summed children first (breadth-first order read backwards), then each
    collapse's ``R(t) - R(T_t)`` added to ``t`` and its ancestors (scikit-learn's ``_cost_complexity_prune``)."""
    branch = np.where(internal, 0.0, risk)
    for i in range(parent.size - 1, 0, -1):
        branch[parent[i]] += branch[i]
    out = np.empty(steps.size + 1, dtype=np.float64)
    out[0] = branch[0]
    for k in range(steps.size):
        node = steps[k]
        diff = risk[node] - branch[node]
        while node >= 0:
            branch[node] += diff
            node = parent[node]
        out[k + 1] = branch[0]
    return out


def leaves_at(path: PruningPath, alpha: float) -> np.ndarray:
    """Boolean mask of the nodes that are leaves of ``T(alpha)``."""
    parent_from = np.where(path.parent >= 0, path.leaf_from[np.maximum(path.parent, 0)], np.inf)
    return (path.leaf_from <= alpha) & ((parent_from > alpha) | (path.parent < 0))


def positions_at(path: PruningPath, alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node, the first and the end of the sorted ``alphas`` at which it is a leaf of ``T(alpha)``
    (``leaf_from <= alpha < leaf_from[parent]``; an empty range where it never is): what :func:`sums_at`
    and :func:`leaf_counts_at` read, found once for every column summed over the same alphas."""
    alphas = np.asarray(alphas, dtype=np.float64)
    parent_from = np.where(path.parent >= 0, path.leaf_from[np.maximum(path.parent, 0)], np.inf)
    start = np.searchsorted(alphas, path.leaf_from, side="left")
    stop = np.where(path.parent >= 0, np.searchsorted(alphas, parent_from, side="left"), len(alphas))
    return start, stop


def sums_at(path: PruningPath, values: np.ndarray, alphas: np.ndarray,
            positions: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``sum(values[leaves of T(alpha)])`` for each of the sorted ``alphas`` (counts, errors, ...);
    ``positions``: :func:`positions_at` of the same path and alphas, if found already."""
    start, stop = positions_at(path, alphas) if positions is None else positions
    diff = np.zeros(len(alphas) + 1, dtype=np.asarray(values).dtype)
    np.add.at(diff, start, values)
    np.add.at(diff, stop, -np.asarray(values))
    return np.cumsum(diff)[:-1]


def leaf_counts_at(path: PruningPath, alphas: np.ndarray,
                   positions: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The leaves of ``T(alpha)`` for each of the sorted ``alphas``: :func:`sums_at` of a one per node,
    counted (integers: the same in any order)."""
    start, stop = positions_at(path, alphas) if positions is None else positions
    size = len(alphas) + 1
    return np.cumsum(np.bincount(start, minlength=size) - np.bincount(stop, minlength=size))[:-1]


def cp_table(tree, fold_trees: Sequence, criterion: str, repeats: int = 1, *,
             paths: tuple[PruningPath, Sequence[PruningPath]] | None = None, unit: float = 1.0) -> list[dict]:
    """rpart's ``printcp`` for the main ``tree`` (an object with ``children``, ``counts``):
    one row per subtree ``T_k`` of its sequence, with ``alpha``, ``leaves``,
    ``train_error`` (misclassified training rows / rows), and with fold trees
    (with ``validation`` counts) ``cv_error`` and ``cv_se``, else None.
    ``paths``: the trees' :func:`weakest_link` sequences, if already known. ``unit``: the rows
    one count stands for (``2**-shift`` for fixed-point weights), the ``N`` of the standard error."""
    if paths is None:
        paths = (weakest_link(tree_shape(tree), tree.counts, criterion),
                 [weakest_link(tree_shape(f), f.counts, criterion) for f in fold_trees])
    path, fold_paths = paths
    alphas = path.alphas
    n = max(1, int(np.asarray(tree.counts).sum(axis=1)[0]))
    at = positions_at(path, alphas)
    leaves = leaf_counts_at(path, alphas, at)
    train = sums_at(path, leaf_errors(tree_shape(tree), tree.counts, value=predicted_value(tree)), alphas, at)
    cv_error = cv_se = [None] * len(alphas)
    if fold_trees:
        betas = np.append(np.sqrt(alphas[:-1] * alphas[1:]), np.inf)  # the root alone: pruned to the root
        wrong = np.zeros(len(alphas), dtype=np.int64)
        held = 0
        for fold, fold_path in zip(fold_trees, fold_paths):
            wrong += sums_at(fold_path, leaf_errors(tree_shape(fold), fold.counts, fold.validation,
                                                    value=predicted_value(fold)), betas)
            held += int(np.asarray(fold.validation)[0].sum())
        e = wrong / max(1, held)
        per_repeat = max(1.0, held * unit / max(1, repeats))
        cv_error = e.tolist()
        cv_se = np.sqrt(e * (1.0 - e) / per_repeat).tolist()
    return [{"alpha": float(a), "leaves": int(nl), "train_error": float(t) / n, "cv_error": ce, "cv_se": se}
            for a, nl, t, ce, se in zip(alphas, leaves, train, cv_error, cv_se)]


def choose_alpha(table: Sequence[dict], mode: str) -> int:
    """The row of ``table`` that "cv" (1-SE rule) or "cv-min" picks."""
    errors = np.array([row["cv_error"] for row in table], dtype=np.float64)
    best = int(np.flatnonzero(errors == errors.min())[-1])  # of equal errors, the largest alpha: the smallest tree
    if mode == "cv-min":
        return best
    bound = errors[best] + table[best]["cv_se"]
    return int(np.flatnonzero(errors <= bound + 1e-12 * max(1.0, bound))[-1])


def fold_alpha(table: Sequence[dict], row: int) -> float:
    """CART's ``beta_k``: the geometric mean of row ``row``'s alpha and the next (inf after the last)."""
    if row + 1 >= len(table):
        return math.inf
    return math.sqrt(table[row]["alpha"] * table[row + 1]["alpha"])


# ---------------------------------------------------------------- C4.5's pessimistic pruning

_CF_VAL = (0.0, 0.001, 0.005, 0.01, 0.05, 0.10, 0.20, 0.40, 1.00)
_CF_DEV = (4.0, 3.09, 2.58, 2.33, 1.65, 1.28, 0.84, 0.25, 0.00)


def _c45_coeff(confidence: float) -> float:
    """C4.5's squared normal deviate for ``CF``, interpolated in its table of (CF, z)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    i = next(j for j, v in enumerate(_CF_VAL) if confidence <= v)
    z = _CF_DEV[i - 1] + (_CF_DEV[i] - _CF_DEV[i - 1]) * (confidence - _CF_VAL[i - 1]) / (_CF_VAL[i] - _CF_VAL[i - 1])
    return z * z


def c45_added_errors(n: float, e: float, confidence: float = 0.25) -> float:
    """C4.5's ``AddErrs(N, e)``: ``N * U_CF(e, N) - e``, the errors to add to ``e`` observed in ``N``."""
    coeff = _c45_coeff(confidence)
    if n <= 0:
        return 0.0
    if e < 1e-6:
        return n * (1.0 - math.exp(math.log(confidence) / n))
    if e < 0.9999:
        v0 = n * (1.0 - math.exp(math.log(confidence) / n))
        return v0 + e * (c45_added_errors(n, 1.0, confidence) - v0)
    if e + 0.5 >= n:
        return 0.67 * (n - e)
    pr = (e + 0.5 + coeff / 2 + math.sqrt(coeff * ((e + 0.5) * (1 - (e + 0.5) / n) + coeff / 4))) / (n + coeff)
    return n * pr - e


def _added_errors(n: np.ndarray, e: np.ndarray, confidence: float) -> np.ndarray:
    """:func:`c45_added_errors` on arrays (the same cases, the same arithmetic)."""
    n = np.asarray(n, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    coeff = _c45_coeff(confidence)
    safe = np.maximum(n, 1e-300)
    v0 = n * (1.0 - np.exp(math.log(confidence) / safe))

    def normal(e):
        root = np.sqrt(np.maximum(coeff * ((e + 0.5) * (1 - (e + 0.5) / safe) + coeff / 4), 0.0))
        pr = (e + 0.5 + coeff / 2 + root) / (n + coeff)
        return np.where(e + 0.5 >= n, 0.67 * (n - e), n * pr - e)

    out = np.where(e < 1e-6, v0, np.where(e < 0.9999, v0 + e * (normal(np.ones_like(e)) - v0), normal(e)))
    return np.where(n > 0, out, 0.0)


def pessimistic_leaves(children, counts: np.ndarray, confidence: float = 0.25,
                       unit: float = 1.0, *, value: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the nodes C4.5's subtree replacement makes leaves (grown leaves included).
    ``unit``: the rows one count stands for (weighted rows in fixed point, ``2**-shift``:
    :mod:`dasktree.io.weights`), so the estimate is C4.5's on the weights themselves. ``value``: the class
    probabilities the tree predicts (:func:`predicted_value`), whose errors are counted."""
    shape = shape_of(children)
    errors = leaf_errors(shape, counts, value=value) * unit
    estimate = errors + _added_errors(np.asarray(counts).sum(axis=1) * unit, errors, confidence)
    is_leaf = ~shape.internal
    _replace_bottom_up(shape.start, shape.flat, np.ascontiguousarray(estimate, dtype=np.float64), is_leaf)
    return is_leaf


@jit
def _replace_bottom_up(start, flat, estimate, is_leaf):
    """C4.5's subtree replacement, children before parents (breadth-first order, read backwards): a
    node becomes a leaf when its estimate is at most its branch's, the children's summed in order, plus 0.1."""
    branch = estimate.copy()
    for i in range(estimate.size - 1, -1, -1):
        if is_leaf[i]:
            continue
        below = 0.0
        for k in range(start[i], start[i + 1]):
            below += branch[flat[k]]
        if estimate[i] <= below + 0.1:
            is_leaf[i] = True
        else:
            branch[i] = below


# ---------------------------------------------------------------- the pruned tree

def pruned_tree(tree, leaves: np.ndarray):
    """A copy of ``tree`` (a TreeModel) cut at the nodes of the mask ``leaves``, renumbered.

    The kept nodes keep their breadth-first order; a collapsed node keeps its
    counts (and validation counts) and gets the leaf reason "pruned". The kept nodes
    and their new numbers come from the tree's :class:`Shape`, in arrays; the copy's children are
    given as those arrays (:class:`~dasktree.model.model.ChildLinks`: the lists made when first read).
    """
    shape = tree_shape(tree)
    tests = tree.tests
    has_test = shape.internal  # a tested node has its children, a leaf none (dasktree.model.check holds it)
    cut = np.asarray(leaves, dtype=bool) | ~has_test
    keep = _kept(shape.start, shape.flat, cut)
    old = np.flatnonzero(keep)
    index = np.cumsum(keep) - 1
    opened = ~cut[old]
    sizes = np.where(opened, shape.arity[old], 0)
    start = np.zeros(old.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=start[1:])
    at = np.repeat(shape.start[old] - start[:-1], sizes) + np.arange(int(start[-1]), dtype=np.int64)
    flat = index[shape.flat[at]]
    reason_of, n_reasons = tree.leaf_reason, len(tree.leaf_reason)
    new_tests, reasons = [], []
    for o, is_open, tested in zip(old.tolist(), opened.tolist(), has_test[old].tolist()):
        new_tests.append(tests[o] if is_open else None)
        reasons.append("" if is_open else "pruned" if tested else reason_of[o] if o < n_reasons else "")
    pruned = dataclasses.replace(
        tree, tests=new_tests, children=ChildLinks(sizes, flat), counts=np.ascontiguousarray(tree.counts[old]),
        depth=np.ascontiguousarray(tree.depth[old]),
        validation=None if tree.validation is None else np.ascontiguousarray(tree.validation[old]),
        leaf_reason=reasons)
    parent = np.full(old.size, -1, dtype=np.int64)
    parent[flat] = np.repeat(np.arange(old.size, dtype=np.int64), sizes)
    _keep_shape(pruned, Shape(parent, start, flat))
    return pruned


@jit
def _kept(start, flat, cut):
    """The nodes left when every node of ``cut`` loses its branch: those whose ancestors are all uncut."""
    keep = np.zeros(start.size - 1, dtype=np.bool_)
    if keep.size == 0:
        return keep
    stack = np.empty(keep.size, dtype=np.int64)
    stack[0] = 0
    keep[0] = True
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if cut[node]:
            continue
        for k in range(start[node], start[node + 1]):
            keep[flat[k]] = True
            stack[top] = flat[k]
            top += 1
    return keep
