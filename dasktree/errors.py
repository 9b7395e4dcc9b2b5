"""Errors that reach the user: one line that says what and where, and an exit code to act on.

Every error dasktree raises on purpose derives from :class:`DaskTreeError`; the
CLI prints its message on one line and exits with :func:`exit_code`:

====  =====================================================================
code  meaning
====  =====================================================================
0     done
1     the data or a file cannot be used (permanent: fix the input)
2     bad usage, including a bad parameter value (:class:`ParameterError`)
3     an internal error (a bug: please report it)
75    a transient failure a retry may fix (:class:`TransientError`: the
      scheduler cannot be reached, the cluster was lost, ``--timeout``)
====  =====================================================================

75 is ``EX_TEMPFAIL`` of BSD's ``sysexits.h``, which schedulers and mail
systems already read as "try again later". Anything else reaching the CLI is a
bug and is reported as one (3).
"""

from __future__ import annotations

__all__ = ["DaskTreeError", "InputError", "ParameterError", "DataError", "TransientError", "BugError",
           "exit_code", "EXIT_OK", "EXIT_DATA", "EXIT_USAGE", "EXIT_BUG", "EXIT_TRANSIENT"]

EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_BUG, EXIT_TRANSIENT = 0, 1, 2, 3, 75


class DaskTreeError(Exception):
    """Base of the errors dasktree raises on purpose."""


class InputError(DaskTreeError, ValueError):
    """A wrong argument: a path that does not exist, an unknown column, an output that cannot be written."""


class ParameterError(InputError):
    """A parameter value outside its domain (``max_depth=-1``, ``cv=1``): bad usage, exit 2."""


class DataError(DaskTreeError, ValueError):
    """The data cannot be learned from as it is: empty, one class, infinities, mixed schemas, corrupt pages."""


class TransientError(DaskTreeError, RuntimeError):
    """A failure a retry may fix: the scheduler cannot be reached, the cluster was lost, a timeout."""


class BugError(DaskTreeError, RuntimeError):
    """An internal invariant failed: it's a bug, please report it."""

    def __init__(self, message: str):
        super().__init__(f"{message} (this is a bug in dasktree, please report it)")


def exit_code(exc: BaseException) -> int:
    """The CLI's exit code for ``exc`` (see the module's table)."""
    if isinstance(exc, TransientError):
        return EXIT_TRANSIENT
    if isinstance(exc, ParameterError):
        return EXIT_USAGE
    if isinstance(exc, BugError) or not isinstance(exc, DaskTreeError):
        return EXIT_BUG
    return EXIT_DATA
