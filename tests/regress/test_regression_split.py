"""The regression split search against brute force over every binary partition."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.regression import RegressionLayout, best_split_naive, best_splits


def _layout(widths, numeric, criterion="squared_error", min_leaf=1, lo=0.0, step=1.0):
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    upper = tuple(np.arange(1, w - 1, dtype=np.float64) + 0.5 if num else np.zeros(0) for w, num in zip(widths, numeric))
    values = tuple(np.arange(1, w, dtype=np.float64) if num else np.zeros(0) for w, num in zip(widths, numeric))
    return RegressionLayout(offsets, np.asarray(widths, np.int64), np.asarray(numeric), upper, values, criterion,
                            min_leaf, lo, step)


def _node(rng, widths, n_rows, numeric=None):
    """One node's bins: random rows, each with a code per attribute and a target (a nominal attribute
    without missing values, and only with min_samples_leaf 1: ordering its categories by mean finds the
    best partition only then, see the module)."""
    numeric = numeric or [True] * len(widths)
    codes = [rng.integers(0 if num else 1, w, size=n_rows) for w, num in zip(widths, numeric)]
    q = rng.integers(0, 1000, size=n_rows)
    hist = np.zeros((int(sum(widths)), 2), np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    for a, c in enumerate(codes):
        np.add.at(hist[:, 0], offsets[a] + c, 1)
        np.add.at(hist[:, 1], offsets[a] + c, q)
    return hist


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["squared_error", "friedman_mse", "poisson"]),
       st.integers(1, 4))
def test_best_split_is_the_brute_force_best(seed, criterion, min_leaf):
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(2, 7, size=3)]
    numeric = [bool(b) or min_leaf > 1 for b in rng.integers(0, 2, size=3)]  # see _node
    layout = _layout(widths, numeric, criterion, min_leaf, lo=0.5 if criterion == "poisson" else 0.0)
    hist = _node(rng, widths, int(rng.integers(2, 40)), numeric)
    found = best_splits(hist[None], layout)
    offsets = layout.offsets
    naive_gain, naive_a, _ = best_split_naive([hist[o:o + w] for o, w in zip(offsets, widths)], layout)
    if not np.isfinite(naive_gain):
        assert not np.isfinite(found.gain[0])
        return
    assert found.gain[0] == pytest.approx(naive_gain, rel=1e-9, abs=1e-9)
    # the children's sums are those of the partition the code table describes
    a = int(found.attribute[0])
    bins = hist[offsets[a]:offsets[a] + widths[a]]
    table = found.tables[0]
    for child in (0, 1):
        np.testing.assert_array_equal(found.children[0, child], bins[table == child].sum(axis=0))
    assert min(found.children[0, :, 0]) >= min_leaf


def test_nominal_categories_are_ordered_by_mean():
    # categories with means 5, 1, 3: the best cut puts {1} (code 2) alone or {1, 3} together
    layout = _layout([4], [False])
    hist = np.zeros((4, 2), np.int64)
    hist[1:, 0] = [10, 10, 10]
    hist[1:, 1] = [50, 10, 30]
    found = best_splits(hist[None], layout)
    left = set(np.flatnonzero(found.tables[0] == 0).tolist()) - {0}
    right = set(np.flatnonzero(found.tables[0] == 1).tolist()) - {0}
    assert {frozenset(left), frozenset(right)} in ({frozenset({2}), frozenset({1, 3})},
                                                   {frozenset({2, 3}), frozenset({1})})


def test_missing_values_go_where_the_gain_is_larger():
    layout = _layout([4], [True])
    hist = np.zeros((4, 2), np.int64)
    hist[:, 0] = [5, 10, 10, 10]  # code 0: 5 missing rows, with large targets like bin 3's
    hist[:, 1] = [500, 0, 10, 1000]
    found = best_splits(hist[None], layout)
    assert found.tables[0][0] == found.tables[0][3]  # missing rows join the bin of large targets
