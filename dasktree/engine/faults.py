"""Worker loss on purpose, at a chosen point inside a pass: for the fault tests and benchmarks.

With ``DASKTREE_FAULT=STAGE:N:MARKER`` in a worker's environment, the first
process to reach ``STAGE`` of pass ``N`` or later (while the file ``MARKER`` does
not exist) creates ``MARKER`` and kills itself with SIGKILL, as the kernel's OOM
killer or a lost machine would: no cleanup, no goodbye to the scheduler.
Stages: ``summary`` (a pass-0 task), ``encode`` (a holder encoding its groups),
``count`` (a holder counting), ``cells`` (a holder serving its cells to a
peer: the exchange), ``search`` (a holder searching its chunks), and in the
client ``saved`` (a level pass's results just checkpointed). Unset (always,
outside the tests), :func:`maybe_die` costs one environment lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ENV", "STAGES", "maybe_die", "arm"]

ENV = "DASKTREE_FAULT"
STAGES = ("summary", "encode", "count", "cells", "search", "saved")


def maybe_die(stage: str, number: int = 0) -> None:
    """Kill this process if ``DASKTREE_FAULT`` asks for ``stage`` at pass ``number`` (see the module)."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    want, at, marker = spec.split(":", 2)
    if want != stage or number < int(at):
        return
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:  # one kill per marker: the restarted worker lives on
        return
    os.kill(os.getpid(), signal.SIGKILL)


def arm(spec: str | None) -> None:
    """Set (or with None clear) ``DASKTREE_FAULT`` in this process: ``client.run(arm, spec)`` arms
    the workers there are now, not the ones a nanny starts later."""
    if spec is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = spec
