"""``dasktree fit --task regression``, predict and evaluate, through the command's ``main`` on real Parquet
(:func:`~dasktree.testing.processes.run_command`: the command as a process has its own tests)."""

import json
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn import metrics

from dasktree import DaskTreeRegressor
from dasktree.testing.processes import run_command


def _run(*args, timeout=300):
    return run_command(*args)


def test_fit_predict_evaluate(tmp_path, dataset, frame):
    model = tmp_path / "model.json"
    fit = _run("fit", dataset, "--target", "y", "--out", model, "--cv", "4", "--max-depth", "6", "--json", "--quiet")
    assert fit.returncode == 0, fit.stderr
    assert "--task auto: target 'y' holds double numbers: a regression tree" in fit.stderr
    report = json.loads(fit.stdout)["report"]
    assert report["task"] == "regression" and report["cv"]["folds"] == 4 and 0.8 < report["cv"]["r2"] < 1
    saved = json.loads(model.read_text())
    assert saved["task"] == "regression" and saved["target_scale"]["bits"] == 30
    out = tmp_path / "pred"
    predict = _run("predict", model, dataset, "--out", out, "--quiet")
    assert predict.returncode == 0, predict.stderr
    predicted = pq.read_table(out).column("prediction")
    assert predicted.type == pa.float64()
    reference = DaskTreeRegressor(cv=4, max_depth=6).fit(dataset, target="y").predict(frame.drop(columns="y"))
    np.testing.assert_array_equal(np.sort(predicted.to_numpy()), np.sort(reference))
    evaluate = _run("evaluate", model, dataset, "--json", "--quiet")
    assert evaluate.returncode == 0, evaluate.stderr
    got = json.loads(evaluate.stdout)["metrics"]
    y = frame["y"].to_numpy()
    assert got["mse"] == pytest.approx(metrics.mean_squared_error(y, reference), rel=1e-10)
    assert got["mae"] == pytest.approx(metrics.mean_absolute_error(y, reference), rel=1e-10)
    assert got["r2"] == pytest.approx(metrics.r2_score(y, reference), rel=1e-10)
    assert got["max_error"] == pytest.approx(metrics.max_error(y, reference), rel=1e-12)


def test_the_task_rule_and_its_overrides(tmp_path):
    pd.DataFrame({"x": np.arange(40.0), "y": np.arange(40) % 3}).to_parquet(tmp_path / "ints.parquet")
    classified = _run("fit", tmp_path / "ints.parquet", "--target", "y", "--out", tmp_path / "c.json", "--quiet")
    assert classified.returncode == 0, classified.stderr
    assert "task" not in json.loads((tmp_path / "c.json").read_text())
    regressed = _run("fit", tmp_path / "ints.parquet", "--target", "y", "--out", tmp_path / "r.json",
                     "--task", "regression", "--quiet")
    assert regressed.returncode == 0, regressed.stderr
    assert json.loads((tmp_path / "r.json").read_text())["task"] == "regression"


@pytest.mark.parametrize("frame, options, code, words", [
    (pd.DataFrame({"x": [1.0, 2.0], "y": ["a", "b"]}), ["--task", "regression"], 1, "not numeric"),
    (pd.DataFrame({"x": [1.0, 2.0], "y": [-1e308, 1e308]}), [], 1, "too wide a range"),
    (pd.DataFrame({"x": [1.0, 2.0], "y": [-1.0, 2.0]}), ["--criterion", "poisson"], 1, "needs a target >= 0"),
    (pd.DataFrame({"x": [1.0, 2.0], "y": [1.0, 2.0]}), ["--confidence", "0.1"], 2, "for classification trees"),
    (pd.DataFrame({"x": [1.0, 2.0], "y": [1.0, 2.0]}), ["--criterion", "gini"], 2, "criterion must be one of"),
    (pd.DataFrame({"x": [1.0, 2.0], "y": [1.0, 2.0]}), ["--prune", "cv"], 2, "give cv=k too"),
])
def test_bad_input_is_one_line_and_its_exit_code(tmp_path, frame, options, code, words):
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    result = _run("fit", path, "--target", "y", "--out", tmp_path / "m.json", "--quiet", *options)
    assert result.returncode == code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("dasktree")]
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "m.json").exists()


def test_a_nan_target_is_refused(tmp_path):
    table = pa.table({"x": [1.0, 2.0, 3.0], "y": pa.array([1.0, float("nan"), 2.0], from_pandas=False)})
    pq.write_table(table, tmp_path / "nan.parquet")
    result = _run("fit", tmp_path / "nan.parquet", "--target", "y", "--out", tmp_path / "m.json", "--quiet")
    assert result.returncode == 1 and "non-finite value (nan)" in result.stderr, result.stderr


def test_a_constant_target_is_one_leaf(tmp_path):
    pd.DataFrame({"x": np.arange(10.0), "y": np.full(10, 7.5)}).to_parquet(tmp_path / "c.parquet")
    reg = DaskTreeRegressor().fit(str(tmp_path / "c.parquet"), target="y")
    assert reg.tree_.n_leaves == 1 and np.all(reg.predict(pd.DataFrame({"x": [0.0, 100.0]})) == 7.5)
