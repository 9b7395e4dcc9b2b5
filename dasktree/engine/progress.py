"""A progress bar per pass on stderr, silent when disabled or not wanted."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``start(label, total)``, ``advance()`` per finished task, ``finish(note)``."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, width: int = 30):
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._label = ""
        self._total = 0
        self._done = 0
        self._started = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def start(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, max(total, 0), 0
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
        self.stream.write(f"{prefix}{self._label:<18} [{bar}] {self._total}/{self._total} tasks "
                          f"{seconds:6.2f}s{end}\n")
        self.stream.flush()

    def _draw(self) -> None:
        if not (self.enabled and self._tty):
            return
        filled = int(self.width * self._done / self._total) if self._total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self._label:<18} [{bar}] {self._done}/{self._total} tasks")
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
