"""Seams for tests and benchmarks, set here and reached by the fit at the named points of
:mod:`dasktree.hook_points` (no-ops unless this module is loaded and a hook set).

Production code has none of them in its signatures, and never imports this
module: :mod:`dasktree.hook_points` looks it up in ``sys.modules``.

``only_fold``
    With ``cv``: grow only the tree that holds out this part (fold
    ``only_fold % cv`` of repetition ``only_fold // cv``), as the main tree:
    the serial baseline of cross-validation, one fold per fit
    (``benchmarks/jobs.py``), and the test that the forest grows each fold tree
    as a fit of that fold alone would. Set it with :func:`grow_only_fold`.

``fault``
    Worker loss on purpose, at a chosen point inside a pass: with ``STAGE:N:MARKER``
    armed (:func:`arm`), the first process of those armed to reach point ``STAGE``
    (:data:`~dasktree.hook_points.POINTS`) of pass ``N`` or later, while the file
    ``MARKER`` does not exist, creates ``MARKER`` and kills itself with SIGKILL,
    as the kernel's OOM killer or a lost machine would: no cleanup, no goodbye to
    the scheduler. One kill per marker: a restarted process lives on. Workers are
    armed with ``client.run(arm, spec)`` (the workers there are now, not the ones
    a nanny starts later); the ``dasktree`` command's own process (``saved``) with
    :func:`armed_command`.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..hook_points import POINTS

__all__ = ["only_fold", "grow_only_fold", "Fault", "fault", "arm", "armed_command", "reached"]

only_fold: int | None = None


@contextmanager
def grow_only_fold(part: int) -> Iterator[None]:
    """Fits in this block grow only the fold tree holding out ``part`` (see the module)."""
    global only_fold
    before, only_fold = only_fold, part
    try:
        yield
    finally:
        only_fold = before


@dataclass(frozen=True)
class Fault:
    """Die at point ``stage`` of pass ``at`` or later, once per ``marker`` (see the module)."""

    stage: str
    at: int
    marker: str

    @classmethod
    def parse(cls, spec: str) -> "Fault":
        """``STAGE:N:MARKER`` (the marker a path, which may hold colons)."""
        stage, at, marker = spec.split(":", 2)
        if stage not in POINTS:
            raise ValueError(f"fault stage must be one of {', '.join(POINTS)}, got {stage!r}")
        return cls(stage, int(at), marker)


fault: Fault | None = None


def arm(spec: str | None) -> None:
    """Arm this process with the fault ``STAGE:N:MARKER`` (or with None disarm it): ``client.run(arm,
    spec)`` arms the workers there are now, not the ones a nanny starts later."""
    global fault
    fault = None if spec is None else Fault.parse(spec)


def armed_command(spec: str, *argv: str) -> list[str]:
    """The command line running ``dasktree *argv`` in a new interpreter armed with the fault ``spec``
    (for points of the command's own process, such as ``saved``)."""
    Fault.parse(spec)  # a wrong spec fails here, not in the child
    code = ("import sys\nfrom dasktree.testing import hooks\nhooks.arm(sys.argv.pop(1))\n"
            "from dasktree.cli import main\nsys.exit(main())")
    return [sys.executable, "-c", code, spec, *map(str, argv)]


def reached(name: str, number: int) -> None:
    """The fit reached point ``name`` of pass ``number`` (:func:`dasktree.hook_points.point`): kill
    this process if the armed fault asks for it."""
    armed = fault
    if armed is None or armed.stage != name or number < armed.at:
        return
    try:
        os.close(os.open(armed.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:  # one kill per marker: the restarted worker lives on
        return
    os.kill(os.getpid(), signal.SIGKILL)
