"""The compiled multi-way search (dasktree.split.multiway_kernel) against its numpy reference.

numeric_multiway and numeric_multiway_batch must return exactly what
numeric_multiway_reference returns: the same test (thresholds, default child),
the same gain float bit for bit, the same children counts.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree import InputError
from dasktree.split import multiway as MW
from dasktree.split.choices import best_splits
from dasktree.split.criteria import entropy, gini
from dasktree.split.multiway import multiway_choices, multiway_kernel_available
from dasktree.split.search import AttributeLayout, SplitParams, _centered_cut
from dasktree.testing import run_without_numba

compiled = pytest.mark.skipif(not multiway_kernel_available(), reason="numba is not installed or is disabled")


def same(got, expected) -> bool:
    if got is None or expected is None:
        return got is None and expected is None
    (t1, g1, c1), (t2, g2, c2) = got, expected
    return (t1 == t2 and t1.thresholds == t2.thresholds and t1.default == t2.default
            and np.float64(g1).tobytes() == np.float64(g2).tobytes()
            and c1.dtype == c2.dtype and np.array_equal(c1, c2))


@st.composite
def attribute(draw):
    """M histograms of one numeric attribute: (M, 1 + n_bins, C), with its bin edges and values.

    Bins are empty, uniform or mixed, or repeat the previous bin (ties between
    splits); the missing row is zero, random, or a copy of a bin (ties between
    placements); values are spaced so that some midpoints fall on a bin edge.
    """
    n_classes = draw(st.integers(1, 4))
    n_bins = draw(st.integers(1, 14))
    n_hists = draw(st.integers(1, 3))
    hists = []
    for _ in range(n_hists):
        rows = []
        for _ in range(n_bins):
            kind = draw(st.sampled_from(("empty", "empty", "uniform", "mixed", "repeat")))
            row = [0] * n_classes
            if kind == "uniform":
                row[draw(st.integers(0, n_classes - 1))] = draw(st.integers(1, 6))
            elif kind == "mixed":
                row = draw(st.lists(st.integers(0, 4), min_size=n_classes, max_size=n_classes))
            elif kind == "repeat" and rows:
                row = list(rows[-1])
            rows.append(row)
        missing = draw(st.sampled_from(("none", "none", "random", "copy")))
        if missing == "random":
            miss = draw(st.lists(st.integers(0, 5), min_size=n_classes, max_size=n_classes))
        elif missing == "copy":
            miss = list(rows[draw(st.integers(0, n_bins - 1))])
        else:
            miss = [0] * n_classes
        hists.append([miss] + rows)
    h = np.array(hists, dtype=np.int64)
    if draw(st.integers(0, 7)) == 0:  # beyond the log2 table of the dynamic program
        h = h * 1_000_000
    steps = np.array(draw(st.lists(st.sampled_from((1.0, 2.0, 0.5, 3.0)), min_size=n_bins, max_size=n_bins)))
    values = np.cumsum(steps)
    upper = values[:-1] + np.array(draw(st.lists(st.sampled_from((0.25, 0.5)), min_size=n_bins - 1,
                                                 max_size=n_bins - 1))) * steps[1:]
    return h, upper, values


def node_impurity(h: np.ndarray, impurity: str) -> tuple[np.ndarray, np.ndarray]:
    node = h.sum(axis=1)
    n = node.sum(axis=1).astype(np.float64)
    parent = gini(node) if impurity == "gini" else entropy(node)
    return parent, np.where(n > 0, n, 1.0)


@compiled
@settings(max_examples=400, deadline=None)
@given(
    problem=attribute(),
    impurity=st.sampled_from(("entropy", "gini")),
    selection=st.sampled_from(MW.SELECTIONS),
    max_arity=st.integers(3, 6),
    min_samples_leaf=st.integers(1, 5),
)
def test_compiled_multiway_is_the_reference_bit_for_bit(problem, impurity, selection, max_arity,
                                                        min_samples_leaf):
    h, upper, values = problem
    parent, n = node_impurity(h, impurity)
    kw = dict(impurity=impurity, max_arity=max_arity, selection=selection, min_samples_leaf=min_samples_leaf)
    batch = MW.numeric_multiway_batch(h, upper, values, 3, parent, n, **kw)
    scores = multiway_choices(h, parent, n, upper=upper, values=values, **kw).score
    assert len(batch) == h.shape[0]
    for m in range(h.shape[0]):
        expected = MW.numeric_multiway_reference(h[m], upper, values, 3, float(parent[m]), float(n[m]),
                                                 centre=_centered_cut, **kw)
        single = MW.numeric_multiway(h[m], upper, values, 3, float(parent[m]), float(n[m]),
                                     centre=_centered_cut, **kw)
        assert same(single, expected), (m, single, expected)
        assert same(batch[m], expected), (m, batch[m], expected)
        if expected is not None:  # the score that chose the arity, too
            score = MW.selection_score(expected[2], expected[1], selection)
            assert np.float64(scores[m]).tobytes() == np.float64(score).tobytes(), (scores[m], score)


@compiled
def test_many_random_histograms_with_missing_values():
    """A wider sweep than hypothesis's: up to 60 bins, missing values everywhere, and up to 10
    classes (numpy sums 8 terms or more pairwise: the entropy of a child, too)."""
    rng = np.random.default_rng(11)
    for trial in range(300):
        n_classes, n_bins = int(rng.choice([2, 3, 8, 10])), int(rng.integers(2, 60))
        h = rng.integers(0, 4, size=(4, n_bins + 1, n_classes)) * (rng.random((4, n_bins + 1, 1)) < 0.6)
        h[:, 1:][rng.random((4, n_bins, n_classes)) < 0.5] = 0  # many uniform bins
        values = np.arange(n_bins, dtype=np.float64)
        upper = values[:-1] + 0.5
        impurity = ("entropy", "gini")[trial % 2]
        selection = MW.SELECTIONS[trial % 3]
        parent, n = node_impurity(h, impurity)
        kw = dict(impurity=impurity, max_arity=int(rng.integers(3, 8)), selection=selection,
                  min_samples_leaf=int(rng.integers(1, 4)))
        batch = MW.numeric_multiway_batch(h, upper, values, 0, parent, n, **kw)
        scores = multiway_choices(h, parent, n, upper=upper, values=values, **kw).score
        for m in range(h.shape[0]):
            expected = MW.numeric_multiway_reference(h[m], upper, values, 0, float(parent[m]), float(n[m]),
                                                     centre=_centered_cut, **kw)
            assert same(batch[m], expected), (trial, m)
            if expected is not None:
                score = MW.selection_score(expected[2], expected[1], selection)
                assert np.float64(scores[m]).tobytes() == np.float64(score).tobytes(), (trial, m)


@compiled
def test_equal_tests_are_one_object_and_children_keep_the_dtype():
    bins = [[0, 0], [5, 0], [5, 0], [0, 5], [0, 5], [5, 0], [5, 0]]
    h = np.array([bins, bins], dtype=np.int32)
    upper, values = np.arange(5, dtype=float) + 0.5, np.arange(6.0)
    out = MW.numeric_multiway_batch(h, upper, values, 0, np.ones(2), np.full(2, 30.0), impurity="entropy",
                                    max_arity=4, selection="balanced_gain", min_samples_leaf=1)
    assert out[0][0] is out[1][0] and out[0][0].thresholds == (1.5, 3.5)
    assert out[0][2].dtype == np.int32 and out[0][2].tolist() == [[10, 0], [0, 10], [10, 0]]


def test_negative_counts_and_float_histograms_go_where_the_reference_goes():
    upper, values = np.arange(2, dtype=float) + 0.5, np.arange(3.0)
    kw = dict(impurity="entropy", max_arity=3, selection="balanced_gain", min_samples_leaf=1)
    bad = np.array([[0, 0], [2, 1], [-1, 3], [1, 1]])
    with pytest.raises(InputError, match="counts must be non-negative"):
        MW.numeric_multiway(bad, upper, values, 0, 1.0, 7.0, centre=_centered_cut, **kw)
    with pytest.raises(InputError, match="counts must be non-negative"):
        MW.numeric_multiway_reference(bad, upper, values, 0, 1.0, 7.0, centre=_centered_cut, **kw)
    if multiway_kernel_available():
        with pytest.raises(InputError, match="counts must be non-negative"):
            MW.numeric_multiway_batch(bad[None], upper, values, 0, np.ones(1), np.full(1, 7.0), **kw)
    weights = np.array([[0, 0], [2.5, 0], [0, 1.5], [1, 1]])
    assert same(MW.numeric_multiway(weights, upper, values, 0, 1.0, 6.0, centre=_centered_cut, **kw),
                MW.numeric_multiway_reference(weights, upper, values, 0, 1.0, 6.0, centre=_centered_cut, **kw))
    assert not MW.multiway_compiled(weights, "entropy", 3, "balanced_gain")
    with pytest.raises(ValueError, match="numeric_multiway_batch needs"):
        MW.numeric_multiway_batch(weights[None], upper, values, 0, np.ones(1), np.full(1, 6.0), **kw)


@compiled
@pytest.mark.parametrize("selection", MW.SELECTIONS)
@pytest.mark.parametrize("criterion", ["gini", "entropy", "gain_ratio"])
def test_best_splits_are_the_same_with_and_without_the_kernel(monkeypatch, criterion, selection):
    rng = np.random.default_rng(5)
    widths = np.array([9, 30, 4, 17])
    hists = rng.integers(0, 5, size=(6, int(widths.sum()), 3))
    hists[:, :, 2] *= rng.random((6, int(widths.sum()))) < 0.3
    hists[rng.random(hists.shape) < 0.3] = 0
    hists[:, widths[0]] = 0  # an attribute without missing values
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    uppers = tuple(np.arange(w - 2, dtype=float) + 0.5 for w in widths)
    values = tuple(np.arange(w - 1, dtype=float) for w in widths)
    layout = AttributeLayout(offsets, widths, ("numeric",) * 4, uppers, values)
    params = SplitParams(criterion, min_samples_leaf=2, max_arity=5, selection=selection)
    fast = best_splits(hists, layout, params)
    monkeypatch.setattr(MW, "multiway_kernel_available", lambda: False)
    slow = best_splits(hists, layout, params)
    for a, b in zip(fast, slow):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.test == b.test and a.test.thresholds == b.test.thresholds
            assert a.test.default == b.test.default
            assert np.float64(a.gain).tobytes() == np.float64(b.gain).tobytes()
            assert np.float64(a.score).tobytes() == np.float64(b.score).tobytes()
            np.testing.assert_array_equal(a.child_counts, b.child_counts)


def test_without_numba_the_reference_runs():
    code = (
        "import numpy as np\n"
        "from dasktree.split import multiway as MW\n"
        "from dasktree.split.search import _centered_cut\n"
        "h = np.array([[0, 6], [5, 0], [5, 0], [0, 5], [0, 5], [5, 0], [5, 0]])\n"
        "upper, values = np.arange(5, dtype=float) + 0.5, np.arange(6.0)\n"
        "t, g, c = MW.numeric_multiway(h, upper, values, 0, 0.9, 36.0, impurity='entropy', max_arity=3,\n"
        "                              selection='balanced_gain', min_samples_leaf=1, centre=_centered_cut)\n"
        "print(MW.multiway_kernel_available(), t.thresholds, t.default, g.hex(), c.tolist())\n"
    )
    out = run_without_numba(code)
    h = np.array([[0, 6], [5, 0], [5, 0], [0, 5], [0, 5], [5, 0], [5, 0]])
    t, g, c = MW.numeric_multiway(h, np.arange(5, dtype=float) + 0.5, np.arange(6.0), 0, 0.9, 36.0,
                                  impurity="entropy", max_arity=3, selection="balanced_gain", min_samples_leaf=1,
                                  centre=_centered_cut)
    assert out == f"False {t.thresholds} {t.default} {g.hex()} {c.tolist()}"
