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

ALLOCATE = ("import json, time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.3); "
            "print(json.dumps({'n': len(b)}))")


def test_run_process_samples_the_process_trees_peak():
    child = harness.run_process([sys.executable, "-c", ALLOCATE])
    assert child["returncode"] == 0
    assert child["peak_bytes"] >= 200 * 2**20
    assert harness.last_json(child) == {"n": 200 * 2**20}
    # a grandchild's memory counts too: the process tree, not the process
    nested = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {ALLOCATE!r}], check=True)"
    parent = harness.run_process([sys.executable, "-c", nested])
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
