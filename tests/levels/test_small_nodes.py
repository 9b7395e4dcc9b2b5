"""Small nodes grown in memory give the level-wise path's model, byte for byte (:mod:`dasktree.levels.small`).

Each fit is made twice: with small nodes gathered (``small_node_rows`` at its default, or a small
number so that the switch happens deep in the tree) and level-wise (``small_node_rows(0)``); the
bins, the grown main tree and every fold tree must be the same JSON. Hypothesis draws small data
with ties, empty bins, missing values, categories and weights, and the parameters that change what a
node decides.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.levels.small import small_node_rows
from dasktree.testing.data import regression_frame
from gathering import both_ways, grid_of, model_bytes, small_nodes_of
from small_frames import small_frame


@st.composite
def regression_cases(draw):
    n = draw(st.integers(10, 300))
    frame, y, nominal = small_frame(draw, n, classify=False)
    params = dict(
        cv=draw(st.sampled_from([None, 2, 3])),
        criterion=draw(st.sampled_from(["squared_error", "friedman_mse"])),
        min_samples_leaf=draw(st.sampled_from([1, 1, 3])),
        min_samples_split=draw(st.sampled_from([2, 5])),
        max_depth=draw(st.sampled_from([None, None, 3])),
        max_bins=draw(st.sampled_from([4, 16, 255])),
        max_leaf_nodes=draw(st.sampled_from([None, None, 5])),
    )
    weight = rng_weights(draw, n)
    return frame, y, nominal, params, weight, draw(st.sampled_from([None, 7, 40]))


def rng_weights(draw, n: int):
    if not draw(st.booleans()):
        return None
    return np.random.default_rng(draw(st.integers(0, 100))).integers(1, 4, size=n)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(regression_cases())
def test_regression_small_nodes_give_the_level_wise_model(case):
    frame, y, nominal, params, weight, rows = case

    def fit():
        return dasktree.DaskTreeRegressor(keep_fold_trees=True, **params).fit(
            frame, y, sample_weight=weight, nominal=nominal).model_

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    if rows is None and params["max_depth"] is None:  # the root is small (a cap may never be met)
        assert small_nodes_of(gathered) > 0
    assert model_bytes(gathered) == model_bytes(level_wise)


@pytest.mark.parametrize("cv", [None, 5])
def test_regression_frame_small_nodes_deep_in_the_tree(cv):
    """The suite's regression frame (missing values, a nominal column), gathered from the root and
    from nodes of 50 rows: the same model as level-wise. 1,200 rows: nodes of 50 rows are many levels
    down still, and the level-wise twin of a deep tree costs a pass per level."""
    frame = regression_frame(1200)

    def fit():
        return dasktree.DaskTreeRegressor(cv=cv, keep_fold_trees=True).fit(
            frame.drop(columns="y"), frame["y"]).model_

    for rows in (None, 50):
        gathered, level_wise = both_ways(fit, rows)
        assert small_nodes_of(gathered) > 0
        assert model_bytes(gathered) == model_bytes(level_wise)


def test_default_fit_makes_few_passes():
    """A deep default tree: the root is small already, so one pass gathers it (and pass 0)."""
    frame = regression_frame(3000)
    with small_node_rows(None):
        model = dasktree.DaskTreeRegressor().fit(frame.drop(columns="y"), frame["y"]).model_
    with small_node_rows(0):
        deep = dasktree.DaskTreeRegressor().fit(frame.drop(columns="y"), frame["y"]).model_
    assert model.report["passes"] <= 2 < deep.report["passes"]


@st.composite
def classification_cases(draw):
    n = draw(st.integers(10, 300))
    frame, y, nominal = small_frame(draw, n, classify=True)
    if draw(st.booleans()):  # many classes: the parent's gini sums 8 or more squares (numpy's pairwise sum)
        y = np.random.default_rng(n).integers(0, draw(st.sampled_from([3, 9, 12])), size=n)
    if np.unique(y).size < 2:  # a classifier refuses one class (a few rows drawn alike)
        y[0] += 1
    params = dict(
        cv=draw(st.sampled_from([None, 2, 3])),
        min_samples_leaf=draw(st.sampled_from([1, 1, 3])),
        min_samples_split=draw(st.sampled_from([2, 5])),
        max_depth=draw(st.sampled_from([None, None, 3])),
        max_bins=draw(st.sampled_from([4, 16, 255])),
        min_impurity_decrease=draw(st.sampled_from([0.0, 0.0, 0.01])),
        criterion=draw(st.sampled_from(["gini", "entropy", "gain_ratio"])),
    )
    # fits the grower does not take (they stay level-wise) must still agree
    params.update(draw(st.sampled_from([{}, {}, {}, {}, {"max_leaf_nodes": 5}, {"max_arity": 3},
                                        {"repeats": 2, "cv": 2}])))
    return frame, y, nominal, params, rng_weights(draw, n), draw(st.sampled_from([None, 7, 40]))


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classification_cases())
def test_classification_small_nodes_give_the_level_wise_model(case):
    frame, y, nominal, params, weight, rows = case

    def fit():
        return dasktree.DaskTreeClassifier(keep_fold_trees=True, **params).fit(
            frame, y, sample_weight=weight, nominal=nominal).model_

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    assert model_bytes(gathered) == model_bytes(level_wise)


@pytest.mark.parametrize("name,criterion", [("iris", "gini"), ("wine", "gini"), ("breast_cancer", "gini"),
                                            ("digits", "gini"), ("wine", "entropy"), ("digits", "entropy"),
                                            ("wine", "gain_ratio"), ("breast_cancer", "gain_ratio"),
                                            ("digits", "gain_ratio")])
def test_classification_suite_datasets(name, criterion):
    """scikit-learn's small sets (digits: ten classes), with 5-fold CV, each criterion: the same
    model both ways, and small nodes gathered."""
    import sklearn.datasets

    X, y = getattr(sklearn.datasets, f"load_{name}")(return_X_y=True, as_frame=True)

    def fit():
        return dasktree.DaskTreeClassifier(cv=5, criterion=criterion, keep_fold_trees=True).fit(X, y).model_

    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0
    assert model_bytes(gathered) == model_bytes(level_wise)


GRIDS = [{"criterion": ["gini", "entropy", "gain_ratio"]},
         {"criterion": ["gain_ratio", "gini"], "min_samples_leaf": [1, 3], "prune": ["none", "pessimistic"]}]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(classification_cases(), st.sampled_from(GRIDS))
def test_a_grids_settings_finish_small_nodes_as_the_level_loop(case, grid):
    """A grid's trees gather by their setting (criterion, min_samples_leaf): the chosen model and
    every setting's split scores are the level loop's."""
    frame, y, nominal, params, weight, rows = case
    params = {k: v for k, v in params.items() if k not in grid}
    params["cv"] = params.get("cv") or 3

    def fit():
        return dasktree.fit(frame, y, sample_weight=weight, nominal=nominal, param_grid=grid, **params)

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    assert model_bytes(gathered) == model_bytes(level_wise)
    assert grid_of(gathered) == grid_of(level_wise)


def test_a_grid_of_criteria_gathers_on_digits():
    """Ten classes, 64 columns, 5-fold CV, the three criteria: small nodes gathered for every
    setting, and the level loop's grid."""
    import sklearn.datasets

    X, y = sklearn.datasets.load_digits(return_X_y=True, as_frame=True)

    def fit():
        return dasktree.fit(X, y, cv=5, param_grid=GRIDS[0])

    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0
    assert model_bytes(gathered) == model_bytes(level_wise)
    assert grid_of(gathered) == grid_of(level_wise)


@pytest.fixture
def parquet(tmp_path):
    """The regression frame, and a classification target on it, as a Parquet dataset of 4 files."""
    from dasktree.testing.data import write_dataset

    frame = regression_frame(2000).drop(columns="colour")
    frame["label"] = np.where(frame["y"] > frame["y"].median(), "high", "low")
    return write_dataset(frame, tmp_path / "data", n_files=4, row_group_size=250)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_streamed_fit_gathers_and_gives_the_cached_model(parquet, task):
    """Out of core (``cache=False``: every pass streams the pieces): the small nodes gathered a piece
    at a time, the same model as the level-wise streamed fit and as the cached one."""
    from dasktree.engine.local_runner import LocalRunner
    from dasktree.engine.stream_runner import StreamRunner

    target, drop = ("y", ["label"]) if task == "regression" else ("label", ["y"])
    fit_of = dasktree.fit_regression if task == "regression" else dasktree.fit

    def fit(cache):
        return fit_of(parquet, target=target, exclude=drop, cv=3, keep_fold_trees=True, cache=cache,
                      scheduler="inprocess")

    gathered, level_wise = both_ways(lambda: fit(False))
    assert small_nodes_of(gathered) > 0
    assert model_bytes(gathered) == model_bytes(level_wise) == model_bytes(fit(True))
    assert StreamRunner.small_pass is not LocalRunner.small_pass  # it streams: no cache of every row


def _numeric_label(frame: pd.DataFrame) -> pd.DataFrame:
    """The regression frame's numeric columns and a class label from its target (a classification fit
    the grower takes: numeric attributes only)."""
    out = frame.drop(columns=["colour", "y"])
    out["label"] = np.where(frame["y"] > frame["y"].median(), "high", "low")
    return out


def passes_and_gathering(model) -> tuple:
    """What the fit report says of the passes and the small nodes, level by level."""
    levels = model.run.get("levels", [])
    return (model.report["passes"], model.report["small_nodes"], [(lv.get("small_nodes", 0), lv.get("grown_in_memory", 0), lv.get("rows_gathered", 0))
                                     for lv in levels])


@pytest.mark.cluster
@pytest.mark.parametrize("rows", [None, 60])
def test_a_cluster_fit_gathers_on_the_holders(cluster_client, rows):
    """On a LocalCluster of two processes, a cached fit gathers its small nodes on the holders and
    grows them there: the model of the in-process fit and of the level-wise one, and the same
    passes and small nodes in the report, for regression (with the suite frame's nominal column)
    and classification; from the root (``None``) and from nodes of 60 rows deep in the tree."""
    frame = regression_frame(1500)
    labelled = _numeric_label(frame)
    fits = [
        lambda **kw: dasktree.fit_regression(frame, target="y", cv=3, keep_fold_trees=True, **kw),
        lambda **kw: dasktree.fit(labelled, target="label", cv=3, keep_fold_trees=True, **kw),
    ]
    for fit in fits:
        with small_node_rows(rows):
            on_cluster = fit(client=cluster_client)
            in_process = fit(scheduler="inprocess")
        with small_node_rows(0):
            level_wise = fit(scheduler="inprocess")
        assert small_nodes_of(on_cluster) > 0 and small_nodes_of(level_wise) == 0
        assert passes_and_gathering(on_cluster) == passes_and_gathering(in_process)
        assert model_bytes(on_cluster) == model_bytes(in_process) == model_bytes(level_wise)


@pytest.mark.cluster
def test_a_cluster_regression_forest_gathers_on_the_holders(cluster_client):
    """A regression forest's members gather on the holders of a LocalCluster as in process: the
    level-wise members, byte for byte."""
    frame = regression_frame(1200).drop(columns=["colour"], errors="ignore")

    def fit(**kw):
        return dasktree.fit_forest_regression(frame, target="y", n_estimators=3, random_state=1, max_features=2,
                                              **kw)

    with small_node_rows(60):
        on_cluster = fit(client=cluster_client)
    with small_node_rows(0):
        level_wise = fit(scheduler="inprocess")
    assert small_nodes_of(on_cluster) > 0 and small_nodes_of(level_wise) == 0
    assert [m.to_json() for m in on_cluster.members] == [m.to_json() for m in level_wise.members]


@pytest.mark.cluster
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_a_cluster_fit_without_the_cache_gathers_by_tasks(cluster_client, parquet, task):
    """``cache=False`` on a cluster: the small pass is tasks reading the parts anew (a gathering task
    per group of parts, one growing task per run of jobs); the level-wise model."""
    target, drop = ("y", ["label"]) if task == "regression" else ("label", ["y"])
    fit_of = dasktree.fit_regression if task == "regression" else dasktree.fit

    def fit(**kw):
        return fit_of(parquet, target=target, exclude=drop, cv=3, keep_fold_trees=True, **kw)

    with small_node_rows(80):
        on_cluster = fit(client=cluster_client, cache=False)
    with small_node_rows(0):
        level_wise = fit(scheduler="inprocess")
    assert small_nodes_of(on_cluster) > 0
    assert model_bytes(on_cluster) == model_bytes(level_wise)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_the_report_says_where_the_passes_stopped(task):
    """``report_["small_nodes"]``: the nodes finished in memory, the rows gathered and the depth at
    which the passes stopped: 0 when the root is small (its rows known from the source, a classification
    fit's when it is unweighted), deeper when nodes of 50 rows are gathered,
    and level-wise the deepest level counted, none finished in memory."""
    frame = regression_frame(3000)
    if task == "regression":
        fit = lambda: dasktree.DaskTreeRegressor(cv=3).fit(frame.drop(columns="y"), frame["y"]).model_  # noqa: E731
    else:
        labelled = _numeric_label(frame)
        fit = lambda: dasktree.DaskTreeClassifier(cv=3).fit(labelled.drop(columns="label"),  # noqa: E731
                                                            labelled["label"]).model_
    said = {}
    for rows in (None, 50, 0):
        with small_node_rows(rows):
            model = fit()
        said[rows] = report = model.report["small_nodes"]
        levels = model.run["levels"]
        assert report["small_nodes"] == small_nodes_of(model)
        assert report["rows_gathered"] == sum(lv.get("rows_gathered", 0) for lv in levels)
    assert said[None]["passes_stopped_at_depth"] == 0 and said[None]["small_nodes"] > 0
    assert 0 < said[None]["rows_gathered"] <= 3000
    assert 0 < said[50]["passes_stopped_at_depth"] < said[0]["passes_stopped_at_depth"]
    assert said[0]["small_nodes"] == said[0]["rows_gathered"] == said[0]["grown_in_memory"] == 0
    assert said[0]["passes_stopped_at_depth"] == len(model.run["levels"]) - 1


def test_a_shallow_max_depth_keeps_its_level_passes():
    """Within LEVELS_LEFT levels of max_depth nothing is gathered: depth D, D + 1 passes; deeper
    limits gather, with the same model as level-wise."""
    from dasktree.levels.small import LEVELS_LEFT

    frame = regression_frame(3000)
    X, y = frame.drop(columns="y"), frame["y"]
    shallow = dasktree.DaskTreeClassifier(max_depth=LEVELS_LEFT).fit(X, y > y.median())
    assert small_nodes_of(shallow.model_) == 0 and shallow.report_["passes"] == shallow.report_["depth"] + 1
    fit = lambda: dasktree.DaskTreeRegressor(max_depth=LEVELS_LEFT + 4, cv=3, keep_fold_trees=True).fit(X, y).model_  # noqa: E731
    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0 and gathered.report["passes"] < level_wise.report["passes"]
    assert model_bytes(gathered) == model_bytes(level_wise)


# ---------------------------------------------------------------- a bagged forest's members

@st.composite
def forest_cases(draw):
    n = draw(st.integers(40, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    d = draw(st.integers(2, 6))
    X = np.round(rng.normal(size=(n, d)) * 3, draw(st.sampled_from([0, 1, 3])))
    X[rng.random((n, d)) < draw(st.sampled_from([0.0, 0.1]))] = np.nan
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)])
    signal = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1])
    frame["label"] = (signal + rng.normal(size=n) > 0).astype(np.int64) + (signal > 3)
    params = dict(
        n_estimators=draw(st.integers(1, 5)), random_state=draw(st.integers(0, 50)),
        max_features=draw(st.sampled_from([None, "sqrt", 1, 0.5])),
        criterion=draw(st.sampled_from(["gini", "entropy", "gain_ratio"])),
        min_samples_leaf=draw(st.sampled_from([1, 1, 3])), max_bins=draw(st.sampled_from([4, 16, 255])),
        bootstrap=draw(st.booleans()),
    )
    return frame, params, rng_weights(draw, n), draw(st.sampled_from([None, 7, 40]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest_cases())
def test_forest_members_finish_small_nodes_as_the_level_loop(case):
    """Each member's small nodes grow in memory from its bag's multiplicities (times the weights),
    searching the features the level search would draw at each node (its path key): every member
    is the level-wise member, byte for byte."""
    frame, params, weight, rows = case

    def fit():
        return dasktree.fit_forest(frame, target="label", sample_weight=weight, **params)

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    assert [m.to_json() for m in gathered.members] == [m.to_json() for m in level_wise.members]


def test_deep_forest_members_grow_in_memory():
    """Without max_depth a forest's members finish in memory after a pass or two, each with its own
    features per node, as level-wise."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 8))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)])
    frame["label"] = (X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(size=3000) * 0.7 > 0).astype(np.int64)

    def fit():
        return dasktree.fit_forest(frame, target="label", n_estimators=6, random_state=2)

    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0
    assert gathered.report["passes"] < level_wise.report["passes"]
    assert [m.to_json() for m in gathered.members] == [m.to_json() for m in level_wise.members]
    assert max(m.max_depth for m in gathered.members) > 10


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forest_cases(), st.sampled_from(["squared_error", "friedman_mse"]))
def test_regression_forest_members_finish_small_nodes_as_the_level_loop(case, criterion):
    """A regression forest's members gather as classification's: each row counted its multiplicity in
    the member's bag (times its weight), the features drawn per node as the level search draws them;
    every member is the level-wise member, byte for byte."""
    frame, params, weight, rows = case
    frame = frame.assign(label=frame["label"] * 1.5 + np.nan_to_num(frame["x0"].to_numpy()) * 0.25)
    params = {**params, "criterion": criterion}

    def fit():
        return dasktree.fit_forest_regression(frame, target="label", sample_weight=weight, **params)

    gathered, level_wise = both_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    if rows is None:
        assert small_nodes_of(gathered) > 0
    assert [m.to_json() for m in gathered.members] == [m.to_json() for m in level_wise.members]


def test_deep_regression_forest_members_grow_in_memory():
    """Without max_depth a regression forest's members finish in memory after a pass or two."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 8))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)])
    frame["y"] = X[:, 0] + np.sin(3 * X[:, 1]) + rng.normal(size=3000) * 0.7

    def fit():
        return dasktree.fit_forest_regression(frame, target="y", n_estimators=4, random_state=2, max_features=3)

    gathered, level_wise = both_ways(fit)
    assert small_nodes_of(gathered) > 0 and gathered.report["passes"] <= 3 < level_wise.report["passes"]
    assert [m.to_json() for m in gathered.members] == [m.to_json() for m in level_wise.members]
    assert max(m.max_depth for m in gathered.members) > 10


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 30), st.integers(0, 1)), min_size=1, max_size=12, unique=True))
def test_threshold_tests_made_at_once_equal_numeric_test(keys):
    """The grown subtrees' tests, their tables made together, are :func:`numeric_test`'s, one by one."""
    from dasktree.levels.attach import _threshold_tests
    from dasktree.split.api import numeric_test

    uppers = [np.arange(30, dtype=np.float64) * 0.5, np.linspace(-3, 3, 40), np.arange(31, dtype=np.float64)]
    made = _threshold_tests(keys, uppers)
    for a, c, d in keys:
        one = numeric_test(a, np.array([c]), uppers[a], d)
        assert made[(a, c, d)].to_json() == one.to_json() and made[(a, c, d)] == one
        assert (made[(a, c, d)].arity, made[(a, c, d)].cut) == (one.arity, one.cut)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 50)), max_size=20), st.integers(0, 120))
def test_the_nodes_gathered_are_taken_in_order_while_they_fit(estimates, limit):
    """Either task's choice (:func:`~dasktree.levels.small.jobs`) against its plain reading: each node in
    turn is gathered when its estimate (None: not to gather; 0: unknown) fits the rows left."""
    from dasktree.levels.small import jobs

    items = list(range(len(estimates)))
    gathered, kept, left = jobs(items, estimates, limit)
    expected, budget = [], limit
    for i, e in enumerate(estimates):
        if e and e <= budget:
            expected.append(i)
            budget -= e
    assert gathered == expected and kept == [i for i in items if i not in expected] and left == budget
    assert sum(estimates[i] for i in gathered) <= limit


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_cv_forest_gathers_its_root_when_its_memberships_fit(task):
    """The gathering budget is per membership (a row in one tree's node), as the jobs count it: the
    root of a 10-fold fit of 20,000 rows holds 220,000 memberships, under the in-process budget, so
    one pass gathers the whole forest. (Priced as if each row held every tree's membership, then
    counted once per tree again, it gathered only from the third level on: 5-6 passes.)"""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 4))
    y = 3 * np.sin(X[:, 0]) + (X[:, 1] > 0.3) + 0.7 * X[:, 2] + rng.normal(size=len(X))
    if task == "classification":
        model = dasktree.DaskTreeClassifier(cv=10).fit(X, (y > np.median(y)).astype(int)).model_
    else:
        model = dasktree.DaskTreeRegressor(cv=10).fit(X, y).model_
    assert small_nodes_of(model) > 0 and model.report["passes"] <= 2, model.report["passes"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 400), st.integers(1, 4)), max_size=12), st.integers(1, 4),
       st.sampled_from([0, 50, 100]))
def test_a_gathering_pass_leaves_its_largest_jobs_to_the_level_pass_until_its_threads_are_busy(items, threads, serial):
    """:func:`~dasktree.levels.small.balanced` against its plain reading: an item (a node: its largest
    job's rows, its jobs' rows) is dropped, largest first, exactly while the largest left holds more than
    ``SERIAL_ROWS`` rows and more than a thread's share of the jobs' rows left; a job of one thread's share
    or of few rows stays."""
    from dasktree.levels import small

    work = [(rows, rows * trees) for rows, trees in items]
    saved, small.SERIAL_ROWS = small.SERIAL_ROWS, serial
    try:
        dropped = small.balanced(work, threads)
    finally:
        small.SERIAL_ROWS = saved
    kept = [i for i in range(len(work)) if i not in dropped]
    total = sum(work[i][1] for i in kept)
    if kept:  # what is left is balanced (or small)
        largest = max(work[i][0] for i in kept)
        assert largest <= serial or largest * threads <= total
    assert all(work[d][0] >= work[k][0] for d in dropped for k in kept)  # largest first
    if dropped:  # and no more is dropped than that: the last one dropped was too big then
        last = min(dropped, key=lambda d: (work[d][0], -d))
        assert work[last][0] > serial and work[last][0] * threads > total + work[last][1]
    if threads == 1:
        assert not dropped


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_a_big_node_alone_is_split_by_a_level_pass_so_that_its_children_grow_side_by_side(task, monkeypatch):
    """A node gathered grows on one thread. On two threads a root of more than ``SERIAL_ROWS`` rows
    alone in its pass would keep one of them idle, so a level pass splits it first and the gathering
    pass after it grows its children side by side; on one thread (or with the fold trees' roots beside it,
    ``cv``) the root is gathered at once. The model is the same every way, and level-wise."""
    from dasktree.engine import place
    from dasktree.levels import small

    frame = regression_frame(3000)
    X, y = frame.drop(columns="y"), frame["y"]
    monkeypatch.setattr(small, "SERIAL_ROWS", 200)

    def fit(threads, cv=None):
        monkeypatch.setattr(place, "cores", lambda: threads)
        if task == "regression":
            return dasktree.DaskTreeRegressor(cv=cv, keep_fold_trees=True).fit(X, y).model_
        return dasktree.DaskTreeClassifier(cv=cv, keep_fold_trees=True).fit(X, y > y.median()).model_

    def gathered_at(model):
        return [lv["level"] for lv in model.run["levels"] if lv.get("small_nodes", 0)]

    two, one = fit(2), fit(1)
    assert gathered_at(one)[0] == 0 and gathered_at(two)[0] > 0
    with small_node_rows(0):
        level_wise = fit(2)
    assert model_bytes(two) == model_bytes(one) == model_bytes(level_wise)
    with_folds = fit(2, cv=5)
    assert gathered_at(with_folds)[0] == 0


@pytest.mark.cluster
def test_a_cluster_balances_its_gathering_pass_on_its_worker_threads(cluster_client, monkeypatch):
    """On a cluster the threads a gathering pass keeps busy are the workers' (``DaskRunner.threads``, its
    groups of parts: two here): a root of more than ``SERIAL_ROWS`` rows alone is split by a level pass
    first, as in process on two threads; the same passes, small nodes and model."""
    from dasktree.engine import place
    from dasktree.levels import small

    frame = regression_frame(3000)
    monkeypatch.setattr(small, "SERIAL_ROWS", 200)  # the choice is the client's: the workers need not see it
    monkeypatch.setattr(place, "cores", lambda: 2)
    on_cluster = dasktree.fit_regression(frame, target="y", client=cluster_client)
    in_process = dasktree.fit_regression(frame, target="y", scheduler="inprocess")
    assert on_cluster.run["levels"][0].get("small_nodes", 0) == 0 and small_nodes_of(on_cluster) > 0
    assert passes_and_gathering(on_cluster) == passes_and_gathering(in_process)
    assert model_bytes(on_cluster) == model_bytes(in_process)
