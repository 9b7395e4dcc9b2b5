"""A single tree's ``max_features`` and ``random_state`` (scikit-learn's names): at each node the tree
searches the attributes member 0 of a forest would draw at that node path, the ``cv`` fold trees
too; the same model whatever holds the rows and whether small nodes grow in memory; exports equal
to ``predict``; the command's ``--max-features`` / ``--random-state`` without ``--trees``."""

import json

import numpy as np
import pandas as pd
import pytest

import dasktree
from dasktree import DaskTreeClassifier, DaskTreeRegressor
from dasktree.cli import main
from dasktree.levels.sampling import child_key, feature_mask, resolve_max_features
from dasktree.levels.small import small_node_rows
from dasktree.testing import write_dataset

N = 1000


def _frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    """Eight numeric features (two with missing values), a binary label and a numeric target, both
    depending on most of them: a node's draw shapes its test."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8))
    score = x @ np.array([1.0, -0.8, 0.6, 0.5, -0.4, 0.3, 0.2, 0.1])
    frame = pd.DataFrame({f"f{j}": np.round(x[:, j], 2) for j in range(8)})
    frame.loc[rng.random(n) < 0.05, "f1"] = np.nan
    frame.loc[rng.random(n) < 0.05, "f4"] = np.nan
    frame["label"] = (score + rng.normal(scale=0.7, size=n) > 0).astype(np.int64)
    frame["amount"] = np.round(score + rng.normal(scale=0.5, size=n), 3)
    return frame


FRAME = _frame()
FEATURES = [f"f{j}" for j in range(8)]


def _paths(tree) -> list[tuple[int, int]]:
    """(node, path key) of every node of a model's tree (node 0 the root, key 0)."""
    keys = {0: 0}
    for i, kids in enumerate(tree.children):
        for j, k in enumerate(kids):
            keys[k] = child_key(keys[i], j)
    return sorted(keys.items())


def _searched_attributes_are_drawn(tree, k: int, seed: int) -> int:
    """Every test of ``tree`` is on an attribute of member 0's draw at its node path; returns the tests."""
    tested = 0
    for node, key in _paths(tree):
        test = tree.tests[node]
        if test is None:
            continue
        mask = feature_mask(seed, [0], [key], len(FEATURES), k)[:, 0]
        assert mask[test.attribute], (node, test.attribute, np.flatnonzero(mask))
        tested += 1
    return tested


@pytest.mark.parametrize("estimator,target,extra,max_features", [
    (DaskTreeClassifier, "label", dict(criterion="gini"), "sqrt"), (DaskTreeClassifier, "label", dict(), 3),
    (DaskTreeRegressor, "amount", dict(), 0.5)])
def test_every_test_is_on_an_attribute_drawn_for_its_node_path(estimator, target, extra, max_features):
    X, y = FRAME[FEATURES], FRAME[target]
    fitted = estimator(max_features=max_features, random_state=5, max_depth=6, prune="none", cv=3,
                       keep_fold_trees=True, **extra).fit(X, y)
    k = resolve_max_features(max_features, len(FEATURES))
    model = fitted.model_
    assert model.params["max_features"] == max_features and model.params["random_state"] == 5
    assert _searched_attributes_are_drawn(model.tree, k, 5) > 3
    for fold in model.fold_trees:  # the fold trees search the main tree's draw at each node path
        _searched_attributes_are_drawn(fold, k, 5)


@pytest.mark.parametrize("estimator,target", [(DaskTreeClassifier, "label"), (DaskTreeRegressor, "amount")])
def test_the_seed_makes_the_tree_and_all_features_is_the_tree_without_the_option(estimator, target):
    X, y = FRAME[FEATURES], FRAME[target]

    def trees(**params):
        return estimator(max_depth=5, **params).fit(X, y).model_.tree.to_json()

    assert trees(max_features=2, random_state=1) == trees(max_features=2, random_state=1)
    assert trees(max_features=2, random_state=1) != trees(max_features=2, random_state=2)
    assert trees(max_features=None, random_state=3) == trees() == trees(max_features=1.0) == trees(max_features=8)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("cv", [None, 4])
def test_small_nodes_grow_the_level_wise_tree(task, cv):
    target = "label" if task == "classification" else "amount"
    estimator = DaskTreeClassifier if task == "classification" else DaskTreeRegressor
    extra = dict(criterion="gini") if task == "classification" else {}

    def fit():
        return estimator(max_features="sqrt", random_state=9, cv=cv, keep_fold_trees=True, prune="none",
                         **extra).fit(FRAME[FEATURES], FRAME[target]).model_

    with small_node_rows(None):
        gathered = fit()
    with small_node_rows(0):
        level_wise = fit()
    assert sum(level.get("small_nodes", 0) for level in gathered.run["levels"]) > 0
    assert sum(level.get("small_nodes", 0) for level in level_wise.run["levels"]) == 0
    assert [t.to_json() for t in (gathered.tree, *gathered.fold_trees)] == \
        [t.to_json() for t in (level_wise.tree, *level_wise.fold_trees)]


@pytest.mark.parametrize("task,target,left_out", [("classification", "label", "amount"),
                                                  ("regression", "amount", "label")])
def test_the_same_rows_in_files_or_memory_give_one_model(task, target, left_out, tmp_path):
    fit = dasktree.fit if task == "classification" else dasktree.fit_regression
    params = dict(max_features=3, random_state=4, max_depth=6, cv=5)
    one = write_dataset(FRAME, tmp_path / "one", n_files=1, row_group_size=400)
    seven = write_dataset(FRAME, tmp_path / "seven", n_files=7, row_group_size=77)
    models = {fit(source, target=target, exclude=[left_out], part_rows=200, **params).dumps()
              for source in (one, seven)}
    models.add(fit(FRAME, target=target, exclude=[left_out], **params).dumps())
    assert len(models) == 1


def test_an_export_predicts_what_predict_does():
    from dasktree.testing.exports import edge_rows, reference, score_sqlite

    model = DaskTreeClassifier(max_features="sqrt", random_state=2, max_depth=6).fit(
        FRAME[FEATURES], FRAME["label"]).model_
    rows = edge_rows(model, FRAME[FEATURES])
    labels, proba = score_sqlite(model, rows)
    expected_labels, expected_proba = reference(model, rows)
    assert labels == expected_labels
    np.testing.assert_array_equal(proba, expected_proba)


def test_the_command_fits_a_single_tree_with_max_features(tmp_path):
    data = write_dataset(FRAME.drop(columns="amount"), tmp_path / "data", n_files=2)
    out = tmp_path / "m.json"
    assert main(["fit", data, "--target", "label", "--max-features", "sqrt", "--random-state", "6",
                 "--max-depth", "5", "--out", str(out), "--quiet"]) == 0
    saved = json.loads(out.read_text())
    assert saved["params"]["max_features"] == "sqrt" and saved["params"]["random_state"] == 6
    expected = dasktree.fit(data, target="label", max_features="sqrt", random_state=6, max_depth=5)
    assert dasktree.load(out).model_.dumps() == expected.dumps()
    regression = tmp_path / "r.json"
    assert main(["fit", write_dataset(FRAME.drop(columns="label"), tmp_path / "r", n_files=1), "--target", "amount",
                 "--task", "regression", "--max-features", "0.5", "--out", str(regression), "--quiet"]) == 0
    assert json.loads(regression.read_text())["params"]["max_features"] == 0.5


@pytest.mark.parametrize("options,message", [
    (["--max-features", "half"], "max_features must be"),
    (["--max-features", "2", "--postpone", "rank:0.5"], "give max_features= or postpone=, not both"),
    (["--random-state", "-1"], "random_state must be"),
])
def test_bad_values_are_one_line_and_exit_2(tmp_path, capsys, options, message):
    data = write_dataset(FRAME.drop(columns="amount"), tmp_path / "data", n_files=1)
    assert main(["fit", data, "--target", "label", *options, "--out", str(tmp_path / "m.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
