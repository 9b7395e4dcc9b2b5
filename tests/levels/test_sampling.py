"""Feature sampling per (member, node): the vectorised draw against its plain-Python twin, exactly
``n_sampled`` attributes, uniform, and keyed by the node's path alone."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.levels.sampling import child_key, feature_mask, feature_mask_naive, resolve_max_features


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**62), members=st.lists(st.integers(0, 500), min_size=0, max_size=20),
       n_features=st.integers(1, 30), data=st.data())
def test_the_draw_equals_its_twin(seed, members, n_features, data):
    keys = data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=len(members), max_size=len(members)))
    k = data.draw(st.integers(1, n_features))
    mask = feature_mask(seed, members, keys, n_features, k)
    np.testing.assert_array_equal(mask, feature_mask_naive(seed, members, keys, n_features, k))
    assert (mask.sum(axis=0) == k).all()


def test_the_draw_is_uniform_over_attributes_and_differs_by_member_and_node():
    keys = [child_key(child_key(0, i % 2), i) for i in range(4000)]
    mask = feature_mask(11, np.arange(4000) % 50, keys, 10, 3)
    share = mask.mean(axis=1)
    np.testing.assert_allclose(share, 0.3, atol=0.03)
    assert not np.array_equal(feature_mask(11, [0], [5], 10, 3), feature_mask(11, [1], [5], 10, 3)) \
        or not np.array_equal(feature_mask(11, [0], [6], 10, 3), feature_mask(11, [0], [5], 10, 3))


def test_node_keys_are_paths():
    assert child_key(0, 0) != child_key(0, 1)
    assert child_key(child_key(0, 0), 1) != child_key(child_key(0, 1), 0)


@pytest.mark.parametrize("value,n,expected", [("sqrt", 16, 4), ("sqrt", 2, 1), ("log2", 16, 4), ("log2", 1, 1),
                                               (None, 7, 7), (3, 7, 3), (30, 7, 7), (0.5, 7, 3), (0.01, 7, 1),
                                               (1.0, 7, 7)])
def test_max_features_as_scikit_learn_reads_it(value, n, expected):
    assert resolve_max_features(value, n) == expected
    from sklearn.ensemble import RandomForestClassifier  # its own reading, where it has one

    if not (isinstance(value, int) and value > n):
        X = np.zeros((4, n))
        X[:, 0] = [0, 1, 2, 3]
        rf = RandomForestClassifier(1, max_features=value).fit(X, [0, 1, 0, 1])
        assert rf.estimators_[0].max_features_ == expected
