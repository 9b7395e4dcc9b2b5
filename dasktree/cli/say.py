"""What the command tells its user while it works: progress of the passes, and the summary lines.

``--log-format json`` makes stderr JSON lines only (one object per pass, per cluster, per
summary line) and leaves stdout to ``--json``'s report, so a log collector reading both streams
never meets text; ``--log-format text`` draws bars and prints the summary for people.
"""

from __future__ import annotations

import json
import sys

__all__ = ["progress", "say", "warn"]


def progress(args, fit: str | None = None):
    """The :class:`~dasktree.engine.progress.Progress` of a verb's passes: off with ``--quiet``, and with
    ``--json`` when its lines would be text (the JSON report owns stdout; JSON lines go to stderr).
    ``fit``: the task of the fit it shows, which says as its first pass starts that the kernels compile
    when they are not in numba's cache (:func:`dasktree.kernel_cache.cold`: after an install or an upgrade)."""
    from ..engine.progress import Progress

    log_format = getattr(args, "log_format", "text")
    bar = Progress(enabled=not (args.quiet or (args.json and log_format == "text")), log_format=log_format)
    if fit is not None and bar.enabled:
        from ..kernel_cache import COMPILING, cold

        if cold(fit):
            bar.note("compiling", COMPILING, at_next_pass=True)
    return bar


def say(args, text: str) -> None:
    """The human summary: a JSON line ``{"event": "summary", "message": ...}`` on stderr with
    ``--log-format json`` (none with ``--quiet``); else on stdout, or on stderr when ``--json`` keeps
    stdout for the JSON report. A URL's credentials show as ``***`` (:mod:`dasktree.io.redact`)."""
    from ..io.redact import redact

    text = redact(text)
    if getattr(args, "log_format", "text") == "json":
        if not getattr(args, "quiet", False):
            print(json.dumps({"event": "summary", "message": text}), file=sys.stderr)
    elif getattr(args, "json", False):
        print(text, file=sys.stderr)
    else:
        print(text)


def warn(args, text: str) -> None:
    """A warning about the data (a column that looks like a row key): ``dasktree: warning: ...`` on
    stderr, or a JSON line ``{"event": "warning", ...}`` with ``--log-format json``; even with ``--quiet``."""
    if getattr(args, "log_format", "text") == "json":
        print(json.dumps({"event": "warning", "message": text}), file=sys.stderr)
    else:
        print(f"dasktree: warning: {text}", file=sys.stderr)
