"""Where scikit-learn's DecisionTreeRegressor and dasktree grow the same tree, they agree exactly.

The features are well separated (distinct values at least 1e-3 apart, exact bins: scikit-learn does not
cut between values closer than 1e-7) and the targets continuous (no ties between splits)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from dasktree import DaskTreeRegressor
from dasktree.regress.fitting import CP_ROWS


def _data(n=1500, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    X = np.stack([rng.permutation(n) * 1e-2, rng.integers(0, 40, size=n) * 0.5, rng.permutation(n) * 1.0], axis=1)
    y = np.sin(X[:, 0] / 3) * 3 + (X[:, 1] > 10) * 2 + X[:, 2] / n + rng.normal(scale=0.2, size=n)
    if positive:
        y = np.exp(y / 3)
    return pd.DataFrame(X, columns=["a", "b", "c"]), y


@pytest.mark.parametrize("params", [
    dict(max_depth=4),
    dict(max_depth=7, min_samples_leaf=5),
    dict(max_depth=6, min_samples_split=40),
    dict(max_leaf_nodes=17),
    dict(max_depth=8, min_impurity_decrease=0.002),
    dict(max_depth=5, criterion="poisson"),
    dict(max_depth=6, ccp_alpha=0.01),
])
def test_same_tree_as_scikit_learn(params):
    X, y = _data(positive=params.get("criterion") == "poisson")
    ours = DaskTreeRegressor(max_bins=4096, prune="none", **params).fit(X, y)  # scikit-learn grows it whole
    theirs = DecisionTreeRegressor(random_state=0, **params).fit(X.to_numpy(), y)
    assert ours.tree_.n_leaves == theirs.get_n_leaves()
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X.to_numpy()), rtol=0, atol=1e-8 * np.ptp(y))
    assert ours.score(X, y) == pytest.approx(theirs.score(X.to_numpy(), y), abs=1e-9)


def test_pruning_path_is_scikit_learns():
    X, y = _data(seed=1)
    ours = DaskTreeRegressor(max_bins=4096, max_depth=6, prune="none").fit(X, y)  # grown whole
    path = DecisionTreeRegressor(random_state=0, max_depth=6).cost_complexity_pruning_path(X.to_numpy(), y)
    alphas, first = np.unique(path.ccp_alphas, return_index=True)
    table = ours.cp_table_
    np.testing.assert_allclose(table["alpha"].to_numpy(), alphas, rtol=1e-7, atol=1e-12)
    # the training MSE of each subtree is the impurity scikit-learn gives at its alpha
    np.testing.assert_allclose(table["train_mse"].to_numpy(), path.impurities[first], rtol=1e-6)
    # the default (pruned at cp) grows only until that pruning must cut: its table is the path from there
    default = DaskTreeRegressor(max_bins=4096, max_depth=6).fit(X, y)
    floor = default.model_.report["prune"]["grown_to_alpha"]
    table = default.cp_table_
    above = alphas > floor * (1 + 1e-7)
    assert table["alpha"].iloc[0] == floor and len(table) == 1 + above.sum()
    np.testing.assert_allclose(table["alpha"].to_numpy()[1:], alphas[above], rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(table["train_mse"].to_numpy()[1:], path.impurities[first][above], rtol=1e-6)
    ours_path = default.cost_complexity_pruning_path()
    assert ours_path.ccp_alphas[0] == floor
    np.testing.assert_allclose(np.unique(ours_path.ccp_alphas), table["alpha"].to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 2])
def test_the_default_prunes_at_rpart_cp_as_scikit_learn_would(seed):
    """``prune="auto"`` without cv is rpart's cp at ``CP_ROWS / n``: scikit-learn's tree at ``ccp_alpha`` =
    that cp times the root's mean squared error (the target's variance)."""
    X, y = _data(seed=seed)
    ours = DaskTreeRegressor(max_bins=4096).fit(X, y)
    cp = CP_ROWS / len(y)
    theirs = DecisionTreeRegressor(random_state=0, ccp_alpha=cp * float(np.var(y))).fit(X.to_numpy(), y)
    assert ours.model_.report["prune"]["mode"] == "cp"
    assert ours.model_.report["prune"]["alpha"] == pytest.approx(cp * float(np.var(y)), rel=1e-9)
    assert 2 < ours.tree_.n_leaves == theirs.get_n_leaves() < ours.model_.full_tree.n_leaves
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X.to_numpy()), rtol=0, atol=1e-8 * np.ptp(y))
