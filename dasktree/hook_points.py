"""The named points where tests and benchmarks reach into a fit: no-ops in production.

Production code never imports :mod:`dasktree.testing.hooks`: it calls
:func:`point` at a few named places and asks :func:`value` for a hook's value,
and both look the hooks module up in ``sys.modules``. So a hook acts only in a
process where a test or a benchmark loaded that module and set it (a worker
process too: ``client.run(hooks.arm, ...)`` loads it there); elsewhere a point
costs one dictionary lookup.

Points, each at the pass ``number`` given to :func:`point` (0 for pass 0):

``summary``
    a pass-0 task, before it reads its part or summarizes its kept tables;
``encode``, ``count``, ``cells``, ``search``
    a holder encoding its groups, counting, serving its cells to a peer (the
    exchange), searching its chunks (:mod:`dasktree.engine.part_holders`);
``gather``, ``pieces``, ``grow``
    a holder in a small pass: gathering its rows of the small nodes, serving its
    gathered pieces to a peer, growing a run of the nodes in memory;
``saved``
    in the client: a level pass's results just checkpointed.

Values: ``only_fold`` (None unless set; see :mod:`dasktree.testing.hooks`).
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["POINTS", "point", "value"]

HOOKS = "dasktree.testing.hooks"
POINTS = ("summary", "encode", "count", "cells", "search", "gather", "pieces", "grow", "saved")


def point(name: str, number: int = 0) -> None:
    """The fit reached point ``name`` of pass ``number``: tell the hooks, if a test or benchmark set them."""
    hooks = sys.modules.get(HOOKS)
    if hooks is not None:
        hooks.reached(name, number)


def value(name: str) -> Any:
    """The hook ``name``'s value, or None when no test or benchmark loaded the hooks (production)."""
    hooks = sys.modules.get(HOOKS)
    return None if hooks is None else getattr(hooks, name)
