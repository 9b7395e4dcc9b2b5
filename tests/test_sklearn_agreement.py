"""Agreement with scikit-learn's DecisionTreeClassifier on data with few distinct values.

Same criterion, binary splits, same depth: the root test is one scikit-learn
chooses (it breaks ties between equally good features at random, so we ask
it with several seeds), the root impurity decrease is identical, and the
training accuracy is within 0.1 percentage points.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier

from dasktree import DaskTreeClassifier


def _generated(seed, n=3000, n_features=6, levels=12, n_classes=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, n_features)).astype(float)
    score = X[:, 0] * 1.0 - X[:, 1] * 0.7 + (X[:, 2] > 6) * 3 + rng.normal(scale=2.0, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return pd.DataFrame(X, columns=[f"f{i}" for i in range(n_features)]), y


def _bundled(name):
    loader = {"iris": datasets.load_iris, "wine": datasets.load_wine,
              "breast_cancer": datasets.load_breast_cancer, "digits": datasets.load_digits}[name]
    X, y = loader(return_X_y=True, as_frame=True)
    return X, y.to_numpy()


CASES = [("iris", None), ("wine", None), ("breast_cancer", None), ("digits", None),
         ("generated", 0), ("generated", 1), ("generated", 2)]


def _root(sk):
    t = sk.tree_
    left, right = t.children_left[0], t.children_right[0]
    n = t.weighted_n_node_samples
    decrease = t.impurity[0] - (n[left] * t.impurity[left] + n[right] * t.impurity[right]) / n[0]
    return t.feature[0], t.threshold[0], decrease


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("name,seed", CASES)
def test_root_split_and_accuracy_match_sklearn(name, seed, criterion):
    X, y = _generated(seed) if name == "generated" else _bundled(name)
    depth = 5
    ours = DaskTreeClassifier(criterion=criterion, max_depth=depth, max_bins=1024, prune=None).fit(X, y)
    assert all(f["exact"] for f in ours.report_["features"])  # few distinct values: exact bins
    roots = set()
    for random_state in range(8):
        sk = DecisionTreeClassifier(criterion=criterion, max_depth=depth, random_state=random_state).fit(X, y)
        feature, threshold, decrease = _root(sk)
        roots.add((int(feature), float(threshold)))
        sk_accuracy = sk.score(X, y)
    test = ours.tree_.tests[0]
    counts = ours.tree_.counts
    n = counts.sum(axis=1).astype(float)
    from dasktree.split.criteria import entropy, gini
    imp = gini if criterion == "gini" else entropy
    kids = ours.tree_.children[0]
    our_decrease = imp(counts[0]) - sum(n[k] * imp(counts[k]) for k in kids) / n[0]
    # scikit-learn works in float32: compare thresholds at that precision
    assert any(f == test.attribute and np.isclose(t, test.thresholds[0], rtol=1e-6) for f, t in roots), roots
    assert our_decrease == pytest.approx(decrease, abs=1e-12)
    our_accuracy = ours.score(X, y)
    assert ours.report_["training_accuracy"] == pytest.approx(our_accuracy)
    assert abs(our_accuracy - sk_accuracy) <= 0.001 + 1e-12, (our_accuracy, sk_accuracy)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
def test_pruning_path_and_pruned_tree_match_sklearn(name):
    """Both grow the same full tree here (gini, exact thresholds): the weakest-link alphas are
    scikit-learn's ``cost_complexity_pruning_path``, and pruning at ``ccp_alpha`` keeps as many
    leaves and predicts the same."""
    from dasktree.model.prune import weakest_link

    X, y = _bundled(name)
    ours = DaskTreeClassifier(criterion="gini", prune=None, max_bins=1024).fit(X, y)
    sk = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert ours.tree_.n_leaves == sk.get_n_leaves()
    path = weakest_link(ours.tree_.children, ours.tree_.counts, "gini")
    theirs = sk.cost_complexity_pruning_path(X, y).ccp_alphas
    assert len(path.step_alphas) == len(theirs) - 1
    assert np.allclose(np.sort(path.step_alphas), np.sort(theirs[1:]), rtol=1e-9, atol=1e-15)
    alphas = path.alphas
    for alpha in (alphas[1:] + alphas[:-1]) / 2:
        pruned = DaskTreeClassifier(criterion="gini", ccp_alpha=float(alpha), max_bins=1024).fit(X, y)
        sk_pruned = DecisionTreeClassifier(random_state=0, ccp_alpha=alpha).fit(X, y)
        assert pruned.tree_.n_leaves == sk_pruned.get_n_leaves()
        assert (pruned.predict(X) == sk_pruned.predict(X)).mean() >= 0.99
