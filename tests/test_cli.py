"""The dasktree command end to end, in subprocesses, against real clusters. Commands that need no
interpreter of their own (no environment read at import, no signal, no kill) share one new interpreter
(:func:`~dasktree.testing.processes.run_commands`): each is still ``dasktree.cli.main`` on its own argv,
its exit code and what it wrote to stdout and stderr taken apart from the others'."""

import json
import os
import socket
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from dasktree.datasets import agrawal

pytestmark = pytest.mark.cluster


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "dasktree.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def _runs(*commands, timeout=600):
    """Each command line of ``commands`` run in turn in one new interpreter: their results, in order."""
    from dasktree.testing.processes import run_commands

    done, whole = run_commands(commands, timeout=timeout)
    assert whole.returncode == 0, whole.stderr
    return done


def test_demo_runs_end_to_end(tmp_path):
    result, human = _runs(["demo", "--rows", "20000", "--files", "4", "--dir", str(tmp_path), "--json"],
                          ["demo", "--rows", "20000", "--files", "2", "--quiet"])
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["report"]["passes"] == report["report"]["depth"] + 1
    assert report["test_accuracy"] > 0.85  # F2 is learnable to ~0.9+ at depth 5
    assert human.returncode == 0, human.stderr
    assert "|--- " in human.stdout and "accuracy on" in human.stdout


def test_fit_show_predict(tmp_path):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 20000, n_files=3, function=1, seed=0)
    model = tmp_path / "model.json"
    out = tmp_path / "pred"
    formats = (("text", "|--- age"), ("dot", "digraph dasktree"), ("json", '"format": "dasktree.model"'))
    fit, *shown, pred, again = _runs(
        ["fit", str(data), "--target", "class", "--out", str(model), "--max-depth", "4",
         "--nominal", "car,zipcode", "--criterion", "entropy", "--json"],
        *[["show", str(model), "--format", fmt] for fmt, _ in formats],
        ["predict", str(model), str(data), "--out", str(out), "--quiet"],
        ["predict", str(model), str(data), "--out", str(out), "--quiet"])
    assert fit.returncode == 0, fit.stderr
    report = json.loads(fit.stdout)
    assert report["report"]["passes"] == report["report"]["depth"] + 1 and report["model"] == str(model)
    assert model.exists()
    for (fmt, needle), show in zip(formats, shown):
        assert show.returncode == 0 and needle in show.stdout, show.stdout[:300]
    assert pred.returncode == 0, pred.stderr
    table = pq.read_table(out)
    assert table.num_rows == 20000
    assert table.column_names[:3] == ["prediction", "proba_0", "proba_1"]
    assert again.returncode == 1 and "already exists" in again.stderr


def test_bad_usage_exits_2_and_help_lists_options():
    assert _run("fit").returncode == 2
    helped = _run("fit", "--help")
    assert helped.returncode == 0
    for option in ("--target", "--max-depth", "--scheduler", "--quiet", "--json", "--max-histogram-mb"):
        assert option in helped.stdout


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fit_on_a_scheduler_by_address(tmp_path):
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1, reached by --scheduler (both
    workers connected first: waited for, bounded, not slept on)."""
    from dasktree.testing.cluster import cluster_processes
    from dasktree.testing.processes import run_command

    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 10000, n_files=4, function=2, seed=0)
    local = run_command("fit", data, "--target", "class", "--out", tmp_path / "local.json", "--max-depth", "4",
                        "--quiet")  # the reference: the command's main in this process
    assert local.returncode == 0, local.stderr
    with cluster_processes(2) as cluster:  # the command's main in this process, a client of that scheduler
        remote = run_command("fit", data, "--target", "class", "--out", tmp_path / "remote.json",
                             "--max-depth", "4", "--quiet", "--scheduler", cluster.address, "--json")
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["run"]["workers"] == 2
    assert (tmp_path / "local.json").read_text() == (tmp_path / "remote.json").read_text()


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 1000, n_files=1, seed=0)
    result = _run("fit", str(data), "--target", "class", "--out", str(tmp_path / "m.json"), "--quiet",
                  "--scheduler", f"tcp://127.0.0.1:{_free_port()}", timeout=120)
    assert result.returncode == 75  # transient: a retry may find it up
    assert "cannot reach the Dask scheduler" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_fit_with_cross_validation(tmp_path):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 8000, n_files=3, function=2, seed=0)
    model = tmp_path / "model.json"
    result, human, bad = _runs(
        ["fit", str(data), "--target", "class", "--out", str(model), "--max-depth", "4", "--cv", "3",
         "--repeats", "2", "--seed", "5", "--json"],
        ["fit", str(data), "--target", "class", "--out", str(model), "--max-depth", "3", "--cv", "2",
         "--quiet", "--overwrite"],
        ["fit", str(data), "--target", "class", "--out", str(model), "--repeats", "2", "--quiet"])
    assert result.returncode == 0, result.stderr
    cv = json.loads(result.stdout)["report"]["cv"]
    assert (cv["folds"], cv["repeats"], len(cv["per_fold"])) == (3, 2, 6)
    assert 0.5 < cv["accuracy_mean"] <= 1.0
    assert human.returncode == 0 and "cross-validated accuracy" in human.stdout
    assert bad.returncode == 2 and "needs cv" in bad.stderr  # a bad parameter value: usage


def test_a_fit_on_a_cold_kernel_cache_says_it_compiles_once(tmp_path, warmed_kernel_cache):
    """A cache without the level pass's kernels (a new install has none; an upgrade that changed their
    source, none for the new source): the fit says so as its first pass starts, once; the next fit,
    on the cache it filled, says nothing. Read from numba's cache, not timed. The cache is a copy of
    the pytest session's warmed one without those kernels (an empty one would compile every kernel, for the
    same message)."""
    from dasktree.kernel_cache import COMPILING, LEVEL_PASS_KERNELS
    from dasktree.testing.processes import cache_without

    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 2000, n_files=2, function=1, seed=0)
    cache_without(warmed_kernel_cache[0], tmp_path / "cache", LEVEL_PASS_KERNELS["classification"])
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def fit(out):
        done = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", str(data), "--target", "class", "--out",
                               str(tmp_path / out), "--max-depth", "3", "--scheduler", "inprocess"],
                              capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stderr
        return done.stderr.splitlines()

    cold = fit("cold.json")
    assert cold.count(f"dasktree: {COMPILING}") == 1 and cold[0] == f"dasktree: {COMPILING}", cold
    assert cold[1].startswith("pass 0"), cold
    warm = fit("warm.json")
    assert warm and f"dasktree: {COMPILING}" not in warm, warm
