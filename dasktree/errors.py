"""Errors that reach the user: one line that says what and where.

Every error dasktree raises on purpose derives from :class:`DaskTreeError`; the
CLI prints its message on one line and exits non-zero. Anything else reaching
the CLI is a bug and is reported as one.
"""

from __future__ import annotations

__all__ = ["DaskTreeError", "InputError", "DataError", "BugError"]


class DaskTreeError(Exception):
    """Base of the errors dasktree raises on purpose."""


class InputError(DaskTreeError, ValueError):
    """A wrong argument: a path that does not exist, an unknown column, a bad parameter."""


class DataError(DaskTreeError, ValueError):
    """The data cannot be learned from as it is: empty, one class, infinities, mixed schemas."""


class BugError(DaskTreeError, RuntimeError):
    """An internal invariant failed: it's a bug, please report it."""

    def __init__(self, message: str):
        super().__init__(f"{message} (this is a bug in dasktree, please report it)")
