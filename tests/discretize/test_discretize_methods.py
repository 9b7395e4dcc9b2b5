"""Tests of the discretization kernels in ``dasktree.discretize.methods``.

The histograms are built as the project builds them: raw (value, class)
examples turned into bins = distinct values (or a fixed integer grid, which
leaves empty bins) with class counts. Cut ``j`` separates bin ``j`` from bin
``j + 1``.
"""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.discretize import (
    METHODS,
    chimerge,
    distance,
    equal_frequency,
    equal_width,
    mdlp,
)
from dasktree.discretize.chimerge import _chi2_pair
from dasktree.split.blocks import bins_to_blocks

SUPERVISED = [mdlp, distance]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def to_bins(x, y, n_classes):
    """Bins = distinct values of ``x``, with the class counts of ``y``."""
    values, inverse = np.unique(np.asarray(x), return_inverse=True)
    counts = np.zeros((values.size, n_classes), dtype=np.int64)
    np.add.at(counts, (inverse, np.asarray(y)), 1)
    return counts, values


def grid_bins(pairs, n_values, n_classes):
    """Bins = the integers 0 .. n_values-1 (some of them empty)."""
    counts = np.zeros((n_values, n_classes), dtype=np.int64)
    for v, c in pairs:
        counts[v, c] += 1
    return counts


def cut_points(values, cuts):
    """Midpoints of the gaps the cuts fall in (exact bins: both sides non-empty)."""
    return (values[cuts] + values[cuts + 1]) / 2.0


# The four cases of 003, built as in its F# script.
def single(rng):
    return rng.random(100), np.zeros(100, dtype=int), 1


def separate(rng):
    x = np.concatenate([rng.random(100), rng.random(100) + 1.0])
    y = np.repeat([0, 1], 100)
    return x, y, 2


def mixture(rng):
    x = np.concatenate(
        [rng.random(100), rng.random(100) + 0.5, rng.random(100) + 1.0, rng.random(100) + 1.5]
    )
    y = np.concatenate(
        [
            rng.integers(0, 2, 100),
            rng.integers(1, 3, 100),
            rng.integers(2, 4, 100),
            rng.integers(3, 5, 100),
        ]
    )
    return x, y, 5


def alternating(rng):
    i = np.arange(101)
    return i.astype(float), i % 2, 2


def _tol(n):
    # The same float slack as the implementation: ties and strict inequalities
    # of bit counts are judged up to 1e-9 relative to N log2 N.
    return 1e-9 * (1.0 + n * math.log2(n + 1.0))


def _ent(labels):
    n = len(labels)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(labels).values())


def naive_mdlp(pairs):
    """Fayyad & Irani on raw examples: sort, try every cut, recurse."""
    cuts = []

    def recurse(examples):
        n = len(examples)
        distinct = sorted({v for v, _ in examples})
        if len(distinct) < 2:
            return
        labels = [c for _, c in examples]
        best = None
        for thr in distinct[:-1]:  # cut between thr and the next distinct value
            s1 = [c for v, c in examples if v <= thr]
            s2 = [c for v, c in examples if v > thr]
            cost = len(s1) * _ent(s1) + len(s2) * _ent(s2)
            if best is None or cost < best[0] - _tol(n):  # ties: leftmost
                best = (cost, thr, s1, s2)
        cost, thr, s1, s2 = best
        ent = _ent(labels)
        gain = ent - cost / n
        k, k1, k2 = len(set(labels)), len(set(s1)), len(set(s2))
        delta = math.log2(3**k - 2) - (k * ent - k1 * _ent(s1) - k2 * _ent(s2))
        if gain > math.log2(n - 1) / n + delta / n + _tol(n) / n:
            cuts.append(thr)
            recurse([e for e in examples if e[0] <= thr])
            recurse([e for e in examples if e[0] > thr])

    recurse(sorted(pairs))
    return sorted(cuts)


def fi_boundary_points(pairs):
    """Fayyad & Irani's boundary points: thresholds between consecutive distinct
    values unless both values hold examples of one and the same class."""
    classes = {}
    for v, c in pairs:
        classes.setdefault(v, set()).add(c)
    distinct = sorted(classes)
    return [
        a
        for a, b in zip(distinct[:-1], distinct[1:])
        if not (len(classes[a]) == 1 and classes[a] == classes[b])
    ]


def _entropy_of(counter, n):
    return -sum(c / n * math.log2(c / n) for c in counter.values() if c > 0)


def naive_distance_of(pairs, thresholds):
    """López de Mántaras' distance between the class and interval partitions."""
    n = len(pairs)
    thresholds = sorted(thresholds)

    def interval(v):
        return sum(v > t for t in thresholds)

    joint = Counter((interval(v), c) for v, c in pairs)
    part = Counter(interval(v) for v, _ in pairs)
    cls = Counter(c for _, c in pairs)
    h_joint, h_part, h_cls = (_entropy_of(x, n) for x in (joint, part, cls))
    if h_joint == 0:
        return 0.0
    return ((h_joint - h_part) + (h_joint - h_cls)) / h_joint


def naive_description_length(pairs, thresholds):
    """002's L(D) = p log2(N-1) + (p+1) k + sum_i (k_i + |S_i|) Ent(S_i)."""
    n = len(pairs)
    k = len({c for _, c in pairs})
    thresholds = sorted(thresholds)
    edges = [-math.inf, *thresholds, math.inf]
    total = len(thresholds) * math.log2(n - 1) + (len(thresholds) + 1) * k
    for lo, hi in zip(edges[:-1], edges[1:]):
        labels = [c for v, c in pairs if lo < v <= hi]
        total += (len(set(labels)) + len(labels)) * _ent(labels)
    return total


def naive_distance(pairs):
    """002's algorithm from scratch: add the boundary point of least distance
    over the whole range while the description length decreases."""
    candidates = fi_boundary_points(pairs)
    chosen = []
    n = len(pairs)
    while True:
        rest = [t for t in candidates if t not in chosen]
        if not rest:
            break
        dist = [naive_distance_of(pairs, chosen + [t]) for t in rest]
        best = rest[next(i for i, d in enumerate(dist) if d <= min(dist) + 1e-12)]
        before = naive_description_length(pairs, chosen)
        after = naive_description_length(pairs, chosen + [best])
        if not after < before - _tol(n):
            break
        chosen.append(best)
    return sorted(chosen)


pairs_strategy = st.integers(1, 4).flatmap(
    lambda k: st.tuples(
        st.just(k),
        st.lists(st.tuples(st.integers(0, 11), st.integers(0, k - 1)), min_size=1, max_size=60),
    )
)


# --------------------------------------------------------------------------
# the four cases of 003, for mdlp and distance
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", SUPERVISED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_class_gives_no_cut(method, seed):
    counts, values = to_bins(*single(np.random.default_rng(seed))[:2], 1)
    assert method(counts, values).size == 0


@pytest.mark.parametrize("method", SUPERVISED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_separate_classes_give_one_cut_in_the_gap(method, seed):
    x, y, k = separate(np.random.default_rng(seed))
    counts, values = to_bins(x, y, k)
    cuts = method(counts, values)
    assert cuts.size == 1
    assert values[cuts[0]] < 1.0 < values[cuts[0] + 1]
    assert values[cuts[0]] == x[y == 0].max()


@pytest.mark.parametrize("method", SUPERVISED, ids=lambda f: f.__name__)
def test_alternating_classes_give_no_cut(method):
    x, y, k = alternating(None)
    counts, values = to_bins(x, y, k)
    assert counts.shape == (101, 2)
    assert method(counts, values).size == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixture_mdlp_cuts_near_half_one_one_and_a_half_two(seed):
    x, y, k = mixture(np.random.default_rng(seed))
    counts, values = to_bins(x, y, k)
    points = cut_points(values, mdlp(counts, values))
    np.testing.assert_allclose(points, [0.5, 1.0, 1.5, 2.0], atol=0.1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixture_distance_cuts_near_one_and_one_and_a_half(seed):
    # The normalized distance does not reach the cuts near 0.5 and 2.0 that
    # mdlp finds: adding them moves the discretization FARTHER from the class
    # partition, so the greedy step picks another cut, which the MDL test
    # rejects. Checked directly below with the naive distance.
    x, y, k = mixture(np.random.default_rng(seed))
    counts, values = to_bins(x, y, k)
    cuts = distance(counts, values)
    np.testing.assert_allclose(cut_points(values, cuts), [1.0, 1.5], atol=0.1)
    pairs = list(zip(np.searchsorted(values, x).tolist(), y.tolist()))
    four = mdlp(counts, values)
    assert naive_distance_of(pairs, list(four)) > naive_distance_of(pairs, list(cuts))


@pytest.mark.parametrize("method", SUPERVISED, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", range(5))
def test_class_independent_noise_gives_no_cut(method, seed):
    rng = np.random.default_rng(100 + seed)
    x = rng.integers(0, 50, 5000)
    y = rng.integers(0, 2, 5000)
    counts, values = to_bins(x, y, 2)
    assert counts.shape == (50, 2)
    assert method(counts, values).size == 0


# --------------------------------------------------------------------------
# mdlp and distance against direct implementations on raw examples
# --------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(pairs_strategy)
def test_mdlp_equals_naive_recursive_mdlp(data):
    k, pairs = data
    counts = grid_bins(pairs, 12, k)  # bin index == value; empty bins included
    assert mdlp(counts).tolist() == naive_mdlp(pairs)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 1)), min_size=2, max_size=40
    ).map(lambda p: p * 3)  # repeated examples so that cuts get accepted
)
def test_mdlp_equals_naive_on_data_with_cuts(pairs):
    counts = grid_bins(pairs, 8, 2)
    assert mdlp(counts).tolist() == naive_mdlp(pairs)


@settings(max_examples=100, deadline=None)
@given(pairs_strategy, st.integers(1, 4))
def test_distance_equals_naive_distance(data, repeat):
    k, pairs = data
    pairs = pairs * repeat
    counts = grid_bins(pairs, 12, k)
    assert distance(counts).tolist() == naive_distance(pairs)


def test_mdlp_on_two_clean_steps_is_exact():
    # 30 x class 0 at values 0..2, 30 x class 1 at 3..5, 30 x class 0 at 6..8.
    counts = np.zeros((9, 2), dtype=int)
    counts[0:3, 0] = counts[6:9, 0] = 10
    counts[3:6, 1] = 10
    assert mdlp(counts).tolist() == [2, 5]
    assert distance(counts).tolist() == [2, 5]


# --------------------------------------------------------------------------
# boundary points and empty bins
# --------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(pairs_strategy, st.integers(1, 5))
@pytest.mark.parametrize("method", SUPERVISED, ids=lambda f: f.__name__)
def test_supervised_cuts_lie_on_boundary_points(method, data, repeat):
    k, pairs = data
    pairs = pairs * repeat
    counts = grid_bins(pairs, 12, k)
    cuts = method(counts)
    boundary = set(bins_to_blocks(counts).boundary_points.tolist())
    assert set(cuts.tolist()) <= boundary
    # and the blocks' boundary points are Fayyad & Irani's
    assert boundary == set(fi_boundary_points(pairs))


def test_empty_bins_do_not_move_or_duplicate_cuts():
    counts = np.zeros((9, 2), dtype=int)
    counts[0:3, 0] = counts[6:9, 0] = 10
    counts[3:6, 1] = 10
    # spread the same examples over a grid with empty bins everywhere
    spread = np.zeros((27, 2), dtype=int)
    spread[1::3] = counts
    values = np.arange(27.0)
    for method in SUPERVISED:
        assert method(spread, values).tolist() == [7, 16]  # = 3 * [2, 5] + 1
    assert chimerge(spread, values).tolist() == [7, 16]


@pytest.mark.parametrize("name", sorted(METHODS))
def test_degenerate_histograms(name):
    method = METHODS[name]
    for counts in (np.zeros((0, 2)), np.zeros((4, 3)), np.array([[0, 0], [3, 1], [0, 0]])):
        values = np.arange(float(counts.shape[0]))
        cuts = method(counts, values)
        assert cuts.dtype == np.intp and cuts.size == 0


@pytest.mark.parametrize("name", sorted(METHODS))
def test_cuts_are_sorted_distinct_and_between_non_empty_bins(name):
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, (200, 3)) * (rng.random((200, 1)) < 0.7)
    values = np.cumsum(rng.random(200))
    cuts = METHODS[name](counts, values)
    assert cuts.dtype == np.intp
    assert np.all(np.diff(cuts) > 0)
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    assert set(cuts.tolist()) <= set(nonempty[:-1].tolist())


def test_methods_registry():
    assert METHODS == {
        "mdlp": mdlp,
        "distance": distance,
        "chimerge": chimerge,
        "equal_width": equal_width,
        "equal_frequency": equal_frequency,
    }


# --------------------------------------------------------------------------
# ChiMerge
# --------------------------------------------------------------------------

# Hand-worked example, 2 classes (df = 1):
#   bins  A = [3, 0]  B = [2, 0]  C = [0, 2]  D = [1, 3]
# chi2(A, B): C_2 = 0, so Kerber sets E_12 = E_22 = 0.1:
#   0 + (0 - .1)^2/.1 + 0 + (0 - .1)^2/.1                   = 0.2
# chi2(B, C): R = (2, 2), C = (2, 2), E = 1 everywhere: 4 * 1 = 4
# chi2(C, D): R = (2, 4), C = (1, 5), N = 6, E = [[1/3, 5/3], [2/3, 10/3]]:
#   1/3 + 1/15 + 1/6 + 1/30                                 = 0.6
# merge A+B = [5, 0]; chi2(AB, C) = N (ad - bc)^2 / (R1 R2 C1 C2)
#   = 7 * 100 / (5 * 2 * 5 * 2)                             = 7
# merge C+D = [1, 5]; chi2(AB, CD) = 11 * 25^2 / (5 * 6 * 6 * 5) = 275/36 = 7.64
HAND = np.array([[3, 0], [2, 0], [0, 2], [1, 3]])


def test_chimerge_chi_square_by_hand():
    rows = HAND.tolist()
    assert _chi2_pair(rows[0], rows[1]) == pytest.approx(0.2)
    assert _chi2_pair(rows[1], rows[2]) == pytest.approx(4.0)
    assert _chi2_pair(rows[2], rows[3]) == pytest.approx(0.6)
    assert _chi2_pair([5, 0], [0, 2]) == pytest.approx(7.0)
    assert _chi2_pair([5, 0], [1, 5]) == pytest.approx(275 / 36)
    # Kerber's E = 0.1 for a class absent from both intervals adds 2 * 0.1
    assert _chi2_pair([3, 0, 0], [2, 0, 0]) == pytest.approx(0.4)
    assert _chi2_pair([1, 1], [1, 1]) == 0.0


@pytest.mark.parametrize(
    "significance, expected",
    [
        # threshold chi2.ppf(0.5, 1) = 0.455: merges A+B (0.2), stops at 0.6
        (0.5, [1, 2]),
        # threshold 3.841: merges 0.2 then 0.6, stops at 7.64 > 3.841
        (0.05, [1]),
        # threshold 6.635 < 7.64: same
        (0.01, [1]),
        # threshold 10.83 > 7.64: merges everything
        (0.001, []),
    ],
)
def test_chimerge_threshold_behaviour(significance, expected):
    assert chimerge(HAND, significance=significance).tolist() == expected


def test_chimerge_interval_bounds():
    assert chimerge(HAND, significance=0.05, min_intervals=3).tolist() == [1, 2]
    assert chimerge(HAND, significance=0.5, max_intervals=2).tolist() == [1]
    assert chimerge(HAND, significance=0.5, max_intervals=1).tolist() == []
    assert chimerge(HAND, significance=0.001, min_intervals=2).tolist() == [1]
    assert chimerge(HAND, significance=0.5, min_intervals=4).tolist() == [0, 1, 2]


def test_chimerge_ignores_empty_bins_and_uses_leftmost_ties():
    spread = np.zeros((9, 2), dtype=int)
    spread[[0, 3, 4, 8]] = HAND
    assert chimerge(spread, significance=0.5).tolist() == [3, 4]
    # four identical mixed bins: every chi2 is 0, ties go left; stop at 2
    same = np.ones((4, 2), dtype=int)
    assert chimerge(same, max_intervals=3, min_intervals=3).tolist() == [1, 2]
    assert chimerge(np.ones((4, 1)), min_intervals=2).tolist() == [2]


# --------------------------------------------------------------------------
# unsupervised baselines
# --------------------------------------------------------------------------


def test_equal_width_exact():
    counts = np.ones((11, 2), dtype=int)
    values = np.arange(11.0)
    # intervals [0,2) [2,4) [4,6) [6,8) [8,10]
    assert equal_width(counts, values, n_intervals=5).tolist() == [1, 3, 5, 7]
    assert equal_width(counts, values, n_intervals=1).tolist() == []
    assert equal_width(counts, values, n_intervals=10).tolist() == list(range(9))
    # range of the non-empty bins only: 1..9, width 4, threshold 5
    counts[[0, 10]] = 0
    assert equal_width(counts, values, n_intervals=2).tolist() == [4]
    # an empty bin at the threshold: the cut goes after the last non-empty bin
    counts[4] = 0
    assert equal_width(counts, values, n_intervals=2).tolist() == [3]
    # an empty interval gives no cut
    assert equal_width(np.ones((3, 1)), [0.0, 0.1, 10.0], n_intervals=4).tolist() == [1]
    assert equal_width(np.ones((3, 1)), [5.0, 5.0, 5.0], n_intervals=4).tolist() == []


def test_equal_frequency_exact():
    values = np.arange(10.0)
    assert equal_frequency(np.ones((10, 1)), values, n_intervals=5).tolist() == [1, 3, 5, 7]
    assert equal_frequency(np.ones((10, 1)), values, n_intervals=1).tolist() == []
    # a heavy bin: all three quantiles land on it, one cut only
    heavy = np.array([[1], [10], [1]])
    assert equal_frequency(heavy, np.arange(3.0), n_intervals=2).tolist() == [1]
    assert equal_frequency(heavy, np.arange(3.0), n_intervals=4).tolist() == [1]
    # empty bins are skipped: sizes 2 . 2 . 2 2, median after the second bin of 2
    sizes = np.array([[2], [0], [2], [0], [2], [2]])
    assert equal_frequency(sizes, np.arange(6.0), n_intervals=2).tolist() == [2]
    # a cut after the last non-empty bin would separate nothing
    last_heavy = np.array([[1], [0], [0], [9]])
    assert equal_frequency(last_heavy, np.arange(4.0), n_intervals=2).tolist() == []
    # class columns are summed
    two = np.array([[1, 1], [0, 2], [2, 0], [1, 1]])
    assert equal_frequency(two, np.arange(4.0), n_intervals=4).tolist() == [0, 1, 2]


# --------------------------------------------------------------------------
# validation and speed
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(METHODS))
def test_invalid_counts(name):
    method = METHODS[name]
    with pytest.raises(ValueError, match=r"counts must be a 2-D array.*shape \(3,\)"):
        method(np.ones(3), np.arange(3.0))
    with pytest.raises(ValueError, match=r"counts must be non-negative.*counts\[1, 0\] = -1"):
        method(np.array([[1, 0], [-1, 2]]), np.arange(2.0))
    with pytest.raises(ValueError, match="counts must be finite"):
        method(np.array([[1.0, np.nan]]), np.arange(1.0))
    with pytest.raises(ValueError, match="counts must hold integer or float"):
        method(np.array([["a", "b"]]), np.arange(1.0))
    with pytest.raises(ValueError, match=r"values must have shape \(2,\).*got shape \(3,\)"):
        method(np.ones((2, 2)), np.arange(3.0))
    with pytest.raises(ValueError, match=r"values must be in non-decreasing order.*values\[0\] = 2"):
        method(np.ones((2, 2)), np.array([2.0, 1.0]))


@pytest.mark.parametrize("method", [equal_width, equal_frequency])
def test_invalid_unsupervised_params(method):
    with pytest.raises(ValueError, match=r"values must be an array of shape \(2,\).*got None"):
        method(np.ones((2, 2)), None)
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(ValueError, match=rf"n_intervals must be an integer >= 1; got {bad!r}"):
            method(np.ones((2, 2)), np.arange(2.0), n_intervals=bad)


def test_invalid_chimerge_params():
    for bad in (0, 1, 1.5, -0.1, True, "0.05"):
        with pytest.raises(ValueError, match=rf"significance must be a float in the open interval \(0, 1\); got {bad!r}"):
            chimerge(HAND, significance=bad)
    with pytest.raises(ValueError, match="min_intervals must be an integer >= 1; got 0"):
        chimerge(HAND, min_intervals=0)
    with pytest.raises(ValueError, match="max_intervals must be >= min_intervals = 3; got 2"):
        chimerge(HAND, min_intervals=3, max_intervals=2)


@pytest.mark.parametrize("method", SUPERVISED, ids=lambda f: f.__name__)
def test_ten_thousand_bins_take_milliseconds(method):
    rng = np.random.default_rng(3)
    p = np.repeat(rng.random(100), 100)  # 100 plateaus of the class-1 rate
    counts = np.stack([rng.binomial(50, p), rng.binomial(50, 1 - p)], axis=1)
    method(counts)
    start = time.perf_counter()
    cuts = method(counts)
    elapsed = time.perf_counter() - start
    assert cuts.size > 0
    assert elapsed < 1.0  # measured ~5-15 ms; a loose bound against quadratic slips
