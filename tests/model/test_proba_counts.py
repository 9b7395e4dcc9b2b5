"""A forest's evaluation groups rows by their predicted probabilities: the merged groups of any split
into parts are the groups of the whole, and their metrics are scikit-learn's on the rows one by one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.model.metrics import classification_metrics, leaf_metrics, merge_proba_counts, proba_class_counts


@st.composite
def rows_and_cuts(draw):
    n_classes = draw(st.integers(2, 4))
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    distinct = rng.dirichlet(np.ones(n_classes), size=draw(st.integers(1, 8)))  # few values: rows share them
    proba = distinct[rng.integers(0, len(distinct), size=n)]
    codes = rng.integers(0, n_classes, size=n)
    weight = rng.integers(1, 4, size=n).astype(np.float64) if draw(st.booleans()) else None
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    return n_classes, proba, codes, weight, cuts


@settings(max_examples=60, deadline=None)
@given(rows_and_cuts())
def test_merged_parts_are_the_whole_and_their_metrics_scikit_learns(case):
    n_classes, proba, codes, weight, cuts = case
    whole = proba_class_counts(proba, codes, n_classes, weight)
    bounds = [0, *cuts, len(codes)]
    parts = [proba_class_counts(proba[a:b], codes[a:b], n_classes, None if weight is None else weight[a:b])
             for a, b in zip(bounds[:-1], bounds[1:])]
    merged = merge_proba_counts(parts[::-1], n_classes, weight is not None)  # any order of the parts
    np.testing.assert_array_equal(merged[0], whole[0])
    np.testing.assert_array_equal(merged[1], whole[1])
    assert merged[1].sum() == (len(codes) if weight is None else weight.sum())
    classes = tuple(f"c{i}" for i in range(n_classes))
    got = leaf_metrics(merged[1], merged[0], classes)
    want = classification_metrics(codes, proba, classes, sample_weight=weight)
    for name in ("accuracy", "balanced_accuracy", "log_loss", "roc_auc"):
        assert (got[name] is None) == (want[name] is None), name
        if want[name] is not None:
            assert got[name] == pytest.approx(want[name], rel=1e-9, abs=1e-12), name


def test_no_parts_merge_to_no_groups():
    proba, counts = merge_proba_counts([], 3)
    assert proba.shape == (0, 3) and counts.shape == (0, 3) and counts.dtype == np.int64
