"""C4.5's gain-ratio choice for a batch of histograms against its twin, histogram by histogram.

:func:`dasktree.split.choices.choose_batch` measures the split information of the compiled scan's
tests from their children counts, all at once, and builds only the winner's test; its twin builds
every attribute's test with the numpy reference and ranks them one histogram at a time
(:func:`dasktree.split.choices._choose`). They must agree bit for bit: test, gain and score.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.binary_kernel import TrainBatch
from dasktree.split.choices import _choose, choose_batch
from dasktree.split.gain_ratio_kernel import _mean, c45_rank, c45_rank_numpy
from dasktree.split.search import AttributeLayout, SplitParams, attribute_candidates, node_impurity


def _layout(widths, kinds):
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    uppers = tuple(np.arange(w - 2, dtype=float) + 0.5 if k == "numeric" else None for w, k in zip(widths, kinds))
    values = tuple(np.arange(w - 1, dtype=float) if k == "numeric" else None for w, k in zip(widths, kinds))
    return AttributeLayout(offsets, np.asarray(widths, dtype=np.int64), tuple(kinds), uppers, values)


def _twin(batch, layout, params):
    node_counts = batch.node_counts
    n = node_counts.sum(axis=1).astype(np.float64)
    safe = np.where(n > 0, n, 1.0)
    parent = node_impurity(node_counts, params.impurity_name)
    columns = [attribute_candidates(batch, a, layout, params, parent, safe) for a in range(len(layout.kinds))]
    return [_choose([column[m] for column in columns], params) if n[m] > 0 else None for m in range(len(batch))]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n_attributes=st.integers(1, 10), n_hist=st.integers(1, 12), n_classes=st.integers(2, 4),
       msl=st.integers(1, 4), nominal_split=st.sampled_from(["binary", "multiway"]))
def test_the_batched_gain_ratio_choice_is_its_twins(data, n_attributes, n_hist, n_classes, msl, nominal_split):
    kinds = [data.draw(st.sampled_from(["numeric", "numeric", "nominal"])) for _ in range(n_attributes)]
    widths = [data.draw(st.integers(2, 9)) for _ in range(n_attributes)]
    layout = _layout(widths, kinds)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    rows = rng.integers(0, 40, size=n_hist)
    hists = np.zeros((n_hist, sum(widths), n_classes), dtype=np.int64)
    for m in range(n_hist):  # every attribute's codes of the same rows: their bins sum to the node's counts
        labels = rng.integers(0, n_classes, size=rows[m])
        for a in range(n_attributes):
            codes = rng.integers(0, widths[a], size=rows[m])
            np.add.at(hists[m], (layout.offsets[a] + codes, labels), 1)
    batch = TrainBatch.of(hists, slice(0, widths[0]))
    params = SplitParams("gain_ratio", msl, nominal_split)
    found = choose_batch(batch, layout, params).candidates()
    for m, (got, want) in enumerate(zip(found, _twin(batch, layout, params))):
        if want is None:
            assert got is None, m
            continue
        assert got is not None, m
        assert got.test.identity == want.test.identity
        assert (got.gain, got.score) == (want.gain, want.score)
        assert np.array_equal(got.child_counts, want.child_counts)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n_attributes=st.sampled_from([1, 2, 3, 7, 8, 9, 20, 130, 300]), n_hist=st.integers(1, 8),
       ties=st.booleans())
def test_the_compiled_ranking_is_its_twins(data, n_attributes, n_hist, ties):
    """C4.5's ranking, compiled, against its numpy twin: winners and scores to the last bit, ties
    (equal gains, equal ratios, gains equal to the mean), tests without a ratio and empty histograms
    included; past 8 and 128 attributes numpy sums the mean's gains pairwise."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    shape = (n_attributes, n_hist)
    if ties:  # few distinct values: equal gains and ratios, and gains equal to their mean
        gains = rng.choice([0.0, 0.25, 0.5, 0.5, 1.0], size=shape)
        info = rng.choice([0.0, 0.5, 1.0, 1.0], size=shape)
    else:
        gains = rng.random(shape) * 10.0 ** rng.integers(-6, 1, size=shape)
        info = np.where(rng.random(shape) < 0.1, 0.0, rng.random(shape))
    gains[rng.random(shape) < data.draw(st.sampled_from([0.0, 0.3, 0.9]))] = -np.inf  # no test
    n = np.where(rng.random(n_hist) < 0.1, 0.0, 10.0)
    winner, score = c45_rank(gains, info, n)
    want_winner, want_score = c45_rank_numpy(gains, info, n)
    assert winner.tolist() == want_winner.tolist()
    assert score.tobytes() == want_score.tobytes()


def test_the_ranking_follows_quinlans_rule():
    # attribute 0: largest ratio but gain below the mean; 1 and 2 eligible, 2 the better ratio;
    # histogram 1: no eligible test has a ratio, so the best ratio of all; histogram 2: empty
    gains = np.array([[0.1, 0.1, 0.5], [0.5, 0.5, 0.5], [0.6, 0.6, 0.5]])
    info = np.array([[0.1, 0.1, 1.0], [1.0, 0.0, 1.0], [0.9, 0.0, 1.0]])
    winner, score = c45_rank(gains, info, np.array([5.0, 5.0, 0.0]))
    assert winner.tolist() == [2, 0, -1]
    assert score.tolist() == [0.6 / 0.9, 0.1 / 0.1, -np.inf]


@settings(max_examples=100, deadline=None)
@given(length=st.integers(1, 600), seed=st.integers(0, 2**32 - 1))
def test_the_compiled_mean_gain_is_numpys(length, seed):
    rng = np.random.default_rng(seed)
    g = rng.random(length) * 10.0 ** rng.integers(-8, 2, size=length)
    assert np.float64(_mean(g, length)).tobytes() == np.mean(g).tobytes()
