"""The compiled binary threshold search against its numpy reference: the same tests, gains and children."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dasktree.split.choices as choices
from dasktree.split.binary_kernel import (
    TrainBatch,
    threshold_children,
    threshold_children_numpy,
)
from dasktree.split.choices import best_splits, search_batch
from dasktree.split.search import AttributeLayout, SplitParams

pytest.importorskip("numba")


def _layout(widths, kinds, seed):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    uppers, values = [], []
    for w, kind in zip(widths, kinds):
        if kind == "numeric":  # w - 1 bins: a value per bin, the w - 2 edges between them
            v = np.sort(rng.choice(np.arange(100.0), size=w - 1, replace=False))
            uppers.append(v[:-1] + rng.uniform(0.0, 1.0, size=w - 2) * np.diff(v))
            values.append(v)
        else:
            uppers.append(None)
            values.append(None)
    return AttributeLayout(offsets, np.asarray(widths, dtype=np.int64), tuple(kinds), tuple(uppers), tuple(values))


def _histograms(rows, widths, n_classes, groups):
    """Histograms (groups, total_bins, C) of rows (group, class, code per attribute)."""
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    out = np.zeros((groups, int(np.sum(widths)), n_classes), dtype=np.int64)
    for g, c, codes in rows:
        for a, code in enumerate(codes):
            out[g, offsets[a] + code, c] += 1
    return out


@st.composite
def problems(draw, groups=st.integers(1, 5)):
    n_classes = draw(st.sampled_from([2, 2, 3, 4, 9]))  # 9: more classes than numpy sums in order
    n_attributes = draw(st.integers(1, 3))
    widths = draw(st.lists(st.integers(2, 12), min_size=n_attributes, max_size=n_attributes))
    kinds = ["numeric"] * n_attributes
    if draw(st.booleans()):  # a nominal attribute among the numeric ones
        widths.append(draw(st.integers(2, 5)))
        kinds.append("nominal")
    m = draw(groups)
    missing = draw(st.sampled_from([0.0, 0.1, 0.4]))
    n_rows = draw(st.integers(0, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct codes per attribute: empty bins and runs of them
    used = [rng.choice(np.arange(1, w), size=rng.integers(1, w), replace=False) for w in widths]
    rows = []
    for _ in range(n_rows):
        codes = [0 if rng.random() < missing else int(rng.choice(u)) for u in used]
        rows.append((int(rng.integers(m)), int(rng.integers(n_classes)), codes))
    params = SplitParams(draw(st.sampled_from(["gini", "entropy", "gain_ratio"])), draw(st.integers(1, 4)))
    return _histograms(rows, widths, n_classes, m), _layout(widths, kinds, seed), params


def assert_same_results(found, expected):
    assert len(found) == len(expected)
    for f, e in zip(found, expected):
        assert (f is None) == (e is None)
        if f is None:
            continue
        assert f.test == e.test  # attribute and every code's child
        assert (f.test.attribute, f.test.thresholds, f.test.default) == (e.test.attribute, e.test.thresholds,
                                                                         e.test.default)
        assert f.gain == pytest.approx(e.gain, rel=1e-12, abs=1e-15)
        assert f.score == pytest.approx(e.score, rel=1e-12, abs=1e-15)
        np.testing.assert_array_equal(f.child_counts, e.child_counts)


@settings(max_examples=250, deadline=None)
@given(problem=problems())
def test_compiled_search_chooses_as_the_numpy_reference(problem):
    hists, layout, params = problem
    assert_same_results(best_splits(hists, layout, params, engine="numba"),
                 best_splits(hists, layout, params, engine="numpy"))


@settings(max_examples=100, deadline=None)
@given(problem=problems())
def test_compiled_gains_are_the_references_to_the_last_bit(problem):
    # same operations in the same order, log2 from numpy's own table: not merely close
    hists, layout, params = problem
    found = best_splits(hists, layout, params, engine="numba")
    expected = best_splits(hists, layout, params, engine="numpy")
    assert [None if f is None else (f.gain, f.score) for f in found] == \
        [None if e is None else (e.gain, e.score) for e in expected]


@settings(max_examples=100, deadline=None)
@given(problem=problems(groups=st.integers(2, 5)), held=st.data())
def test_differences_of_slices_search_as_the_histograms_they_stand_for(problem, held):
    # plus: a node's total; minus: one group's histogram (a held-out part), as a fold tree trains
    parts, layout, params = problem
    total = parts.sum(axis=0, keepdims=True)
    minus_index = np.asarray(held.draw(st.lists(st.integers(-1, parts.shape[0] - 1), min_size=1, max_size=6)))
    trained = total[0][None] - np.where(minus_index[:, None, None] >= 0, parts[np.maximum(minus_index, 0)], 0)
    first = slice(0, int(layout.widths[0]))
    batch = TrainBatch(total, np.zeros(minus_index.size, dtype=np.int64), parts, minus_index,
                       trained[:, first].sum(axis=1))
    expected = best_splits(trained, layout, params, engine="numpy")
    assert_same_results(search_batch(batch, layout, params, engine="numba"), expected)
    assert_same_results(search_batch(batch, layout, params, engine="numpy"), expected)


@settings(max_examples=60, deadline=None)
@given(problem=problems())
def test_histograms_beyond_the_log2_table_go_to_the_reference(problem):
    hists, layout, params = problem
    sizes = hists[:, : int(layout.widths[0])].sum(axis=(1, 2))
    small = float(np.median(sizes)) if sizes.size else 0.0
    original = choices.log2_table
    choices.log2_table = lambda size: original(size)[: int(small) + 1]  # a table too short for the larger ones
    try:
        found = best_splits(hists, layout, params, engine="numba")
    finally:
        choices.log2_table = original
    assert_same_results(found, best_splits(hists, layout, params, engine="numpy"))


def test_first_of_equal_cuts_and_the_larger_default_child_win():
    # symmetric: cutting after bin 1 or after bin 3 gains the same; missing rows tie both ways
    column = np.array([[1, 1], [4, 0], [0, 4], [0, 4], [4, 0]])
    layout = _layout([5], ["numeric"], 0)
    for criterion in ("gini", "entropy"):
        found = best_splits(column[None], layout, SplitParams(criterion), engine="numba")[0]
        expected = best_splits(column[None], layout, SplitParams(criterion), engine="numpy")[0]
        assert_same_results([found], [expected])
        assert found.test.bin_children.tolist()[1:] == [0, 1, 1, 1]


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="engine"):
        best_splits(np.ones((1, 3, 2), dtype=np.int64), _layout([3], ["numeric"], 0), SplitParams(), engine="fast")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(2, 4))
def test_threshold_children_agree_with_the_numpy_twin(seed, n_classes):
    rng = np.random.default_rng(seed)
    hists = rng.integers(0, 5, size=(4, 20, n_classes))
    r = int(rng.integers(1, 10))
    offset = rng.integers(0, 10, size=r)
    width = rng.integers(2, 11, size=r)
    cut = np.array([rng.integers(1, w) for w in width])
    default = rng.integers(0, 2, size=r)
    index = rng.integers(0, 4, size=r)
    expected = np.zeros((r, 2, n_classes), dtype=np.int64)
    threshold_children_numpy(hists, index, offset, width, cut, default, expected)
    found = threshold_children(hists, index, offset, width, cut, default)
    np.testing.assert_array_equal(found, expected)
    # every code of the attribute is in exactly one child
    for k in range(r):
        np.testing.assert_array_equal(found[k].sum(axis=0),
                                      hists[index[k], offset[k]:offset[k] + width[k]].sum(axis=0))
