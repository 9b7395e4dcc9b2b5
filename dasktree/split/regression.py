"""The split search of regression trees: the best binary test of a node from its bins' sums.

A node's bins hold, per attribute and bin, the training rows' weight ``n`` and
target sum ``s`` (fixed point, :mod:`dasktree.binning.target`). Every
criterion here chooses from ``n`` and ``s`` alone: the sum of squares of a
node is the same on both sides of any split, so it cancels
(Breiman et al., CART, Section 8.4):

- ``squared_error``: maximise ``SL**2 / NL + SR**2 / NR`` (the decrease of the
  children's sum of squared errors, plus a constant);
- ``friedman_mse``: maximise ``NL * NR * (SL / NL - SR / NR)**2`` (Friedman's
  improvement, scikit-learn's ``friedman_mse``);
- ``poisson``: maximise ``SL log(SL / NL) + SR log(SR / NR)`` with the target's
  real sums (the decrease of the Poisson deviance; a child whose sum is not
  positive cannot be made).

A numeric attribute is cut between two non-empty bins (the cut nearest the
middle of their values, :func:`~dasktree.split.binary_kernel.centred`); a nominal one
is ordered by the mean target of its categories and cut in that order, which
finds the best binary partition of the categories (CART, Theorem 4.5, for
squared error; the same holds for any criterion that is a convex function of the
children's means, the Poisson deviance's among them). Missing values go to
whichever child gives the larger gain (the larger child when the node has none);
with missing values at a nominal attribute, the cut is the best of those in the
order of the categories' means with the missing rows on either side, which need
not be the best of every partition (the categories on the side of the missing
rows are then not always contiguous in that order); so is the cut when
``min_samples_leaf`` rules out the best one. Ties go to the first attribute, then the
first cut: the choice depends on exact sums only, so never on the partitioning.

Pure numpy: vectorised over the nodes of a pass and the bins of an attribute.
:func:`best_split_naive` is the twin the tests compare against.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .binary_kernel import centred
from .leaf_fraction import fraction_rows
from .monotonic import allowed_numpy

__all__ = ["REGRESSION_CRITERIA", "RegressionLayout", "NodeSplits", "best_splits", "best_split_naive", "proxy", "parent_proxy"]

REGRESSION_CRITERIA = ("squared_error", "friedman_mse", "poisson")
TRAIN_N, TRAIN_S = 0, 1  # channels of a bin
CHANNELS = 2


@dataclass(frozen=True)
class RegressionLayout:
    """What the search needs of the bins: each attribute's offset, width, kind and edges, the
    criterion, the smallest leaf, and the target's scale (``lo``, ``step``: poisson's real sums)."""

    offsets: np.ndarray  # (n_attributes,) first bin (the missing code) of each attribute
    widths: np.ndarray  # bins + 1 (the missing code)
    numeric: np.ndarray  # (n_attributes,) bool
    upper: tuple  # per attribute: its bins' upper edges (numeric), else an empty array
    values: tuple  # per attribute: each bin's value (numeric), else an empty array
    criterion: str = "squared_error"
    min_samples_leaf: int = 1
    lo: float = 0.0
    step: float = 1.0
    # min_weight_fraction_leaf (dasktree.split.leaf_fraction): each child at least this fraction of its tree's
    # training rows, ``root_n[k]`` for node k of a search (None or 0: the node is its tree's root)
    min_weight_fraction_leaf: float = 0.0
    root_n: np.ndarray | None = None
    # monotonic_cst (dasktree.split.monotonic): each attribute's constraint (int8; None: none), and the
    # bounds (m, 2) of node k's value (its training mean, fixed point) in a search
    monotonic: np.ndarray | None = None
    bounds: np.ndarray | None = None


@dataclass
class NodeSplits:
    """The best test of each node searched (``gain`` -inf: none): its attribute, the code table of a
    binary test (code -> child 0/1), and the children's training sums."""

    gain: np.ndarray  # (m,) float64
    attribute: np.ndarray  # (m,) int64
    cut: np.ndarray  # (m,) last code of child 0 (numeric), -1 for nominal
    default: np.ndarray  # (m,) child of the missing code and of bins without training rows (nominal)
    tables: list  # per node: (width,) int16 child of each code, or None
    children: np.ndarray  # (m, 2, 2) int64: per child, n and s


def proxy(criterion: str, nl, sl, nr, sr, lo: float = 0.0, step: float = 1.0) -> np.ndarray:
    """The quantity a split maximises (float64; -inf where a child is empty or, for poisson, its
    real sum is not positive). ``n`` and ``s`` arrays of any shape, in fixed point."""
    nl, sl, nr, sr = (np.asarray(x, dtype=np.float64) for x in (nl, sl, nr, sr))
    ok = (nl > 0) & (nr > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if criterion == "squared_error":
            g = sl * sl / nl + sr * sr / nr
        elif criterion == "friedman_mse":
            d = sl / nl - sr / nr
            g = nl * nr * d * d
        elif criterion == "poisson":
            yl, yr = nl * lo + step * sl, nr * lo + step * sr  # real sums
            ok &= (yl > 0) & (yr > 0)
            g = yl * np.log(yl / nl) + yr * np.log(yr / nr)
        else:
            raise ValueError(f"unknown regression criterion {criterion!r}")
    return np.where(ok, g, -np.inf)


def parent_proxy(criterion: str, n, s, lo: float, step: float) -> np.ndarray:
    """The proxy of the unsplit node (the gain is the children's proxy minus it)."""
    n, s = np.asarray(n, dtype=np.float64), np.asarray(s, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if criterion == "squared_error":
            return np.where(n > 0, s * s / n, 0.0)
        if criterion == "friedman_mse":
            return np.zeros_like(n)
        y = n * lo + step * s
        return np.where((n > 0) & (y > 0), y * np.log(y / n), 0.0)


def _scan(n, s, n0, s0, layout: RegressionLayout, parent, c: int = 0):
    """Best cut of ordered bins ``n``, ``s`` (m, W) with missing ``n0``, ``s0`` (m,): (gain, index of
    the last bin of child 0, default child), each (m,). ``c``: the attribute's monotonic constraint
    (a cut whose children's means break it or leave ``layout.bounds`` is not a candidate)."""
    m, w = n.shape
    if w == 0:
        return np.full(m, -np.inf), np.zeros(m, np.int64), np.zeros(m, np.int64)
    nl, sl = np.cumsum(n, axis=1), np.cumsum(s, axis=1)
    nr, sr = nl[:, -1:] - nl, sl[:, -1:] - sl
    cand = (n > 0) & (nr > 0)
    leaf = layout.min_samples_leaf
    crit, lo, step = layout.criterion, layout.lo, layout.step
    n0c, s0c = n0[:, None], s0[:, None]
    g0 = np.where(cand & (nl + n0c >= leaf) & (nr >= leaf), proxy(crit, nl + n0c, sl + s0c, nr, sr, lo, step), -np.inf)
    g1 = np.where(cand & (nl >= leaf) & (nr + n0c >= leaf), proxy(crit, nl, sl, nr + n0c, sr + s0c, lo, step), -np.inf)
    if c:
        b_lo, b_hi = layout.bounds[:, :1], layout.bounds[:, 1:]
        g0 = np.where(allowed_numpy(c, b_lo, b_hi, _mean(sl + s0c, nl + n0c), _mean(sr, nr)), g0, -np.inf)
        g1 = np.where(allowed_numpy(c, b_lo, b_hi, _mean(sl, nl), _mean(sr + s0c, nr + n0c)), g1, -np.inf)
    has_missing = n0c > 0
    larger_right = nr > nl
    d = np.where(has_missing, (g1 > g0) | ((g1 == g0) & larger_right), larger_right).astype(np.int64)
    g = np.where(d == 1, g1, g0)
    i = np.argmax(g, axis=1)
    rows = np.arange(m)
    return g[rows, i] - parent, i, d[rows, i]


def _mean(s, n) -> np.ndarray:
    """``s / n`` in float64 (nan where ``n`` is 0), as the grower divides."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(s, dtype=np.float64) / np.asarray(n, dtype=np.float64)


def best_splits(hist: np.ndarray, layout: RegressionLayout, active: np.ndarray | None = None) -> NodeSplits:
    """The best binary test of each of ``m`` nodes from their bins ``hist`` (m, total_bins, 2) int64;
    with ``active`` (n_attributes, m) bool, node ``k`` searches only the attributes ``active[:, k]``
    (a forest member's or ``max_features``' sample, :func:`dasktree.levels.sampling.feature_mask`);
    with ``layout.monotonic``, only the cuts of a constrained attribute that obey it within node
    ``k``'s ``layout.bounds[k]`` (:mod:`dasktree.split.monotonic`)."""
    m = hist.shape[0]
    n_tot = hist[:, layout.offsets[0]:layout.offsets[0] + layout.widths[0], TRAIN_N].sum(axis=1) if len(layout.widths) \
        else np.zeros(m, np.int64)
    s_tot = hist[:, layout.offsets[0]:layout.offsets[0] + layout.widths[0], TRAIN_S].sum(axis=1) if len(layout.widths) \
        else np.zeros(m, np.int64)
    parent = parent_proxy(layout.criterion, n_tot, s_tot, layout.lo, layout.step)
    if layout.min_weight_fraction_leaf:  # a smallest child per node: the larger of the two rules
        root = np.zeros(m, dtype=np.int64) if layout.root_n is None else np.asarray(layout.root_n, dtype=np.int64)
        root = np.where(root > 0, root, n_tot)
        least = np.maximum(layout.min_samples_leaf, fraction_rows(layout.min_weight_fraction_leaf, root))
        layout = replace(layout, min_samples_leaf=least[:, None])
    best = np.full(m, -np.inf)
    attribute = np.full(m, -1, dtype=np.int64)
    position = np.zeros(m, dtype=np.int64)
    default = np.zeros(m, dtype=np.int64)
    orders: dict[int, np.ndarray] = {}
    for a, (o, width) in enumerate(zip(layout.offsets.tolist(), layout.widths.tolist())):
        n, s = hist[:, o + 1:o + width, TRAIN_N], hist[:, o + 1:o + width, TRAIN_S]
        n0, s0 = hist[:, o, TRAIN_N], hist[:, o, TRAIN_S]
        if not layout.numeric[a]:  # categories in order of their mean target; the empty ones last
            with np.errstate(divide="ignore", invalid="ignore"):
                mean = np.where(n > 0, s / np.maximum(n, 1), np.inf)
            order = np.argsort(mean, axis=1, kind="stable")
            orders[a] = order
            n, s = np.take_along_axis(n, order, axis=1), np.take_along_axis(s, order, axis=1)
        c = int(layout.monotonic[a]) if layout.monotonic is not None and layout.numeric[a] else 0
        g, i, d = _scan(n, s, n0, s0, layout, parent, c)
        if active is not None:
            g = np.where(active[a], g, -np.inf)
        better = g > best
        best[better], attribute[better], position[better], default[better] = g[better], a, i[better], d[better]
    return _splits(hist, layout, best, attribute, position, default, orders)


def _splits(hist, layout: RegressionLayout, best, attribute, position, default, orders) -> NodeSplits:
    """The tests chosen: their code tables and children's sums."""
    m = hist.shape[0]
    tables: list = [None] * m
    cut = np.full(m, -1, dtype=np.int64)
    children = np.zeros((m, 2, CHANNELS), dtype=np.int64)
    for k in np.flatnonzero(np.isfinite(best)).tolist():
        a = int(attribute[k])
        o, width = int(layout.offsets[a]), int(layout.widths[a])
        bins = hist[k, o:o + width]
        table = np.full(width, default[k], dtype=np.int16)
        if layout.numeric[a]:
            n = bins[1:, TRAIN_N]
            i = int(position[k])
            later = np.flatnonzero(n[i + 1:] > 0)
            q = i + 1 + int(later[0])  # the next non-empty bin (0-based)
            c = int(centred(i + 1, q + 1, layout.upper[a], layout.values[a]))
            table[1:c + 1], table[c + 1:] = 0, 1
            cut[k] = c
        else:
            order = orders[a][k]
            n = bins[1:, TRAIN_N][order]
            i = int(position[k])
            table[1 + order[:i + 1]] = 0
            table[1 + order[i + 1:][n[i + 1:] > 0]] = 1  # the categories without rows here: default
        table[0] = default[k]
        tables[k] = table
        for child in (0, 1):
            children[k, child] = bins[table == child].sum(axis=0)
    return NodeSplits(best, attribute, cut, default, tables, children)


def best_split_naive(bins_of: list[np.ndarray], layout: RegressionLayout) -> tuple[float, int, np.ndarray | None]:
    """One node, by brute force: every attribute, every binary partition its kind allows (every
    threshold of a numeric attribute, every subset of a nominal one's categories), both sides for
    missing. ``bins_of[a]``: (width, 2) sums of attribute ``a``. Returns (gain, attribute, the
    training rows' child of each code, -1 for codes without rows), the first best in that order.
    With ``layout.monotonic``, a numeric attribute's partition whose children's means break its
    constraint or leave ``layout.bounds[0]`` is skipped."""
    import itertools

    best, best_a, best_side = -np.inf, -1, None
    for a, bins in enumerate(bins_of):
        n, s = bins[:, TRAIN_N], bins[:, TRAIN_S]
        nt, st = int(n.sum()), int(s.sum())
        parent = float(parent_proxy(layout.criterion, nt, st, layout.lo, layout.step))
        full = np.flatnonzero(n[1:] > 0) + 1
        if layout.numeric[a]:
            lefts = [full[:j] for j in range(1, full.size)]
        else:
            lefts = [np.array(c) for r in range(1, full.size) for c in itertools.combinations(full.tolist(), r)]
        for left in lefts:
            nl, sl = int(n[left].sum()), int(s[left].sum())
            nr, sr = nt - n[0] - nl, st - s[0] - sl
            for d in (0, 1):
                if n[0] == 0 and d == 1:
                    continue
                a_n, a_s = (nl + n[0], sl + s[0]) if d == 0 else (nl, sl)
                b_n, b_s = (nr, sr) if d == 0 else (nr + n[0], sr + s[0])
                if min(a_n, b_n) < layout.min_samples_leaf:
                    continue
                c = int(layout.monotonic[a]) if layout.monotonic is not None and layout.numeric[a] else 0
                if c:  # scikit-learn's check_monotonicity, one candidate at a time
                    lo_, hi_ = (float(x) for x in layout.bounds[0])
                    vl, vr = float(a_s) / float(a_n), float(b_s) / float(b_n)
                    if not (lo_ <= vl <= hi_ and lo_ <= vr <= hi_ and (vl - vr) * c <= 0):
                        continue
                g = float(proxy(layout.criterion, a_n, a_s, b_n, b_s, layout.lo, layout.step)) - parent
                if not np.isfinite(best) or g > best + 1e-9 * max(1.0, abs(best)):
                    side = np.full(n.size, -1)
                    side[full] = 1
                    side[left] = 0
                    if n[0] > 0:
                        side[0] = d
                    best, best_a, best_side = g, a, side
    return best, best_a, best_side
