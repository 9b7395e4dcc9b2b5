"""Every worker stopped (SIGSTOP) in the middle of a job, on a real `dask scheduler` and two `dask worker` processes.

A stopped worker keeps its sockets open, answers nothing and sends the scheduler no
heartbeat; the scheduler still lists it (until its ``worker-ttl``, 5 minutes by default), so
a wait that only asks which workers there are would wait that long, and a gather from it
for ever. With ``DASKTREE_LOST_SECONDS`` small here, a fit (its holders' calls cached, its
tasks without the cache) and a dataset's predictions (a one-pass map) whose workers all
stop end with exit 75 and one line, write nothing, and never hang. A job that the machine's load kept
from answering within that bound before its workers stopped runs again with a larger one.
"""

import json
import os
import subprocess
import sys

import pytest

from dasktree.datasets import agrawal
from dasktree.testing.processes import run_command
from dasktree.testing.cluster import cluster_processes, startup_seconds

pytestmark = pytest.mark.cluster

FIT = ["--target", "class", "--max-depth", "6", "--cv", "3"]


@pytest.fixture(scope="module")
def lost_seconds() -> float:
    """The bound of a job whose workers stopped, following the machine's speed: 5x the time a new
    interpreter takes to import distributed now, at least 10 s (a fixed one small enough for the
    suite's time ends healthy jobs on a loaded machine before their fault)."""
    return max(10.0, round(5 * startup_seconds()))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("workers-stopped") / "data"
    agrawal.write_parquet(str(path), 40000, n_files=8, function=7, perturbation=0.05, seed=3)
    return str(path)


class _EndedBeforeTheFault(Exception):
    """The job ended before its fault: its exit code and log."""


def _run_until(command: list, fault, after_passes: int, lost: float) -> tuple[int, str]:
    """:func:`_run_once`; a job that a loaded machine kept from answering within ``lost`` before its
    fault (exit 75 before any worker stopped: what the bound is for, but not what the test asks) runs
    again with twice the bound, at most twice more. Any other end before the fault fails the test."""
    for attempt in range(3):
        try:
            return _run_once(command, fault, after_passes, lost * 2 ** attempt)
        except _EndedBeforeTheFault as ended:
            code, log = ended.args
            if code != 75 or "did not answer" not in log or attempt == 2:
                pytest.fail(f"the job ended before the fault (exit {code}): {log}")


def _run_once(command: list, fault, after_passes: int, lost: float) -> tuple[int, str]:
    """Run ``command`` (its JSON log on stderr) with ``lost`` as its ``DASKTREE_LOST_SECONDS``; ``fault()``
    once ``after_passes`` passes are logged (0: as soon as it names its cluster). The exit code (None:
    still running ``lost`` + 110 s after the fault, a hang) and the error lines."""
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "DASKTREE_LOST_SECONDS": f"{lost:g}"})
    lines, passes = [], 0
    try:
        for line in job.stderr:
            lines.append(line)
            passes += line.startswith('{"event": "pass"')
            if line.startswith('{"event": "cluster"') and after_passes == 0 or \
                    line.startswith('{"event": "pass"') and passes == after_passes:
                fault()
                break
        else:
            raise _EndedBeforeTheFault(job.wait(), "".join(lines))
        try:  # bounded: the lost bound, a poll, the holders' and the client's close
            lines += job.communicate(timeout=lost + 110)[1].splitlines(keepends=True)
        except subprocess.TimeoutExpired:
            return None, "hung"
    finally:
        job.kill()
        job.wait()
    errors = [json.loads(line)["message"] + "\n" if line.startswith('{"event": "error"') else line
              for line in lines if not line.startswith("{") or line.startswith('{"event": "error"')]
    return job.returncode, "".join(errors)


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["holders", "tasks"])
def test_a_fit_whose_workers_all_stop_ends_transient(data, tmp_path, cache, lost_seconds):
    out = tmp_path / "m.json"
    with cluster_processes(2) as cluster:
        code, errors = _run_until([sys.executable, "-m", "dasktree.cli", "fit", data, *FIT, *cache, "--out", str(out),
                                   "--scheduler", cluster.address, "--log-format", "json"],
                                  cluster.pause_workers, 2, lost_seconds)  # pass 0 and level 1: in level 2's wait
    assert code == 75, errors
    assert len(errors.strip().splitlines()) == 1 and "a retry may succeed" in errors, errors
    assert "worker" in errors, errors
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".m.json")]


def test_predictions_whose_workers_all_stop_end_transient(data, tmp_path, lost_seconds):
    model, out = tmp_path / "m.json", tmp_path / "predictions"
    # undisturbed, here; any model will do (the workers stop before a task of the predict ends): a small one
    done = run_command("fit", data, "--target", "class", "--max-depth", "2", "--quiet", "--out", model,
                       "--scheduler", "inprocess")
    assert done.returncode == 0, done.stderr
    with cluster_processes(2) as cluster:
        code, errors = _run_until([sys.executable, "-m", "dasktree.cli", "predict", str(model), data, "--out", str(out),
                                   "--scheduler", cluster.address, "--log-format", "json"],
                                  cluster.pause_workers, 0, lost_seconds)
    assert code == 75, errors
    assert len(errors.strip().splitlines()) == 1 and "a retry may succeed" in errors, errors
    assert not out.exists()
