"""The scheduler lost in the middle of a fit, on a real `dask scheduler` and two `dask worker` processes.

Killed (and started again at the same address), or stopped without dying (SIGSTOP): the fit
ends with exit 75 and one line within a bounded time (``DASKTREE_LOST_SECONDS``), writes no
model, and the same command run again with ``--checkpoint`` on the
restarted cluster finishes with the model an undisturbed fit gives, byte for byte.
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

FIT = ["--target", "class", "--max-depth", "5", "--cv", "3"]


@pytest.fixture(scope="module")
def lost_seconds() -> float:
    """The bound of a job that lost its scheduler, following the machine's speed: 10x the time a new
    interpreter takes to import distributed now, at least 20 s. Each stopped-scheduler test waits it
    out, so it is the suite's time; too small a one ends healthy jobs on a loaded machine (a fixed 10 s
    did at a load of 20-28 on 2 cores, where a scatter to two workers took over 30 s), and the test then
    fails before its fault. Killed or restarted, the loss is seen at once."""
    return max(20.0, round(10 * startup_seconds()))


def _lost(seconds: float) -> dict:
    return {**os.environ, "DASKTREE_LOST_SECONDS": f"{seconds:g}"}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("scheduler-loss") / "data"
    agrawal.write_parquet(str(path), 20000, n_files=6, function=7, perturbation=0.05, seed=2)
    return str(path)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "m.json"
    done = run_command("fit", data, *FIT, "--quiet", "--out", out, "--scheduler", "threads")  # undisturbed: here
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


def _fit_until(data: str, out, address: str, passes_done: int, fault, lost: float, *extra: str) -> tuple[int, str, list]:
    """Run the fit; once ``passes_done`` level passes are done (its JSON log says so), call
    ``fault()``. The exit code, the error lines (other lines than JSON, and the error event's
    message) and the passes logged. ``lost``: the job's ``DASKTREE_LOST_SECONDS``."""
    fit = subprocess.Popen([sys.executable, "-m", "dasktree.cli", "fit", data, *FIT, "--out", str(out),
                            "--scheduler", address, "--log-format", "json", *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_lost(lost))
    passes, errors, faulted = [], [], False
    try:
        for line in fit.stderr:
            if not line.startswith("{"):
                errors.append(line)
                continue
            event = json.loads(line)
            if event.get("event") == "error":  # with --log-format json the error line is an event too
                errors.append(event["message"] + "\n")
            elif event.get("event") == "pass":
                passes.append(event["pass"])
                if not faulted and len(passes) == passes_done + 1:  # pass 0, then the level passes
                    fault()
                    faulted = True
        fit.wait(timeout=lost + 150)  # bounded: the lost bound, a poll, a close
    finally:
        fit.kill()
    assert faulted, f"the fit ended before its pass {passes_done} (exit {fit.returncode}: {errors}): the test did not test"
    return fit.returncode, "".join(errors), passes


@pytest.mark.parametrize("restart", [False, True], ids=["killed", "restarted"])
def test_a_scheduler_lost_mid_fit_is_transient_and_the_checkpoint_resumes(data, reference, tmp_path, restart,
                                                                           lost_seconds):
    out, checkpoint = tmp_path / "m.json", tmp_path / "ckpt"
    with cluster_processes(2) as cluster:
        lose = cluster.restart_scheduler if restart else cluster.kill_scheduler
        code, errors, _ = _fit_until(data, out, cluster.address, 2, lose, lost_seconds, "--checkpoint",
                                     str(checkpoint))
        assert code == 75, errors
        assert len(errors.strip().splitlines()) == 1 and "a retry may succeed" in errors, errors
        assert "scheduler" in errors, errors
        assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".m.json")]
        saved = sorted(p.name for p in checkpoint.iterdir() if p.name.startswith("pass-"))
        assert saved, "no level pass was saved before the scheduler was lost"
        if not restart:  # the resume is the same either way: once is enough
            return
        cluster.restart()  # the same command again, its main in this process: a client of the new cluster
        again = run_command("fit", data, *FIT, "--quiet", "--out", out, "--scheduler", cluster.address,
                            "--checkpoint", checkpoint)
    assert again.returncode == 0, again.stderr
    assert out.read_bytes() == reference


def test_a_scheduler_that_stops_answering_is_transient(data, tmp_path, lost_seconds):
    """SIGSTOP: the scheduler keeps its sockets open and answers nothing. After pass 0 the client
    scatters the bins and starts the holders (calls distributed lets wait on a stopped scheduler,
    a scatter even with a timeout)."""
    out = tmp_path / "m.json"
    with cluster_processes(2) as cluster:
        code, errors, _ = _fit_until(data, out, cluster.address, 0, cluster.pause_scheduler, lost_seconds)
    assert code == 75, errors
    assert len(errors.strip().splitlines()) == 1 and "a retry may succeed" in errors, errors
    assert not out.exists()


@pytest.fixture(scope="module")
def larger(tmp_path_factory):
    """Enough rows that a predict's tasks run for seconds on two single-threaded workers."""
    path = tmp_path_factory.mktemp("scheduler-loss-predict") / "data"
    agrawal.write_parquet(str(path), 400_000, n_files=16, function=7, perturbation=0.05, seed=4)
    return str(path)


def test_a_scheduler_stopped_while_predictions_run_is_transient(reference, larger, tmp_path, lost_seconds):
    """SIGSTOP while a predict's tasks run (the scheduler seen with tasks on its workers): the wait
    for them (``gather_with_progress``) watches the cluster as a fit's do, and the job ends with
    exit 75 and one line within its lost bound (``DASKTREE_LOST_SECONDS``) and a poll, writing nothing.
    The model predicting is the module's undisturbed fit's."""
    import time

    from distributed import Client

    model, out = tmp_path / "m.json", tmp_path / "predictions"
    model.write_bytes(reference)
    with cluster_processes(2) as cluster:
        job = subprocess.Popen([sys.executable, "-m", "dasktree.cli", "predict", str(model), larger, "--out", str(out),
                                "--scheduler", cluster.address, "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_lost(lost_seconds))
        try:
            with Client(cluster.address, timeout="30s", set_as_default=False) as watcher:
                deadline = time.monotonic() + 240
                while not any(watcher.processing().values()):  # bounded: the deadline, or the job's end
                    assert job.poll() is None, f"the job ended before its tasks were seen: {job.stderr.read()}"
                    assert time.monotonic() < deadline, "no task of the predict ran within 240 s"
                    time.sleep(0.02)
            cluster.pause_scheduler()
            stopped = time.monotonic()
            try:
                errors = job.communicate(timeout=lost_seconds + 150)[1]
            except subprocess.TimeoutExpired:
                pytest.fail(f"the predict still waited {lost_seconds + 150:g} s after its scheduler stopped")
            waited = time.monotonic() - stopped
        finally:
            job.kill()
            job.wait()
    assert job.returncode == 75, errors
    assert len(errors.strip().splitlines()) == 1 and "a retry may succeed" in errors, errors
    assert waited < lost_seconds + 60, waited  # the bound, polls and the close, with room for a loaded machine
    assert not out.exists()
