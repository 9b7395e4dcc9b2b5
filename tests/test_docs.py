"""The docs a newcomer reads: they build with warnings as errors, the README's Python runs as written,
and the command's synopsis lists every option the parsers have."""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dasktree.cli.synopsis import synopsis
from dasktree.testing import write_dataset

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (pip install '.[docs]') builds the docs")
    pytest.importorskip("mkdocstrings", reason="the docs extra (pip install '.[docs]') builds the docs")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300, env=env,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("DaskTreeClassifier", "Discretizer", "prune_model", "export_text"):  # from the docstrings
        assert name in api, name


def test_the_cli_synopsis_in_the_guide_is_the_parsers():
    guide = (ROOT / "docs" / "guide" / "cli.md").read_text()
    block = re.search(r"```\n(dasktree fit .*?)```", guide, flags=re.S).group(1)
    assert block == synopsis(), "regenerate it with: python -m dasktree.cli.synopsis"
    for option in ("--weight", "--timeout", "--features", "--confidence", "--scheduler", "--overwrite"):
        assert option in block


def test_license_python_versions_and_typing_are_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"]["text"] == "BSD-3-Clause"
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    lowest = project["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {lowest}" in project["classifiers"]
    assert (ROOT / "dasktree" / "py.typed").exists() and (ROOT / "CHANGELOG.md").exists()
    for extra in ("docs", "test"):
        assert any(d.startswith("mkdocs") for d in project["optional-dependencies"][extra])
    readme = (ROOT / "README.md").read_text()
    assert "dasktree warm" in readme and "local Dask cluster" not in readme


@pytest.mark.cluster
def test_the_readmes_python_runs_as_written(tmp_path, monkeypatch):
    """In a directory holding ``train/`` (Parquet with a ``churn`` column), as the README says."""
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"tenure": rng.integers(0, 72, n), "charges": rng.normal(70, 30, n).round(2),
                          "plan": rng.choice(["monthly", "yearly", "two-year"], n)})
    frame["churn"] = np.where((frame.tenure < 12) & (frame.plan == "monthly"), "yes",
                              np.where(rng.random(n) < 0.1, "yes", "no"))
    write_dataset(frame, tmp_path / "train", n_files=6)
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert (tmp_path / "model.json").exists() and list((tmp_path / "predictions").glob("*.parquet"))
