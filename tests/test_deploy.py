"""deploy/run_fit.sh: a successful fit repoints current.json; a failed one leaves it alone."""

import os
import shutil
import subprocess

import pytest

from dasktree.datasets import agrawal

pytestmark = pytest.mark.cluster
SCRIPT = os.path.join(os.path.dirname(__file__), "..", "deploy", "run_fit.sh")


@pytest.mark.skipif(shutil.which("dasktree") is None, reason="needs the installed dasktree command")
def test_run_fit_repoints_only_on_success(tmp_path):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 5000, n_files=2, seed=0)
    models = tmp_path / "models"
    ok = subprocess.run(["bash", SCRIPT, str(data), "class", str(models)], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    current = os.readlink(models / "current.json")
    assert (models / current).exists()
    bad = subprocess.run(["bash", SCRIPT, str(data), "no_such_column", str(models)], capture_output=True, text=True,
                         timeout=300)
    assert bad.returncode == 1
    assert "current.json unchanged" in bad.stderr
    assert os.readlink(models / "current.json") == current
    assert not [f for f in os.listdir(models) if f.endswith(".tmp")]
