"""The accuracy claim's datasets and peers: sane frames, no target among the features, one fold per row,
ARFF that keeps nominal attributes and missing values, and the Weka / R peers on the folds they are given.

Sets and peers that need a Debian package (weka, R's packages) skip when it is absent, saying which.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

pytest.importorskip("sklearn")

from benchmarks import accuracy_peers, public_data  # noqa: E402

SETS = public_data.CLASSIFICATION + public_data.REGRESSION


@pytest.fixture(scope="module", autouse=True)
def r_cache():
    """R's sets written once (in one Rscript) to the claim's own cache, benchmarks/data/public/."""
    public_data.prepare(SETS)


def test_suites_are_fixed_and_disjoint():
    names = [d.name for d in SETS]
    assert len(names) == len(set(names))
    suites = {d.suite for d in public_data.CLASSIFICATION}
    assert suites == {"tuning", "report"}
    assert sum(d.suite == "report" for d in public_data.CLASSIFICATION) >= 20
    assert len(public_data.REGRESSION) >= 8
    assert len({d.source for d in public_data.CLASSIFICATION}) >= 5  # not scikit-learn's sets alone


def _relabels_target(column: pd.Series, y: np.ndarray) -> bool:
    """Whether ``column`` is the class under other names: few values, each of one class, every class met."""
    if column.nunique(dropna=False) > 2 * len(np.unique(y)):
        return False
    frame = pd.DataFrame({"x": column.astype(str).to_numpy(), "y": y})
    return bool((frame.groupby("x")["y"].nunique() == 1).all())


@pytest.mark.parametrize("dataset", SETS, ids=lambda d: d.name)
def test_a_set_loads_as_a_sane_frame_without_its_target(dataset):
    why = public_data.missing(dataset)
    if why:
        pytest.skip(why)
    loaded = public_data.load(dataset)
    X, y = loaded.X, loaded.y
    assert len(X) == len(y) >= 40 and X.shape[1] >= 2
    assert dataset.target not in X.columns and not set(dataset.drop) & set(X.columns)
    assert loaded.version.split()[0] and any(ch.isdigit() for ch in loaded.version)
    for column in X.columns:
        if column in loaded.nominal:
            assert X[column].dtype == object and X[column].dropna().map(type).eq(str).all(), column
        else:
            assert X[column].dtype == np.float64, column
    if dataset.suite == "regression":
        assert y.dtype == np.float64 and np.isfinite(y).all() and np.unique(y).size > 10
        for column in X.columns.difference(loaded.nominal):
            assert not np.allclose(X[column].to_numpy(), y, equal_nan=False), column
        return
    classes, counts = np.unique(y, return_counts=True)
    assert len(classes) >= 2 and counts.min() >= 2
    assert X.notna().any(axis=0).all()  # no column that is all missing
    for column in X.columns:
        assert not _relabels_target(X[column], y), f"{dataset.name}: {column} is the class renamed"


def test_folds_are_stratified_deterministic_and_cover_every_row():
    y = np.array(["a"] * 53 + ["b"] * 31 + ["c"] * 7)
    fold = accuracy_peers.folds(y, 10, seed=0)
    assert fold.shape == y.shape and set(fold) == set(range(10))
    np.testing.assert_array_equal(fold, accuracy_peers.folds(y, 10, seed=0))
    for f in range(10):
        counts = pd.Series(y[fold == f]).value_counts()
        assert abs(counts.get("a", 0) - 5.3) < 1 and abs(counts.get("b", 0) - 3.1) < 1


def test_arff_keeps_nominal_attributes_missing_values_and_the_class_last(tmp_path):
    from scipy.io import arff

    X = pd.DataFrame({"colour": ["red", np.nan, "sky blue", "red"], "size": [1.5, 2.0, np.nan, 4.0]},
                     columns=["colour", "size"])
    X["colour"] = X["colour"].astype(object)
    y = np.array(["yes", "no", "yes", "no"])
    path = tmp_path / "data.arff"
    accuracy_peers.write_arff(str(path), X, y, ["colour"], np.array([0, 1, 0, 1]))
    data, meta = arff.loadarff(str(path))
    assert meta.names() == ["fold", "x1", "x2", "target"]
    assert meta.types() == ["numeric", "nominal", "numeric", "nominal"]
    assert set(meta["x1"][1]) == {"red", "sky blue"} and set(meta["target"][1]) == {"yes", "no"}
    assert [v.decode() for v in data["x1"]] == ["red", "?", "sky blue", "red"]
    assert np.isnan(data["x2"][2]) and data["x2"][3] == 4.0
    assert [v.decode() for v in data["target"]] == list(y)


def _iris():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True, as_frame=True)
    X = X.copy()
    X["band"] = np.where(X["sepal width (cm)"] > 3.0, "wide", "narrow").astype(object)  # a nominal column
    return X, np.array(["setosa", "versicolor", "virginica"])[y.to_numpy()]


@pytest.mark.parametrize("peer", ["j48", "rpart", "sklearn_tree"])
def test_a_peer_scores_every_fold_it_is_given(peer):
    why = {"j48": accuracy_peers.j48_missing, "rpart": accuracy_peers.rpart_missing}.get(peer, lambda: None)()
    if why:
        pytest.skip(why)
    X, y = _iris()
    fold = accuracy_peers.folds(y, 5, seed=1)
    result = getattr(accuracy_peers, peer)(X, y, ["band"], fold)
    assert result["rows"] == [int(np.sum(fold == f)) for f in range(5)]
    assert sum(result["correct"]) / len(y) > 0.85  # iris: any of these trees classifies ~94% right
    assert all(s >= 0 for s in result["seconds"]) and min(result["leaves"]) >= 3


@pytest.mark.parametrize("peer", ["rpart", "sklearn_tree"])
def test_a_regression_peer_sums_squared_errors_on_the_folds_it_is_given(peer):
    if peer == "rpart" and accuracy_peers.rpart_missing():
        pytest.skip(accuracy_peers.rpart_missing())
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    y = y.to_numpy(dtype=float)
    fold = accuracy_peers.regression_folds(len(y), 5, seed=0)
    assert sorted(np.bincount(fold)) == [88, 88, 88, 89, 89]
    result = getattr(accuracy_peers, peer)(X, y, [], fold, regression=True)
    assert result["rows"] == [int(np.sum(fold == f)) for f in range(5)]
    squares = float(np.sum((y - y.mean()) ** 2))
    assert 0 < sum(result["sse"]) < 2 * squares and all(s >= 0 for s in result["sse"])


@pytest.mark.parametrize("regression", [False, True])
def test_the_alpha_search_chooses_as_gridsearchcv_does(regression):
    """search_alpha (each inner tree grown once, pruned at every alpha) against GridSearchCV itself
    (one fit per alpha and fold), on the same candidates and folds."""
    from sklearn.datasets import load_diabetes, load_wine
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if regression:
        X, y = load_diabetes(return_X_y=True)
        make, inner, scoring = (lambda: DecisionTreeRegressor(random_state=0)), KFold(5, shuffle=True,
                                                                                     random_state=0), "r2"
    else:
        X, y = load_wine(return_X_y=True)
        make, inner, scoring = (lambda: DecisionTreeClassifier(random_state=0)), StratifiedKFold(
            5, shuffle=True, random_state=0), "accuracy"
    alphas = accuracy_peers.alpha_grid(make().cost_complexity_pruning_path(X, y).ccp_alphas, most=12)
    assert alphas[0] == 0 and len(alphas) <= 12 and np.all(np.diff(alphas) > 0)
    naive = GridSearchCV(make(), {"ccp_alpha": alphas}, cv=inner, scoring=scoring).fit(X, y)
    got = accuracy_peers.search_alpha(make, X, y, alphas, inner, regression)
    assert got == naive.best_params_["ccp_alpha"]


def test_the_tuned_tree_and_rpart_min_rule_score_every_fold():
    X, y = _iris()
    fold = accuracy_peers.folds(y, 5, seed=1)
    tuned = accuracy_peers.sklearn_tree(X, y, ["band"], fold, tuned=True)
    assert tuned["rows"] == [int(np.sum(fold == f)) for f in range(5)] and sum(tuned["correct"]) / len(y) > 0.85
    if accuracy_peers.rpart_missing():
        pytest.skip(accuracy_peers.rpart_missing())
    lowest = accuracy_peers.rpart(X, y, ["band"], fold, rule="min")
    one_se = accuracy_peers.rpart(X, y, ["band"], fold)
    assert min(a - b for a, b in zip(lowest["leaves"], one_se["leaves"])) >= 0  # min-xerror keeps at least 1-SE's
    with pytest.raises(ValueError):
        accuracy_peers.rpart(X, y, ["band"], fold, rule="2se")


def test_a_partial_run_is_told_apart_and_its_settings_may_hold_equals():
    import argparse

    from benchmarks import accuracy

    assert accuracy._parse_settings(['dasktree cv=10={"cv": 10}', "plain={}"]) == {"dasktree cv=10": {"cv": 10},
                                                                                   "plain": {}}
    parser = argparse.ArgumentParser()
    accuracy.add_arguments(parser)
    assert not accuracy.partial(parser.parse_args([]))  # the whole claim: results/ is written
    for given in (["--suite", "tuning"], ["--learners", "J48"], ["--setting", "g={}"], ["--no-regression"],
                  ["--choices", "gini"]):
        assert accuracy.partial(parser.parse_args(given))


def test_reused_rows_may_be_renamed_when_a_name_holds_equals(tmp_path):
    """--rename FILE:OLD=>NEW: "dasktree cv=10" split at its own "=" named a learner that does not exist
    ("dasktree cv"), so its rows came in under their old name."""
    import json

    from benchmarks import accuracy

    path = tmp_path / "old.json"
    row = {"correct": [1], "rows": [1], "seconds": [0.1], "leaves": [1], "accuracy": 1.0}
    path.write_text(json.dumps({"figures": {"datasets": [
        {"dataset": "iris", "learners": {"dasktree": row, "dasktree cv=10": row}}]}}))
    rows, _, _ = accuracy._reused([str(path)], ["old.json:dasktree=dasktree gini",
                                                "old.json:dasktree cv=10=>dasktree gini cv=10"])
    assert set(rows) == {("iris", "dasktree gini"), ("iris", "dasktree gini cv=10")}


def test_a_choice_rule_reads_the_inner_scores_alone():
    """The 1-SE rule keeps the default unless the best setting's mean beats it by more than its standard
    error; "best" takes the first of the best means, as GridSearchCV's least rank."""
    from benchmarks import accuracy

    k = 4
    default, other = accuracy.DEFAULT, ("gini", "pessimistic")
    close = {default: [0.8, 0.8, 0.8, 0.8], other: [0.9, 0.7, 0.9, 0.86]}  # mean 0.84, SE 0.048: within
    far = {default: [0.8, 0.8, 0.8, 0.8], other: [0.95, 0.9, 0.95, 0.95]}  # mean 0.9375, SE 0.0125
    tie = {default: [0.8, 0.9, 0.8, 0.9], other: [0.9, 0.8, 0.9, 0.8]}
    assert accuracy.choose(close, [default, other], "1se", k) == default
    assert accuracy.choose(close, [default, other], "best", k) == other
    assert accuracy.choose(far, [default, other], "1se", k) == other
    assert accuracy.choose(tie, [other, default], "best", k) == other
    learners = {f"dasktree {c} {p}": {"correct": [3, 5], "rows": [10, 10], "seconds": [1.0, 2.0], "leaves": [4, 6],
                                      "split_scores": [close[(c, p)] if (c, p) in close else [0.0] * k] * 2}
                for c in ("gain_ratio", "gini", "entropy") for p in ("pessimistic", "cv-min", "cv")}
    learners["dasktree gini pessimistic"]["correct"] = [7, 9]
    rows = accuracy.choice_rows(learners, k)
    assert rows["choose: criteria x pessimistic, best"]["correct"] == [7, 9]  # gini's inner mean is higher
    assert rows["choose: criteria x pessimistic, 1-SE"]["correct"] == [3, 5]  # but within one SE: the default
    assert rows["choose: criteria x pessimistic, 1-SE"]["seconds"] == [3.0, 6.0]  # the three criteria's fits


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(8, 120), st.booleans(), st.booleans())
def test_predictions_at_every_alpha_are_those_of_prune_tree(seed, rows, regression, missing):
    """predict_at (one weakest-link run per tree) against scikit-learn's own: ``_prune_tree`` at each
    alpha and ``predict``, at the candidates, at the path's own alphas (the boundaries), at 0 and
    above the last; tied values and missing values included."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(rows, 3)).astype(np.float64)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.normal(size=rows).round(1) if regression else rng.integers(0, 3, size=rows)
    make = (lambda: DecisionTreeRegressor(random_state=0)) if regression else (
        lambda: DecisionTreeClassifier(random_state=0))
    grown = make().fit(X, y)
    step_alphas, leaf_step = accuracy_peers.weakest_links(grown.tree_)
    path = grown.cost_complexity_pruning_path(X, y).ccp_alphas
    assert np.array_equal(step_alphas, path[1:])  # the same sequence, to the bit
    alphas = np.unique(np.concatenate([accuracy_peers.alpha_grid(path), path, [0.0, path[-1] * 2 + 1]]))
    got = accuracy_peers.predict_at(grown.tree_, leaf_step, step_alphas, X, alphas, regression)
    for i, alpha in enumerate(alphas):
        tree = make().fit(X, y)
        tree.ccp_alpha = float(alpha)
        tree._prune_tree()
        expected = tree.predict(X)
        assert np.array_equal(got[i] if regression else tree.classes_.take(got[i]), expected), alpha
