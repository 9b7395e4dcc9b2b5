"""Running a snippet of Python in a fresh interpreter, e.g. one where numba cannot be imported; the
``dasktree`` command run in this process, as a process would report it, or several commands run one
after another in one new interpreter (its own environment, directory and umask); a copy of a numba cache
directory with chosen kernels taken out, for a fresh interpreter to compile them."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import dasktree

__all__ = ["run_without_numba", "run_command", "run_commands", "cache_without"]


def run_without_numba(code: str) -> str:
    """Run ``code`` in a new interpreter where ``import numba`` fails; return what it printed.

    The interpreter imports this same ``dasktree`` and turns warnings into
    errors; a failure raises ``subprocess.CalledProcessError`` with its stderr.
    """
    root = str(Path(dasktree.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", "import sys; sys.modules['numba'] = None\n" + code],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()


def run_command(*argv, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """``dasktree *argv`` run in this process by :func:`dasktree.cli.main`, its exit code and what it
    wrote to stdout and stderr as ``subprocess.run(..., capture_output=True, text=True)`` gives them
    for the command as a process (an argparse exit is its code). For tests of what the command checks,
    decides and says, where a new interpreter (seconds of imports each on a loaded 2-core machine)
    proves nothing more; what only a process shows (its exit status, signals, pipes, a crash, the
    environment read at import) is tested on real processes. ``cwd``: the directory it runs in."""
    from ..cli import main

    argv = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help, a usage error
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["dasktree", *argv], code, out.getvalue(), err.getvalue())


_COMMANDS = """
import json, logging, sys
logging.disable(logging.ERROR)  # as the command's own process does (dasktree.cli.main with no argv)
from dasktree.testing.processes import run_command
commands, results = json.loads(sys.argv[1]), sys.argv[2]
done = [run_command(*argv) for argv in commands]
with open(results, "w") as f:
    json.dump([[r.returncode, r.stdout, r.stderr] for r in done], f)
"""


def run_commands(commands, *, env: dict | None = None, cwd: str | Path | None = None, umask: int | None = None,
                 timeout: float = 600) -> tuple[list[subprocess.CompletedProcess], subprocess.CompletedProcess]:
    """Each ``dasktree`` command line of ``commands`` run by :func:`run_command`, one after another, in one
    new interpreter with the environment ``env`` (the whole of it), in the directory ``cwd``, under
    ``umask``: what each exited with and wrote, as :func:`run_command` gives it, and the interpreter's
    own run (its exit status, and whatever reached its stdout and stderr outside the commands' capture:
    a C library's or a thread's writes to the file descriptors). For tests that need the command's
    environment or umask kept out of the test's process, where one interpreter's imports (seconds on a
    loaded 2-core machine) serve every command instead of one per command."""
    root = str(Path(dasktree.__file__).resolve().parents[1])
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    argvs = [[str(a) for a in argv] for argv in commands]
    with tempfile.TemporaryDirectory(prefix="dasktree-commands-") as tmp:
        results = os.path.join(tmp, "results.json")
        whole = subprocess.run([sys.executable, "-c", _COMMANDS, json.dumps(argvs), results], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=timeout,
                               preexec_fn=None if umask is None else (lambda: os.umask(umask)))
        if whole.returncode != 0 or not os.path.exists(results):
            raise subprocess.CalledProcessError(whole.returncode, whole.args, whole.stdout, whole.stderr)
        with open(results) as f:
            done = json.load(f)
    return ([subprocess.CompletedProcess(["dasktree", *argv], code, out, err)
             for argv, (code, out, err) in zip(argvs, done)], whole)


def cache_without(cache: str | Path, copy: str | Path, kernels) -> list[str]:
    """Copy the numba cache directory ``cache`` (a ``NUMBA_CACHE_DIR``) to ``copy``, without the
    entries of ``kernels`` ((module, name) pairs, as :data:`dasktree.kernel_cache.LEVEL_PASS_KERNELS`
    gives them): a process using ``copy`` finds every other kernel compiled and compiles those, as
    after an upgrade that changed their source. The files taken out; an error when a kernel has none
    there (the copy would not be what the caller asked for)."""
    shutil.copytree(cache, copy)
    removed = []
    for module, name in kernels:
        # numba names a kernel's files <source file's stem>.<qualname>-<line>.py<version>{.nbi,.<n>.nbc}
        stem = module.rsplit(".", 1)[-1]
        files = sorted(p for p in Path(copy).rglob(f"{stem}.{name}-*") if p.suffix in (".nbi", ".nbc"))
        if not files:
            raise FileNotFoundError(f"no cached {module}.{name} in {cache}")
        for path in files:
            path.unlink()
            removed.append(str(path))
    return removed
