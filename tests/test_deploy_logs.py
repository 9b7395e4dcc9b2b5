"""--log-format json: one JSON line per pass and one for the cluster, on stderr, through the CLI."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from dasktree.datasets import agrawal

pytestmark = pytest.mark.cluster


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dasktree.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def _compressed_bytes(directory, columns) -> int:
    """What pyarrow's footers say the column chunks of ``columns`` take on disk, every file."""
    total = 0
    for path in sorted(directory.glob("*.parquet")):
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            for c in range(meta.row_group(g).num_columns):
                chunk = meta.row_group(g).column(c)
                if chunk.path_in_schema in columns:
                    total += chunk.total_compressed_size
    return total


def _records(stderr: str) -> list[dict]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every stderr line is one JSON object


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("logs") / "data"
    agrawal.write_parquet(str(path), 20000, n_files=2, seed=0)
    return path


@pytest.mark.parametrize("cache", [True, False])
def test_fit_logs_a_json_line_per_pass(data, tmp_path, cache):
    model = tmp_path / "model.json"
    features = ["salary", "commission", "age"]
    result = _run("fit", str(data), "--target", "class", "--features", ",".join(features), "--out", str(model),
                  "--max-depth", "3", "--log-format", "json", "--json", "--scheduler", "processes",
                  *([] if cache else ["--no-cache"]))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # --json's report still owns stdout
    records = _records(result.stderr)
    [cluster] = [r for r in records if r["event"] == "cluster"]
    assert cluster["started"] is True and cluster["scheduler"].startswith("tcp://127.0.0.1:")
    assert cluster["dashboard"].startswith("http://") and cluster["dashboard"].endswith("/status")
    passes = [r for r in records if r["event"] == "pass"]
    assert len(passes) == report["report"]["passes"]
    one_read = _compressed_bytes(data, [*features, "class"])
    assert passes[0]["pass"] == "pass 0 (summary)" and passes[0]["rows"] == 20000
    assert passes[0]["bytes_read"] == one_read
    levels = passes[1:]
    assert [r["level"] for r in levels] == [lv["level"] for lv in report["run"]["levels"]]
    assert [r["nodes"] for r in levels] == [lv["frontier"] for lv in report["run"]["levels"]]
    assert levels[0]["rows"] == 20000
    assert all(0 < r["rows"] <= 20000 and r["seconds"] >= 0 for r in levels)
    # cached: pass 0's tables are encoded in place, no level pass reads Parquet; else each reads once
    expected = [0] * len(levels) if cache else [one_read] * len(levels)
    assert [r["bytes_read"] for r in levels] == expected
    assert sum(r["bytes_read"] for r in passes) == report["run"]["parquet_reads"] * one_read


def test_predict_logs_and_text_mode_prints_the_dashboard(data, tmp_path):
    model = tmp_path / "model.json"
    fit = _run("fit", str(data), "--target", "class", "--out", str(model), "--max-depth", "2", "--scheduler", "processes")
    assert fit.returncode == 0, fit.stderr
    assert "started a local Dask cluster at tcp://127.0.0.1:" in fit.stderr and "dashboard http://" in fit.stderr
    predicted = _run("predict", str(model), str(data), "--out", str(tmp_path / "pred"), "--log-format", "json",
                     "--scheduler", "processes")
    assert predicted.returncode == 0, predicted.stderr
    records = _records(predicted.stderr)
    assert [r["event"] for r in records] == ["cluster", "pass", "summary"]
    features = [f["name"] for f in json.loads(model.read_text())["bins"]]
    assert records[1]["pass"].endswith("predict") and records[1]["rows"] == 20000
    assert records[1]["bytes_read"] == _compressed_bytes(data, features)
    quiet = _run("predict", str(model), str(data), "--out", str(tmp_path / "pred2"), "--log-format", "json", "--quiet",
                 "--scheduler", "processes")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_bad_log_format_is_usage_error(data, tmp_path):
    result = _run("fit", str(data), "--target", "class", "--out", str(tmp_path / "m.json"), "--log-format", "xml")
    assert result.returncode == 2 and "--log-format" in result.stderr


def test_json_log_format_is_json_lines_only_on_stderr_for_fit_evaluate_and_errors(data, tmp_path):
    """The summary ("pruned ...", "wrote ...", evaluate's metrics) and the error line are JSON lines too;
    stdout is left to --json's report (empty without it)."""
    model = tmp_path / "model.json"
    fit = _run("fit", str(data), "--target", "class", "--out", str(model), "--max-depth", "3", "--cv", "3",
               "--log-format", "json", "--scheduler", "threads")
    assert fit.returncode == 0, fit.stderr
    records = _records(fit.stderr)
    said = [r["message"] for r in records if r["event"] == "summary"]
    assert any(m.startswith("pruned (cv-min)") for m in said) and any(m.startswith("wrote ") for m in said)
    assert fit.stdout == ""
    evaluated = _run("evaluate", str(model), str(data), "--log-format", "json", "--scheduler", "threads")
    assert evaluated.returncode == 0, evaluated.stderr
    events = [r["event"] for r in _records(evaluated.stderr)]
    assert "pass" in events and "summary" in events and evaluated.stdout == ""
    again = _run("fit", str(data), "--target", "class", "--out", str(model), "--log-format", "json")
    [error] = _records(again.stderr)
    assert again.returncode == 1 and error["event"] == "error" and "already exists" in error["message"]
    assert error["exit_code"] == 1
