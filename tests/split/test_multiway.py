"""Multi-way numeric tests in the learner: growing, the forest, prediction, JSON and export."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.split.choices import best_split
from dasktree.split.multiway import selection_score
from dasktree.split.search import AttributeLayout, SplitParams


@pytest.fixture(scope="module")
def f2():
    return agrawal.generate(20000, function=2, seed=4)


def test_age_bands_become_one_three_way_test(f2):
    """F2 depends on age through the bands < 40, 40..60, >= 60: one 3-way test, not two binary ones."""
    clf = DaskTreeClassifier(max_depth=3, max_arity=3, criterion="entropy").fit(f2, target="class")
    arities = [t.arity for t in clf.tree_.tests if t is not None]
    assert 3 in arities
    ages = [t for t in clf.tree_.tests if t is not None and clf.feature_names_in_[t.attribute] == "age"]
    assert any(t.arity == 3 and np.allclose(t.thresholds, [39.5, 59.5]) for t in ages)


def test_max_arity_two_is_the_binary_learner(f2):
    binary = DaskTreeClassifier(max_depth=4, criterion="entropy").fit(f2, target="class")
    two = DaskTreeClassifier(max_depth=4, criterion="entropy", max_arity=2).fit(f2, target="class")
    assert binary.model_.dumps() == two.model_.dumps()


def test_multiway_tree_predicts_the_same_from_object_json_and_forest(tmp_path, f2):
    clf = DaskTreeClassifier(max_depth=4, max_arity=5, selection="gain_ratio").fit(f2, target="class")
    clf.save(tmp_path / "m.json")
    loaded = dasktree.load(tmp_path / "m.json")
    forest = DaskTreeClassifier(max_depth=4, max_arity=5, selection="gain_ratio", cv=3).fit(f2, target="class")
    probe = agrawal.generate(3000, function=2, seed=99).drop(columns="class")
    expected = clf.predict_proba(probe)
    np.testing.assert_array_equal(loaded.predict_proba(probe), expected)
    np.testing.assert_array_equal(forest.predict_proba(probe), expected)
    assert forest.model_.tree.to_json() == clf.model_.tree.to_json()  # the forest's main tree is the fit
    text = clf.export_text()
    assert " < " in text  # a middle interval "a < x <= b"
    assert clf.export_dot().count("->") == clf.tree_.n_nodes - 1


def test_threshold_routing_matches_raw_values(f2):
    """Encoded routing and the readable thresholds agree: child i holds t[i-1] < x <= t[i]."""
    clf = DaskTreeClassifier(max_depth=1, max_arity=5, criterion="entropy").fit(f2, target="class")
    test = clf.tree_.tests[0]
    x = f2[clf.feature_names_in_[test.attribute]].to_numpy()
    expected_child = np.searchsorted(np.asarray(test.thresholds), x, side="left")
    leaves = clf.model_.leaves(pa.Table.from_pandas(f2, preserve_index=False))
    np.testing.assert_array_equal(np.asarray(clf.tree_.children[0])[expected_child], leaves)


@pytest.mark.parametrize("selection", ["balanced_gain", "gain_ratio", "distance"])
def test_selection_functions(selection):
    perfect = np.array([[10, 0], [0, 10]])
    assert selection_score(perfect, 1.0, "balanced_gain") == 1.0
    assert selection_score(perfect, 1.0, "gain_ratio") == 1.0
    assert selection_score(perfect, 1.0, "distance") == pytest.approx(1.0)  # identical partitions: d = 0
    # splitting a pure child further adds nothing but arity: every selection prefers the 2-way split
    three = np.array([[5, 0], [5, 0], [0, 10]])
    assert selection_score(three, 1.0, selection) < selection_score(perfect, 1.0, selection)


def test_missing_values_join_the_best_child_of_a_multiway_test():
    hist = np.array([[0, 6], [5, 0], [5, 0], [0, 5], [0, 5], [5, 0], [5, 0]])
    upper = np.arange(5, dtype=float) + 0.5
    layout = AttributeLayout(np.array([0]), np.array([7]), ("numeric",), (upper,), (np.arange(6.0),))
    found = best_split(hist, layout, SplitParams("entropy", max_arity=3, selection="balanced_gain"))
    assert found.test.arity == 3
    assert found.test.thresholds == (1.5, 3.5)
    assert found.test.default == 1  # missing (class 1) joins the class-1 middle interval
    np.testing.assert_array_equal(found.child_counts, [[10, 0], [0, 16], [10, 0]])


def test_bad_multiway_parameters():
    frame = pd.DataFrame({"a": [1, 2, 3, 4], "y": [0, 0, 1, 1]})
    with pytest.raises(dasktree.InputError, match="max_arity must be an integer in 2..64, got 1"):
        DaskTreeClassifier(max_arity=1).fit(frame, target="y")
    with pytest.raises(dasktree.InputError, match="selection must be one of"):
        DaskTreeClassifier(selection="gain").fit(frame, target="y")
