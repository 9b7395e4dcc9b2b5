"""Reads from a store that fails for a while: retried with backoff, then a transient error naming the file.

An object store answers throttling (503 ``SlowDown``), 5xx errors or timeouts
under load, and recovers. The S3 client retries a few times itself (botocore:
five attempts within a second or two); a read of a dataset file
(:meth:`dasktree.io.sources.ParquetSource.read`, its footer at opening) is
retried here on top, with exponential backoff (from :data:`FIRST_PAUSE`, doubling up
to :data:`MAX_PAUSE`), for up to :data:`RETRY_SECONDS`
(``DASKTREE_STORAGE_RETRY_SECONDS``). A store still failing then ends the run
with :class:`~dasktree.errors.TransientError` naming the file (exit 75). What a
retry cannot fix (a file not found, a permission, a corrupt page) is not retried.
"""

from __future__ import annotations

import errno
import os
import time
from typing import Callable, TypeVar

from ..errors import TransientError

__all__ = ["RETRY_SECONDS", "is_transient", "retrying"]

T = TypeVar("T")

RETRY_SECONDS = float(os.environ.get("DASKTREE_STORAGE_RETRY_SECONDS", 60))
"""How long a file's read is retried while its store fails transiently."""
FIRST_PAUSE, MAX_PAUSE = 0.25, 8.0

TRANSIENT_ERRNOS = {errno.EBUSY, errno.EREMOTEIO, errno.ETIMEDOUT, errno.EAGAIN, errno.ECONNRESET,
                    errno.ECONNREFUSED, errno.ECONNABORTED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EPIPE}
"""What s3fs makes of throttling and 5xx (``SlowDown``/``ServiceUnavailable``: EBUSY,
``InternalError``: EREMOTEIO) and what a dropped connection raises."""


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) is a store failing for now: throttling, a
    5xx answer, a timeout, a lost connection."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
            return False
        if isinstance(exc, OSError) and exc.errno in TRANSIENT_ERRNOS:
            return True
        if isinstance(exc, (TimeoutError, ConnectionError)):
            return True
        status = (getattr(exc, "response", None) or {}).get("ResponseMetadata", {}).get("HTTPStatusCode") \
            if isinstance(getattr(exc, "response", None), dict) else None
        if status is not None and (status >= 500 or status == 429):
            return True
        name = type(exc).__name__  # botocore's and aiohttp's connection errors, not imported here
        if type(exc).__module__.split(".")[0] in ("botocore", "aiohttp", "urllib3") and \
                any(word in name for word in ("Connect", "Timeout", "ConnectionClosed", "ServerDisconnected")):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def retrying(call: Callable[[], T], path: str, seconds: float | None = None) -> T:
    """``call()``, retried with backoff while it fails transiently (:func:`is_transient`) for up to
    ``seconds`` (default :data:`RETRY_SECONDS`); then a :class:`~dasktree.errors.TransientError`
    naming ``path``."""
    seconds = RETRY_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + seconds
    pause = FIRST_PAUSE
    while True:
        try:
            return call()
        except Exception as exc:
            if not is_transient(exc):
                raise
            if time.monotonic() + pause > deadline:
                raise TransientError(f"{path}: the store kept failing for {seconds:g} s "
                                     f"({type(exc).__name__}: {_first_line(exc)}); a retry may succeed") from None
            time.sleep(pause)
            pause = min(MAX_PAUSE, 2 * pause)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else ""
