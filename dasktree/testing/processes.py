"""Running a snippet of Python in a fresh interpreter, e.g. one where numba cannot be imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dasktree

__all__ = ["run_without_numba"]


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
