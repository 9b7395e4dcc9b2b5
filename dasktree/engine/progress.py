"""A progress bar per pass over the data on stderr, silent when disabled or not wanted.

Each bar is one pass (numbered from 0, pass 0 the summary); it fills as the
parts (or the workers' groups of parts) of the pass finish, names the rows a
pass reads and the level it grows (``level 3/8`` with ``max_depth=8``), and
estimates the pass's remaining time from its finished share.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``start(label, total)`` per pass, ``advance()`` per finished piece of it, ``finish(note)``.

    ``describe(rows=, max_depth=)`` tells it the rows of the data and the
    deepest level, once pass 0 has counted them.
    """

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, width: int = 30):
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._label = ""
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.passes = 0
        self.rows: int | None = None
        self.max_depth: int | None = None

    def describe(self, *, rows: int | None = None, max_depth: int | None = None) -> None:
        """The rows every pass reads and the deepest level (None: unknown / no limit)."""
        self.rows, self.max_depth = rows, max_depth

    def _title(self, label: str) -> str:
        if label.startswith("pass "):
            return label
        if label.startswith("level ") and self.max_depth is not None:
            head, _, rest = label[6:].partition(" ")
            label = f"level {head}/{self.max_depth}" + (f" {rest}" if rest else "")
        return f"pass {self.passes - 1}: {label}"

    def _rows(self) -> str:
        return f", {self.rows:,} rows" if self.rows is not None and self.rows >= 0 else ""

    def start(self, label: str, total: int) -> None:
        self.passes += 1
        self._label, self._total, self._done = self._title(label), max(total, 0), 0
        self._started = time.perf_counter()
        self._draw()

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._tty:
            self._draw()

    def finish(self, note: str = "") -> None:
        if not self.enabled:
            return
        seconds = time.perf_counter() - self._started
        bar = "#" * self.width
        end = f" {note}" if note else ""
        prefix = "\r" if self._tty else ""
        self.stream.write(f"{prefix}{self._label:<24} [{bar}] {self._total}/{self._total}{self._rows()} "
                          f"in {seconds:.2f}s{end}\n")
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
    """Results of ``futures``, advancing ``progress`` (if any) as each finishes."""
    if progress is not None:
        from distributed import as_completed

        progress.start(label, len(futures))
        for _ in as_completed(futures):
            progress.advance()
    results = client.gather(futures)
    if progress is not None:
        progress.finish()
    return results
