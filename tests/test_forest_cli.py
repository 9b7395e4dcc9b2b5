"""``dasktree fit --trees N``: a forest's model file, its summary line, and bad usage as exit 2."""

import json

import numpy as np

import pytest

import dasktree
from dasktree.cli import main
from dasktree.model.forest_model import load_forest
from dasktree.testing import mixed_frame, write_dataset

FRAME = mixed_frame(1200, seed=6)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_dataset(FRAME, tmp_path_factory.mktemp("forest-cli") / "data", n_files=2)


def test_fit_trees_writes_the_forest_the_function_fits(data, tmp_path, capsys):
    out = tmp_path / "forest.json"
    assert main(["fit", data, "--target", "label", "--trees", "4", "--max-depth", "4", "--oob",
                 "--max-features", "2", "--random-state", "7", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert "a forest of 4 trees" in said and "out-of-bag accuracy" in said
    model = load_forest(out)
    expected = dasktree.fit_forest(data, target="label", n_estimators=4, max_depth=4, oob_score=True,
                                   max_features=2, random_state=7)
    assert model.dumps() == expected.dumps()
    assert json.loads(out.read_text())["kind"] == "forest"


def test_predict_with_a_forest_file_writes_the_forests_predictions(data, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "forest.json"
    assert main(["fit", data, "--target", "label", "--trees", "3", "--max-depth", "4", "--out", str(out),
                 "--quiet"]) == 0
    assert main(["predict", str(out), data, "--out", str(tmp_path / "scored"), "--quiet"]) == 0
    scored = pq.read_table(tmp_path / "scored")
    model = load_forest(out)
    table = pq.read_table(data)
    proba = model.predict_proba_table(table)
    got = np.column_stack([scored.column(f"proba_{c}").to_numpy() for c in model.classes])
    np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(proba, axis=0))  # the files' rows, in any order
    assert sorted(scored.column("prediction").to_pylist()) == sorted(
        np.asarray(model.classes)[np.argmax(proba, axis=1)].tolist())


def test_fit_trees_task_regression_writes_the_regression_forest_and_predict_reads_it(data, tmp_path, capsys):
    import pyarrow.parquet as pq

    out = tmp_path / "rforest.json"
    assert main(["fit", data, "--target", "x", "--task", "regression", "--trees", "3", "--max-depth", "4",
                 "--oob", "--random-state", "2", "--out", str(out)]) == 0
    said = "".join(capsys.readouterr())
    assert "a forest of 3 trees" in said and "out-of-bag R^2" in said
    model = load_forest(out)
    expected = dasktree.fit_forest_regression(data, target="x", n_estimators=3, max_depth=4, oob_score=True,
                                              random_state=2)
    assert model.dumps() == expected.dumps()
    assert model.params["max_features_per_node"] == len(model.features)  # 1.0 by default for regression
    assert main(["predict", str(out), data, "--out", str(tmp_path / "scored"), "--quiet"]) == 0
    scored = pq.read_table(tmp_path / "scored")
    np.testing.assert_array_equal(np.sort(scored.column("prediction").to_numpy()),
                                  np.sort(model.predict_values(pq.read_table(data))))


@pytest.mark.parametrize("options,message", [
    (["--trees", "0"], "n_estimators must be"),
    (["--trees", "3", "--cv", "5"], "cv is not for forests"),
    (["--trees", "3", "--max-samples", "lots"], "--max-samples must be a number"),
    (["--trees", "3", "--max-features", "half"], "max_features must be"),
    (["--trees", "3", "--task", "regression", "--cv", "3"], "cv is not for forests"),
    # a forest's option without --trees was a single tree's fit that ignored it
    (["--oob"], "--oob is for forests: give --trees N too"),
    (["--max-features", "2", "--no-bootstrap"], "--no-bootstrap is for forests"),  # --max-features: a tree's too
    (["--random-state", "3", "--task", "regression", "--oob"], "--oob is for forests"),
    (["--trees", "3", "--task", "regression", "--monotonic-cst", "x=1"], "monotonic_cst is not for regression forests yet"),
    (["--max-samples", "0.5", "--oob-permutation", "2"], "--max-samples, --oob-permutation are for forests"),
])
def test_bad_forest_options_are_exit_2(data, tmp_path, capsys, options, message):
    assert main(["fit", data, "--target", "label", *options, "--out", str(tmp_path / "m.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
