"""The estimator contract, stopping rules, importances and exports."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.tree import DecisionTreeClassifier

from dasktree import DaskTreeClassifier, export_dot, export_text
from dasktree.testing import mixed_frame


def test_get_set_params_round_trip():
    clf = DaskTreeClassifier(max_depth=3, criterion="entropy")
    params = clf.get_params()
    assert params["max_depth"] == 3 and params["criterion"] == "entropy"
    clone = DaskTreeClassifier(**params)
    assert clone.get_params() == params
    clone.set_params(max_depth=7)
    assert clone.max_depth == 7
    with pytest.raises(ValueError, match="Invalid parameter 'depth'"):
        clone.set_params(depth=3)
    assert repr(DaskTreeClassifier(max_depth=2)) == "DaskTreeClassifier(max_depth=2)"


def test_fitted_attributes_and_numpy_input():
    X, y = load_iris(return_X_y=True)
    clf = DaskTreeClassifier(max_depth=3).fit(X, y)
    assert list(clf.classes_) == [0, 1, 2]
    assert clf.n_features_in_ == 4
    assert not hasattr(clf, "feature_names_in_")  # scikit-learn's rule: names only from named columns
    assert clf.model_.features == ["x0", "x1", "x2", "x3"]
    assert clf.predict_proba(X).shape == (150, 3)
    assert clf.score(X, y) > 0.95
    assert clf.report_["passes"] == clf.report_["depth"] + 1


def test_max_leaf_nodes_is_a_budget_spent_on_the_best_splits():
    # scikit-learn's best-first semantics, so its criterion (the default gain ratio's pruning may
    # merge a leaf the budget made)
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    for budget in (2, 5, 9):
        clf = DaskTreeClassifier(max_leaf_nodes=budget, max_bins=1024).fit(X, y)
        assert clf.tree_.n_leaves <= budget
    full = DaskTreeClassifier(max_depth=4, max_bins=1024, criterion="gini").fit(X, y)
    assert DaskTreeClassifier(max_depth=4, max_leaf_nodes=5, max_bins=1024,
                              criterion="gini").fit(X, y).tree_.n_leaves == 5
    assert full.tree_.n_leaves > 5


def test_min_impurity_decrease_and_min_samples_match_sklearn_semantics():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    for params in ({"min_impurity_decrease": 0.01}, {"min_samples_leaf": 20}, {"min_samples_split": 60}):
        ours = DaskTreeClassifier(max_depth=6, max_bins=1024, prune=None, criterion="gini", **params).fit(X, y)
        sk = DecisionTreeClassifier(max_depth=6, random_state=0, **params).fit(X, y)
        assert ours.tree_.n_leaves == sk.get_n_leaves(), params
        leaves = ours.tree_.counts[[i for i, t in enumerate(ours.tree_.tests) if t is None]].sum(axis=1)
        if "min_samples_leaf" in params:
            assert leaves.min() >= 20


def test_feature_importances_match_sklearn():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    ours = DaskTreeClassifier(max_depth=3, max_bins=1024, criterion="gini").fit(X, y)
    # scikit-learn breaks ties between equally good features at random: one of its seeds agrees
    candidates = [DecisionTreeClassifier(max_depth=3, random_state=s).fit(X, y).feature_importances_
                  for s in range(10)]
    assert any(np.allclose(ours.feature_importances_, c, atol=1e-9) for c in candidates)
    assert ours.feature_importances_.sum() == pytest.approx(1.0)


def test_exports_name_features_and_categories():
    frame = mixed_frame(1500, seed=2)
    clf = DaskTreeClassifier(max_depth=3, nominal_split="multiway").fit(frame, target="label")
    text = export_text(clf.model_)
    assert "|--- " in text and "class: " in text
    assert any(name in text for name in ("x <=", "k <=", "colour in {", "flag in {"))
    dot = export_dot(clf.model_)
    assert dot.startswith("digraph dasktree {") and dot.rstrip().endswith("}")
    assert dot.count("->") == clf.tree_.n_nodes - 1


def test_missing_values_follow_the_learned_default_at_prediction():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = (x > 0).astype(int)
    x_missing = x.copy()
    x_missing[:80] = np.nan
    y[:80] = 1  # the missing rows are all class 1: they should join the x > 0 child
    clf = DaskTreeClassifier(max_depth=1).fit(pd.DataFrame({"x": x_missing}), y)
    assert clf.tree_.tests[0].default == 1
    assert clf.predict(pd.DataFrame({"x": [np.nan, -5.0, 5.0]})).tolist() == [1, 0, 1]


def test_unseen_category_at_prediction_goes_to_the_default_child():
    frame = pd.DataFrame({"c": ["a"] * 50 + ["b"] * 50 + ["c"] * 5, "y": [0] * 50 + [1] * 55})
    clf = DaskTreeClassifier(max_depth=1).fit(frame, target="y")
    test = clf.tree_.tests[0]
    probe = pd.DataFrame({"c": ["zzz", None]})
    expected = clf.classes_[np.argmax(clf.tree_.value[clf.tree_.children[0][test.default]])]
    assert clf.predict(probe).tolist() == [expected, expected]


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint16", "float64", "str"])
def test_labels_are_checked_and_warned_of_as_scikit_learn_does(dtype):
    """Integer labels skip scikit-learn's target-type walk (they are classes whatever they are) and keep
    its warning when most rows have a class of their own; other labels go through it."""
    import warnings

    X = np.arange(60.0).reshape(30, 2)
    y = (np.arange(30) % 20).astype(dtype)  # 20 classes for 30 rows: more than half
    for make in (DaskTreeClassifier, DecisionTreeClassifier):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            make(max_depth=2).fit(X, y)
        assert [str(w.message) for w in seen if "50%" in str(w.message)] == [
            "The number of unique classes is greater than 50% of the number of samples. `y` could represent a "
            "regression problem, not a classification problem."], make
    few = (np.arange(30) % 3).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DaskTreeClassifier(max_depth=2).fit(X, few)
    with pytest.raises(ValueError, match="one class"):
        DaskTreeClassifier().fit(X, np.zeros(30).astype(dtype))
    with pytest.raises(ValueError, match="Unknown label type"):
        DaskTreeClassifier().fit(X, np.linspace(0, 1, 30))
