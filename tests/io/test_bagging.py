"""Bootstrap multiplicities drawn from the row hash: the compiled draw against its numpy twin, the
Poisson law, and the bags following the rows (not their place)."""

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.errors import ParameterError
from dasktree.io.bagging import BagSpec, bag_salts, multiplicities, multiplicities_naive, poisson_thresholds
from dasktree.io.folds import fold_salts
from dasktree.io.sources import Part


@settings(max_examples=50, deadline=None)
@given(hashes=st.lists(st.integers(0, 2**64 - 1), max_size=200), seed=st.integers(0, 2**40),
       members=st.integers(1, 6), mean=st.sampled_from([1.0, 0.5, 0.1, 2.5]))
def test_the_compiled_draw_equals_its_twin(hashes, seed, members, mean):
    h = np.asarray(hashes, dtype=np.uint64)
    np.testing.assert_array_equal(multiplicities(h, seed, members, mean), multiplicities_naive(h, seed, members, mean))


@pytest.mark.parametrize("mean", [1.0, 0.3])
def test_the_draws_follow_poisson(mean):
    h = np.random.default_rng(1).integers(0, 2**63, size=200_000, dtype=np.uint64)
    w = multiplicities(h, 7, 3, mean)
    for m in range(3):
        counts = np.bincount(w[m], minlength=6)[:6] / w.shape[1]
        expected = [math.exp(-mean) * mean**k / math.factorial(k) for k in range(6)]
        np.testing.assert_allclose(counts, expected, atol=0.005)
    assert abs(float(np.corrcoef(w[0], w[1])[0, 1])) < 0.01  # members draw independently


def test_thresholds_increase_below_one():
    t = poisson_thresholds(1.0)
    assert np.all(np.diff(t.astype(np.float64)) > 0) and int(t[-1]) < 2**53
    with pytest.raises(ParameterError):
        poisson_thresholds(0.0)


def test_the_bags_salts_are_not_the_folds():
    assert not set(bag_salts(0, 20).tolist()) & set(fold_salts(0, 20).tolist())


def test_a_rows_bag_follows_its_content_not_its_place():
    table = pa.table({"x": [1.0, 2.0, 3.0, 2.0, None], "c": ["a", "b", "a", "b", "a"], "y": [0, 1, 0, 1, 1]})
    spec = BagSpec(5, seed=3, content=("x", "c", "y"))
    whole = spec.parts_of(table, Part(0, "t", 0, 5))
    reordered = spec.parts_of(table.take([4, 3, 2, 1, 0]).select(["y", "c", "x"]), Part(0, "t", 0, 5))
    np.testing.assert_array_equal(whole[:, ::-1], reordered)
    np.testing.assert_array_equal(whole[:, 1], whole[:, 3])  # identical rows share their bags
    assert whole.dtype == np.int16 and whole.shape == (5, 5)


def test_without_bootstrap_every_row_counts_once():
    table = pa.table({"x": [1.0, 2.0], "y": [0, 1]})
    np.testing.assert_array_equal(BagSpec(3, bootstrap=False).parts_of(table, Part(0, "t", 0, 2)), np.ones((3, 2)))
