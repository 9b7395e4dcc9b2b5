"""Cross-validation folds that do not move.

A row's fold in repetition ``j`` is a hash of its *row key* and of ``(seed, j)``
taken modulo ``k``. The row key is ``(file path below the dataset root, row
offset in the file)`` for Parquet, ``("table", row index)`` for in-memory data,
or the value of a ``key`` column the user names. So folds do not depend on
how the data is partitioned, on the number of workers, or on the order in
which files are listed. With ``folds=COLUMN`` the user gives the folds
(integers ``0 .. k-1``, one repetition).

The hash is splitmix64's finaliser over uint64: fast, vectorised, and the same
on every machine. Folds are therefore about, not exactly, equal in size.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import DataError, InputError

__all__ = ["FoldSpec", "mix64"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _finalise(x):
    """The splitmix64 finaliser's steps, in place on a uint64 array or on a numba uint64 scalar."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a bijection on uint64 that scatters nearby inputs."""
    with np.errstate(over="ignore"):
        return _finalise(np.asarray(x, dtype=np.uint64).copy())


try:
    import numba
except ImportError:  # pragma: no cover - numba is a dependency; numpy gives the same folds
    numba = None

if numba is not None:
    _mix = numba.njit(cache=True, nogil=True, inline="always")(_finalise)

    @numba.njit(cache=True, nogil=True)
    def _offset_parts(offset, file_mix, salts, k, out):
        row = offset  # uint64 throughout: numba would widen uint64 + int64 to float64
        for i in range(out.shape[1]):
            h = _mix(row ^ file_mix)
            row += np.uint64(1)
            for j in range(salts.size):
                out[j, i] = _mix(h ^ salts[j]) % k


def _string_hash(text: str) -> np.uint64:
    return np.uint64(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little"))


@dataclass(frozen=True)
class FoldSpec:
    """``k`` folds, ``repeats`` repetitions, from ``seed``; or the user's ``column``.

    ``key`` names a column whose values are the row keys (else file and offset).
    """

    k: int
    repeats: int = 1
    seed: int = 0
    key: str | None = None
    column: str | None = None

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 2:
            raise InputError(f"cv must be an integer >= 2, got {self.k!r}")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, (int, np.integer)) or self.repeats < 1:
            raise InputError(f"repeats must be an integer >= 1, got {self.repeats!r}")
        if self.k * self.repeats > 32767:
            raise InputError(f"cv x repeats must be at most 32767, got {self.k * self.repeats}")
        if self.column is not None and self.repeats != 1:
            raise InputError("folds=COLUMN gives one repetition; repeats must be 1")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise InputError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def n_parts(self) -> int:
        return self.k * self.repeats

    @property
    def columns(self) -> list[str]:
        return [c for c in (self.key, self.column) if c is not None]

    def row_hashes(self, table: pa.Table, file_key: str, offset: int) -> np.ndarray:
        """One uint64 per row: the hash of its row key."""
        if self.key is not None:
            import pandas as pd

            values = table.column(self.key).to_pandas()
            if values.isna().any():
                raise DataError(f"key column {self.key!r} has null values in {file_key}: every row needs a key")
            return mix64(pd.util.hash_array(values.to_numpy()).astype(np.uint64))
        rows = np.arange(offset, offset + table.num_rows, dtype=np.uint64)
        with np.errstate(over="ignore"):
            return mix64(rows ^ mix64(np.array([_string_hash(file_key)]))[0])

    def parts_of(self, table: pa.Table, part) -> np.ndarray:
        """Fold of each row in each repetition: (repeats, n_rows) int16."""
        if self.column is not None:
            return self._given(table, part.key)
        out = np.empty((self.repeats, table.num_rows), dtype=np.int16)
        with np.errstate(over="ignore"):
            salts = mix64(np.uint64(self.seed) * _GOLDEN + np.arange(1, self.repeats + 1, dtype=np.uint64))
        if self.key is None and numba is not None:  # the row keys are offsets: hash them in one compiled loop
            file_mix = mix64(np.array([_string_hash(part.key)]))[0]
            _offset_parts(np.uint64(part.offset), file_mix, salts, np.uint64(self.k), out)
            return out
        hashes = self.row_hashes(table, part.key, part.offset)
        for j in range(self.repeats):
            out[j] = (mix64(hashes ^ salts[j]) % np.uint64(self.k)).astype(np.int16)
        return out

    def _given(self, table: pa.Table, where: str) -> np.ndarray:
        column = table.column(self.column)
        if not pa.types.is_integer(column.type):
            raise DataError(f"folds column {self.column!r} must hold integers 0..{self.k - 1}, it is {column.type}")
        values = column.to_numpy(zero_copy_only=False)
        if column.null_count or (values.size and (values.min() < 0 or values.max() >= self.k)):
            raise DataError(
                f"folds column {self.column!r} must hold integers 0..{self.k - 1} (cv={self.k}); "
                f"found {'null' if column.null_count else int(values.min() if values.min() < 0 else values.max())}"
                f" in {where}"
            )
        return values.astype(np.int16)[None, :]
