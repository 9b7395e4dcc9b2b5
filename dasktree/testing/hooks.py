"""Seams for tests and benchmarks, set here and read by the fit at the one point that needs each.

Production code has none of them in its signatures, and never imports this
module: the fit looks for it in ``sys.modules`` (:func:`current`), so a hook
is active only once a test or a benchmark imported this module and set it.

``only_fold``
    With ``cv``: grow only the tree that holds out this part (fold
    ``only_fold % cv`` of repetition ``only_fold // cv``), as the main tree:
    the serial baseline of cross-validation, one fold per fit
    (``benchmarks/jobs.py``), and the test that the forest grows each fold tree
    as a fit of that fold alone would.

Worker loss on purpose is :mod:`dasktree.engine.faults`' (an environment
variable, since it must reach worker processes).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

__all__ = ["only_fold", "grow_only_fold", "current"]

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


def current(name: str):
    """The hook ``name``'s value, or None when this module was never imported (production)."""
    module = sys.modules.get(__name__)
    return None if module is None else getattr(module, name)
