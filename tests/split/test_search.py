"""Split search at a node against brute force on raw rows."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split import node_tests
from dasktree.split.choices import best_split
from dasktree.split.search import AttributeLayout, SplitParams, impurity_of


def _impurity(counts, name):
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    if n == 0:
        return 0.0
    p = counts / n
    if name == "gini":
        return 1 - np.sum(p * p)
    p = p[p > 0]
    return float(-np.sum(p * np.log2(p)))


def _gain(children, name):
    total = np.sum(children, axis=0)
    n = total.sum()
    return _impurity(total, name) - sum(np.sum(c) / n * _impurity(c, name) for c in children)


def _layout_numeric(width):
    upper = np.arange(width - 2, dtype=float) + 0.5
    values = np.arange(width - 1, dtype=float)
    return AttributeLayout(np.array([0]), np.array([width]), ("numeric",), (upper,), (values,))


counts_strategy = st.integers(2, 9).flatmap(
    lambda w: st.lists(st.lists(st.integers(0, 6), min_size=2, max_size=2), min_size=w, max_size=w)
)


@settings(max_examples=150, deadline=None)
@given(hist=counts_strategy, criterion=st.sampled_from(["gini", "entropy"]), msl=st.integers(1, 3))
def test_numeric_binary_split_is_the_best_threshold(hist, criterion, msl):
    hist = np.asarray(hist, dtype=np.int64)
    width = hist.shape[0]
    best = -np.inf
    miss = hist[0]
    for j in range(1, width - 1):  # cut after bin j: bins 1..j left
        left, right = hist[1:j + 1].sum(0), hist[j + 1:].sum(0)
        if left.sum() == 0 or right.sum() == 0:
            continue
        for children in ([left + miss, right], [left, right + miss]):
            if min(c.sum() for c in children) >= msl:
                best = max(best, _gain(children, criterion))
    found = best_split(hist, _layout_numeric(width), SplitParams(criterion, msl))
    if best == -np.inf:
        assert found is None
        return
    assert found is not None
    assert np.isclose(found.gain, best, atol=1e-12)
    # the test sends the rows where its children counts say
    table = found.test.bin_children
    for child in range(2):
        np.testing.assert_array_equal(hist[table == child].sum(0), found.child_counts[child])


def test_missing_values_go_where_they_gain_most():
    # bins: missing holds class 1 only; right side is class 1 -> missing should go right
    hist = np.array([[0, 5], [6, 0], [5, 1], [0, 6]])
    found = best_split(hist, _layout_numeric(4), SplitParams("gini"))
    assert found.test.thresholds == (1.5,)
    assert found.test.default == 1
    np.testing.assert_array_equal(found.child_counts, [[11, 1], [0, 11]])


def test_cut_is_centred_in_a_gap_of_empty_bins():
    # values 0..5, rows only at 0 and 5: the threshold sits at the middle, 2.5
    hist = np.zeros((7, 2), dtype=np.int64)
    hist[1] = [4, 0]
    hist[6] = [0, 4]
    found = best_split(hist, _layout_numeric(7), SplitParams("gini"))
    assert found.test.thresholds == (2.5,)


@settings(max_examples=100, deadline=None)
@given(hist=st.lists(st.lists(st.integers(0, 8), min_size=2, max_size=2), min_size=3, max_size=8),
       criterion=st.sampled_from(["gini", "entropy"]))
def test_two_class_subset_ordering_is_optimal(hist, criterion):
    hist = np.asarray([[0, 0]] + hist, dtype=np.int64)
    layout = AttributeLayout(np.array([0]), np.array([hist.shape[0]]), ("nominal",), (None,), (None,))
    present = [c for c in range(1, hist.shape[0]) if hist[c].sum() > 0]
    best = -np.inf
    for r in range(1, len(present)):
        for left in itertools.combinations(present, r):
            right = [c for c in present if c not in left]
            best = max(best, _gain([hist[list(left)].sum(0), hist[right].sum(0)], criterion))
    found = best_split(hist, layout, SplitParams(criterion))
    if best == -np.inf:
        assert found is None
    else:
        assert np.isclose(found.gain, best, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(hist=st.lists(st.lists(st.integers(0, 5), min_size=3, max_size=3), min_size=3, max_size=6))
def test_multiclass_subsets_are_exhaustive_when_few(hist):
    hist = np.asarray([[0, 0, 0]] + hist, dtype=np.int64)
    layout = AttributeLayout(np.array([0]), np.array([hist.shape[0]]), ("nominal",), (None,), (None,))
    present = [c for c in range(1, hist.shape[0]) if hist[c].sum() > 0]
    best = -np.inf
    for r in range(1, len(present)):
        for left in itertools.combinations(present, r):
            right = [c for c in present if c not in left]
            best = max(best, _gain([hist[list(left)].sum(0), hist[right].sum(0)], "gini"))
    found = best_split(hist, layout, SplitParams("gini"))
    assert (found is None) == (best == -np.inf)
    if found is not None:
        assert np.isclose(found.gain, best, atol=1e-12)


def test_multiway_nominal_gives_one_child_per_present_category():
    hist = np.array([[1, 0], [3, 0], [0, 0], [1, 4], [0, 2]])
    layout = AttributeLayout(np.array([0]), np.array([5]), ("nominal",), (None,), (None,))
    found = best_split(hist, layout, SplitParams("entropy", nominal_split="multiway"))
    assert found.test.groups == ((1,), (3,), (4,))
    assert found.test.default == 0  # missing (class 0) joins the class-0 category
    assert found.test.bin_children[2] == found.test.default  # absent category -> default child


def test_gain_ratio_prefers_the_balanced_attribute_among_good_gains():
    # attribute 0: perfect split into many tiny groups is penalised by split information
    many = np.array([[0, 0]] + [[1, 0]] * 8 + [[0, 1]] * 8)
    two = np.array([[0, 0], [8, 0], [0, 8]])  # equally perfect, in two children
    hist = np.concatenate([many, two])
    layout = AttributeLayout(np.array([0, many.shape[0]]), np.array([many.shape[0], 3]),
                             ("nominal", "nominal"), (None, None), (None, None))
    gain = best_split(hist, layout, SplitParams("entropy", nominal_split="multiway"))
    ratio = best_split(hist, layout, SplitParams("gain_ratio", nominal_split="multiway"))
    assert gain.test.attribute == 0
    assert ratio.test.attribute == 1


def test_ties_go_to_the_lower_attribute():
    col = np.array([[0, 0], [5, 0], [0, 5]])
    hist = np.concatenate([col, col])
    layout = AttributeLayout(np.array([0, 3]), np.array([3, 3]), ("numeric", "numeric"),
                             (np.array([0.5]),) * 2, (np.array([0.0, 1.0]),) * 2)
    assert best_split(hist, layout, SplitParams("gini")).test.attribute == 0


@given(n_bins=st.integers(2, 40), data=st.data())
def test_numeric_tests_route_each_code_as_their_cuts_say(n_bins, data):
    """A threshold test's code table (the binary one filled directly) against the cuts, and its arity."""
    from dasktree.split.node_tests import numeric_test

    upper = np.sort(np.random.default_rng(n_bins).random(n_bins - 1))
    cuts = sorted(data.draw(st.sets(st.integers(1, n_bins - 1), min_size=1, max_size=min(4, n_bins - 1))))
    default = data.draw(st.integers(0, len(cuts)))
    test = numeric_test(3, np.array(cuts), upper, default)
    codes = np.arange(1, n_bins + 1)
    expected = np.array([default] + [sum(code > c for c in cuts) for code in codes])
    np.testing.assert_array_equal(test.bin_children, expected)
    assert test.thresholds == tuple(float(upper[c - 1]) for c in cuts)
    assert test.arity == int(expected.max()) + 1 == len(cuts) + 1
    # a binary test knows its cut; computed from the table, any test's agrees
    assert test.cut == (cuts[0] if len(cuts) == 1 else -1)
    assert node_tests.Test(3, "numeric", test.bin_children, default, test.thresholds).cut == test.cut


@given(table=st.lists(st.integers(0, 3), min_size=1, max_size=12))
def test_a_code_table_is_a_threshold_when_codes_go_left_then_right(table):
    """:attr:`Test.cut` against its definition: the q for which codes 1.. go to child 0 up to q, then
    child 1 (the level-pass kernel compares with q instead of reading the table)."""
    body = table[1:]
    fits = [q for q in range(len(body) + 1) if body == [0] * q + [1] * (len(body) - q)]
    test = node_tests.Test(0, "nominal", np.array(table, dtype=np.int16), table[0])
    assert test.cut == (fits[0] if fits and body else -1)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_hist=st.integers(1, 12), width=st.integers(2, 14),
       n_classes=st.integers(2, 4), criterion=st.sampled_from(["gini", "entropy"]),
       min_leaf=st.sampled_from([1, 3]), missing=st.booleans())
def test_nominal_binary_batch_equals_the_search_one_histogram_at_a_time(seed, n_hist, width, n_classes, criterion,
                                                                         min_leaf, missing):
    """The batched nominal subset search gives each histogram the test, gain and children of the reference."""
    from dasktree.split.search import nominal_binary, nominal_binary_batch

    rng = np.random.default_rng(seed)
    h = rng.integers(0, 6, size=(n_hist, width, n_classes)) * (rng.random((n_hist, width, 1)) < 0.7)
    h[:, 0] = h[:, 0] * missing
    h[rng.random(n_hist) < 0.3] = h[0]  # some histograms share their present categories
    params = SplitParams(criterion, min_leaf)
    node = h.sum(axis=1)
    n = np.maximum(node.sum(axis=1), 1).astype(np.float64)
    parent = impurity_of(node, criterion)
    column = nominal_binary_batch(h, 3, parent, n, params)
    for m in range(n_hist):
        expected = nominal_binary(h[m], 3, float(parent[m]), float(n[m]), params)
        got = column[m]
        assert (expected is None) == (got is None)
        if expected is not None:
            assert got[0] == expected[0] and got[1] == expected[1] and np.array_equal(got[2], expected[2])
