"""The ``dasktree`` command: fit, predict, discretize, show, prune, evaluate, plot, warm, demo.

Exit codes (:data:`EXIT_CODES`, :mod:`dasktree.errors`): 0 done; 1 the data or
a file cannot be used (one line on stderr); 2 bad usage, including a bad
parameter value; 3 an internal error (a bug: please report it); 75 a transient
failure a retry may fix (scheduler unreachable, cluster lost, ``--timeout``).
``--timeout S`` expiring is exit 75 too (a scheduler's retry), with a line saying the run exceeded
``S`` seconds and to raise it. ``--json`` prints a machine-readable report on stdout and the human summary
on stderr; progress bars go to stderr and ``--quiet`` turns them off.
``--log-format json`` makes stderr JSON lines only: one per pass (and one naming the cluster
and its dashboard) instead of the bars (:mod:`dasktree.engine.progress`), one per summary
line (:mod:`dasktree.cli.say`), and the error line as one.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import warnings
from typing import Sequence

from ..version import __version__  # noqa: F401  (set before the submodules load)
from ..errors import (
    EXIT_BUG,
    EXIT_TRANSIENT,
    EXIT_USAGE,
    DaskTreeError,
    TransientError,
    exit_code,
)
from .commands import COMMANDS
from .parser import EXIT_CODES, build_parser
from ..io import outputs
from ..io.redact import redact
from .security import tls_settings
from .usage import one_line_errors

__all__ = ["main", "build_parser", "EXIT_CODES"]


GRACE_SECONDS = 30
"""After ``--timeout`` expires, or after the command is done, how long closing the cluster and
leaving may take before the process ends itself regardless (never a job that does not exit)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command of ``argv``; the exit code (see :data:`EXIT_CODES`)."""
    program = argv is None  # the process is ours: it must end (see _leaving)
    if program:  # distributed's chatter (a cluster closing after a timeout, a reconnect to a lost scheduler
        logging.disable(logging.ERROR)  # given up on, at ERROR with a traceback) would break the one-line error
    nul = next((a for a in (sys.argv[1:] if argv is None else argv) if "\x00" in str(a)), None)
    if nul is not None:  # no path or name holds one; os calls would fail deep inside
        print(f"dasktree: error: argument {nul!r} contains a NUL character", file=sys.stderr)
        return EXIT_USAGE
    given = list(sys.argv[1:] if argv is None else argv)
    verb = next((a for a in given if not str(a).startswith("-")), None)  # the top level's options take no value
    args = one_line_errors(build_parser(verb)).parse_args(given)
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        _error(args, f"dasktree: error: --timeout must be a number of seconds > 0, got {timeout}", EXIT_USAGE)
        return EXIT_USAGE
    # distributed's own warnings and asyncio's shutdown chatter (a cluster closing after an error)
    # would break the one-line error contract
    warnings.filterwarnings("ignore", module="distributed")
    for name in ("asyncio", "distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        if hasattr(args, "csv_types"):  # the verb reads a dataset: CSV options make it a CSV
            from .csv_options import csv_data

            args.data = csv_data(args)
        with _deadline(timeout), tls_settings(args):
            result = COMMANDS[args.command](args)
        if getattr(args, "json", False) and result is not None:
            print(redact(json.dumps(result, indent=2, default=str)))
        sys.stdout.flush()
    except BrokenPipeError:  # `dasktree show m.json | head -1`: the reader has what it wanted
        _quiet_stdout()
        return 0
    except DaskTreeError as exc:
        _error(args, f"dasktree: error: {_one_line(str(exc))}", exit_code(exc))
        return _leaving(exit_code(exc), program)
    except KeyboardInterrupt:
        print("dasktree: interrupted", file=sys.stderr)
        return _leaving(130, program)
    except Exception as exc:  # a bug: say so in one line, show the traceback on request
        if os.environ.get("DASKTREE_DEBUG"):
            raise
        if type(exc).__name__.endswith("CredentialsError"):  # botocore's: the object store asked for credentials
            _error(args, f"dasktree: error: no credentials for the object store ({type(exc).__name__}: "
                   f"{_one_line(str(exc))}): set the store's environment variables or give storage_options", 1)
            return _leaving(1, program)
        _error(args, f"dasktree: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
               "(a bug in dasktree; rerun with DASKTREE_DEBUG=1 for the traceback and please report it)", EXIT_BUG)
        return _leaving(EXIT_BUG, program)
    return _leaving(0, program)


@contextlib.contextmanager
def _deadline(seconds: float | None):
    """Bound the block to ``seconds``: at expiry a :class:`TransientError` is raised in the main
    thread (so the cluster is closed and atomic outputs are removed as for any error); if the
    block has not ended ``GRACE_SECONDS`` later (stuck in compiled code, or in a close that
    hangs), the process says so and ends itself with exit code 75."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    message = (f"--timeout {seconds:g} s expired: the run exceeded it and was stopped; "
               "raise --timeout to give it longer")

    def expire(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 0)
        outputs.expire(message)  # no output is committed from now on, whatever catches the error below
        raise TransientError(message)

    def hard_stop():
        print(f"dasktree: error: {message} (the cluster did not close within {GRACE_SECONDS} s)",
              file=sys.stderr, flush=True)
        os._exit(EXIT_TRANSIENT)

    previous = signal.signal(signal.SIGALRM, expire)
    watchdog = threading.Timer(seconds + GRACE_SECONDS, hard_stop)
    watchdog.daemon = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    watchdog.start()
    try:
        yield
        if outputs.expired():  # the error was swallowed on its way (a library's guarded import): exit 75 all the same
            raise TransientError(message)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watchdog.cancel()
        outputs.expire(None)


_FAILED: list[int] = []  # the program's exit code once it failed (see _end_after_failing)


@atexit.register  # registered before the handlers of the libraries a command loads, so it runs after them
def _end_after_failing() -> None:
    """A failed program ends here, after the interpreter's exit handlers (the thread pools joined, the
    cluster's processes ended) and before its teardown: what a failed command leaves (a failed read's
    pyarrow objects) is not destroyed at exit, where a library's C++ may abort the process
    (``terminate called without an active exception``, SIGABRT, seen once after a corrupt file's error
    line under load) and the job would end with a signal instead of its exit code."""
    if _FAILED:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(_FAILED[-1])


def _leaving(code: int, program: bool) -> int:
    """``code``; for the program (not a call of :func:`main` from Python), with a watchdog that ends
    the process with it if leaving (threads distributed started, a cluster's shutdown) takes more
    than ``GRACE_SECONDS``: a finished job always exits; a failed one ends without the interpreter's
    teardown (:func:`_end_after_failing`)."""
    if not program:
        return code
    if code:
        _FAILED.append(code)

    def hard_exit():
        sys.stderr.flush()
        os._exit(code)

    watchdog = threading.Timer(GRACE_SECONDS, hard_exit)
    watchdog.daemon = True
    watchdog.start()
    return code


def _quiet_stdout() -> None:
    """stdout's reader is gone: point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _error(args, line: str, code: int) -> None:
    """The one error line on stderr: as it reads, or with ``--log-format json`` as a JSON line
    ``{"event": "error", "message": ..., "exit_code": ...}`` (stderr stays JSON lines only)."""
    if getattr(args, "log_format", "text") == "json":
        line = json.dumps({"event": "error", "message": line, "exit_code": code})
    print(line, file=sys.stderr)


def _one_line(text: str) -> str:
    """One line, without a URL's credentials (:mod:`dasktree.io.redact`)."""
    return redact(" ".join(text.split()))
