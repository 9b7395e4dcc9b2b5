"""Bad input: one line that says what and where, a non-zero exit, and no output left behind."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dasktree
from dasktree.testing import write_dataset
from dasktree.testing.processes import run_command


def _good(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n), "y": rng.integers(0, 2, n)})


def _make(tmp_path, case):
    data = tmp_path / "data"
    if case == "missing_path":
        return str(tmp_path / "nope"), "y", "no such file or directory"
    if case == "missing_target":
        return write_dataset(_good(), data), "label", "target column 'label' not found"
    if case == "one_class":
        return write_dataset(_good().assign(y=1), data), "y", "single class"
    if case == "empty_dataset":
        return write_dataset(_good().iloc[:0], data), "y", "has no rows"
    if case == "empty_directory":
        os.makedirs(data)
        return str(data), "y", "holds no Parquet files"
    if case == "not_parquet":
        write_dataset(_good(), data, n_files=2)
        (data / "part-00002.parquet").write_text("a,b,y\n1,2,3\n")
        return str(data), "y", "part-00002.parquet"
    if case == "all_null_feature":
        return write_dataset(_good().assign(a=np.nan), data), "y", "feature 'a' is null in every row"
    if case == "infinity":
        frame = _good()
        frame.loc[17, "a"] = np.inf
        return write_dataset(frame, data, n_files=3), "y", "column 'a' has infinite values in part-0000"
    if case == "mixed_schemas":
        write_dataset(_good(), data, n_files=1)
        pq.write_table(pa.Table.from_pandas(_good().assign(b=lambda f: f.b.astype(str)), preserve_index=False),
                       data / "part-00001.parquet")
        return str(data), "y", "mixed schemas: column 'b'"
    if case == "unusable_type":
        table = pa.Table.from_pandas(_good(), preserve_index=False).append_column(
            "lst", pa.array([[1, 2]] * 200, type=pa.list_(pa.int64())))
        os.makedirs(data)
        pq.write_table(table, data / "part-0.parquet")
        return str(data), "y", "column 'lst' has type list<"
    raise AssertionError(case)


CASES = ["missing_path", "missing_target", "one_class", "empty_dataset", "empty_directory", "not_parquet",
         "all_null_feature", "infinity", "mixed_schemas", "unusable_type"]


@pytest.mark.parametrize("case", CASES)
def test_python_api_raises_a_dasktree_error(tmp_path, case):
    path, target, message = _make(tmp_path, case)
    with pytest.raises(dasktree.DaskTreeError, match=message.replace("(", r"\(").replace("[", r"\[")):
        dasktree.fit(path, target=target, scheduler="threads")


@pytest.mark.parametrize("case", CASES)
def test_cli_prints_one_line_and_writes_nothing(tmp_path, case):
    path, target, message = _make(tmp_path, case)
    out = tmp_path / "out" / "model.json"
    os.makedirs(out.parent)
    # the command's main, here (run_command): a new interpreter per case adds only its imports
    result = run_command("fit", path, "--target", target, "--out", out, "--quiet", "--scheduler", "threads")
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dasktree: error: ") and message in lines[0], lines[0]
    assert os.listdir(out.parent) == []


def test_in_memory_inputs_are_checked_too():
    frame = _good()
    with pytest.raises(dasktree.InputError, match="X has 200 rows but y has 3"):
        dasktree.fit(frame, [0, 1, 0])
    with pytest.raises(dasktree.DataError, match="single class"):
        dasktree.fit(frame.drop(columns="y"), np.zeros(200))
    with pytest.raises(dasktree.InputError, match="max_depth must be an integer >= 1 or None, got 0"):
        dasktree.DaskTreeClassifier(max_depth=0).fit(frame, target="y")
    with pytest.raises(dasktree.InputError, match="criterion must be one of"):
        dasktree.DaskTreeClassifier(criterion="variance").fit(frame, target="y")
    with pytest.raises(dasktree.InputError, match="not fitted"):
        dasktree.DaskTreeClassifier().predict(frame)


def test_bad_model_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "model.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(dasktree.DataError, match="not a dasktree model"):
        dasktree.load(bad)
    bad.write_text("not json")
    with pytest.raises(dasktree.DataError, match="not a JSON model file"):
        dasktree.load(bad)
    with pytest.raises(dasktree.InputError, match="no such model file"):
        dasktree.load(tmp_path / "missing.json")


@pytest.mark.parametrize("argv, code, said", [
    (["--min-samples-leaf", "999999999999999999999"], 2, "min_samples_leaf must be an integer >= 1, got 999999999999999999999"),
    (["--max-depth", str(2**70)], 2, "max_depth must be"),
])
def test_integers_beyond_int64_are_usage_errors(tmp_path, capsys, argv, code, said):
    """Found by the fuzz claim: an integer too large for the kernels was an internal error (exit 3)."""
    from dasktree.cli import main

    data = write_dataset(pd.DataFrame({"x": np.arange(40.0), "label": np.arange(40) % 2}), str(tmp_path / "d"))
    out = tmp_path / "m.json"
    assert main(["fit", data, "--target", "label", "--out", str(out), "--quiet", *argv]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and not out.exists()


def test_an_unlistable_or_unauthorized_store_path_is_one_line_exit_1(tmp_path, monkeypatch):
    """Found by the fuzz claim: ``s3://`` (no bucket) and an object store without credentials
    were internal errors (exit 3). A real s3fs, no server: credentials are looked for first."""
    pytest.importorskip("s3fs")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
               AWS_EC2_METADATA_DISABLED="true")
    for url, said in (("s3://", "cannot list s3://"), ("s3://bucket/x.parquet", "no credentials for the object store")):
        run = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", url, "--target", "y", "--out",
                              str(tmp_path / "m.json"), "--quiet"], capture_output=True, text=True, env=env,
                             timeout=300)
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 1 and len(lines) == 1 and said in lines[0], run.stderr
