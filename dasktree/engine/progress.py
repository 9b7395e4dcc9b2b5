"""What a job tells on stderr: a progress bar per pass, or one JSON line per pass.

``log_format="text"`` (the default) draws a bar per pass over the data
(numbered from 0, pass 0 the summary): it fills as the parts (or the workers'
groups of parts) of the pass finish, names the rows the pass reads and the level
it grows (``level 3/8`` with ``max_depth=8``), and estimates the pass's
remaining time from its finished share. ``"json"`` writes no bars but one JSON
object per finished pass, for log collectors::

    {"event": "pass", "pass": "level 3", "level": 3, "nodes": 8, "rows": 1000000,
     "bytes_read": 0, "tasks": 2, "seconds": 0.21}

``describe(**fields)`` adds fields to the line of the pass under way (the grow
loop gives ``level``, ``nodes`` and ``rows``; the fit gives ``max_depth``, kept
for every later bar); ``reads`` (``count_reads``), when
set, returns the bytes the job has read from its data so far, and each line's ``bytes_read`` is
what was added since the last line (0 for a pass over codes kept on the workers).
``cluster(...)`` says where the Dask dashboard of the job's cluster is; ``note(event, message)`` says
anything else once (a fit resumed from a checkpoint, kernels compiling).
Nothing is written when ``enabled`` is false.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Callable, TextIO

__all__ = ["Progress", "LOG_FORMATS", "gather_with_progress"]

LOG_FORMATS = ("text", "json")


class Progress:
    """``start(label, total)`` per pass, ``advance()`` per finished piece of it, ``finish(note)``."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, width: int = 30,
                 log_format: str = "text", reads: Callable[[], int] | None = None):
        if log_format not in LOG_FORMATS:
            raise ValueError(f"log_format must be one of {LOG_FORMATS}, got {log_format!r}")
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.log_format = log_format
        self.reads = reads
        self._label = ""
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._read_last = 0  # reads() at the end of the last pass: what a pass adds is its own
        self._fields: dict = {}
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)()) and log_format == "text"
        self.passes = 0
        self.max_depth: int | None = None
        self._notes: list = []  # said when the next pass starts (note(..., at_next_pass=True))

    def count_reads(self, reads: Callable[[], int] | None) -> None:
        """Count each pass's ``bytes_read`` with ``reads`` (bytes read so far, from 0), or stop."""
        self.reads, self._read_last = reads, 0

    def describe(self, **fields) -> None:
        """Fields for the line of the pass under way (or about to start); ``max_depth`` is the fit's
        deepest level (None: no limit), shown in every later bar."""
        if "max_depth" in fields:
            self.max_depth = fields.pop("max_depth")
        self._fields.update(fields)

    def _title(self, label: str) -> str:
        if label.startswith("pass "):
            return label
        if label.startswith("level ") and self.max_depth is not None:
            head, _, rest = label[6:].partition(" ")
            label = f"level {head}/{self.max_depth}" + (f" {rest}" if rest else "")
        return f"pass {self.passes - 1}: {label}"

    def _rows(self) -> str:
        rows = self._fields.get("rows")
        return f", {rows:,} rows" if isinstance(rows, int) and rows >= 0 else ""

    def start(self, label: str, total: int) -> None:
        notes, self._notes = self._notes, []
        for event, message, fields in notes:
            self.note(event, message, **fields)
        self.passes += 1
        self._label, self._total, self._done = self._title(label), max(total, 0), 0
        self._started = time.perf_counter()
        self._draw()

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._tty:
            self._draw()

    def finish(self, note: str = "") -> None:
        rows = self._rows()
        fields, self._fields = self._fields, {}
        if not self.enabled:
            return
        seconds = time.perf_counter() - self._started
        if self.log_format == "json":
            read = fields.pop("bytes_read", 0)
            if self.reads is not None:  # a runner counts a pass's reads as it starts it, before start()
                now = self.reads()
                read, self._read_last = now - self._read_last, now
            self._emit({"event": "pass", "pass": self._label, **fields, "bytes_read": int(read),
                        "tasks": self._total, "seconds": round(seconds, 4)})
            return
        bar = "#" * self.width
        end = f" {note}" if note else ""
        prefix = "\r" if self._tty else ""
        self.stream.write(f"{prefix}{self._label:<24} [{bar}] {self._total}/{self._total}{rows} "
                          f"in {seconds:.2f}s{end}\n")
        self.stream.flush()

    def cluster(self, scheduler: str, dashboard: str | None, started: bool) -> None:
        """Say which Dask cluster the job runs on and where its dashboard is."""
        if not self.enabled:
            return
        if self.log_format == "json":
            self._emit({"event": "cluster", "scheduler": scheduler, "dashboard": dashboard, "started": started})
            return
        what = "started a local Dask cluster" if started else "connected to the Dask scheduler"
        where = f"; dashboard {dashboard}" if dashboard else ""
        self.stream.write(f"dasktree: {what} at {scheduler}{where}\n")
        self.stream.flush()

    def note(self, event: str, message: str, *, at_next_pass: bool = False, **fields) -> None:
        """One line between the bars, ``dasktree: MESSAGE``; a JSON line ``{"event": EVENT, "message":
        MESSAGE, **fields}`` with ``log_format="json"``. ``at_next_pass``: when the next pass starts
        (not at all if none does: an input refused first keeps its one error line)."""
        if at_next_pass:
            self._notes.append((event, message, fields))
            return
        if not self.enabled:
            return
        if self.log_format == "json":
            self._emit({"event": event, "message": message, **fields})
            return
        self.stream.write(f"dasktree: {message}\n")
        self.stream.flush()

    def _emit(self, record: dict) -> None:
        self.stream.write(json.dumps(record, default=str) + "\n")
        self.stream.flush()

    def _draw(self) -> None:
        if not (self.enabled and self._tty):
            return
        filled = int(self.width * self._done / self._total) if self._total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        eta = ""
        if 0 < self._done < self._total:
            elapsed = time.perf_counter() - self._started
            eta = f", ETA {elapsed / self._done * (self._total - self._done):.0f}s"
        self.stream.write(f"\r{self._label:<24} [{bar}] {self._done}/{self._total}{self._rows()}{eta}   ")
        self.stream.flush()


def gather_with_progress(client, futures: list, progress, label: str) -> list:
    """Results of ``futures``, advancing ``progress`` (if any) as each finishes. Every wait is
    bounded (:func:`~dasktree.engine.waits.wait_futures`, :func:`~dasktree.engine.waits.gathered`):
    a cluster lost, or whose workers all stop answering, ends it with a
    :class:`~dasktree.errors.TransientError`."""
    from .waits import Watch, gathered, wait_futures

    if progress is not None:
        progress.start(label, len(futures))
    watch = Watch(client)
    wait_futures(client, futures, None if progress is None else progress.advance, watch)
    results = gathered(client, futures, watch)
    if progress is not None:
        progress.finish()
    return results
