"""What the other verbs do with a forest file: ``show`` (summary, report, json, a member's tree),
``export`` (run in DuckDB, onnxruntime and JPMML), ``evaluate`` (against scikit-learn's metrics on
the rows one by one, the same from one file or three), and one line, exit 2, for what a forest
cannot do (``prune``, a tree's formats of the whole forest, ``plot`` without ``--member``)."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dasktree.cli import main
from dasktree.model.text import export_text
from dasktree.model.forest_model import load_forest
from dasktree.model.metrics import classification_metrics
from dasktree.model.model import Model
from dasktree.testing import mixed_frame, write_dataset

FRAME = mixed_frame(1500, seed=11)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("forest-verbs")
    data = write_dataset(FRAME, root / "data", n_files=1)
    three = write_dataset(FRAME, root / "three", n_files=3)
    forest = root / "forest.json"
    assert main(["fit", data, "--target", "label", "--trees", "5", "--max-depth", "5", "--oob",
                 "--random-state", "3", "--out", str(forest), "--quiet"]) == 0
    rforest = root / "rforest.json"
    assert main(["fit", data, "--target", "x", "--exclude", "label", "--task", "regression", "--trees", "4",
                 "--max-depth", "4", "--oob", "--out", str(rforest), "--quiet"]) == 0
    tree = root / "tree.json"
    assert main(["fit", data, "--target", "label", "--max-depth", "3", "--out", str(tree), "--quiet"]) == 0
    return {"data": data, "three": three, "forest": str(forest), "rforest": str(rforest), "tree": str(tree)}


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_summarises_the_forest(files, capsys):
    code, out, err = _run(capsys, "show", files["forest"])
    assert code == 0 and err == ""
    forest = load_forest(files["forest"])
    assert out.startswith(f"{files['forest']}: a dasktree forest of 5 trees predicting 'label' (classification of 3")
    assert f"out of bag: accuracy {forest.report['oob_score']:.4f} over {forest.report['oob_rows']} rows" in out
    best = forest.features[int(np.argmax(forest.feature_importances()))]
    assert f"the most important (impurity decrease): {best} " in out
    code, out, _ = _run(capsys, "show", files["rforest"])
    assert code == 0 and "(regression)" in out and "out of bag: R^2 " in out


def test_show_report_lists_the_members_the_oob_estimate_and_the_importances(files, capsys):
    code, out, _ = _run(capsys, "show", files["forest"], "--format", "report")
    forest = load_forest(files["forest"])
    assert code == 0
    for m, tree in enumerate(forest.members):
        assert f"  {m:>6} {tree.max_depth:>6} {tree.n_leaves:>7} {tree.n_nodes:>7}" in out
    assert f"out of bag: accuracy {forest.report['oob_score']:.4f}" in out
    importances = forest.feature_importances()
    for i in np.flatnonzero(importances):
        assert f"  {forest.features[i]:<24} {importances[i]:.4f}" in out
    assert "* n_estimators" in out and "* max_depth" in out  # changed from the defaults: marked
    assert "permutation importances on the out-of-bag rows: not in the file" in out


def test_show_json_is_the_file_and_a_member_is_a_tree(files, capsys, tmp_path):
    forest = load_forest(files["forest"])
    code, out, _ = _run(capsys, "show", files["forest"], "--format", "json")
    assert code == 0 and json.loads(out) == json.loads(open(files["forest"]).read())
    code, out, _ = _run(capsys, "show", files["forest"], "--member", "2")
    assert code == 0 and out == export_text(forest.member_model(2))
    code, out, _ = _run(capsys, "show", files["forest"], "--member", "2", "--format", "json")
    member = Model.from_json(json.loads(out))  # a single tree's model file: predicts as the member
    table = pq.read_table(files["data"])
    np.testing.assert_array_equal(member.predict_proba_table(table),
                                  forest.member_model(2).predict_proba_table(table))


@pytest.mark.parametrize("argv,message", [
    (["show", "{forest}", "--format", "dot"], "is a forest of 5 trees; show it as text, report, json"),
    (["show", "{forest}", "--format", "cp"], "is a forest of 5 trees"),
    (["show", "{forest}", "--max-depth", "2"], "--max-depth 2: it cuts a tree; give --member M"),
    (["show", "{forest}", "--member", "5"], "--member 5: {forest} is a forest of 5 trees (members 0 to 4)"),
    (["show", "{forest}", "--member", "0", "--format", "cp"], "a forest's member is shown as text, dot, json"),
    (["show", "{tree}", "--member", "0"], "is a single tree, not a forest"),
    (["prune", "{forest}", "--alpha", "0.01", "--out", "{tmp}/p.json"], "its members are grown in full"),
    (["plot", "{forest}", "--out", "{tmp}/f.svg"], "'dasktree plot' takes one tree; give --member M (0 to 4)"),
    (["plot", "{forest}", "--member", "1", "--cv", "--out", "{tmp}/f.svg"], "have no --cv results"),
])
def test_what_a_forest_cannot_do_is_one_line_exit_2(files, capsys, tmp_path, argv, message):
    names = {**files, "tmp": str(tmp_path)}
    code, out, err = _run(capsys, *[a.format(**names) for a in argv])
    assert code == 2, err
    assert message.format(**names) in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "p.json").exists() and not (tmp_path / "f.svg").exists()


def test_plot_draws_a_member(files, tmp_path, capsys):
    out = tmp_path / "member.svg"
    code, _, err = _run(capsys, "plot", files["forest"], "--member", "1", "--engine", "matplotlib", "--out", str(out))
    assert code == 0, err
    assert out.read_text().lstrip().startswith(("<?xml", "<svg"))


def _evaluate(capsys, model: str, data: str) -> dict:
    code, said, err = _run(capsys, "evaluate", model, data, "--json", "--quiet")
    assert code == 0, err
    return json.loads(said)["metrics"]


def _duckdb(sql: str, table: pa.Table) -> pa.Table:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    try:
        con.register("data", table)
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


@pytest.mark.parametrize("which", ["forest", "rforest"])
def test_export_sql_runs_in_duckdb_as_the_forest_predicts(files, tmp_path, capsys, which):
    from dasktree.export.forest_sql import forest_sql_select

    out = tmp_path / "forest.sql"
    code, said, _ = _run(capsys, "export", files[which], "--format", "sql", "--dialect", "duckdb", "--keep", "",
                         "--out", str(out))
    forest = load_forest(files[which])
    assert code == 0 and f"wrote sql export of {files[which]}" in said
    assert out.read_text() == forest_sql_select(forest, dialect="duckdb", keep=[])
    table = pq.read_table(files["data"])
    result = _duckdb(out.read_text(), table)
    if which == "rforest":
        np.testing.assert_array_equal(result.column("prediction").to_numpy(), forest.predict_values(table))
    else:
        got = np.column_stack([result.column(f"proba_{c}").to_numpy() for c in forest.classes])
        np.testing.assert_array_equal(got, forest.predict_proba_table(table))


@pytest.mark.parametrize("which", ["forest", "rforest"])
def test_export_onnx_runs_in_onnxruntime_as_the_forest_predicts(files, tmp_path, capsys, which):
    ort = pytest.importorskip("onnxruntime")
    from dasktree.export.onnx_model import onnx_input

    out = tmp_path / "forest.onnx"
    assert _run(capsys, "export", files[which], "--format", "onnx", "--out", str(out))[0] == 0
    forest = load_forest(files[which])
    table = pq.read_table(files["data"])
    session = ort.InferenceSession(out.read_bytes(), providers=["CPUExecutionProvider"])
    if which == "rforest":
        [prediction] = session.run(["prediction"], {"X": onnx_input(forest, table)})
        np.testing.assert_array_equal(prediction, forest.predict_values(table))
    else:
        label, proba = session.run(["label", "probabilities"], {"X": onnx_input(forest, table)})
        np.testing.assert_array_equal(proba, forest.predict_proba_table(table))


def test_export_pmml_is_the_forests_and_jpmml_scores_it(files, tmp_path, capsys):
    from dasktree.export.forest_pmml import forest_pmml_text
    from dasktree.testing.exports import missing_engine

    out = tmp_path / "forest.pmml"
    assert _run(capsys, "export", files["forest"], "--format", "pmml", "--out", str(out))[0] == 0
    forest = load_forest(files["forest"])
    assert out.read_text() == forest_pmml_text(forest)
    if missing_engine("pmml") is not None:
        pytest.skip(missing_engine("pmml"))
    import pandas as pd
    from jpmml_evaluator import make_evaluator

    table = pq.read_table(files["data"])
    frame = pd.DataFrame({f.name: [np.nan if v is None else v for v in table.column(f.name).to_pylist()]
                          if f.kind == "numeric" else table.column(f.name).to_pylist() for f in forest.spec.features})
    result = make_evaluator(str(out), backend="jpype").verify().evaluateAll(frame)
    got = result[[f"proba_{c}" for c in forest.classes]].to_numpy(dtype=np.float64)
    np.testing.assert_allclose(got, forest.predict_proba_table(table), rtol=0, atol=1e-12)


def test_export_options_of_sql_only_are_refused_for_onnx(files, tmp_path, capsys):
    code, _, err = _run(capsys, "export", files["forest"], "--format", "onnx", "--dialect", "duckdb",
                        "--out", str(tmp_path / "f.onnx"))
    assert code == 2 and "--dialect: only for --format sql" in err


def test_evaluate_a_forest_is_scikit_learns_metrics_on_the_rows_and_the_same_from_three_files(files, capsys):
    forest = load_forest(files["forest"])
    metrics = _evaluate(capsys, files["forest"], files["data"])
    table = pq.read_table(files["data"])
    y = np.asarray([list(forest.classes).index(v) for v in table.column("label").to_pylist()])
    expected = classification_metrics(y, forest.predict_proba_table(table), forest.classes)
    for name in ("accuracy", "balanced_accuracy", "log_loss"):
        assert metrics[name] == pytest.approx(expected[name], rel=1e-12), name
    assert metrics["rows"] == expected["rows"] == len(FRAME)
    for got, want in zip(metrics["per_class"], expected["per_class"]):
        assert got == {**want, **{k: pytest.approx(want[k], rel=1e-12) for k in ("precision", "recall", "f1")}}
    confusion = np.asarray(metrics["confusion_matrix"]["rows_true_columns_predicted"])
    assert confusion.trace() == round(expected["accuracy"] * len(FRAME))
    assert _evaluate(capsys, files["forest"], files["three"]) == metrics  # the same numbers whatever the parts


def test_evaluate_a_regression_forest_is_its_r2(files, capsys):
    from sklearn.metrics import mean_squared_error, r2_score

    forest = load_forest(files["rforest"])
    metrics = _evaluate(capsys, files["rforest"], files["data"])
    table = pq.read_table(files["data"])
    y, predicted = table.column("x").to_numpy(zero_copy_only=False), forest.predict_values(table)
    keep = np.isfinite(y)
    assert metrics["r2"] == pytest.approx(r2_score(y[keep], predicted[keep]), rel=1e-9)
    assert metrics["mse"] == pytest.approx(mean_squared_error(y[keep], predicted[keep]), rel=1e-9)
    assert metrics["rows_skipped_null_target"] == int((~keep).sum())
