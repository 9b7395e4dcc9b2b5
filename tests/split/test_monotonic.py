"""``monotonic_cst``'s searches against brute force, and its bounds (dasktree.split.monotonic)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.choices import choose_batch
from dasktree.split.monotonic import (check_monotonic_cst, child_bounds, monotonic_text, resolve_monotonic,
                                      tree_bounds, tree_bounds_naive)
from dasktree.split.regression import RegressionLayout, best_split_naive, best_splits
from dasktree.split.search import AttributeLayout, SplitParams
from dasktree.split.types import TrainBatch


def _layout(widths, monotonic, bounds, min_leaf=1):
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    upper = tuple(np.arange(1, w - 1, dtype=np.float64) + 0.5 for w in widths)
    values = tuple(np.arange(1, w, dtype=np.float64) for w in widths)
    return RegressionLayout(offsets, np.asarray(widths, np.int64), np.ones(len(widths), bool), upper, values,
                            "squared_error", min_leaf, 0.0, 1.0, monotonic=np.asarray(monotonic, np.int8),
                            bounds=np.asarray([bounds], dtype=np.float64))


def _rows(rng, widths, n_rows, slope):
    """A node's rows: codes per attribute (0: missing, some), targets rising with attribute 0 by ``slope``."""
    codes = [rng.integers(0, w, size=n_rows) for w in widths]
    q = rng.integers(0, 400, size=n_rows) + slope * codes[0] * 60
    return codes, np.maximum(q, 0)


def _hist(codes, q, widths):
    hist = np.zeros((int(sum(widths)), 2), np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    for a, c in enumerate(codes):
        np.add.at(hist[:, 0], offsets[a] + c, 1)
        np.add.at(hist[:, 1], offsets[a] + c, q)
    return hist


def _means(hist, table, a, layout):
    o, w = int(layout.offsets[a]), int(layout.widths[a])
    bins = hist[o:o + w]
    return [bins[table == k, 1].sum() / bins[table == k, 0].sum() for k in (0, 1)]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**31 - 1), st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=3),
       st.integers(1, 3), st.sampled_from([-2, -1, 0, 1, 2]), st.sampled_from(["none", "low", "high", "both"]))
def test_the_regression_search_is_the_brute_force_best_under_constraints(seed, cst, min_leaf, slope, bounded):
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(3, 8, size=len(cst))]
    codes, q = _rows(rng, widths, int(rng.integers(2, 60)), slope)
    mean = q.mean()
    bounds = {"none": (-np.inf, np.inf), "low": (mean - 40, np.inf), "high": (-np.inf, mean + 40),
              "both": (mean - 60, mean + 60)}[bounded]
    layout = _layout(widths, cst, bounds, min_leaf)
    hist = _hist(codes, q, widths)
    found = best_splits(hist[None], layout)
    naive_gain, naive_a, _ = best_split_naive([hist[o:o + w] for o, w in zip(layout.offsets, widths)], layout)
    if not np.isfinite(naive_gain):
        assert not np.isfinite(found.gain[0])
        return
    assert found.gain[0] == pytest.approx(naive_gain, rel=1e-9, abs=1e-9)
    a = int(found.attribute[0])
    if cst[a]:  # the chosen split obeys its constraint within the node's bounds
        left, right = _means(hist, found.tables[0], a, layout)
        assert bounds[0] <= left <= bounds[1] and bounds[0] <= right <= bounds[1]
        assert (left - right) * cst[a] <= 0


def _class_batch(rng, widths, n_rows, slope):
    codes = [rng.integers(0, w, size=n_rows) for w in widths]
    p = 1 / (1 + np.exp(-(slope * (codes[0] - widths[0] / 2))))
    y = (rng.random(n_rows) < p).astype(np.int64)
    hist = np.zeros((1, int(sum(widths)), 2), np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    for a, c in enumerate(codes):
        np.add.at(hist[0], (offsets[a] + c, y), 1)
    layout = AttributeLayout(offsets.astype(np.int64), np.asarray(widths, np.int64), ("numeric",) * len(widths),
                             tuple(np.arange(1, w - 1, dtype=np.float64) + 0.5 for w in widths),
                             tuple(np.arange(1, w, dtype=np.float64) for w in widths))
    counts = hist[0, offsets[0]:offsets[0] + widths[0]].sum(axis=0)[None]
    return TrainBatch(hist, np.zeros(1, np.int64), hist[:0], np.full(1, -1, np.int64), counts), layout, counts[0]


def _class_naive(batch, layout, cst, bounds, criterion, min_leaf):
    """Every threshold of every attribute, both sides for the missing rows: the largest gain of the
    allowed ones (gini or entropy decrease), or -inf."""
    from dasktree.split.criteria import gini
    from dasktree.split.search import entropy_of_counts

    def impurity(c):
        return gini(c) if criterion == "gini" else entropy_of_counts(c)

    hist = batch.plus[0]
    total = batch.node_counts[0]
    n = total.sum()
    best = -np.inf
    for a, (o, w) in enumerate(zip(layout.offsets, layout.widths)):
        bins = hist[o:o + w]
        for cut in range(1, w - 1):
            for d in (0, 1):
                kids = [bins[1:cut + 1].sum(axis=0), bins[cut + 1:].sum(axis=0)]
                if kids[0].sum() == 0 or kids[1].sum() == 0:
                    continue
                kids[d] = kids[d] + bins[0]
                sizes = [k.sum() for k in kids]
                if min(sizes) < min_leaf:
                    continue
                if cst[a]:
                    vl, vr = kids[0][1] / sizes[0], kids[1][1] / sizes[1]
                    if not (bounds[0] <= vl <= bounds[1] and bounds[0] <= vr <= bounds[1] and (vl - vr) * cst[a] <= 0):
                        continue
                gain = impurity(total) - sum(s / n * impurity(k) for s, k in zip(sizes, kids))
                best = max(best, gain)
    return best


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**31 - 1), st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=3),
       st.sampled_from(["gini", "entropy"]), st.integers(1, 3), st.sampled_from([-1.0, 0.0, 1.0]),
       st.sampled_from([(-np.inf, np.inf), (0.3, np.inf), (-np.inf, 0.6), (0.2, 0.7)]))
def test_the_classification_scans_are_the_brute_force_best_under_constraints(seed, cst, criterion, min_leaf, slope,
                                                                           bounds):
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(3, 8, size=len(cst))]
    batch, layout, _ = _class_batch(rng, widths, int(rng.integers(4, 80)), slope)
    params = SplitParams(criterion=criterion, min_samples_leaf=min_leaf)
    mono = dict(monotonic=np.asarray(cst, np.int8), bounds=np.asarray([bounds], dtype=np.float64))
    compiled = choose_batch(batch, layout, params, engine="numba", **mono)
    numpy = choose_batch(batch, layout, params, engine="numpy", **mono)
    naive = _class_naive(batch, layout, cst, bounds, criterion, min_leaf)
    # the compiled scan and its numpy twin: the same choice, bit for bit
    assert compiled.attribute[0] == numpy.attribute[0] and compiled.gain[0] == numpy.gain[0]
    if not np.isfinite(naive):
        assert compiled.attribute[0] < 0
        return
    assert compiled.gain[0] == pytest.approx(naive, rel=1e-9, abs=1e-12)
    a = int(compiled.attribute[0])
    if cst[a]:
        kids = compiled.children[0] if compiled.cut[0] >= 0 else compiled.others[0].child_counts
        vl, vr = kids[0][1] / kids[0].sum(), kids[1][1] / kids[1].sum()
        assert bounds[0] <= vl <= bounds[1] and bounds[0] <= vr <= bounds[1] and (vl - vr) * cst[a] <= 0


def test_children_are_bounded_at_the_middle_value():
    assert child_bounds(1, 0.0, 10.0, 2.0, 6.0) == ((0.0, 4.0), (4.0, 10.0))
    assert child_bounds(-1, 0.0, 10.0, 6.0, 2.0) == ((4.0, 10.0), (0.0, 4.0))
    assert child_bounds(0, 1.0, 2.0, 5.0, 0.0) == ((1.0, 2.0), (1.0, 2.0))
    # a tree: the root splits on attribute 0 (increasing), its right child on attribute 1 (free)
    children = [[1, 2], [], [3, 4], [], []]
    raw = np.array([5.0, 2.0, 8.0, 3.0, 12.0])
    bounds = tree_bounds(children, [0, -1, 1, -1, -1], raw, np.array([1, 0], np.int8))
    np.testing.assert_array_equal(bounds, [[-np.inf, np.inf], [-np.inf, 5.0], [5.0, np.inf], [5.0, np.inf],
                                           [5.0, np.inf]])
    clipped = np.clip(raw, bounds[:, 0], bounds[:, 1])
    assert clipped[3] == 5.0 and clipped[4] == 12.0  # the leaf below the middle value is lifted to it


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 60))
def test_the_compiled_bounds_are_their_twins(seed, n_splits):
    """Random trees (binary and three-way tests, breadth first) over three attributes of constraints 1, -1, 0."""
    rng = np.random.default_rng(seed)
    children, attribute, frontier = [[]], [-1], [0]
    for _ in range(n_splits):
        node = frontier.pop(int(rng.integers(len(frontier))))
        kids = list(range(len(children), len(children) + int(rng.choice([2, 2, 3]))))
        children[node], attribute[node] = kids, int(rng.integers(3))
        children += [[] for _ in kids]
        attribute += [-1] * len(kids)
        frontier += kids
    order = _breadth_first(children)
    children = [[order.index(k) for k in children[old]] for old in order]
    attribute = [attribute[old] for old in order]
    raw = rng.random(len(children))
    cst = np.array([1, -1, 0], np.int8)
    np.testing.assert_array_equal(tree_bounds(children, attribute, raw, cst),
                                  tree_bounds_naive(children, attribute, raw, cst))


def _breadth_first(children):
    order, at = [0], 0
    while at < len(order):
        order += children[order[at]]
        at += 1
    return order


@pytest.mark.parametrize("value,expected", [([1, 0, -1], [1, 0, -1]), (np.array([0, 1]), [0, 1]), ((1, -1), [1, -1]),
                                            ({"age": -1}, {"age": -1}), ((True,), None), ([2], None), ("1", None),
                                            ({}, None), ([], None), ({"a": 0.5}, None)])
def test_the_value_is_checked_and_made_canonical(value, expected):
    if expected is None:
        with pytest.raises(ValueError, match="monotonic_cst must be"):
            check_monotonic_cst(value)
    else:
        assert check_monotonic_cst(value) == expected


def test_the_command_line_text_and_the_features():
    assert monotonic_text("age=1, income=-1") == {"age": 1, "income": -1}
    assert monotonic_text("1,0,-1") == [1, 0, -1]
    with pytest.raises(ValueError, match="--monotonic-cst must be"):
        monotonic_text("age=up")
    names, numeric = ["age", "plan", "income"], [True, False, True]
    np.testing.assert_array_equal(resolve_monotonic({"income": -1}, names, numeric), [0, 0, -1])
    np.testing.assert_array_equal(resolve_monotonic((("income", -1),), names, numeric), [0, 0, -1])
    assert resolve_monotonic((0, 0, 0), names, numeric) is None
    for bad, message in [((1, 0), "has 2 constraints but the fit has 3 features"), ({"zip": 1}, "names 'zip'"),
                         ({"plan": 1}, "nominal feature 'plan'")]:
        with pytest.raises(ValueError, match=message):
            resolve_monotonic(bad, names, numeric)
