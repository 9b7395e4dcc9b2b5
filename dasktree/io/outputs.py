"""Dataset outputs that appear whole or not at all.

:func:`atomic_directory` checks ``out`` (it must not exist unless
``overwrite``; its parent must), yields a hidden temporary directory beside
it to write into, and renames that to ``out`` only when the block ends
without error; on any error the temporary directory is removed. Prediction
and discretization write their Parquet files through it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import DataError, InputError

__all__ = ["check_out", "atomic_directory", "atomic_write_text", "read_json_file"]


def check_out(out, *, overwrite: bool, storage_options: dict | None = None) -> tuple[Any, str, str]:
    """(filesystem, path, parent) of an output directory that may be written: ``out`` must not
    exist unless ``overwrite``, and its parent must exist."""
    import fsspec

    fs, out_path = fsspec.core.url_to_fs(os.fspath(out), **(storage_options or {}))
    out_path = out_path.rstrip("/")
    if fs.exists(out_path) and not overwrite:
        raise InputError(f"{out}: already exists (pass overwrite / --overwrite to replace it)")
    parent = out_path.rsplit("/", 1)[0] if "/" in out_path else "."
    if parent and not fs.exists(parent):
        raise InputError(f"{out}: parent directory {parent} does not exist")
    return fs, out_path, parent


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
        if "file" in (fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)):
            shutil.rmtree(path, ignore_errors=True)
        else:
            fs.rm(path, recursive=True)
    except FileNotFoundError:
        pass


@contextmanager
def atomic_directory(out, *, overwrite: bool = False, storage_options: dict | None = None) -> Iterator[Staging]:
    """Write into the yielded ``Staging.tmp``; it becomes ``out`` when the block succeeds."""
    fs, out_path, parent = check_out(out, overwrite=overwrite, storage_options=storage_options)
    tmp = f"{parent}/.{out_path.rsplit('/', 1)[-1]}.tmp-{uuid.uuid4().hex[:8]}"
    fs.makedirs(tmp, exist_ok=True)
    try:
        yield Staging(fs, tmp, out_path)
        if fs.exists(out_path):
            _remove(fs, out_path)
        fs.mv(tmp, out_path, recursive=True)
    except BaseException:
        _remove(fs, tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_json_file(path: str | os.PathLike, what: str):
    """The JSON in ``path``; a missing or unreadable file is a one-line dasktree error naming ``what``."""
    path = os.fspath(path)
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what} file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a JSON {what} file: {exc}") from None
