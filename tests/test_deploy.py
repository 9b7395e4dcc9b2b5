"""deploy/run_fit.sh, run_predict.sh and the systemd units: the wrapper a scheduler runs.

A successful fit repoints current.json and keeps the last N models; a failed or timed-out one
leaves yesterday's model current and passes the exit code on (75: retry later).
"""

import json
import os
import shutil
import socket
import subprocess

import pyarrow.parquet as pq
import pytest

from dasktree.datasets import agrawal

pytestmark = [pytest.mark.cluster,
              pytest.mark.skipif(shutil.which("dasktree") is None, reason="needs the installed dasktree command")]
DEPLOY = os.path.join(os.path.dirname(__file__), "..", "deploy")
FIT = os.path.join(DEPLOY, "run_fit.sh")
PREDICT = os.path.join(DEPLOY, "run_predict.sh")


def _run(script, *args, timeout=300, **env):
    environment = {**os.environ, **{k: str(v) for k, v in env.items()}}
    return subprocess.run(["bash", script, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=environment)


def _models(directory) -> list[str]:
    return sorted(f for f in os.listdir(directory) if f.startswith("model-"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("deploy") / "data"
    agrawal.write_parquet(str(path), 5000, n_files=2, seed=0)
    return path


def test_run_fit_repoints_only_on_success(data, tmp_path):
    models = tmp_path / "models"
    ok = _run(FIT, data, "class", models, "threads")
    assert ok.returncode == 0, ok.stderr
    current = os.readlink(models / "current.json")
    assert (models / current).exists()
    report = json.loads((models / current.replace("model-", "report-")).read_text())
    assert report["model"] == str(models / current) and report["report"]["rows"] == 5000
    bad = _run(FIT, data, "no_such_column", models, "threads")
    assert bad.returncode == 1
    assert "current.json unchanged" in bad.stderr
    usage = _run(FIT, data, "class", models, "threads", DASKTREE_FIT_ARGS="--no-such-option")
    assert usage.returncode == 2 and "current.json unchanged" in usage.stderr
    assert os.readlink(models / "current.json") == current
    assert _models(models) == [current]
    assert not [f for f in os.listdir(models) if f.endswith(".tmp")]


def test_retention_keeps_exactly_the_last_n(data, tmp_path):
    models = tmp_path / "models"
    made = []
    for _ in range(3):
        result = _run(FIT, data, "class", models, "threads", DASKTREE_KEEP=2, DASKTREE_FIT_ARGS="--max-depth 2")
        assert result.returncode == 0, result.stderr
        made.append(os.readlink(models / "current.json"))
    assert len(set(made)) == 3
    assert _models(models) == sorted(made[-2:])
    reports = sorted(f for f in os.listdir(models) if f.startswith("report-"))
    assert reports == [m.replace("model-", "report-") for m in sorted(made[-2:])]
    assert os.readlink(models / "current.json") == made[-1]
    bad_keep = _run(FIT, data, "class", models, "threads", DASKTREE_KEEP=0)
    assert bad_keep.returncode == 2 and "DASKTREE_KEEP" in bad_keep.stderr


def test_a_run_past_its_timeout_is_killed_and_reported(data, tmp_path):
    models = tmp_path / "models"
    assert _run(FIT, data, "class", models, "threads", DASKTREE_FIT_ARGS="--max-depth 1").returncode == 0
    current = os.readlink(models / "current.json")
    # a "scheduler" that accepts connections and never answers: the fit waits on it until killed
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        hung = _run(FIT, data, "class", models, address, timeout=120, DASKTREE_TIMEOUT=2)
    assert hung.returncode == 75, hung.stderr
    assert "killed after its timeout of 2s" in hung.stderr and "current.json unchanged" in hung.stderr
    assert os.readlink(models / "current.json") == current
    assert _models(models) == [current]
    assert not [f for f in os.listdir(models) if f.endswith(".tmp")]


def test_fit_then_predict_the_new_partition(data, tmp_path):
    models, new, out = tmp_path / "models", tmp_path / "new", tmp_path / "pred"
    agrawal.write_parquet(str(new), 1000, n_files=1, seed=7)
    missing = _run(PREDICT, models, new, out, "threads")
    assert missing.returncode == 1 and "no current model" in missing.stderr
    ok = _run(FIT, data, "class", models, "threads", DASKTREE_PREDICT=new, DASKTREE_PREDICT_OUT=out)
    assert ok.returncode == 0, ok.stderr
    assert len(pq.read_table(out)) == 1000
    again = _run(PREDICT, models, new, out, "threads", DASKTREE_PREDICT_ARGS="--keep age")
    assert again.returncode == 0, again.stderr  # a rerun replaces the output
    assert "age" in pq.read_table(out).column_names
    gone = _run(PREDICT, models, tmp_path / "nowhere", out, "threads")
    assert gone.returncode == 1 and "unchanged" in gone.stderr
    assert len(pq.read_table(out)) == 1000


UNITS = os.path.join(DEPLOY, "systemd")


def _unit(name: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    with open(os.path.join(UNITS, name)) as f:
        for line in f:
            if "=" in line and not line.lstrip().startswith(("#", "[")):
                key, value = line.split("=", 1)
                values.setdefault(key.strip(), []).append(value.strip())
    return values


@pytest.mark.parametrize("name", ["dasktree-fit.service", "dasktree-predict.service"])
def test_systemd_units_retry_only_transient_failures(name):
    unit = _unit(name)
    assert unit["Restart"] == ["no"] and unit["RestartForceExitStatus"] == ["75"]
    assert "RuntimeMaxSec" in unit
    script = unit["ExecStart"][0].split()[0]
    assert os.path.isfile(os.path.join(DEPLOY, os.path.basename(script)))
    assert script.startswith("/opt/dasktree/deploy/")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_units_verify(tmp_path):
    """systemd's own checker, with the scripts' install path pointed at this checkout."""
    for name in os.listdir(UNITS):
        text = open(os.path.join(UNITS, name)).read()
        text = text.replace("/opt/dasktree/deploy", os.path.abspath(DEPLOY)).replace("User=dasktree", "User=root")
        (tmp_path / name).write_text(text)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *sorted(map(str, tmp_path.iterdir()))],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_scripts_are_bash_clean():
    for script in (FIT, PREDICT):
        assert subprocess.run(["bash", "-n", script], capture_output=True).returncode == 0
        assert os.access(script, os.X_OK)
