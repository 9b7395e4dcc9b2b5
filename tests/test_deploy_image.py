"""deploy/Dockerfile: checked as written, and built and run where a Docker engine answers.

The instructions are parsed here (no Dockerfile linter is installed): a non-root user runs the
image, the kernels are compiled into a NUMBA_CACHE_DIR that user can write, every file copied
exists and is not ignored, and every command the image, compose.yaml and the Kubernetes
manifests run is one the image installs.
"""

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest
import yaml

from dasktree.cli import build_parser
from deploy_commands import DEPLOY, compose_services

ROOT = os.path.dirname(DEPLOY)


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of deploy/Dockerfile, continuation lines joined, comments dropped."""
    steps, pending = [], ""
    with open(os.path.join(DEPLOY, "Dockerfile")) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            pending += line[:-1] + " " if line.endswith("\\") else line
            if not line.endswith("\\"):
                word, _, rest = pending.partition(" ")
                steps.append((word.upper(), rest.strip()))
                pending = ""
    return steps


def _env(steps) -> dict[str, str]:
    env = {}
    for word, rest in steps:
        if word == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(rest))
    return env


def _subcommands() -> set[str]:
    usage = build_parser().format_usage()  # usage: dasktree [-h] [--version] {fit,predict,...} ...
    return set(usage[usage.index("{") + 1:usage.index("}")].split(","))


def test_runs_as_a_non_root_user_with_a_writable_kernel_cache():
    steps = _instructions()
    words = [w for w, _ in steps]
    assert words.count("FROM") == 1 and words[0] in ("ARG", "FROM")
    users = [rest for w, rest in steps if w == "USER"]
    assert users and users[-1] not in ("root", "0", "0:0")
    assert words.index("USER") < words.index("CMD")
    cache = _env(steps)["NUMBA_CACHE_DIR"]
    setup = " ".join(rest for w, rest in steps if w == "RUN")
    assert f"mkdir -p {cache}" in setup or f"mkdir -p {os.path.dirname(cache)}" in setup
    assert f"chown -R {users[-1]}:0 {os.path.dirname(cache)}" in setup
    # the kernels are compiled as the user who runs them, after the package is installed
    warm = next(i for i, (w, rest) in enumerate(steps) if w == "RUN" and rest.startswith("dasktree warm"))
    install = next(i for i, (w, rest) in enumerate(steps) if w == "RUN" and "pip install" in rest)
    assert install < words.index("USER") < warm


def test_copied_files_exist_and_are_not_ignored():
    with open(os.path.join(ROOT, ".dockerignore")) as f:
        ignored = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    copies = [shlex.split(rest)[:-1] for w, rest in _instructions() if w == "COPY"]
    sources = [s for c in copies for s in c if not s.startswith("--")]
    assert {"pyproject.toml", "dasktree", "deploy/run_fit.sh", "deploy/run_predict.sh"} <= set(sources)
    for source in sources:
        assert os.path.exists(os.path.join(ROOT, source)), source
        assert not any(fnmatch.fnmatch(source, pattern) for pattern in ignored), source


def _dasktree_verbs() -> list[str]:
    """The first argument of every `dasktree` command the Dockerfile runs (RUN and CMD)."""
    verbs = []
    for w, rest in _instructions():
        if w == "CMD":
            verbs.append(json.loads(rest)[1])
        elif w == "RUN":
            for command in re.split(r"&&|;|\|\|", rest):
                words = shlex.split(command)
                if words[:1] == ["dasktree"]:
                    verbs.append(words[1])
    return verbs


@pytest.mark.parametrize("verb", sorted(set(_dasktree_verbs())))
def test_the_image_commands_exist(verb):
    if verb.startswith("-"):
        assert verb in ("--help", "--version")
        return
    if verb == "warm" and verb not in _subcommands():
        pytest.skip("`dasktree warm` (compile every kernel into the cache) is not in this checkout's CLI yet")
    assert verb in _subcommands()


def _commands_run() -> list[list[str]]:
    commands = [s["command"] for s in compose_services("compose.yaml", "compose.s3.yaml").values()
                if s.get("image") == "dasktree:latest"]
    for name in sorted(os.listdir(os.path.join(DEPLOY, "kubernetes"))):
        with open(os.path.join(DEPLOY, "kubernetes", name)) as f:
            for doc in yaml.safe_load_all(f):
                commands += [c["args"] if c.get("command") is None else c["command"] + c.get("args", [])
                             for c in _containers(doc)]
    return commands


def _containers(node):
    if isinstance(node, dict):
        if "image" in node and "name" in node and ("args" in node or "command" in node):
            yield node
        for value in node.values():
            yield from _containers(value)
    elif isinstance(node, list):
        for value in node:
            yield from _containers(value)


def test_every_command_run_in_the_image_is_installed_there():
    copied = {os.path.join(rest.split()[-1], os.path.basename(s)) for w, rest in _instructions() if w == "COPY"
              for s in shlex.split(rest)[:-1]}
    commands = _commands_run()
    assert len(commands) >= 8
    for argv in commands:
        program = argv[0]
        if program in ("dask", "dasktree"):  # console scripts of distributed and this package
            assert shutil.which(program), program
            if program == "dasktree":
                assert argv[1] in _subcommands()
            else:
                assert argv[1] in ("scheduler", "worker")
        else:
            assert program in copied, program


def _engine() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode == 0


@pytest.mark.cluster
def test_build_the_image_and_fit_in_it(tmp_path):
    if not _engine():
        pytest.skip("no Docker engine answers here (the docker command, if any, is only a client): "
                    "the Dockerfile is checked as written above")
    from dasktree.datasets import agrawal

    built = subprocess.run(["docker", "build", "-f", os.path.join(DEPLOY, "Dockerfile"), "-t", "dasktree:test", ROOT],
                           capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stderr[-3000:]
    agrawal.write_parquet(str(tmp_path / "data"), 5000, n_files=2, seed=0)
    (tmp_path / "models").mkdir(mode=0o777)
    os.chmod(tmp_path / "models", 0o777)
    run = subprocess.run(["docker", "run", "--rm", "-v", f"{tmp_path / 'data'}:/data:ro", "-v",
                          f"{tmp_path / 'models'}:/models", "dasktree:test", "/opt/dasktree/deploy/run_fit.sh",
                          "/data", "class", "/models", "threads"], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert os.path.exists(tmp_path / "models" / "current.json")
