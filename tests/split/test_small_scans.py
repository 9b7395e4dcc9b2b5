"""The small-node grower's entropy arithmetic is the level search's, bit for bit.

The grower (:mod:`dasktree.split.small_grower`) takes a node's entropy and a binary test's split
information in compiled code from the ``log2`` table (:func:`dasktree.split.small_scans.entropy_of`,
:func:`~dasktree.split.small_scans.split_information`); the level search takes them with numpy
(:func:`dasktree.split.search.entropy_of_counts`). A last-bit difference would change a gain ratio, a
tie, and so a model: they must be equal to the bit, and both the entropy in bits.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.binary_kernel import log2_table
from dasktree.split.criteria import entropy
from dasktree.split.search import entropy_of_counts
from dasktree.split.small_scans import entropy_of, split_information


@settings(max_examples=300, deadline=None)
@given(counts=st.lists(st.integers(0, 5000), min_size=1, max_size=40).filter(lambda c: sum(c) > 0))
def test_the_grower_entropy_is_the_level_search_entropy(counts):
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    log2 = log2_table(float(n))
    got = entropy_of(counts, n, log2, np.zeros(counts.size))
    want = float(entropy_of_counts(counts[None])[0])
    assert got == want
    assert abs(got - float(entropy(counts))) <= 1e-12 * max(1.0, got)


@settings(max_examples=300, deadline=None)
@given(left=st.integers(1, 10**6), right=st.integers(1, 10**6))
def test_the_grower_split_information_is_the_level_search_one(left, right):
    log2 = log2_table(float(left + right))
    got = split_information(left, right, log2, np.zeros(2))
    want = float(entropy_of_counts(np.array([[left, right]]))[0])
    assert got == want
    assert abs(got - float(entropy(np.array([left, right])))) <= 1e-12


def test_a_pure_and_an_even_node():
    log2 = log2_table(16.0)
    assert entropy_of(np.array([0, 16, 0]), 16, log2, np.zeros(3)) == 0.0 == entropy_of_counts(np.array([0, 16, 0]))
    assert split_information(8, 8, log2, np.zeros(2)) == 1.0
