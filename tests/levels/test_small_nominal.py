"""Classification's small nodes with nominal attributes grow in memory, to the level-wise model's bytes.

Each fit is made twice, small nodes gathered (``small_node_rows`` at its default, or a small cap so
that the switch happens deep in the tree) and level-wise (``small_node_rows(0)``); the bins, the main
tree and every fold tree (or every forest member) must be the same JSON. Hypothesis draws frames
whose nominal columns have few or many categories (below and above ``exhaustive_categories``), missing
values and categories absent from some nodes, 2 to 5 classes, weights, and the parameters that change
what a node decides (each criterion, cv folds, a grid, a bagged forest's ``max_features``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.levels.small import small_node_rows
from gathering import both_ways, grid_of, model_bytes, small_nodes_of

pytest.importorskip("numba")


def nominal_frame(draw, n: int) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """A numeric column and 1-3 nominal ones (2 to 15 categories, some missing), and a class target of
    2 to 5 classes that follows both."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    x = np.round(rng.normal(size=n) * 2, draw(st.sampled_from([0, 2])))
    columns = {"x0": x}
    signal = np.nan_to_num(x) * draw(st.sampled_from([0.0, 0.5]))
    nominal = []
    for j in range(draw(st.integers(1, 3))):
        k = draw(st.sampled_from([2, 4, 6, 12, 15]))
        values = rng.choice(k, size=n, p=rng.dirichlet(np.full(k, draw(st.sampled_from([0.3, 3.0])))))  # rare ones too
        signal = signal + rng.normal(size=k)[values] * 1.5
        column = np.array([f"v{v}" for v in values], dtype=object)
        column[rng.random(n) < draw(st.sampled_from([0.0, 0.1, 0.3]))] = None
        columns[f"c{j}"] = column
        nominal.append(f"c{j}")
    n_classes = draw(st.sampled_from([2, 2, 3, 5]))
    noisy = signal + rng.normal(size=n) * draw(st.sampled_from([0.3, 1.0]))
    y = np.digitize(noisy, np.quantile(noisy, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int64)
    if np.unique(y).size < 2:
        y[0] = 1 - y[0]
    return pd.DataFrame(columns), y, nominal


def rng_weights(draw, n: int):
    if not draw(st.booleans()):
        return None
    return np.random.default_rng(draw(st.integers(0, 100))).integers(1, 4, size=n)


@st.composite
def nominal_cases(draw):
    n = draw(st.integers(20, 300))
    frame, y, nominal = nominal_frame(draw, n)
    params = dict(
        cv=draw(st.sampled_from([None, 2, 3])),
        criterion=draw(st.sampled_from(["gini", "entropy", "gain_ratio"])),
        min_samples_leaf=draw(st.sampled_from([1, 1, 3])),
        min_samples_split=draw(st.sampled_from([2, 5])),
        max_depth=draw(st.sampled_from([None, None, 11])),
        min_impurity_decrease=draw(st.sampled_from([0.0, 0.0, 0.01])),
    )
    # a fit the grower does not take (multi-way nominal tests) stays level-wise and must agree still
    params.update(draw(st.sampled_from([{}, {}, {}, {"nominal_split": "multiway"}])))
    return frame, y, nominal, params, rng_weights(draw, n), draw(st.sampled_from([None, None, 7, 40]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nominal_cases())
def test_nominal_small_nodes_give_the_level_wise_model(case):
    frame, y, nominal, params, weight, rows = case

    def fit():
        return dasktree.DaskTreeClassifier(keep_fold_trees=True, **params).fit(
            frame, y, sample_weight=weight, nominal=nominal).model_

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    if rows is None and params["max_depth"] is None and "nominal_split" not in params:
        assert small_nodes_of(gathered) > 0  # the root is small: the whole tree grows in memory
    assert model_bytes(gathered) == model_bytes(level_wise)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nominal_cases(), st.sampled_from([{"criterion": ["gini", "entropy", "gain_ratio"]},
                                         {"criterion": ["gain_ratio", "gini"], "min_samples_leaf": [1, 3]}]))
def test_a_grid_with_nominal_attributes_finishes_small_nodes_as_the_level_loop(case, grid):
    """A grid's settings gather their own jobs: the chosen model and every setting's scores are the
    level loop's."""
    frame, y, nominal, params, weight, rows = case
    params = {k: v for k, v in params.items() if k not in grid}
    params["cv"] = params.get("cv") or 3

    def fit():
        return dasktree.fit(frame, y, sample_weight=weight, nominal=nominal, param_grid=grid, **params)

    gathered, level_wise = both_ways(fit, rows)
    assert model_bytes(gathered) == model_bytes(level_wise)
    assert grid_of(gathered) == grid_of(level_wise)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nominal_cases(), st.integers(1, 4), st.sampled_from([None, "sqrt", 1, 0.5]), st.integers(0, 50),
       st.booleans())
def test_forest_members_with_nominal_attributes_finish_small_nodes_as_the_level_loop(case, trees, max_features,
                                                                                    seed, bootstrap):
    """A bagged forest's members, each searching the features the level search draws at each node:
    every member is the level-wise member, byte for byte."""
    frame, y, nominal, params, weight, rows = case
    frame = frame.assign(label=y)

    def fit():
        return dasktree.fit_forest(frame, target="label", nominal=nominal, sample_weight=weight, n_estimators=trees,
                                   random_state=seed, max_features=max_features, bootstrap=bootstrap,
                                   criterion=params["criterion"], min_samples_leaf=params["min_samples_leaf"])

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    if rows is None and any(level["splits"] for level in level_wise.run["levels"][1:]):
        # a node below a root is left to split: the gathering pass takes it (a member whose root's
        # children are all leaves ends at level 0, with nothing to gather)
        assert small_nodes_of(gathered) > 0
    assert [m.to_json() for m in gathered.members] == [m.to_json() for m in level_wise.members]


def test_a_deep_nominal_tree_takes_few_passes():
    """Many nominal columns, no max_depth, 10-fold CV: one pass gathers the root (with pass 0) where
    the level loop makes a pass per level; the same model (where a fold tree shares a node and its test
    with the main tree, the test lists the main tree's categories: the level loop's shared test)."""
    rng = np.random.default_rng(5)
    n = 1500
    codes = rng.integers(0, 4, size=(n, 20))
    frame = pd.DataFrame({f"p{j}": np.array(list("acgt"))[codes[:, j]] for j in range(20)})
    y = ((codes[:, 3] == 1) ^ (codes[:, 7] >= 2) ^ (rng.random(n) < 0.2)).astype(np.int64) + (codes[:, 11] == 0)

    def fit():
        return dasktree.DaskTreeClassifier(cv=10, keep_fold_trees=True).fit(frame, y, nominal=list(frame)).model_

    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0 and gathered.report["passes"] <= 2 < level_wise.report["passes"]
    assert model_bytes(gathered) == model_bytes(level_wise)


def test_forest_members_sharing_nominal_tests():
    """Members whose bags choose identical tests share the level loop's nodes, and the lowest member's
    test (its categories): the grown members are the level-wise ones."""
    rng = np.random.default_rng(8)
    n = 400
    codes = rng.integers(0, 6, size=(n, 6))
    frame = pd.DataFrame({f"p{j}": np.array(list("abcdef"))[codes[:, j]] for j in range(6)})
    frame["label"] = ((codes[:, 0] < 2) ^ (rng.random(n) < 0.1)).astype(np.int64)

    def fit():
        return dasktree.fit_forest(frame, target="label", nominal=list(frame.columns[:-1]), n_estimators=8,
                                   random_state=1, max_features=None)

    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0
    assert [m.to_json() for m in gathered.members] == [m.to_json() for m in level_wise.members]


@pytest.mark.cluster
@pytest.mark.parametrize("rows", [None, 60])
def test_a_cluster_fit_with_a_nominal_column_gathers_on_the_holders(cluster_client, rows):
    """On a LocalCluster of two processes, a 3-fold fit with a nominal column grows its small nodes on
    the holders: the in-process model and the level-wise one, byte for byte."""
    from dasktree.testing.data import regression_frame

    frame = regression_frame(1500)
    frame["label"] = np.digitize(frame.pop("y"), [-1.0, 2.0])

    def fit(**kw):
        return dasktree.fit(frame, target="label", nominal=["colour"], cv=3, keep_fold_trees=True, **kw)

    with small_node_rows(rows):
        on_cluster = fit(client=cluster_client)
        in_process = fit(scheduler="inprocess")
    with small_node_rows(0):
        level_wise = fit(scheduler="inprocess")
    assert small_nodes_of(on_cluster) > 0 and small_nodes_of(level_wise) == 0
    assert model_bytes(on_cluster) == model_bytes(in_process) == model_bytes(level_wise)


def test_a_bagged_forest_gathers_each_member_by_its_own_rows():
    """A bagged forest's node is priced by its open members' bag sizes, not by the node's total line
    (every member's multiplicities summed, about one row per member): 30 members' level-1 nodes fit the
    in-process budget together, so one pass after the root's gathers them all (priced by the total line: 5 passes)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 4))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)])
    frame["label"] = (X[:, 0] + rng.normal(size=2000) > 0).astype(np.int64)
    model = dasktree.fit_forest(frame, target="label", n_estimators=30, random_state=0)
    assert small_nodes_of(model) > 0 and model.report["passes"] <= 3, model.report["passes"]
