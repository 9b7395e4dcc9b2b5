"""The docs a newcomer reads: they build with warnings as errors, the README's Python runs as written,
and the command's synopsis lists every option the parsers have."""

import json
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
    site = tmp_path / "site"
    api = (site / "api" / "index.html").read_text()
    for name in ("DaskTreeClassifier", "Discretizer", "prune_model", "export_text"):  # from the docstrings
        assert name in api, name
    assert _broken_links(site) == []
    assert (site / "results" / "core" / "index.html").exists()  # the benchmark results are pages of the site


def _broken_links(site: Path) -> list[tuple[str, str]]:
    """Every link of the built site to a file of the site that is not there (a page's ``../x/``, a root's ``/x``)."""
    from urllib.parse import unquote, urlsplit

    broken = []
    for page in sorted(site.rglob("*.html")):
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            base = site if parts.path.startswith("/") else page.parent
            target = (base / unquote(parts.path).lstrip("/")).resolve()
            if not (target / "index.html" if target.is_dir() else target).exists():
                broken.append((str(page.relative_to(site)), href))
    return broken


def test_the_api_reference_reads_without_the_site():
    """Read on a code host, docs/api.md showed only ``:::`` lines: every name it pulls in is also in a
    line of its own, with a link to a guide page that exists."""
    text = (ROOT / "docs" / "api.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    for directive in re.findall(r"^::: ([\w.]+)$", text, flags=re.M):
        name = directive.rsplit(".", 1)[-1]
        assert any(f"`{name}" in row or f".{name}(" in row for row in rows) or directive == "dasktree.errors", name
    import dasktree.errors

    for name in dasktree.errors.__all__:
        assert any(name in row for row in rows), name
    for page in re.findall(r"\]\(([\w/.-]+\.md)\)", text):
        assert (ROOT / "docs" / page).is_file(), page


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


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCKS = [(path, i, block) for path in DOCS for i, block in enumerate(_python_blocks(path.read_text()))]


@pytest.fixture(scope="module")
def docs_data(tmp_path_factory):
    """The datasets the blocks name, written once: ``train/`` (a ``churn`` column, as the README
    says), ``data/`` (a ``label`` and an ``id``) and ``sales/`` (an ``amount``)."""
    root = tmp_path_factory.mktemp("docs-data")
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"tenure": rng.integers(0, 72, n), "charges": rng.normal(70, 30, n).round(2),
                          "plan": rng.choice(["monthly", "yearly", "two-year"], n)})
    frame["churn"] = np.where((frame.tenure < 12) & (frame.plan == "monthly"), "yes",
                              np.where(rng.random(n) < 0.1, "yes", "no"))
    write_dataset(frame, root / "train", n_files=6)
    data = pd.DataFrame({"id": np.arange(n), "age": rng.integers(18, 80, n), "income": rng.normal(50, 20, n).round(1),
                         "plan": rng.choice(["basic", "plus", "pro"], n)})
    data["label"] = np.where((data.age < 40) & (data.income > 45), "buys",
                             np.where(rng.random(n) < 0.15, "buys", "browses"))
    write_dataset(data, root / "data", n_files=4)
    sales = data[["age", "income", "plan"]].copy()
    sales["amount"] = (sales.income * 2.0 + np.where(sales.plan == "pro", 30.0, 0.0) + rng.normal(0, 5, n)).round(2)
    write_dataset(sales, root / "sales", n_files=3)
    return root


def test_the_docs_have_python_blocks():
    where = {path.name for path, _, _ in BLOCKS}
    assert {"README.md", "python.md", "regression.md", "discretization.md"} <= where, where


# Runs blocks without a main guard in one interpreter, each from its own file in its own directory as
# __main__ (runpy: a fresh namespace each), and prints how each ended as one JSON line.
SHARED_RUNNER = """
import contextlib, io, json, os, runpy, sys, traceback
outcomes = {}
for name, directory in json.loads(sys.argv[1]):
    os.chdir(directory)
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(os.path.join(directory, "example.py"), run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    outcomes[name] = {"returncode": code, "stdout": out.getvalue()[-3000:], "stderr": err.getvalue()[-3000:]}
print(json.dumps(outcomes))
"""


def _guarded(block: str) -> bool:
    """Whether a block starts processes behind a main guard (a cluster's workers import it again)."""
    return 'if __name__ == "__main__"' in block


def _block_dir(root: Path, docs_data: Path, block: str) -> Path:
    """A directory holding the block as ``example.py`` beside links to the shared datasets."""
    root.mkdir(parents=True)
    for name in os.listdir(docs_data):
        (root / name).symlink_to(docs_data / name, target_is_directory=True)
    (root / "example.py").write_text(block)
    return root


def _block_id(path: Path, index: int) -> str:
    return f"{path.name}-{index}"


@pytest.fixture(scope="module")
def shared_runs(docs_data, tmp_path_factory):
    """Every block without a main guard run as ``__main__`` from its own file and directory, all in one
    new interpreter (:data:`SHARED_RUNNER`): each block's exit code and output, and its directory."""
    root = tmp_path_factory.mktemp("docs-blocks")
    dirs = {_block_id(path, i): _block_dir(root / _block_id(path, i), docs_data, block)
            for path, i, block in BLOCKS if not _guarded(block)}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SHARED_RUNNER, json.dumps([[k, str(v)] for k, v in dirs.items()])],
                          capture_output=True, text=True, timeout=1800, env=env, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: (outcome, dirs[name]) for name, outcome in outcomes.items()}


@pytest.mark.cluster
@pytest.mark.parametrize("path, index, block", BLOCKS, ids=[_block_id(p, i) for p, i, _ in BLOCKS])
def test_every_python_block_runs_as_a_script(request, docs_data, tmp_path, path, index, block):
    """Each block as a script: from its own file (``example.py``) in its own directory beside the
    shared datasets, as ``__main__``; what it saves and predicts is there afterwards. A block that
    starts a cluster behind its main guard runs as ``python example.py`` in a fresh interpreter (its
    worker processes import it again). The others, which start no process, share one interpreter
    (:func:`shared_runs`), each in a fresh namespace, so a name it uses but does not define or import
    fails as in a script of its own; sharing saves a new interpreter's imports per block, and changes
    nothing else a block does."""
    if _guarded(block):
        where = _block_dir(tmp_path / "block", docs_data, block)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "example.py"], cwd=where, capture_output=True, text=True,
                              timeout=900, env=env)
        outcome = {"returncode": done.returncode, "stderr": done.stderr[-3000:]}
    else:
        outcome, where = request.getfixturevalue("shared_runs")[_block_id(path, index)]
    assert outcome["returncode"] == 0, f"{path.name} block {index}:\n{outcome['stderr']}"
    assert "Traceback" not in outcome["stderr"], outcome["stderr"]
    for saved in re.findall(r"""\.save\(["']([^"']+)["']\)""", block):
        assert (where / saved).is_file(), saved
    for out in re.findall(r"""out=["']([^"':]+)["']""", block):
        assert list((where / out).glob("*.parquet")), out


def test_every_name_docs_layout_gives_a_room_is_there():
    """docs/layout.md's rooms name their modules in backticks (`postpone_search`, `dask_runner`): each
    is a module, or a function or class defined, in the rooms its line names; a rename that leaves the
    doc behind fails here."""
    package = ROOT / "dasktree"
    stale = []
    for line in (ROOT / "docs" / "layout.md").read_text().splitlines():
        rooms = [package / r for r in re.findall(r"`(?:dasktree/)?(\w+)/`", line) if (package / r).is_dir()]
        if not line.startswith("- ") or not rooms:
            continue
        files = [p for room in rooms for p in room.rglob("*.py")] + list(package.glob("*.py"))
        source = "\n".join(p.read_text() for p in files)
        for name in re.findall(r"`([a-z][a-z0-9_]*)`", line):
            defined = re.search(rf"^\s*(def|class) {name}\b|^{name}\s*=", source, re.M)
            if name != "dasktree" and name not in {p.stem for p in files} and not defined:
                stale.append(f"{rooms[0].name}/: {name}")
    assert not stale, stale


def test_ci_runs_the_readmes_test_command_verbatim():
    """.ci/run is the README's test command, so what a newcomer runs is what CI runs; its -n needs
    pytest-xdist, which the test extra it installs must bring."""
    readme = (ROOT / "README.md").read_text()
    commands = [line for line in re.findall(r"```\n(.*?)```", readme, flags=re.S)
                for line in line.splitlines() if "pytest" in line]
    assert len(commands) == 1, commands
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == commands[0]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    if re.search(r"\s-n\s", commands[0]):
        assert any(re.match(r"pytest-xdist\b", requirement) for requirement in extra), extra
