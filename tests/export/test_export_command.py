"""``dasktree export`` and the Python entry points: what each file carries, outputs written
whole or refused, and one-line refusals with their exit codes."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dasktree
from dasktree.model import VERSION
from dasktree.cli import main
from dasktree.errors import InputError, ParameterError
from dasktree.model.model import Model, TreeModel, load
from dasktree.split.node_tests import numeric_test
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import random_model


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.json"
    dasktree.fit(mixed_frame(1500), target="label", scheduler="inprocess", max_depth=4).save(path)
    return str(path)


def test_sql_carries_versions_features_and_reads_its_table(model_file, tmp_path, capsys):
    out = tmp_path / "model.sql"
    assert main(["export", model_file, "--format", "sql", "--out", str(out), "--dialect", "duckdb",
                 "--table", "read_parquet('x.parquet')", "--keep", "id"]) == 0
    text = out.read_text()
    assert f"dasktree {dasktree.__version__} model (format version {VERSION})" in text
    assert "x: numeric, k: numeric, colour: nominal, flag: nominal" in text
    assert 'SELECT\n"id",\nCASE' in text and "FROM read_parquet('x.parquet')" in text
    assert 'AS "prediction"' in text and 'AS "proba_high"' in text
    assert "isnan(" in text


def test_onnx_carries_versions_features_and_the_input_contract(model_file, tmp_path):
    onnx = pytest.importorskip("onnx")
    out = tmp_path / "model.onnx"
    assert main(["export", model_file, "--format", "onnx", "--out", str(out)]) == 0
    proto = onnx.load(str(out))
    props = {p.key: p.value for p in proto.metadata_props}
    assert props["dasktree_version"] == dasktree.__version__ and props["model_format_version"] == str(VERSION)
    features = json.loads(props["features"])
    assert [f["name"] for f in features] == ["x", "k", "colour", "flag"]
    assert features[2] == {"name": "colour", "kind": "nominal", "categories": ["blue", "green", "red", "violet"]}
    assert json.loads(props["classes"]) == ["high", "low", "mid"]
    assert "1-based position" in props["input_contract"]
    ops = {(n.domain, n.op_type) for n in proto.graph.node}
    assert ("ai.onnx.ml", "TreeEnsemble") in ops
    splits = next(a for n in proto.graph.node if n.op_type == "TreeEnsemble" for a in n.attribute if a.name == "nodes_splits")
    assert splits.t.data_type == onnx.TensorProto.DOUBLE  # thresholds are not rounded to float32


def test_pmml_is_valid_pmml_4_4_and_carries_versions(model_file, tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    out = tmp_path / "model.pmml"
    assert main(["export", model_file, "--format", "pmml", "--out", str(out)]) == 0
    xmlschema.XMLSchema(_pmml_xsd(tmp_path)).validate(str(out))
    text = out.read_text()
    assert '<Extension name="dasktree_version" value="%s" />' % dasktree.__version__ in text
    assert 'missingValueStrategy="defaultChild"' in text and 'splitCharacteristic="multiSplit"' in text
    assert '<DataField name="colour" optype="categorical" dataType="string">' in text


def test_pmml_of_random_trees_is_valid(tmp_path):
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(_pmml_xsd(tmp_path))
    for seed in range(20):
        schema.validate(random_model(seed).export("pmml"))


def _pmml_xsd(tmp_path) -> str:
    """The PMML 4.4 XML schema as JPMML's pmml-model jar ships it (no PyPI package ships DMG's own file)."""
    import glob
    import zipfile

    jpmml = pytest.importorskip("jpmml_evaluator")
    jars = glob.glob(os.path.join(os.path.dirname(jpmml.__file__), "dependencies", "pmml-model-[0-9]*.jar"))
    if not jars:
        pytest.skip("jpmml_evaluator ships no pmml-model jar here")
    with zipfile.ZipFile(jars[0]) as jar:
        jar.extract("pmml.xsd", tmp_path)
    return str(tmp_path / "pmml.xsd")


def test_existing_out_is_refused_without_overwrite(model_file, tmp_path, capsys):
    out = tmp_path / "model.sql"
    out.write_text("keep me")
    assert main(["export", model_file, "--format", "sql", "--out", str(out)]) == 1
    assert "already exists" in capsys.readouterr().err and out.read_text() == "keep me"
    assert main(["export", model_file, "--format", "sql", "--out", str(out), "--overwrite"]) == 0
    assert out.read_text().startswith("-- dasktree")
    assert sorted(os.listdir(tmp_path)) == ["model.sql"]  # no temporary file left behind


def test_bad_usage_and_bad_files_exit_with_one_line(model_file, tmp_path, capsys):
    cases = [
        (["export", model_file, "--format", "onnx", "--out", str(tmp_path / "m.onnx"), "--dialect", "duckdb"], 2,
         "--dialect: only for --format sql"),
        (["export", str(tmp_path / "none.json"), "--format", "sql", "--out", str(tmp_path / "m.sql")], 1, "no such model file"),
        (["export", model_file, "--format", "pmml", "--out", str(tmp_path / "no" / "m.pmml")], 1, "does not exist"),
    ]
    for argv, code, message in cases:
        assert main(argv) == code
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []


def test_unknown_format_is_usage():
    result = subprocess.run([sys.executable, "-m", "dasktree.cli", "export", "m.json", "--format", "csv", "--out", "x"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "invalid choice: 'csv'" in result.stderr


def test_python_entry_points(model_file, tmp_path):
    model = load(model_file)
    with pytest.raises(ParameterError, match="export format must be one of"):
        model.export("csv")
    with pytest.raises(ParameterError, match="dialect must be one of"):
        model.export("sql", dialect="oracle")
    text = model.export("pmml", tmp_path / "m.pmml")
    assert (tmp_path / "m.pmml").read_text() == text
    with pytest.raises(InputError, match="already exists"):
        model.export("sql", tmp_path / "m.pmml")


def test_estimator_exports_score_in_memory_data():
    duckdb = pytest.importorskip("duckdb")
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0, 7, 3)
    clf = dasktree.DaskTreeClassifier(max_depth=3, scheduler="inprocess").fit(X, y)
    frame = pd.DataFrame(X, columns=clf.model_.features)
    got = duckdb.connect().execute(clf.to_sql(table="frame", dialect="duckdb", keep=())).df()
    assert got["prediction"].tolist() == clf.predict(X).tolist()
    np.testing.assert_array_equal(got[["proba_3", "proba_7"]].to_numpy(), clf.predict_proba(X))
    assert clf.to_onnx()[:2] and clf.to_pmml().startswith("<?xml")


def test_what_an_export_cannot_express_is_refused_in_one_line():
    model = random_model(3)
    deep = _chain_tree(202)
    for fmt in ("sql", "onnx", "pmml"):
        with pytest.raises(InputError, match="202 levels deep"):
            deep.export(fmt)
    mixed = Model(spec=type(model.spec)(model.spec.features, ("a", 1)), target="y", tree=model.tree)
    with pytest.raises(InputError, match="must all be strings"):
        mixed.export("sql")
    bins = model.spec.features[0]
    bad = Model(spec=type(model.spec)((type(bins)(**{**bins.__dict__, "name": "a\x01b"}), *model.spec.features[1:]),
                                      model.spec.classes), target="y", tree=model.tree)
    with pytest.raises(InputError, match="XML 1.0 cannot carry"):
        bad.export("pmml")


def test_names_that_are_not_plain_stay_names(tmp_path):
    """Quotes, newlines and spaces in column names, categories and the target: quoted in the SQL,
    kept out of its comments, and the SELECT still predicts as dasktree."""
    duckdb = pytest.importorskip("duckdb")
    import pandas as pd

    from dasktree.testing.exports import reference

    rng = np.random.default_rng(0)
    x = rng.normal(size=600)
    cat = rng.choice(["it's", 'say "hi"', "two\nlines"], size=600)
    frame = pd.DataFrame({'odd "name"': x, "line\nbreak": cat,
                          "y\n; DROP TABLE t; --": np.where((x > 0) ^ (cat == "it's"), "a", "b")})
    model = dasktree.fit(frame, target="y\n; DROP TABLE t; --", scheduler="inprocess", max_depth=4)
    sql = model.export("sql", dialect="duckdb", table="t", keep=())
    assert all(line.startswith("--") for line in sql.splitlines()[:3])
    table = frame.drop(columns=["y\n; DROP TABLE t; --"])
    con = duckdb.connect()
    con.register("t", table)
    got = con.sql(sql).to_arrow_table()
    import pyarrow as pa

    want_labels, _ = reference(model, pa.Table.from_pandas(table, preserve_index=False))
    assert got.column("prediction").to_pylist() == want_labels


def test_deep_trees_run_in_every_engine():
    """A path of 150 tests: nested CASE in DuckDB, one WHEN per leaf in SQLite (whose parser overflows
    on about 25 nested CASE), a chain in onnxruntime, nested Nodes in JPMML."""
    import pyarrow as pa

    from dasktree.testing.exports import missing_engine, reference, score_duckdb, score_onnx, score_pmml, score_sqlite

    for fmt in ("duckdb", "onnx", "pmml"):
        if missing_engine(fmt):
            pytest.skip(missing_engine(fmt))

    model = _chain_tree(150)
    table = pa.table({"x": pa.array([-1.0, 0.0, 1.0, None, float("nan")])})
    for score in (score_duckdb, score_sqlite, score_onnx, score_pmml):
        assert score(model, table)[0] == reference(model, table)[0]


def _chain_tree(depth: int) -> Model:
    """A tree that is one long chain of ``x <= 0`` tests."""
    from dasktree.binning.spec import BinSpec, FeatureBins

    bins = FeatureBins("x", "numeric", np.array([0.0]), np.array([0.0, 1.0]), True)
    tests, children = [], []
    for d in range(depth):
        tests.append(numeric_test(0, np.array([1]), bins.upper, 0))
        children.append([2 * d + 1, 2 * d + 2])
        tests.append(None)
        children.append([])
    tests.append(None)
    children.append([])
    order = list(range(len(tests)))
    depths = np.zeros(len(tests), dtype=np.int64)
    for i, kids in enumerate(children):
        for c in kids:
            depths[c] = depths[i] + 1
    tree = TreeModel(tests, children, np.ones((len(order), 2), dtype=np.int64), depths)
    return Model(spec=BinSpec((bins,), ("a", "b")), target="y", tree=tree)
