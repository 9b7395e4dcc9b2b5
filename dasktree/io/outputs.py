"""Dataset outputs that appear whole or not at all.

:func:`atomic_directory` checks ``out`` (it must not exist unless
``overwrite``; its parent must), yields a hidden temporary directory beside
it to write into, and renames that to ``out`` only when the block ends
without error; on any error the temporary directory is removed. Prediction
and discretization write their Parquet files through it. :func:`atomic_file`
does the same for one file (a model, a checkpoint's pass).

A write that fails for the disk (full, over quota, read-only, a file too
large: :func:`write_failure`) is an :class:`~dasktree.errors.InputError` naming
the output, one line, exit 1; nothing of the output is left, and an output it
was to replace is untouched.
"""

from __future__ import annotations

import errno
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import DataError, InputError, TransientError

__all__ = ["check_out", "check_file_out", "atomic_directory", "atomic_file", "atomic_write_text", "read_json_file",
           "read_json_text",
           "write_failure", "expire", "expired"]

_EXPIRED: list[str] = []  # the message of a run's deadline once it expired (set by the command's --timeout)


def expire(message: str | None) -> None:
    """Say the run's deadline expired (``message``: what the error line says), or clear it (None).
    From then on no output is committed: each atomic write raises :class:`TransientError` instead of
    renaming its temporary file, even where the interrupt the deadline raised was swallowed by a
    library (an optional import guarded by ``except Exception``, say)."""
    _EXPIRED[:] = [] if message is None else [message]


def expired() -> str | None:
    """The expired deadline's message, or None."""
    return _EXPIRED[0] if _EXPIRED else None


def _check_deadline() -> None:
    if _EXPIRED:
        raise TransientError(_EXPIRED[0])


DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)
"""A write's errors that are the disk's: full, over quota, a file too large, read-only, failing."""


def write_failure(exc: BaseException) -> str | None:
    """Why a write failed, if for the disk (:data:`DISK_ERRNOS`; pyarrow's errors carry the errno
    too, a worker's come back as they were raised there); else None."""
    if not isinstance(exc, OSError):
        return None
    code = exc.errno if exc.errno in DISK_ERRNOS else next(
        (c for c in DISK_ERRNOS if f"[errno {c}]" in str(exc).lower()), None)
    return None if code is None else os.strerror(code)


def check_out(out, *, overwrite: bool, storage_options: dict | None = None) -> tuple[Any, str, str]:
    """(filesystem, path, parent) of an output directory that may be written: ``out`` must not
    exist unless ``overwrite``, and its parent must exist."""
    import fsspec

    fs, out_path = fsspec.core.url_to_fs(os.fspath(out), **(storage_options or {}))
    out_path = out_path.rstrip("/")
    local = _is_local(fs)
    parent = out_path.rsplit("/", 1)[0] if "/" in out_path else "."
    if local:
        _check_local_parent(str(out), parent or "/")
    elif parent and not fs.exists(parent):
        raise InputError(f"{out}: parent directory {parent} does not exist")
    if fs.exists(out_path):
        if not overwrite:
            raise InputError(f"{out}: already exists (pass overwrite / --overwrite to replace it)")
        if local and not os.path.isdir(out_path):
            raise InputError(f"{out}: is a file, not an output directory")
    return fs, out_path, parent


def check_file_out(path, *, overwrite: bool) -> str:
    """The absolute local path of an output FILE that may be written (a model): not a directory,
    not existing unless ``overwrite``, in a directory that exists and takes a new file. Checked
    before any work, so a fit never ends in an output it cannot write."""
    given = os.fspath(path)
    path = os.path.abspath(given)
    if os.path.isdir(path) or given.endswith(("/", os.sep)):
        raise InputError(f"{path}: is a directory; --out names the model file to write")
    _check_local_parent(path, os.path.dirname(path))
    if os.path.lexists(path) and not overwrite:
        raise InputError(f"{path}: already exists (pass overwrite / --overwrite to replace it)")
    return path


def _is_local(fs) -> bool:
    return "file" in (fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,))


def _check_local_parent(out: str, parent: str) -> None:
    """``parent`` must be an existing directory in which a new file can be made (tried: permissions
    alone say nothing of read-only mounts, or of root)."""
    if not os.path.exists(parent):
        below = next((p for p in _ancestors(parent) if os.path.exists(p)), None)
        if below is not None and not os.path.isdir(below):
            raise InputError(f"{out}: {below} is a file, not a directory")
        raise InputError(f"{out}: parent directory {parent} does not exist")
    if not os.path.isdir(parent):
        raise InputError(f"{out}: {parent} is a file, not a directory")
    probe = os.path.join(parent, f".dasktree-probe-{_token()}")
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{out}: cannot write in {parent}: {exc.strerror or exc}") from None


def _ancestors(path: str):
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return
        yield parent
        path = parent


@dataclass(frozen=True)
class Staging:
    fs: Any
    tmp: str  # write here
    out: str  # where it will be

    def final(self, path: str) -> str:
        """Where a file written at ``path`` under ``tmp`` ends up."""
        return path.replace(self.tmp, self.out, 1)


def _remove(fs, path: str) -> None:
    try:
        if _is_local(fs):
            import shutil

            shutil.rmtree(path, ignore_errors=True)
        else:
            fs.rm(path, recursive=True)
    except FileNotFoundError:
        pass


@contextmanager
def atomic_directory(out, *, overwrite: bool = False, storage_options: dict | None = None) -> Iterator[Staging]:
    """Write into the yielded ``Staging.tmp``; it becomes ``out`` when the block succeeds."""
    fs, out_path, parent = check_out(out, overwrite=overwrite, storage_options=storage_options)
    tmp = f"{parent}/.{out_path.rsplit('/', 1)[-1]}.tmp-{_token()}"
    try:
        fs.makedirs(tmp, exist_ok=True)
        yield Staging(fs, tmp, out_path)
        _check_deadline()
        if fs.exists(out_path):
            _remove(fs, out_path)
        fs.mv(tmp, out_path, recursive=True)
    except BaseException as exc:
        _remove(fs, tmp)
        reason = write_failure(exc)
        if reason is None:
            raise
        raise InputError(f"{out}: cannot write: {reason}") from None


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`atomic_file`)."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: directory {directory} does not exist")
    with atomic_file(path, "w") as f:
        f.write(text)


@contextmanager
def atomic_file(path: str, mode: str = "wb") -> Iterator:
    """A file open at a hidden temporary name beside ``path``; when the block succeeds it is flushed
    to disk and renamed over ``path``, else removed. It gets the permissions ``open`` would give it
    (0666 less the umask), not ``mkstemp``'s 0600."""
    directory, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{name}.tmp-{_token()}")
    try:
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the umask applies, as to open()
        except OSError as exc:  # a name too long, a directory that went away or does not take files
            raise InputError(f"{path}: cannot be written: {exc.strerror or exc}") from None
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _check_deadline()
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        reason = write_failure(exc)
        if reason is None:
            raise
        raise InputError(f"{path}: cannot write: {reason}") from None


def _token() -> str:
    """8 random hex digits: a temporary name's own (as ``uuid4().hex[:8]``, without importing uuid)."""
    return os.urandom(4).hex()


class _NotFinite(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise _NotFinite(text)
    return value


def _no_constant(text: str):
    raise _NotFinite(text)


def read_json_file(path: str | os.PathLike, what: str):
    """The JSON in ``path``; a missing or unreadable file is a one-line dasktree error naming ``what``.
    dasktree writes no NaN or infinity (nor a number too large for a float): such a file is damaged."""
    path = os.fspath(path)
    try:
        with open(path) as f:
            return json.load(f, parse_float=_finite, parse_constant=_no_constant)
    except _NotFinite as exc:
        raise DataError(f"{path}: not a {what} file as dasktree writes it: the number {exc} is not finite") from None
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what} file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a JSON {what} file: {exc}") from None
    except RecursionError:
        raise DataError(f"{path}: not a {what} file: its JSON is nested too deeply") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a {what} file") from None
    except OSError as exc:  # a name too long, no permission
        raise InputError(f"{path}: cannot read the {what} file: {exc.strerror or exc}") from None


def read_json_text(text: str, where: str):
    """The JSON in ``text`` (a part of a file kept as JSON text, ``where`` naming it), read as
    :func:`read_json_file` reads a file: anything but JSON with finite numbers is a one-line :class:`DataError`."""
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except _NotFinite as exc:
        raise DataError(f"{where}: the number {exc} is not finite") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: not JSON: {exc}") from None
    except RecursionError:
        raise DataError(f"{where}: its JSON is nested too deeply") from None
