"""scikit-learn's tree methods on both estimators: ``apply`` (the leaf predictions read),
``decision_path`` (a sparse indicator of the nodes passed), ``get_depth``, ``get_n_leaves`` and
``cost_complexity_pruning_path`` (the weakest-link sequence of the grown tree, checked against
scikit-learn's own on scikit-learn's trees); ``fold_trees_`` says why it is empty."""

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from dasktree import DaskTreeClassifier
from dasktree.binning.spec import BinSpec, FeatureBins
from dasktree.binning.target import TargetScale
from dasktree.io.schema import NUMERIC
from dasktree.model.model import Model, TreeModel
from dasktree.model.prune import node_risk
from dasktree import DaskTreeRegressor
from dasktree.regress.task import REGRESSION
from dasktree.split.node_tests import numeric_test


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 9, size=n).astype(float),
                      "c": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.05, "a"] = np.nan
    score = X["a"].fillna(0) + 0.3 * X["b"] - 0.5 * X["c"] + rng.normal(scale=0.8, size=n)
    y_class = np.digitize(score, [0.5, 1.8])
    y_value = np.round(score * 10) / 10
    return X, y_class, y_value


@pytest.fixture(scope="module")
def fitted():
    X, y_class, y_value = _data()
    clf = DaskTreeClassifier(max_depth=6, cv=4).fit(X, y_class)
    reg = DaskTreeRegressor(max_depth=6, cv=4).fit(X, y_value)
    return X, clf, reg


def _naive_path(tree, leaf):
    parent = {c: i for i, kids in enumerate(tree.children) for c in kids}
    path = [leaf]
    while path[-1] != 0:
        path.append(parent[path[-1]])
    return path[::-1]


@pytest.mark.parametrize("which", ["clf", "reg"])
def test_apply_gives_the_leaf_predict_reads(fitted, which):
    X, clf, reg = fitted
    est = clf if which == "clf" else reg
    leaves = est.apply(X)
    assert leaves.shape == (len(X),) and leaves.dtype == np.intp
    assert all(est.tree_.tests[i] is None for i in np.unique(leaves))
    if which == "clf":
        np.testing.assert_array_equal(est.predict_proba(X), est.tree_.value[leaves])
        np.testing.assert_array_equal(est.predict(X), est.classes_[est.tree_.value[leaves].argmax(axis=1)])
    else:
        np.testing.assert_array_equal(est.predict(X), est.model_.node_values()[leaves])
    frame = dd.from_pandas(X, npartitions=3)
    lazy = est.apply(frame)
    np.testing.assert_array_equal(lazy.compute(), leaves)


@pytest.mark.parametrize("which", ["clf", "reg"])
def test_decision_path_is_the_root_to_leaf_walk(fitted, which):
    X, clf, reg = fitted
    est = clf if which == "clf" else reg
    leaves = est.apply(X)
    indicator = est.decision_path(X)
    assert isinstance(indicator, scipy.sparse.csr_matrix)
    assert indicator.shape == (len(X), est.tree_.n_nodes) and indicator.dtype == np.intp
    assert set(np.unique(indicator.data)) == {1}
    for i in range(len(X)):
        row = indicator.indices[indicator.indptr[i]:indicator.indptr[i + 1]]
        assert row.tolist() == _naive_path(est.tree_, int(leaves[i]))
    np.testing.assert_array_equal(np.asarray(indicator.sum(axis=1)).ravel(), est.tree_.depth[leaves] + 1)
    # scikit-learn's reading of it: the leaves are the paths' deepest nodes, the root is on every path
    assert indicator[:, 0].sum() == len(X)
    assert est.get_depth() == int((np.asarray(indicator.sum(axis=1)).ravel() - 1).max()) == est.tree_.max_depth
    assert est.get_n_leaves() == est.tree_.n_leaves == sum(t is None for t in est.tree_.tests)
    with pytest.raises(Exception, match="apply"):
        est.decision_path(dd.from_pandas(X, npartitions=2))


def _features(n):
    upper = np.array([0.0, 1.0])
    return tuple(FeatureBins(f"x{j}", NUMERIC, upper, np.append(upper, upper[-1]), True) for j in range(n))


def _as_tree(sk_tree, counts):
    """scikit-learn's tree as dasktree's arrays (its node ids kept: depth-first, parents before children)."""
    left, right = sk_tree.children_left, sk_tree.children_right
    n = sk_tree.node_count
    test = numeric_test(0, np.array([1]), np.array([0.0, 1.0]), 0)
    children = [[] if left[i] < 0 else [int(left[i]), int(right[i])] for i in range(n)]
    depth = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for c in children[i]:
            depth[c] = depth[i] + 1
    return TreeModel([None if not kids else test for kids in children], children, counts, depth)


def _ends_of_ties(alphas):
    """The steps after which no collapse of an equal alpha is pending: nodes of one alpha (to the last
    bits, which the two implementations round apart) may collapse in either order in between."""
    alphas = np.asarray(alphas)
    close = np.isclose(alphas[1:], alphas[:-1], rtol=1e-9, atol=1e-15)
    ends = np.append(~close, True)
    assert ends.mean() > 0.5  # most steps are no tie: the comparison is not vacuous
    return ends


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("seed", [0, 1])
def test_pruning_path_is_scikit_learns_on_its_own_tree(criterion, seed):
    X, y, _ = _data(seed=seed)
    X = X.fillna(0).to_numpy()
    sk = DecisionTreeClassifier(criterion=criterion, max_depth=8, random_state=seed).fit(X, y)
    t = sk.tree_
    counts = np.rint(t.value[:, 0, :] * t.weighted_n_node_samples[:, None]).astype(np.int64)
    model = Model(spec=BinSpec(_features(3), (0, 1, 2)), target="y", tree=_as_tree(t, counts),
                  params={"criterion": criterion})
    alphas, impurities = model.pruning_path()
    want = sk.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(alphas, want.ccp_alphas, rtol=1e-9, atol=1e-12)
    settled = _ends_of_ties(want.ccp_alphas)
    np.testing.assert_allclose(impurities[settled], want.impurities[settled], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_regression_pruning_path_is_scikit_learns_on_its_own_tree(seed):
    X, _, y = _data(seed=seed)
    X = X.fillna(0).to_numpy()
    y = np.round((y - y.min()) * 10)  # whole numbers: the fixed point with step 1 holds them exactly
    sk = DecisionTreeRegressor(max_depth=7, random_state=seed).fit(X, y)
    through = sk.decision_path(X).toarray().astype(np.int64)  # rows x nodes
    counts = np.column_stack([through.sum(axis=0), through.T @ y.astype(np.int64)])
    spec = BinSpec(_features(3), (), target=TargetScale(0.0, 1.0))
    model = Model(spec=spec, target="y", tree=_as_tree(sk.tree_, counts), task=REGRESSION,
                  params={"criterion": "squared_error"},
                  report={"sums_of_squares": {"training": int((y.astype(np.int64) ** 2).sum()), "folds": []}})
    alphas, impurities = model.pruning_path()
    want = sk.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(alphas, want.ccp_alphas, rtol=1e-7, atol=1e-9)
    settled = _ends_of_ties(want.ccp_alphas)
    np.testing.assert_allclose(impurities[settled], want.impurities[settled], rtol=1e-9, atol=1e-9)


def test_the_pruning_path_of_the_estimator(fitted):
    """Its distinct alphas are the cp table's; pruning at each gives a tree of that impurity; with X, y
    it is the path of a copy fitted on them (scikit-learn's habit)."""
    X, clf, reg = fitted
    path = clf.cost_complexity_pruning_path()
    assert path.ccp_alphas[0] == 0.0 and np.all(np.diff(path.impurities) >= -1e-12)
    grown = clf.model_.grown_tree
    assert path.ccp_alphas.size == path.impurities.size <= grown.n_nodes - grown.n_leaves + 1
    np.testing.assert_allclose(np.unique(path.ccp_alphas), clf.cp_table_["alpha"].to_numpy(), rtol=1e-12)
    criterion = clf.model_.params["criterion"]
    for alpha in np.unique(path.ccp_alphas)[:: max(1, path.ccp_alphas.size // 8)]:
        tree = DaskTreeClassifier.from_model(clf.model_).prune_model(float(alpha)).tree_
        leaves = [i for i, test in enumerate(tree.tests) if test is None]
        last = np.flatnonzero(path.ccp_alphas == alpha)[-1]
        assert node_risk(tree.counts, criterion)[leaves].sum() == pytest.approx(path.impurities[last], rel=1e-12)
    again = DaskTreeClassifier(max_depth=6, cv=4).cost_complexity_pruning_path(X, _data()[1])
    np.testing.assert_array_equal(again.ccp_alphas, path.ccp_alphas)
    np.testing.assert_array_equal(again.impurities, path.impurities)
    regression = reg.cost_complexity_pruning_path()
    np.testing.assert_allclose(np.unique(regression.ccp_alphas), reg.cp_table_["alpha"].to_numpy(), rtol=1e-12)
    table = reg.cp_table_.set_index("alpha")["train_mse"]
    for alpha, impurity in zip(regression.ccp_alphas, regression.impurities):
        if alpha == regression.ccp_alphas[-1] or alpha not in table.index:
            continue
        last = np.flatnonzero(regression.ccp_alphas == alpha)[-1]
        assert regression.impurities[last] == pytest.approx(table[alpha], rel=1e-9)


def test_fold_trees_say_why_they_are_empty():
    X, y, _ = _data(400)
    with pytest.warns(UserWarning, match="fitted with cv but not keep_fold_trees=True"):
        assert DaskTreeClassifier(max_depth=3, cv=3).fit(X, y).fold_trees_ == []
    with pytest.warns(UserWarning, match="fitted without cv, so it has no fold trees"):
        assert DaskTreeClassifier(max_depth=3).fit(X, y).fold_trees_ == []
    assert len(DaskTreeClassifier(max_depth=3, cv=3, keep_fold_trees=True).fit(X, y).fold_trees_) == 3
