"""Postponing attributes with many boundary points (Elomaa & Rousu, 001): the rules and the bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.choices import best_splits, choose_batch
from dasktree.split.multiway import selection_score
from dasktree.split.postpone import (analytic_bound, block_stats, block_stats_naive, check_postpone, parse_postpone,
                                     postpone_text, rank_postponed, ratio_postponed, relative_postponed)
from dasktree.split.postpone_kernel import batch_block_stats
from dasktree.split.postpone_search import choose, numeric_block_stats
from dasktree.split.search import AttributeLayout, SplitParams, TrainBatch, attribute_candidates, node_impurity

# ---------------------------------------------------------------- the rules, on hand-built block counts

# five numeric attributes (rows) at three nodes (columns); 1 block: no boundary point, never ranked
BLOCKS = np.array([
    [40, 2, 5],
    [10, 9, 1],
    [25, 3, 5],
    [60, 9, 7],
    [1, 4, 20],
])
N = np.array([100, 10, 20])


def test_heuristic1_postpones_a_ratio_above_t():
    # B / n: node 0 .40 .10 .25 .60 (.01 unranked); node 1 .2 .9 .3 .9 .4; node 2 .25 (.05) .25 .35 1.0
    expected = np.array([
        [True, False, True],
        [False, True, False],
        [True, True, True],
        [True, True, True],
        [False, True, True],
    ])
    np.testing.assert_array_equal(ratio_postponed(BLOCKS, N, 0.2), expected)
    np.testing.assert_array_equal(ratio_postponed(BLOCKS, N, 0.5), BLOCKS / N > 0.5)


def test_heuristic2_searches_the_fraction_t_with_fewest_blocks():
    # node 0 ranks 4 attributes (10, 25, 40, 60): t=.5 searches 2; node 1 five (2, 3, 4, 9, 9): 3 searched;
    # node 2 four (5, 5, 7, 20): 2 searched
    expected = np.array([
        [True, False, False],
        [False, True, False],
        [False, False, False],
        [True, True, True],
        [False, False, True],
    ])
    np.testing.assert_array_equal(rank_postponed(BLOCKS, 0.5), expected)
    # t = .9: ceil(3.6) = 4 of 4, ceil(4.5) = 5 of 5, 4 of 4: nothing postponed; t = .7: 3, 4, 3 searched,
    # at node 1 the tie of 9 and 9 going to the lower index
    assert not rank_postponed(BLOCKS, 0.9).any()
    np.testing.assert_array_equal(rank_postponed(BLOCKS, 0.7)[:, 1], [False, False, False, True, False])
    np.testing.assert_array_equal(rank_postponed(BLOCKS, 0.7).sum(axis=0), [1, 1, 1])


def test_heuristic3_postpones_below_t_times_the_fewest():
    # B_min per node over ranked attributes: 10, 2, 5; postponed where B_min / B < .5, i.e. B > 2 B_min
    expected = np.array([
        [True, False, False],
        [False, True, False],
        [True, False, False],
        [True, True, False],
        [False, False, True],
    ])
    np.testing.assert_array_equal(relative_postponed(BLOCKS, 0.5), expected)
    # t = 1: all but the attributes with the fewest blocks
    np.testing.assert_array_equal(relative_postponed(BLOCKS, 1.0)[:, 2], [False, False, False, True, True])


def test_rules_parse_and_refuse():
    assert parse_postpone(None) is None
    assert parse_postpone("analytic") == ("analytic", None)
    assert parse_postpone(("rank", 0.5)) == parse_postpone(["rank", 0.5]) == parse_postpone("rank:0.5")
    assert postpone_text(parse_postpone("ratio:.2")) == "ratio:0.2"
    for bad in ("sometimes", ("rank", 0), ("rank", 1.5), ("ratio", True), ("best", 0.5), "rank:x", ("rank",)):
        with pytest.raises(ValueError, match="postpone"):
            parse_postpone(bad)
    check_postpone(("analytic", None), "entropy", 2, "gain_ratio")
    check_postpone(("analytic", None), "gain_ratio", 5, "balanced_gain")
    check_postpone(("rank", 0.5), "gain_ratio", 2, "balanced_gain")
    with pytest.raises(ValueError, match="criterion='gain_ratio'"):
        check_postpone(("analytic", None), "gain_ratio", 2, "balanced_gain")
    with pytest.raises(ValueError, match="selection='distance'"):
        check_postpone(("analytic", None), "gini", 3, "distance")


# ---------------------------------------------------------------- block counts: the twin and the bound

hists = st.tuples(st.integers(1, 4), st.integers(1, 12), st.integers(2, 3)).flatmap(
    lambda s: st.lists(st.integers(0, 4), min_size=s[0] * (s[1] + 1) * s[2], max_size=s[0] * (s[1] + 1) * s[2])
    .map(lambda v, s=s: np.asarray(v, dtype=np.int64).reshape(s[0], s[1] + 1, s[2])))


@settings(max_examples=200, deadline=None)
@given(h=hists, impurity=st.sampled_from(["gini", "entropy"]))
def test_block_stats_equal_the_naive_blocks(h, impurity):
    blocks, sigma, missing = block_stats(h, impurity)
    naive = block_stats_naive(h, impurity)
    np.testing.assert_array_equal(blocks, naive[0])
    np.testing.assert_allclose(sigma, naive[1], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(missing, naive[2], rtol=1e-12, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(h=hists, impurity=st.sampled_from(["gini", "entropy"]), held=st.integers(0, 3))
def test_the_compiled_block_counts_equal_the_numpy_twin(h, impurity, held):
    """On training histograms stored as differences (a total minus a held-out part), as a forest searches."""
    m = h.shape[0]
    part = h // (held + 1)  # at most the total, cell by cell
    widths = np.array([3, h.shape[1] - 3]) if h.shape[1] > 4 else np.array([h.shape[1]])
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    minus_index = np.where(np.arange(m) % 2 == 0, np.arange(m), -1)
    batch = TrainBatch(h.astype(np.uint32), np.arange(m), part.astype(np.uint32), minus_index, np.zeros((m, 2)))
    for a in range(widths.size):
        blocks, sigma, missing = batch_block_stats(batch, offsets, widths, [a], impurity)
        twin = block_stats(batch.columns(int(offsets[a]), int(widths[a])), impurity)
        np.testing.assert_array_equal(blocks[0], twin[0])
        np.testing.assert_allclose(sigma[0], twin[1], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(missing[0], twin[2], rtol=1e-12, atol=1e-9)


def _frame_hists(rng, m, kinds, widths, n_classes, rows):
    """M consistent node histograms from random rows: every attribute's bins add to the node's counts."""
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    hist = np.zeros((m, int(np.sum(widths)), n_classes), dtype=np.int64)
    for i in range(m):
        y = rng.integers(0, n_classes, rows)
        for a, w in enumerate(widths):
            # some attributes follow the class (few boundary points), others are noise (many)
            noise = rng.random() < 0.5
            codes = rng.integers(0, w, rows) if noise else np.clip(y * (w // n_classes) + rng.integers(0, 2, rows),
                                                                     0, w - 1)
            np.add.at(hist[i], (offsets[a] + codes, y), 1)
    uppers = tuple(np.arange(w - 2, dtype=float) + 0.5 if k == "numeric" else None for k, w in zip(kinds, widths))
    values = tuple(np.arange(w - 1, dtype=float) if k == "numeric" else None for k, w in zip(kinds, widths))
    return hist, AttributeLayout(offsets, np.asarray(widths), tuple(kinds), uppers, values)


def _best_score(result, params):
    if result is None:
        return -np.inf
    if params.max_arity > 2:
        return selection_score(result[2], result[1], params.selection)
    return result[1]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), criterion=st.sampled_from(["gini", "entropy"]), max_arity=st.sampled_from([2, 3, 5]),
       rows=st.integers(4, 60), n_classes=st.integers(2, 3), msl=st.integers(1, 3))
def test_the_analytic_bound_never_postpones_the_winner(seed, criterion, max_arity, rows, n_classes, msl):
    rng = np.random.default_rng(seed)
    kinds = ["numeric", "numeric", "nominal", "numeric"]
    hist, layout = _frame_hists(rng, 3, kinds, [rng.integers(3, 14) for _ in kinds], n_classes, rows)
    params = SplitParams(criterion, msl, max_arity=max_arity)
    # the bound is at least every numeric attribute's best score ...
    batch = TrainBatch.of(hist, slice(0, int(layout.widths[0])))
    n = batch.node_counts.sum(axis=1).astype(float)
    parent = node_impurity(batch.node_counts, params.impurity_name)
    numeric = [a for a, k in enumerate(kinds) if k == "numeric"]
    blocks, sigma, missing = numeric_block_stats(batch, layout, numeric, params.impurity_name)
    bound = analytic_bound(blocks, sigma, missing, n, parent, params.impurity_name, max_arity)
    for i, a in enumerate(numeric):
        results = attribute_candidates(batch, a, layout, params, parent, n)
        for m in range(len(batch)):
            assert _best_score(results[m], params) <= bound[i, m] + 1e-12
    # ... so the search with it chooses exactly the tests of the search without it
    plain = best_splits(hist, layout, params)
    postponed = best_splits(hist, layout, SplitParams(criterion, msl, max_arity=max_arity,
                                                      postpone=("analytic", None)))
    for p, q in zip(plain, postponed):
        assert (p is None) == (q is None)
        if p is not None:
            assert p.test == q.test and p.gain == q.gain and p.score == q.score
            np.testing.assert_array_equal(p.child_counts, q.child_counts)


@pytest.mark.parametrize("rule", [("rank", 0.5), ("ratio", 0.2), ("relative", 0.7)])
@pytest.mark.parametrize("max_arity", [2, 4])
def test_a_heuristic_searches_only_the_attributes_it_keeps(rule, max_arity):
    rng = np.random.default_rng(3)
    kinds = ["numeric"] * 4 + ["nominal"]
    hist, layout = _frame_hists(rng, 6, kinds, [12, 12, 12, 12, 4], 2, 80)
    params = SplitParams("entropy", max_arity=max_arity, postpone=rule)
    batch = TrainBatch.of(hist, slice(0, 12))
    from dasktree.split.postpone import heuristic_postponed

    blocks, _, _ = numeric_block_stats(batch, layout, [0, 1, 2, 3], "entropy")
    postponed = heuristic_postponed(rule, blocks, batch.node_counts.sum(axis=1))
    choices = choose(batch, layout, params)
    assert choices.postponed == int(postponed.sum()) and choices.searched == 5 * 6 - choices.postponed
    kept = np.ones((5, 6), dtype=bool)
    kept[:4] = ~postponed
    alone = choose_batch(batch, layout, SplitParams("entropy", max_arity=max_arity), active=kept)
    np.testing.assert_array_equal(choices.attribute, alone.attribute)
    np.testing.assert_array_equal(choices.gain, alone.gain)
    for m in np.flatnonzero(choices.attribute >= 0):
        assert not postponed[min(int(choices.attribute[m]), 3), m] or choices.attribute[m] == 4


def test_a_node_without_a_test_among_the_kept_attributes_searches_the_postponed_ones():
    """Attribute 0 (2 blocks) is kept but has no split with two rows a child; attribute 1 (8 blocks)
    is postponed by rank:0.5, then searched after all: the node is not a leaf for want of a search."""

    hist = np.array([[0, 0], [4, 3], [0, 1], [0, 0],  # attribute 0: missing row, then 3 bins
                     [0, 0]] + [[1, 0], [0, 1]] * 4)  # attribute 1: missing row, then 8 bins
    layout = AttributeLayout(np.array([0, 4]), np.array([4, 9]), ("numeric", "numeric"),
                             (np.arange(2) + 0.5, np.arange(7) + 0.5), (np.arange(3.0), np.arange(8.0)))
    batch = TrainBatch.of(hist[None], slice(0, 4))
    kept_only = np.array([[True], [False]])
    assert choose_batch(batch, layout, SplitParams("gini", 2), active=kept_only).attribute[0] == -1
    choices = choose(batch, layout, SplitParams("gini", 2, postpone=("rank", 0.5)))
    assert choices.attribute[0] == 1 and (choices.searched, choices.postponed) == (2, 0)
    assert best_splits(hist[None], layout, SplitParams("gini", 2))[0].test.attribute == 1
