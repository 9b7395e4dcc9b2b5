"""bins_to_blocks, case by case against Elomaa & Rousu (001, Definition 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.blocks import Blocks, bins_to_blocks


def check(counts, blocks, last_bin, uniform):
    got = bins_to_blocks(np.array(counts))
    assert isinstance(got, Blocks)
    np.testing.assert_array_equal(got.counts, np.array(blocks).reshape(-1, np.shape(counts)[1]))
    np.testing.assert_array_equal(got.last_bin, last_bin)
    np.testing.assert_array_equal(got.uniform, uniform)
    assert got.n_blocks == len(last_bin)
    np.testing.assert_array_equal(got.boundary_points, list(last_bin)[:-1])
    return got


def test_adjacent_uniform_bins_of_one_class_merge():
    check([[2, 0], [3, 0], [1, 0]], [[6, 0]], [2], [True])
    check([[2, 0], [3, 0], [0, 1], [0, 4]], [[5, 0], [0, 5]], [1, 3], [True, True])


def test_uniform_bins_of_different_classes_do_not_merge():
    check([[2, 0], [0, 3]], [[2, 0], [0, 3]], [0, 1], [True, True])
    check(
        [[0, 0, 1], [1, 0, 0], [0, 0, 1]],
        [[0, 0, 1], [1, 0, 0], [0, 0, 1]],
        [0, 1, 2],
        [True, True, True],
    )


def test_mixed_bin_is_never_merged_with_a_uniform_neighbour():
    check(
        [[2, 0], [1, 1], [2, 0]],
        [[2, 0], [1, 1], [2, 0]],
        [0, 1, 2],
        [True, False, True],
    )
    # the mixed bin holds the uniform neighbour's class: still its own block
    check([[1, 3], [3, 0], [4, 0]], [[1, 3], [7, 0]], [0, 2], [False, True])


def test_mixed_bins_are_never_merged_even_with_the_same_distribution():
    check([[1, 1], [1, 1]], [[1, 1], [1, 1]], [0, 1], [False, False])
    check([[1, 2], [2, 4], [1, 2]], [[1, 2], [2, 4], [1, 2]], [0, 1, 2], [False] * 3)


def test_empty_bins_are_skipped():
    # uniform, empty, uniform of the same class: one block
    check([[2, 0], [0, 0], [1, 0]], [[3, 0]], [2], [True])
    # uniform, empty, uniform of another class: two blocks
    check([[2, 0], [0, 0], [0, 1]], [[2, 0], [0, 1]], [0, 2], [True, True])
    # an empty bin does not merge two mixed bins either
    check([[1, 1], [0, 0], [1, 1]], [[1, 1], [1, 1]], [0, 2], [False, False])
    # several empty bins between runs of one class
    check([[1, 0], [0, 0], [0, 0], [4, 0], [0, 0]], [[5, 0]], [3], [True])


def test_all_empty_input_gives_zero_blocks():
    for counts in (np.zeros((4, 3), dtype=np.int64), np.zeros((0, 2), dtype=np.int64)):
        got = bins_to_blocks(counts)
        assert got.n_blocks == 0
        assert got.counts.shape == (0, counts.shape[1])
        assert got.last_bin.shape == (0,) and got.uniform.shape == (0,)
        assert got.boundary_points.shape == (0,)


def test_last_bin_indexes_the_original_bins():
    counts = [[0, 0], [1, 0], [0, 0], [1, 0], [0, 0], [0, 2], [0, 0], [1, 1], [0, 0]]
    got = check(counts, [[2, 0], [0, 2], [1, 1]], [3, 5, 7], [True, True, False])
    assert got.last_bin.dtype.kind in "iu"


def test_single_class_and_single_bin():
    check([[1], [0], [2]], [[3]], [2], [True])
    check([[3, 1]], [[3, 1]], [0], [False])


def test_block_counts_stay_integer_and_keep_the_totals():
    counts = np.array([[2, 0], [3, 0], [1, 2], [0, 0], [0, 5]], dtype=np.uint32)
    got = bins_to_blocks(counts)
    assert got.counts.dtype.kind == "u"  # np.add.reduceat widens uint32 to uint64
    np.testing.assert_array_equal(got.counts.sum(axis=0), counts.sum(axis=0))


def test_bad_shape_raises():
    with pytest.raises(ValueError, match="2-D"):
        bins_to_blocks(np.zeros(3))


@st.composite
def histograms(draw):
    n_classes = draw(st.integers(1, 3))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, 2), min_size=n_classes, max_size=n_classes),
            min_size=0,
            max_size=12,
        )
    )
    return np.array(rows, dtype=np.int64).reshape(len(rows), n_classes)


@settings(max_examples=150, deadline=None)
@given(histograms())
def test_block_borders_are_exactly_the_boundary_points(counts):
    """001, Definition 1: a cut between two consecutive non-empty bins is a
    boundary point iff some example left of it and some example right of it
    have different classes."""
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    expected = [
        int(a)
        for a, b in zip(nonempty[:-1], nonempty[1:])
        if any(
            ca != cb
            for ca in np.flatnonzero(counts[a])
            for cb in np.flatnonzero(counts[b])
        )
    ]
    got = bins_to_blocks(counts)
    assert got.boundary_points.tolist() == expected
    np.testing.assert_array_equal(got.counts.sum(axis=0), counts.sum(axis=0))
    assert got.n_blocks == (len(expected) + 1 if nonempty.size else 0)
