"""Worker loss INSIDE a pass, on a real `dask scheduler` and two `dask worker` processes.

A worker kills itself (SIGKILL, the ``fault`` hook of :mod:`dasktree.testing.hooks`) at a chosen stage of a
chosen pass: pass 0, a holder encoding, counting, serving its cells to a peer,
searching. The fit must end with the model an undisturbed fit gives, byte for
byte, and the process must exit.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from dasktree.datasets import agrawal
from dasktree.testing.processes import run_command
from dasktree.testing.cluster import scheduler_and_workers
from dasktree.testing.hooks import arm

pytestmark = pytest.mark.cluster

FIT = ["--target", "class", "--max-depth", "5", "--cv", "3", "--quiet"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("faults") / "data"
    agrawal.write_parquet(str(path), 20000, n_files=6, function=7, perturbation=0.05, seed=2)
    return str(path)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "m.json"
    done = run_command("fit", data, *FIT, "--out", out, "--scheduler", "threads")  # undisturbed: here
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


@pytest.fixture(scope="module")
def cluster():
    with scheduler_and_workers(2) as address:
        yield address


@pytest.mark.parametrize("stage, at", [("summary", 0), ("count", 3), ("cells", 2), ("search", 4)])
def test_a_worker_killed_inside_a_pass(data, reference, cluster, tmp_path, stage, at):
    """The workers of one cluster are told to fail (a restarted worker is not: one kill per test)."""
    from distributed import Client

    marker = tmp_path / "killed"
    with Client(cluster) as client:
        client.run(arm, f"{stage}:{at}:{marker}")
    out = tmp_path / "m.json"
    try:
        done = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", data, *FIT, "--out", str(out),
                               "--scheduler", cluster], capture_output=True, text=True, timeout=240)
    finally:
        with Client(cluster) as client:
            client.run(arm, None)
    assert marker.exists(), "no worker reached the stage: the test did not test"
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == reference


def test_a_cluster_that_cannot_recover_is_a_transient_error(data, tmp_path):
    """One worker kills itself inside a pass, the test kills the other, no nanny restarts them:
    exit 75 within a bounded time, one line, no model."""
    marker = tmp_path / "killed"
    env = {"DASKTREE_LOST_SECONDS": "5"}
    with scheduler_and_workers(2, env=env, nanny=False) as address:
        from distributed import Client

        with Client(address) as client:
            pids = set(client.run(os.getpid).values())
            client.run(arm, f"count:2:{marker}")
        fit = subprocess.Popen([sys.executable, "-m", "dasktree.cli", "fit", data, *FIT, "--out",
                                str(tmp_path / "m.json"), "--scheduler", address],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
        try:
            deadline = time.monotonic() + 300  # bounded: the fit reaches its level 2 or ends well before
            while not marker.exists() and fit.poll() is None:
                assert time.monotonic() < deadline, "no worker reached count:2 within 300 s"
                time.sleep(0.05)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:  # the one that killed itself
                    pass
            _, stderr = fit.communicate(timeout=120)
        finally:
            fit.kill()
    assert fit.returncode == 75, stderr
    assert len(stderr.strip().splitlines()) == 1 and "a retry may succeed" in stderr, stderr
    assert not (tmp_path / "m.json").exists()
