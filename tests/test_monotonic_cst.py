"""``monotonic_cst`` fitted: predictions monotone in each constrained feature, the same model with small
nodes grown in memory or level-wise, scikit-learn's tree where both search the same thresholds, a
saved model and the exports predicting what ``predict`` does, and one line (exit 2) where it cannot hold."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dasktree
from dasktree import DaskForestClassifier, DaskForestRegressor, DaskTreeClassifier, DaskTreeRegressor
from dasktree.cli import main
from dasktree.errors import InputError, ParameterError
from dasktree.levels.small import small_node_rows
from dasktree.testing import write_dataset

N = 2000


def _frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    """``up`` raises the target, ``down`` lowers it, both with a bump the constraint must flatten;
    ``free`` acts both ways; some of ``up`` missing."""
    rng = np.random.default_rng(seed)
    up, down, free = rng.uniform(0, 10, n), rng.uniform(0, 10, n), rng.uniform(-3, 3, n)
    signal = 0.6 * up + 2.0 * np.sin(up) - 0.5 * down + np.cos(2 * down) + np.abs(free)
    frame = pd.DataFrame({"up": np.round(up, 2), "down": np.round(down, 2), "free": np.round(free, 2)})
    frame.loc[rng.random(n) < 0.03, "up"] = np.nan
    frame["amount"] = np.round(signal + rng.normal(scale=1.0, size=n), 3)
    frame["label"] = (signal + rng.normal(scale=1.0, size=n) > np.median(signal)).astype(np.int64)
    return frame


FRAME = _frame()
X = FRAME[["up", "down", "free"]]
CST = {"up": 1, "down": -1}


def _predict(fitted, grid: np.ndarray, feature: str, base: pd.DataFrame) -> np.ndarray:
    """(rows of ``base``, grid points): each row's prediction as ``feature`` sweeps ``grid`` (one call)."""
    rows = base.loc[base.index.repeat(grid.size)].assign(**{feature: np.tile(grid, len(base))})
    out = fitted.predict_proba(rows)[:, 1] if hasattr(fitted, "predict_proba") else fitted.predict(rows)
    return np.asarray(out).reshape(len(base), grid.size)


def _assert_monotone(fitted, direction: int, feature: str):
    base = X.sample(60, random_state=1).fillna(0.0)
    sweep = _predict(fitted, np.linspace(-1, 11, 121), feature, base)
    steps = np.diff(sweep, axis=1) * direction
    assert (steps >= 0).all(), steps.min()


@pytest.mark.parametrize("estimator,target,extra", [
    (DaskTreeRegressor, "amount", dict()), (DaskTreeRegressor, "amount", dict(cv=5)),
    (DaskTreeClassifier, "label", dict(criterion="gini")), (DaskTreeClassifier, "label", dict(cv=5)),
    (DaskTreeClassifier, "label", dict(criterion="entropy", prune="none"))])
def test_predictions_are_monotone_in_each_constrained_feature(estimator, target, extra):
    fitted = estimator(monotonic_cst=CST, **extra).fit(X, FRAME[target])
    assert fitted.model_.tree.n_leaves > 4
    _assert_monotone(fitted, 1, "up")
    _assert_monotone(fitted, -1, "down")
    unconstrained = estimator(**{**extra, "prune": "none", "max_depth": 8}).fit(X, FRAME[target])  # the bump shows
    with pytest.raises(AssertionError):
        _assert_monotone(unconstrained, 1, "up")


@pytest.mark.parametrize("estimator,target,extra", [(DaskTreeRegressor, "amount", dict()),
                                                    (DaskTreeRegressor, "amount", dict(cv=3)),
                                                    (DaskTreeClassifier, "label", dict(criterion="gini", cv=3)),
                                                    (DaskTreeClassifier, "label", dict())])
def test_small_nodes_grow_the_level_wise_tree(estimator, target, extra):
    def fit():
        return estimator(monotonic_cst=[1, -1, 0], keep_fold_trees=True, prune="none", **extra).fit(
            X, FRAME[target]).model_

    with small_node_rows(None):
        gathered = fit()
    with small_node_rows(0):
        level_wise = fit()
    assert sum(level.get("small_nodes", 0) for level in gathered.run["levels"]) > 0
    assert [t.to_json() for t in (gathered.tree, *gathered.fold_trees)] == \
        [t.to_json() for t in (level_wise.tree, *level_wise.fold_trees)]


def test_scikit_learns_regression_tree_where_both_search_the_same_thresholds():
    """Integer features of few values (exact bins, thresholds between them in both), no missing
    values, a continuous target: the same partition of the rows, the same predictions."""
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(3)
    n = 1500
    a, b, c = rng.integers(0, 30, n), rng.integers(0, 20, n), rng.integers(0, 10, n)
    y = 0.3 * a + 2 * np.sin(a / 3) - 0.4 * b + np.cos(b) + 0.5 * c + rng.normal(scale=0.8, size=n)
    Xi = pd.DataFrame({"a": a.astype(float), "b": b.astype(float), "c": c.astype(float)})
    cst = [1, -1, 0]
    for depth in (3, 5, 8):
        ours = DaskTreeRegressor(monotonic_cst=cst, max_depth=depth, prune="none").fit(Xi, y)
        theirs = DecisionTreeRegressor(monotonic_cst=cst, max_depth=depth, random_state=0).fit(Xi.to_numpy(), y)
        assert ours.model_.tree.n_leaves == theirs.get_n_leaves()
        np.testing.assert_allclose(ours.predict(Xi), theirs.predict(Xi.to_numpy()), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_saved_model_and_its_exports_predict_what_predict_does(task, tmp_path):
    from dasktree.testing import exports

    fit = dasktree.fit if task == "classification" else dasktree.fit_regression
    target, left_out = ("label", "amount") if task == "classification" else ("amount", "label")
    model = fit(FRAME, target=target, exclude=[left_out], monotonic_cst=CST, cv=4, prune="none")
    path = tmp_path / "m.json"
    model.save(path)
    loaded = dasktree.load(path).model_
    rows = exports.edge_rows(model, X)
    np.testing.assert_array_equal(loaded.predict_values(rows), model.predict_values(rows))
    values = model.node_values()
    raw = model.task.node_values(model, dataclasses.replace(model.tree, monotonic=None))
    assert (values != raw).any()  # some nodes are clipped: the exports must say the clipped values
    expected_labels, expected_values = exports.reference(model, rows)
    for fmt, score in (("sqlite", exports.score_sqlite), ("duckdb", exports.score_duckdb),
                       ("onnx", exports.score_onnx), ("pmml", exports.score_pmml)):
        if exports.missing_engine(fmt):
            continue
        try:
            labels, scored = score(model, rows)
        except InputError as refused:  # SQLite misreads some 17-digit literals: the export says so, exit 1
            assert fmt == "sqlite" and "SQLite does not read any literal near" in str(refused)
            continue
        assert labels == expected_labels, fmt
        np.testing.assert_array_equal(scored, expected_values, err_msg=fmt)


def test_the_command_takes_constraints_by_name_or_in_order(tmp_path):
    data = write_dataset(FRAME.drop(columns="label"), tmp_path / "data", n_files=2)
    by_name, in_order = tmp_path / "a.json", tmp_path / "b.json"
    base = ["fit", data, "--target", "amount", "--task", "regression", "--quiet"]
    assert main([*base, "--monotonic-cst", "up=1,down=-1", "--out", str(by_name)]) == 0
    assert main([*base, "--monotonic-cst", "1,-1,0", "--out", str(in_order)]) == 0
    assert json.loads(by_name.read_text())["params"]["monotonic_cst"] == CST
    assert dasktree.load(by_name).model_.tree.to_json() == dasktree.load(in_order).model_.tree.to_json()


@pytest.mark.parametrize("frame,options,message", [
    ("three classes", ["--monotonic-cst", "up=1"], "monotonic_cst is for regression and binary classification"),
    ("nominal", ["--monotonic-cst", "plan=1"], "constrains the nominal feature 'plan'"),
    ("binary", ["--monotonic-cst", "up=1", "--max-arity", "3"], "monotonic_cst needs binary tests"),
    ("binary", ["--monotonic-cst", "zip=1"], "names 'zip', not a feature"),
    ("binary", ["--monotonic-cst", "1,0"], "has 2 constraints but the fit has 3 features"),
    ("binary", ["--monotonic-cst", "up=1", "--postpone", "rank:0.5"], "give monotonic_cst= or postpone="),
])
def test_what_cannot_hold_is_one_line_and_exit_2(frame, options, message, tmp_path, capsys):
    frames = {"binary": FRAME.drop(columns="amount"),
              "three classes": FRAME.drop(columns="amount").assign(label=lambda f: f["label"] + (f["free"] > 2)),
              "nominal": FRAME.drop(columns="amount").assign(plan=np.where(FRAME["free"] > 0, "a", "b"))}
    data = write_dataset(frames[frame], tmp_path / "data", n_files=1)
    assert main(["fit", data, "--target", "label", *options, "--out", str(tmp_path / "m.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_bad_option_text_says_what_it_takes(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fit", "d", "--target", "c", "--out", "m.json", "--monotonic-cst", "up=2"])
    assert stop.value.code == 2
    line, = capsys.readouterr().err.strip().splitlines()
    assert "argument --monotonic-cst: must be FEATURE=C,... or C,C,... with each C -1, 0 or 1, got 'up=2'" in line


def test_in_python_a_bad_constraint_names_the_parameter():
    with pytest.raises(ParameterError, match="monotonic_cst must be"):
        DaskTreeRegressor(monotonic_cst=[1, 5, 0]).fit(X, FRAME["amount"])
    with pytest.raises(ParameterError, match="not for regression forests yet"):
        dasktree.fit_forest_regression(FRAME.drop(columns="label"), target="amount", n_estimators=2, monotonic_cst=CST)


@pytest.mark.parametrize("task,target,left_out", [("classification", "label", "amount"),
                                                  ("regression", "amount", "label")])
def test_the_same_rows_in_files_or_memory_give_one_model(task, target, left_out, tmp_path):
    fit = dasktree.fit if task == "classification" else dasktree.fit_regression
    params = dict(monotonic_cst=CST, cv=4, max_depth=7)
    one = write_dataset(FRAME, tmp_path / "one", n_files=1, row_group_size=700)
    seven = write_dataset(FRAME, tmp_path / "seven", n_files=7, row_group_size=97)
    models = {fit(source, target=target, exclude=[left_out], part_rows=300, **params).dumps() for source in (one, seven)}
    models.add(fit(FRAME, target=target, exclude=[left_out], **params).dumps())
    assert len(models) == 1


# ---------------------------------------------------------------- forests: every member constrained
@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1))
def test_a_forests_predictions_are_monotone_in_each_constrained_feature(seed):
    """Each member grows under the constraints (its own bounds in the bagged search) and predicts its values
    clipped to them, so the forest's average is monotone in ``up`` and ``down``; the same forest without
    them is not."""
    frame = _frame(800, seed=seed % 1000)
    fitted = DaskForestClassifier(n_estimators=4, monotonic_cst=CST, random_state=seed).fit(
        frame[["up", "down", "free"]], frame["label"])
    _assert_monotone(fitted, 1, "up")
    _assert_monotone(fitted, -1, "down")
    free = DaskForestClassifier(n_estimators=4, random_state=seed).fit(frame[["up", "down", "free"]], frame["label"])
    with pytest.raises(AssertionError):
        _assert_monotone(free, 1, "up")


def test_a_regression_forest_refuses_it_in_one_line(tmp_path, capsys):
    with pytest.raises(ParameterError, match="monotonic_cst is not for regression forests yet"):
        DaskForestRegressor(n_estimators=2, monotonic_cst=CST).fit(X, FRAME["amount"])
    data = write_dataset(FRAME.drop(columns="label"), tmp_path / "data", n_files=1)
    assert main(["fit", data, "--target", "amount", "--task", "regression", "--trees", "2", "--monotonic-cst",
                 "up=1", "--out", str(tmp_path / "f.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "monotonic_cst is not for regression forests yet" in err and len(err.strip().splitlines()) == 1


def test_a_forest_file_and_its_onnx_predict_what_predict_does(tmp_path):
    """``dasktree fit --trees N --monotonic-cst``: the saved forest (its members clipped again when it loads)
    predicts monotone in ``up``, and its ONNX export predicts every row as it does."""
    from dasktree.export.forest_onnx import forest_onnx_bytes
    from dasktree.export.onnx_model import onnx_input
    from dasktree.model.forest_model import load_forest

    data = write_dataset(FRAME.drop(columns="amount"), tmp_path / "data", n_files=2)
    path = tmp_path / "forest.json"
    assert main(["fit", data, "--target", "label", "--trees", "3", "--monotonic-cst", "up=1,down=-1",
                 "--random-state", "5", "--out", str(path), "--quiet"]) == 0
    forest = load_forest(path)
    assert forest.params["monotonic_cst"] == CST and all(m.monotonic is not None for m in forest.members)
    grid = X.sample(40, random_state=2).fillna(0.0)
    sweep = pa.Table.from_pandas(grid.loc[grid.index.repeat(61)].assign(up=np.tile(np.linspace(-1, 11, 61), len(grid))),
                                 preserve_index=False)
    assert (np.diff(forest.predict_proba_table(sweep)[:, 1].reshape(len(grid), 61), axis=1) >= 0).all()
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(forest_onnx_bytes(forest), providers=["CPUExecutionProvider"])
    rows = pa.Table.from_pandas(X, preserve_index=False)  # missing values of ``up`` among them
    _, proba = session.run(["label", "probabilities"], {"X": onnx_input(forest, rows)})
    np.testing.assert_array_equal(proba, forest.predict_proba_table(rows))
