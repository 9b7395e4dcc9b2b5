"""The best test at a node, from the node's class-count histogram alone: each attribute's.

Input: for one tree at one node, the training counts ``hist`` of shape
(total_bins, n_classes): every attribute's rows, code 0 (missing) first, then
its bins in value (numeric) or code (nominal) order. Output: the best
:class:`Candidate`, or None when no test is valid (the choice across
attributes, and the entry points, are in :mod:`dasktree.split.choices`).

Per attribute the search maximises the impurity decrease
``I(S) - sum_i |S_i|/|S| I(S_i)`` (gini, or entropy in bits: information
gain). Across attributes it ranks by that decrease, or for ``gain_ratio`` by
C4.5's rule: among the candidates whose gain is at least the average gain of
all candidates, the largest ``gain / split_information``. Ties go to the lower
attribute index, then the lower cut or subset index: the result is a function
of the counts alone.

Missing values of the tested attribute go to the child where they give the
larger decrease (both ways are evaluated); with no missing values at the node,
or on a tie, the default child is the larger child (then the lower index).

Nominal attributes: ``nominal_split="multiway"`` gives C4.5's one child per
category present at the node; ``"binary"`` gives CART's subset splits: with two
classes the categories are ordered by the proportion of the second class and
every prefix is tried (optimal for gini and entropy, Breiman et al. 1984); with
more classes every subset is tried when at most ``exhaustive_categories``
categories are present, else the prefixes of ``n_classes`` orderings (by the
proportion of each class in turn), a documented heuristic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .types import TrainBatch
from .criteria import entropy, gini
from .multiway import (
    SELECTIONS,
    multiway_compiled,
    numeric_multiway,
    numeric_multiway_batch,
)
from .monotonic import allowed_numpy
from .node_tests import Test, nominal_test, numeric_test

__all__ = ["SplitParams", "Candidate", "AttributeLayout", "TrainBatch", "CRITERIA", "ENGINES"]

CRITERIA = ("gini", "entropy", "gain_ratio")
__all__ += ["SELECTIONS"]
__all__ += ["Column", "attribute_candidates", "gains_of", "impurity_of", "node_impurity", "entropy_of_counts",
            "numeric_binary",  # for split.choices
            "nominal_binary", "nominal_binary_batch", "nominal_binary_columns"]
NOMINAL_SPLITS = ("binary", "multiway")
ENGINES = ("auto", "numba", "numpy")
"""How binary threshold tests are searched: ``"numba"`` by the compiled scan of
:mod:`dasktree.split.binary_kernel`, ``"numpy"`` by the vectorised reference
below, ``"auto"`` by the scan when numba is installed. Both give identical tests."""


@dataclass(frozen=True)
class SplitParams:
    criterion: str = "gini"
    min_samples_leaf: int = 1
    nominal_split: str = "binary"
    exhaustive_categories: int = 10
    max_arity: int = 2  # numeric tests: > 2 searches optimal k-interval splits (Block-Opt-P)
    selection: str = "balanced_gain"  # ranks arities and attributes when max_arity > 2
    postpone: tuple | None = None  # (rule, t) of dasktree.split.postpone: attributes skipped at a node
    # each child at least this fraction of its tree's training rows (dasktree.split.leaf_fraction): the level
    # search makes it a min_samples_leaf per tree (dasktree.levels.level_search.SearchContext.with_leaves)
    min_weight_fraction_leaf: float = 0.0
    # attributes searched per node (scikit-learn's max_features: "sqrt", "log2", an int, a fraction, None: all),
    # drawn per node path from random_state (dasktree.levels.sampling): the grow loop resolves and draws them
    max_features: object = None
    random_state: int = 0
    # per attribute -1 / 0 / 1 (scikit-learn's monotonic_cst), as given (a tuple, or a dict's (feature,
    # constraint) pairs); the grow loop reads it against the features (dasktree.split.monotonic)
    monotonic_cst: tuple | None = None

    @property
    def impurity_name(self) -> str:
        return "gini" if self.criterion == "gini" else "entropy"


@dataclass(frozen=True)
class AttributeLayout:
    """Where each attribute's rows sit in the histogram, and what its bins are."""

    offsets: np.ndarray
    widths: np.ndarray
    kinds: tuple[str, ...]
    uppers: tuple[np.ndarray | None, ...]  # numeric: bin upper edges
    values: tuple[np.ndarray | None, ...]  # numeric: a value per bin

    @classmethod
    def from_spec(cls, spec) -> "AttributeLayout":
        return cls(
            spec.offsets, spec.widths, tuple(f.kind for f in spec.features),
            tuple(f.upper for f in spec.features), tuple(f.values for f in spec.features),
        )

    def slice(self, hist: np.ndarray, a: int) -> np.ndarray:
        o = int(self.offsets[a])
        return hist[o:o + int(self.widths[a])]


@dataclass
class Candidate:
    test: Test
    gain: float  # impurity decrease per example of the node
    score: float  # what ranks attributes: the gain, or the gain ratio
    child_counts: np.ndarray  # (arity, n_classes) training counts per child


def impurity_of(counts: np.ndarray, name: str) -> np.ndarray:
    """Impurity of each row of class ``counts`` (..., C): Gini for ``"gini"``, else entropy."""
    return gini(counts) if name == "gini" else entropy(counts)


def node_impurity(counts: np.ndarray, name: str) -> np.ndarray:
    """A node's impurity ``I(S)`` for its children's gains: gini as :func:`impurity_of`, entropy as
    :func:`entropy_of_counts` (from the integer counts, the arithmetic the compiled scans share)."""
    return gini(counts) if name == "gini" else entropy_of_counts(counts)


def entropy_of_counts(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits over the last axis as ``(n log2 n - sum_c c log2 c) / n`` (0 for an empty set).

    A node's entropy and a binary test's split information are taken this way, not as
    ``-sum_c p log2 p`` (:func:`dasktree.split.criteria.entropy`): it reads ``log2`` of integers
    only, so the compiled small-node grower (:mod:`dasktree.split.small_grower`) computes the same
    bits from its ``log2`` table (numpy's ``log2`` of the integers; the C library's ``log2``, which
    compiled code calls, differs in the last bit for some arguments), and a node gets the same
    gains, gain ratios and tests whether its subtree grows level-wise or in memory.
    """
    counts = np.asarray(counts)
    n = counts.astype(np.float64, copy=False).sum(axis=-1)
    return _weighted(counts, "entropy") / np.where(n > 0, n, 1.0)


def _weighted(counts: np.ndarray, name: str) -> np.ndarray:
    """``|S| I(S)`` over the last axis, straight from counts: gini ``n - sum c^2 / n``,
    entropy ``n log2 n - sum c log2 c`` (0 for an empty set).

    The entropy terms are added in class order, one class at a time (numpy's
    own ``sum`` does that for fewer than 8 classes, pairwise above): the
    compiled kernel adds them the same way, so both give the same bits.
    """
    counts = counts.astype(np.float64, copy=False)
    n = counts.sum(axis=-1)
    safe = np.where(n > 0, n, 1.0)
    if name == "gini":
        return n - np.einsum("...c,...c->...", counts, counts) / safe
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * np.log2(np.where(counts > 0, counts, 1.0)), 0.0)
    c_log_c = terms[..., 0]
    for c in range(1, terms.shape[-1]):
        c_log_c = c_log_c + terms[..., c]
    return n * np.log2(safe) - c_log_c


def _gains(children: np.ndarray, parent_impurity: float, n: float, name: str) -> np.ndarray:
    """Impurity decrease of each candidate; children has shape (..., arity, C)."""
    sizes = children.sum(axis=-1)
    weighted = np.sum(sizes * impurity_of(children, name), axis=-1) / n
    return parent_impurity - weighted


def _binary_choices(left: np.ndarray, right: np.ndarray, miss: np.ndarray,
                    parent_impurity: np.ndarray, n: np.ndarray, params: SplitParams, c: int = 0,
                    bounds: np.ndarray | None = None):
    """Best binary candidate of each of M problems, missing values placed best.

    ``left`` and ``right`` have shape (M, J, C): candidate ``j`` of problem
    ``m`` sends ``left[m, j]`` to child 0 and ``right[m, j]`` to child 1;
    ``miss`` (M, C) goes to whichever gains more. Returns arrays over M: the
    best ``j`` (-1 when none is valid), the default child, the gain, and the
    children counts (M, 2, C). ``c``: a monotonic constraint on the children's
    second-class shares within ``bounds`` (M, 2) (:mod:`dasktree.split.monotonic`).
    """
    m_index = np.arange(left.shape[0])
    if left.shape[1] == 0:
        none = np.full(left.shape[0], -1)
        return none, np.zeros_like(none), np.full(left.shape[0], -np.inf), None
    if miss.any():
        options = np.stack([
            np.stack([left + miss[:, None], right], axis=2),
            np.stack([left, right + miss[:, None]], axis=2),
        ], axis=2)  # (M, J, 2 defaults, 2 children, C)
    else:  # no missing values anywhere: both defaults are the same split, evaluate it once
        options = np.stack([left, right], axis=2)[:, :, None]  # (M, J, 1, 2, C)
    sizes = options.sum(axis=-1)  # (M, J, D, 2)
    left_n, right_n = left.sum(axis=-1), right.sum(axis=-1)
    valid = ((left_n > 0) & (right_n > 0))[..., None] & np.all(sizes >= params.min_samples_leaf, axis=-1)
    weighted = _weighted(options, params.impurity_name).sum(axis=-1) / n[:, None, None]
    gains = np.where(valid, parent_impurity[:, None, None] - weighted, -np.inf)  # (M, J, D)
    if c:
        with np.errstate(divide="ignore", invalid="ignore"):
            share = options[..., 1].astype(np.float64) / sizes.astype(np.float64)  # (M, J, D, 2)
        ok = allowed_numpy(c, bounds[:, 0, None, None], bounds[:, 1, None, None], share[..., 0], share[..., 1])
        gains = np.where(ok, gains, -np.inf)
    larger_right = right_n > left_n
    if gains.shape[2] == 1:  # no missing values: the default child is the larger one (then the left)
        default = larger_right.astype(np.int64)
        per_cut = gains[..., 0]
    else:  # missing values go where they gain more; on a tie to the larger child, then left
        prefer_right = (gains[..., 1] > gains[..., 0]) | ((gains[..., 1] == gains[..., 0]) & larger_right)
        default = prefer_right.astype(np.int64)  # (M, J)
        per_cut = np.take_along_axis(gains, default[..., None], axis=-1)[..., 0]  # (M, J)
    j = np.argmax(per_cut, axis=1)
    best = per_cut[m_index, j]
    chosen_default = default[m_index, j]
    children = options[m_index, j, np.minimum(chosen_default, options.shape[2] - 1)]
    return np.where(np.isfinite(best), j, -1), chosen_default, best, children


def _binary_choice(left, right, miss, parent_impurity: float, n: float, params: SplitParams):
    """One problem of :func:`_binary_choices`: (j, default, gain, children) or None."""
    j, default, gain, children = _binary_choices(
        left[None], right[None], miss[None], np.array([parent_impurity]), np.array([n]), params)
    if j[0] < 0:
        return None
    return int(j[0]), int(default[0]), float(gain[0]), children[0]


def numeric_binary(h: np.ndarray, upper: np.ndarray, values: np.ndarray, a: int,
                   parent_impurity: np.ndarray, n: np.ndarray, params: SplitParams, c: int = 0,
                   bounds: np.ndarray | None = None) -> list:
    """Best threshold test on a numeric attribute for each of M histograms ``h`` (M, w, C); ``c`` and
    ``bounds`` (M, 2): its monotonic constraint (:func:`_binary_choices`)."""
    bins = h[:, 1:]
    if bins.shape[1] < 2:
        return Column(np.full(h.shape[0], -np.inf), None)
    cumulative = np.cumsum(bins, axis=1)
    left = cumulative[:, :-1]
    right = cumulative[:, -1:] - left
    j, default, gain, children = _binary_choices(left, right, h[:, 0], parent_impurity, n, params, c, bounds)

    def build(m: int):
        cut = _centered_cut(bins[m], int(j[m]) + 1, upper, values)
        return numeric_test(a, np.array([cut]), upper, int(default[m])), float(gain[m]), children[m]

    return Column(np.where(j >= 0, gain, -np.inf), build)


class Column:
    """One attribute's results for M histograms: gains now, each test only when asked for.

    At a wide frontier most attributes lose at most nodes; building their tests
    would be most of the search's time. A column of the compiled scan also has
    its numbers (``scan``: the cut, default and children counts of each
    histogram, and which histograms the scan made rather than the reference);
    a nominal subset column its children counts without the tests (``children(rows)``:
    what gain ratio's split information needs).
    """

    def __init__(self, gains: np.ndarray, build, scan: tuple | None = None, children=None):
        self.gains = gains
        self._build = build
        self.scan = scan
        self.children = children

    def __getitem__(self, m: int):
        return self._build(m) if np.isfinite(self.gains[m]) else None


def gains_of(column) -> np.ndarray:
    """An attribute's gain for each of M histograms: a :class:`Column`'s, or from a list of its
    ``(test, gain, ...)`` results (None where it has no test)."""
    if isinstance(column, Column):
        return column.gains
    return np.array([-np.inf if r is None else r[1] for r in column])


def _centered_cut(bins: np.ndarray, cut: int, upper: np.ndarray, values: np.ndarray) -> int:
    """Among the cuts giving the same partition (a run of empty bins), the one nearest the middle.

    ``cut`` (1-based, after bin ``cut``) is the first best cut, so bin ``cut``
    holds examples. The next non-empty bin ``q`` ends the gap; the threshold
    kept is the largest bin edge at or below the midpoint of the two bins'
    values, as scikit-learn and C4.5 put thresholds between present values.
    """
    sizes = bins.sum(axis=1)
    after = np.flatnonzero(sizes[cut:] > 0)
    q = cut + int(after[0]) + 1 if after.size else cut + 1  # 1-based next present bin
    if q == cut + 1:
        return cut
    middle = values[cut - 1] / 2.0 + values[q - 1] / 2.0
    edges = upper[cut - 1:q - 1]  # thresholds of cuts cut .. q-1
    return cut + max(0, int(np.searchsorted(edges, middle, side="right")) - 1)


def nominal_binary(h: np.ndarray, a: int, parent_impurity: float, n: float, params: SplitParams):
    """Best binary test on a nominal attribute for one histogram ``h`` (w, C): the reference of
    :func:`nominal_binary_batch`, problem by problem."""
    codes = np.flatnonzero(h[1:].sum(axis=1) > 0) + 1
    m = codes.size
    if m < 2:
        return None
    counts = h[codes]
    n_classes = counts.shape[1]
    total = counts.sum(axis=0)
    if n_classes > 2 and m <= params.exhaustive_categories:
        # Every subset once: the last present category always goes right.
        masks = ((np.arange(1, 2 ** (m - 1))[:, None] >> np.arange(m)) & 1).astype(np.int64)
        left = masks @ counts
        choice = _binary_choice(left, total - left, h[0], parent_impurity, n, params)
        if choice is None:
            return None
        j, default, gain, children = choice
        in_left = masks[j].astype(bool)
        groups = [codes[in_left], codes[~in_left]]
    else:
        orders = [1] if n_classes == 2 else range(n_classes)
        best = None
        sizes = counts.sum(axis=1)
        for c in orders:
            order = np.argsort(counts[:, c] / sizes, kind="stable")
            left = np.cumsum(counts[order], axis=0)[:-1]
            choice = _binary_choice(left, total - left, h[0], parent_impurity, n, params)
            if choice is not None and (best is None or choice[2] > best[0][2]):
                best = (choice, order)
        if best is None:
            return None
        (j, default, gain, children), order = best
        groups = [codes[order[: j + 1]], codes[order[j + 1:]]]
    return nominal_test(a, groups, h.shape[0], default), gain, children


CHOICE_CELLS = 1 << 22  # count cells (problems x candidates x classes) one batch of the nominal search holds


def nominal_binary_batch(h: np.ndarray, a: int, parent_impurity: np.ndarray, n: np.ndarray,
                         params: SplitParams) -> Column:
    """:func:`nominal_binary` of each of M histograms ``h`` (M, w, C) of attribute ``a``, the same
    results bit for bit (:func:`nominal_binary_columns` for one attribute)."""
    return nominal_binary_columns({a: h}, parent_impurity, n, params)[a]


def nominal_binary_columns(hists: dict, parent_impurity: np.ndarray, n: np.ndarray,
                           params: SplitParams) -> dict:
    """:func:`nominal_binary` of every histogram of every attribute in ``hists`` (attribute ->
    (M, w, C)), as a :class:`Column` per attribute, searched together and the same bit for bit.

    A problem's candidates depend only on how many categories are present (``m``): every subset
    of them (the last one always right) when there are more than two classes and at most
    ``exhaustive_categories`` present, else the prefixes of each class's order. So all problems of
    one ``m``, across nodes and attributes, are one batch for :func:`_binary_choices` (in pieces of
    about :data:`CHOICE_CELLS` cells). At a deep level with many nominal attributes that is a few
    calls instead of one per node and attribute, whose numpy overhead was most of the search;
    a test is built only for a result that is asked for."""
    attributes = list(hists)
    if not attributes:
        return {}
    widths = np.array([hists[a].shape[1] for a in attributes], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    every = np.concatenate([hists[a] for a in attributes], axis=1)  # (M, sum of widths, C)
    present = every.sum(axis=2) > 0
    present[:, offsets] = False  # the missing code is no category
    sizes = np.add.reduceat(present, offsets, axis=1)  # (M, A): present categories
    n_hist = every.shape[0]
    gains = np.full((n_hist, len(attributes)), -np.inf)
    where = np.full((n_hist, len(attributes)), -1, dtype=np.int64)  # each result's batch
    at = np.zeros((n_hist, len(attributes)), dtype=np.int64)  # ... and its problem there
    batches: list[tuple] = []  # (codes, masks, j, order, default, children) of each batch
    span = np.arange(int(widths.max()) - 1)
    n_classes = every.shape[2]
    for m in np.unique(sizes[sizes >= 2]).tolist():
        node, k = np.nonzero(sizes == m)  # the problems of m present categories
        first_bin = offsets[k] + 1
        bins = np.minimum(first_bin[:, None] + span, every.shape[1] - 1)
        chosen = present[node[:, None], bins] & (span < widths[k, None] - 1)
        codes = np.nonzero(chosen)[1].reshape(node.size, m) + 1  # row by row, ascending
        counts = every[node[:, None], first_bin[:, None] + codes - 1]  # (P, m, C)
        miss = every[node, offsets[k]]
        exhaustive = n_classes > 2 and m <= params.exhaustive_categories
        masks = ((np.arange(1, 2 ** (m - 1))[:, None] >> np.arange(m)) & 1).astype(np.int64) if exhaustive else None
        step = max(1, CHOICE_CELLS // (((2 ** (m - 1)) if exhaustive else m) * n_classes * 4))
        first, found = len(batches), []
        for lo in range(0, node.size, step):
            sl = slice(lo, lo + step)
            gain, result = _nominal_problems(counts[sl], miss[sl], parent_impurity[node[sl]], n[node[sl]], masks, params)
            batches.append((codes[sl], masks, *result))
            found.append(gain)
        q = np.arange(node.size)  # problem q: batch first + q // step, problem q % step there
        gains[node, k], where[node, k], at[node, k] = np.concatenate(found), first + q // step, q % step

    def column(i: int, a: int):
        def build(m: int):
            codes, masks, j, order, default, children = batches[where[m, i]]
            p = int(at[m, i])
            if masks is not None:
                in_left = masks[j[p]].astype(bool)
                groups = [codes[p][in_left], codes[p][~in_left]]
            else:
                ordered = codes[p][order[p]]
                groups = [ordered[: j[p] + 1], ordered[j[p] + 1:]]
            test = nominal_test(a, groups, hists[a].shape[1], int(default[p]))
            return test, float(gains[m, i]), children[p]
        def children(rows: np.ndarray) -> np.ndarray:
            """The children counts (len(rows), 2, C) of histograms ``rows``' tests, no test built."""
            out = np.empty((rows.size, 2, n_classes), dtype=np.int64)
            batch = where[rows, i]
            for b in np.unique(batch).tolist():
                mine = np.flatnonzero(batch == b)
                out[mine] = batches[b][5][at[rows[mine], i]]
            return out

        return Column(np.ascontiguousarray(gains[:, i]), build, children=children)

    return {a: column(i, a) for i, a in enumerate(attributes)}


def _nominal_problems(counts, miss, parent_impurity, n, masks, params) -> tuple:
    """One batch of :func:`nominal_binary_columns`: problems (P, m, C) with the same number of
    present categories. Returns each one's gain (-inf: no test) and ``(j, order, default,
    children)``: the chosen candidate, the order of the categories it cuts (None for subsets),
    the default child and the children's counts."""
    total = counts.sum(axis=1)
    if masks is not None:  # every subset once: the last present category always goes right
        left = np.matmul(masks, counts)  # (P, S, C)
        j, default, gain, children = _binary_choices(left, total[:, None] - left, miss, parent_impurity, n, params)
        return np.where(j >= 0, gain, -np.inf), (j, None, default, children)
    sizes = counts.sum(axis=2)
    best = None
    for c in ([1] if counts.shape[2] == 2 else range(counts.shape[2])):
        order = np.argsort(counts[:, :, c] / sizes, axis=1, kind="stable")
        left = np.cumsum(np.take_along_axis(counts, order[:, :, None], axis=1), axis=1)[:, :-1]
        j, default, gain, children = _binary_choices(left, total[:, None] - left, miss, parent_impurity, n, params)
        gain = np.where(j >= 0, gain, -np.inf)
        if best is None:
            best = [gain, j, order, default, children]
            continue
        better = gain > best[0]  # a later class's order only when strictly better
        for k, new in enumerate((gain, j, order, default, children)):  # m >= 2: every problem has candidates
            best[k] = np.where(better.reshape((-1,) + (1,) * (new.ndim - 1)), new, best[k])
    return best[0], tuple(best[1:])


def _nominal_multiway(h: np.ndarray, a: int, parent_impurity: float, n: float, params: SplitParams):
    codes = np.flatnonzero(h[1:].sum(axis=1) > 0) + 1
    k = codes.size
    if k < 2:
        return None
    counts = h[codes]
    miss = h[0]
    options = np.repeat(counts[None], k if miss.sum() > 0 else 1, axis=0)
    if miss.sum() > 0:
        options[np.arange(k), np.arange(k)] += miss
    sizes = options.sum(axis=-1)
    valid = np.all(sizes >= params.min_samples_leaf, axis=-1)
    if not valid.any():
        return None
    gains = np.where(valid, _gains(options, parent_impurity, n, params.impurity_name), -np.inf)
    # Best gain; ties to the larger default child, then the lower one.
    child_sizes = counts.sum(axis=1)
    if options.shape[0] == 1:
        default = int(np.argmax(child_sizes))
        index = 0
    else:
        order = np.lexsort((np.arange(k), -child_sizes, -gains))
        index = default = int(order[0])
    return nominal_test(a, list(codes[:, None]), h.shape[0], default), float(gains[index]), options[index]


def attribute_candidates(batch: TrainBatch, a: int, layout: AttributeLayout, params: SplitParams,
                         parent_impurity: np.ndarray, n: np.ndarray, c: int = 0, bounds: np.ndarray | None = None) -> list:
    """Best test on attribute ``a`` for each of the M training histograms of ``batch``; ``c``, ``bounds``
    (M, 2): a numeric attribute's monotonic constraint (binary tests only)."""
    h = batch.columns(int(layout.offsets[a]), int(layout.widths[a]))
    if layout.kinds[a] == "numeric":
        if params.max_arity > 2:
            if multiway_compiled(h, params.impurity_name, params.max_arity, params.selection):
                # all M histograms in one compiled call: numeric_multiway's results, bit for bit
                return numeric_multiway_batch(h, layout.uppers[a], layout.values[a], a, parent_impurity, n,
                                              impurity=params.impurity_name, max_arity=params.max_arity,
                                              selection=params.selection,
                                              min_samples_leaf=params.min_samples_leaf)
            return [
                numeric_multiway(h[m], layout.uppers[a], layout.values[a], a, float(parent_impurity[m]), float(n[m]),
                                 impurity=params.impurity_name, max_arity=params.max_arity,
                                 selection=params.selection, min_samples_leaf=params.min_samples_leaf,
                                 centre=_centered_cut)
                for m in range(h.shape[0])
            ]
        return numeric_binary(h, layout.uppers[a], layout.values[a], a, parent_impurity, n, params, c, bounds)
    if params.nominal_split != "multiway":
        return nominal_binary_batch(h, a, parent_impurity, n, params)
    return [_nominal_multiway(h[m], a, float(parent_impurity[m]), float(n[m]), params) for m in range(h.shape[0])]
