"""``dasktree export`` of a saved regression model: what each file carries (the task, a double
``prediction``, no class columns), valid PMML 4.4, and ``Model.export``'s atomic write."""

import json

import numpy as np
import pandas as pd
import pytest

import dasktree
from dasktree.cli import main
from dasktree.errors import InputError
from dasktree.model.model import load
from dasktree import fit_regression
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import pmml_xsd


def _pmml_xsd(directory) -> str:
    path = pmml_xsd(directory)
    if path is None:
        pytest.skip("no PMML 4.4 schema here: jpmml_evaluator (and its pmml-model jar) is not installed")
    return path


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    frame = mixed_frame(1500).drop(columns=["label"])
    frame["y"] = 3.0 * frame["x"].fillna(0.0) + (frame["colour"] == "red") * 2.0 + frame["k"] / 10.0
    path = tmp_path_factory.mktemp("model") / "model.json"
    fit_regression(frame, target="y", scheduler="inprocess", max_depth=4).save(path)
    return str(path)


def test_sql_selects_the_predicted_value(model_file, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "model.sql"
    assert main(["export", model_file, "--format", "sql", "--out", str(out), "--dialect", "duckdb",
                 "--table", "t", "--keep", "id"]) == 0
    text = out.read_text()
    assert "predicts 'y' (regression: each leaf's value)" in text
    assert 'AS DOUBLE) AS "prediction"' in text and "proba_" not in text
    model = load(model_file)
    frame = mixed_frame(300, seed=5).drop(columns=["label"]).assign(id=np.arange(300))
    con = duckdb.connect()
    con.register("t", frame)
    got = con.sql(text).df()
    assert list(got.columns) == ["id", "prediction"]
    import pyarrow as pa

    np.testing.assert_array_equal(got["prediction"].to_numpy(),
                                  model.predict_values(pa.Table.from_pandas(frame, preserve_index=False)))


def test_onnx_has_one_double_output_and_says_its_task(model_file, tmp_path):
    onnx = pytest.importorskip("onnx")
    out = tmp_path / "model.onnx"
    assert main(["export", model_file, "--format", "onnx", "--out", str(out)]) == 0
    proto = onnx.load(str(out))
    props = {p.key: p.value for p in proto.metadata_props}
    assert props["task"] == "regression" and json.loads(props["classes"]) == []
    assert json.loads(props["target"]) == "y"
    assert [(o.name, o.type.tensor_type.elem_type) for o in proto.graph.output] == [("prediction", onnx.TensorProto.DOUBLE)]
    values = next(i for i in proto.graph.initializer if i.name == "value_table")
    assert values.data_type == onnx.TensorProto.DOUBLE  # the leaves' values are not rounded to float32


def test_pmml_is_a_valid_regression_tree_model(model_file, tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    out = tmp_path / "model.pmml"
    assert main(["export", model_file, "--format", "pmml", "--out", str(out)]) == 0
    xmlschema.XMLSchema(_pmml_xsd(tmp_path)).validate(str(out))
    text = out.read_text()
    assert 'functionName="regression"' in text and "ScoreDistribution" not in text
    assert '<DataField name="y" optype="continuous" dataType="double" />' in text
    assert 'name="prediction" optype="continuous" dataType="double" feature="predictedValue"' in text


def test_random_regression_pmml_is_valid(tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    from dasktree.testing.exports import random_regression_model

    schema = xmlschema.XMLSchema(_pmml_xsd(tmp_path))
    for seed in range(10):
        schema.validate(random_regression_model(seed).export("pmml"))


def test_model_export_writes_whole_or_refuses(model_file, tmp_path):
    model = load(model_file)
    text = model.export("sql", tmp_path / "m.sql", dialect="sqlite")
    assert (tmp_path / "m.sql").read_text() == text and "AS REAL)" in text
    with pytest.raises(InputError, match="already exists"):
        model.export("pmml", tmp_path / "m.sql")


def test_estimator_model_exports():
    """``DaskTreeRegressor().fit(X, y).model_.export``: SQL over a frame of the estimator's columns."""
    duckdb = pytest.importorskip("duckdb")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0, 7.5, -2.25) + X[:, 2]
    reg = dasktree.DaskTreeRegressor(max_depth=3, scheduler="inprocess").fit(X, y)
    frame = pd.DataFrame(X, columns=reg.model_.features)
    got = duckdb.connect().execute(reg.model_.export("sql", table="frame", dialect="duckdb", keep=())).df()
    np.testing.assert_array_equal(got["prediction"].to_numpy(), reg.predict(X))
