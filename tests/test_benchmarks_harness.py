"""The benchmarks' harness: whole-process runs, their peak memory, alternation, and RESULTS.md."""

from __future__ import annotations

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

pytest.importorskip("psutil")

from benchmarks import harness  # noqa: E402

ALLOCATE = ("import json, os, sys, time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
            "deadline = time.monotonic() + 120\n"
            "while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline: time.sleep(0.01)\n"
            "print(json.dumps({'n': len(b)}))")
"""A child that holds 200 MB until the file named by its argument exists (bounded: 2 minutes)."""


@pytest.fixture
def seen(tmp_path, monkeypatch):
    """A file made once a sample of :class:`harness.PeakRSS` has counted 200 MB: the allocating child
    holds its memory until a sample saw it, however late the sampler runs on a loaded machine (a
    fixed sleep in the child was a race with it)."""
    flag = tmp_path / "seen"
    sample = harness.PeakRSS._sample

    def signalling(self):
        total = sample(self)
        if total >= 200 * 2**20:
            flag.touch()
        return total

    monkeypatch.setattr(harness.PeakRSS, "_sample", signalling)
    return str(flag)


def test_run_process_samples_the_process_trees_peak(seen, tmp_path):
    child = harness.run_process([sys.executable, "-c", ALLOCATE, seen])
    assert child["returncode"] == 0
    assert child["peak_bytes"] >= 200 * 2**20
    assert harness.last_json(child) == {"n": 200 * 2**20}
    # a grandchild's memory counts too: the process tree, not the process
    os.remove(seen)
    nested = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {ALLOCATE!r}, sys.argv[1]], check=True)"
    parent = harness.run_process([sys.executable, "-c", nested, seen])
    assert parent["returncode"] == 0
    assert parent["peak_bytes"] >= 200 * 2**20


def test_alternate_interleaves_and_drops_warmup(tmp_path):
    log = tmp_path / "order"
    argv = {name: [sys.executable, "-c", f"open({str(log)!r}, 'a').write('{name}')"] for name in "AB"}
    runs = harness.alternate(argv, 2, warmup=1)
    assert log.read_text() == "ABABAB"
    assert [len(runs[n]) for n in "AB"] == [2, 2]


def test_alternate_raises_on_a_failed_run():
    with pytest.raises(RuntimeError, match="bad: exit 3"):
        harness.alternate({"bad": [sys.executable, "-c", "import sys; sys.exit(3)"]}, 1)


def test_write_and_gather(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "RESULTS", str(tmp_path))
    harness.write("core", "a claim", harness.Result([("ratio", "1.00x")], "| t |", {"x": 1}), quick=True)
    record = json.loads((tmp_path / "core.json").read_text())
    assert record["quick"] and record["summary"] == [["ratio", "1.00x"]] and record["stamp"]["versions"]
    assert "Quick sizes" in (tmp_path / "core.md").read_text()
    harness.gather()
    text = (tmp_path / "RESULTS.md").read_text()
    assert "| [core](core.md) | ratio | 1.00x |" in text and "(quick sizes)" in text


def test_a_forest_claims_kept_part_says_where_it_came_from():
    """``benchmarks.forests --part speed`` keeps the saved accuracy part: its summary rows name the run that
    measured it (the results index dates the claim by the run that wrote it), and the record keeps that,
    so that a later run keeping it again still names the same run."""
    from benchmarks import forests

    with open(os.path.join(ROOT, "benchmarks", "results", "forests.json")) as f:
        record = json.load(f)
    figures = {part: record["figures"][part] for part in ("speed", "accuracy")}
    when = "kept from the saved run of 2026-01-01 00:00 UTC, commit 0000000, quick sizes"
    result = forests._result(figures, {"speed": "this run", "accuracy": when})
    accuracy = [measured for what, measured in result.summary if "RandomForest" in what]
    speed = [measured for what, measured in result.summary if "RandomForest" not in what]
    assert len(accuracy) == 2 and all(measured.endswith(f"({when})") for measured in accuracy)
    assert speed and not any("kept from" in measured for measured in speed)
    assert result.figures["kept"] == {"accuracy": when}
    assert f"## Accuracy beside scikit-learn's forests of 100 trees ({when})" in result.markdown
