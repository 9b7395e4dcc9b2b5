"""Cross-validation folds that follow the rows.

A row's fold in repetition ``j`` is a hash of the row and of ``(seed, j)`` taken modulo
``k``: ``mix64(h ^ salt_j) % k`` with ``salt_j = mix64(seed * 0x9E3779B97F4A7C15 + j + 1)``.
``h`` is the row's *content hash* (:func:`dasktree.io.row_hash.row_hash`) over every column
the fit uses (the features, the target and the weight column, if any, by name; not the
columns it leaves out), or over the ``key`` column the user names. So a row's folds are the
same whatever holds it: one Parquet file or many, any row groups, a pandas or dask
DataFrame, numpy ``X, y``; any partitioning, order of rows or of columns, number of
workers. Identical rows share their folds: a duplicate is never on both sides of a fold.
With ``folds=COLUMN`` the user gives the folds (integers ``0 .. k-1``, one repetition).

The hash is splitmix64's finaliser over uint64: fast, vectorised, and the same on every
machine. Folds are therefore about, not exactly, equal in size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import DataError, ParameterError
from ..kernels.jit import jit, numba
from .row_hash import MISSING, column_images, combine, mix64, row_hash

__all__ = ["FoldSpec", "mix64", "fold_salts", "folds_of_hashes", "fold_warnings"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


if numba is not None:
    from .row_hash import _finalise

    _mix = jit(inline="always")(_finalise)

    @jit
    def _hash_parts(hashes, salts, k, out):
        for i in range(hashes.size):
            h = hashes[i]
            for j in range(salts.size):
                out[j, i] = _mix(h ^ salts[j]) % k


def fold_salts(seed: int, repeats: int) -> np.ndarray:
    """The salt of each repetition: ``mix64(seed * golden + j + 1)``, uint64 (repeats,)."""
    with np.errstate(over="ignore"):
        return mix64(np.uint64(seed) * _GOLDEN + np.arange(1, repeats + 1, dtype=np.uint64))


def folds_of_hashes(hashes: np.ndarray, k: int, seed: int, repeats: int) -> np.ndarray:
    """Fold of each row hash in each repetition: (repeats, n_rows) int16, ``mix64(h ^ salt_j) % k``."""
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    salts = fold_salts(seed, repeats)
    out = np.empty((repeats, hashes.size), dtype=np.int16)
    if numba is not None:
        _hash_parts(hashes, salts, np.uint64(k), out)
        return out
    for j in range(repeats):  # pragma: no cover
        out[j] = (mix64(hashes ^ salts[j]) % np.uint64(k)).astype(np.int16)
    return out


@dataclass(frozen=True)
class FoldSpec:
    """``k`` folds, ``repeats`` repetitions, from ``seed``; or the user's ``column``.

    ``key`` names a column whose values are hashed instead of the rows' content.
    ``content`` names the columns a row's hash covers (:meth:`hashing`: the fit's); None:
    every column of the table read, but the key and folds columns.
    """

    k: int
    repeats: int = 1
    seed: int = 0
    key: str | None = None
    column: str | None = None
    content: tuple[str, ...] | None = None

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 2:
            raise ParameterError(f"cv must be an integer >= 2, got {self.k!r}")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, (int, np.integer)) or self.repeats < 1:
            raise ParameterError(f"repeats must be an integer >= 1, got {self.repeats!r}")
        if self.k * self.repeats > 32767:
            raise ParameterError(f"cv x repeats must be at most 32767, got {self.k * self.repeats}")
        if self.column is not None and self.repeats != 1:
            raise ParameterError("folds=COLUMN gives one repetition; repeats must be 1")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ParameterError(f"seed must be an integer >= 0, got {self.seed!r}")

    @property
    def n_parts(self) -> int:
        return self.k * self.repeats

    @property
    def columns(self) -> list[str]:
        """The columns read for the folds beyond the fit's own: the key and the folds column."""
        return [c for c in (self.key, self.column) if c is not None]

    def hashing(self, roles) -> "FoldSpec":
        """This spec hashing the columns ``roles`` fits on: features, target and weight."""
        return dataclasses.replace(self, content=(*roles.features, roles.target,
                                                  *([roles.weight] if roles.weight else [])))

    def row_hashes(self, table: pa.Table, where: str = "the data") -> np.ndarray:
        """One uint64 per row: the hash of its key column, else of its content."""
        if self.key is not None:
            images = column_images(table.column(self.key), self.key)
            if np.any(images == MISSING):
                raise DataError(f"key column {self.key!r} has null values in {where}: every row needs a key")
            return combine([(self.key, images)], table.num_rows)
        content = self.content
        if content is None:
            content = [c for c in table.column_names if c not in self.columns]
        return row_hash(table, content)

    def parts_of(self, table: pa.Table, part) -> np.ndarray:
        """Fold of each row in each repetition: (repeats, n_rows) int16. ``part`` (its ``key``)
        only says where a bad value is."""
        if self.column is not None:
            return self._given(table, part.key)
        return folds_of_hashes(self.row_hashes(table, part.key), self.k, self.seed, self.repeats)

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


def fold_warnings(spec: FoldSpec | None, rows) -> list[str]:
    """One sentence when the content hash gave folds far fewer rows than their share (``rows``: the
    held-out rows of each fold tree, repeat-major): identical rows share a fold, so data of few distinct
    rows fold into few groups, and the CV estimate is of rows unlike any trained on. A fold is short
    when it holds under half its share and more than 5 standard deviations (of a fair hash's) below
    it, or none. Folds by ``key`` or ``folds=COLUMN`` are the user's grouping: not judged."""
    if spec is None or spec.key is not None or spec.column is not None or len(rows) != spec.n_parts:
        return []
    rows = np.asarray(rows, dtype=np.float64).reshape(spec.repeats, spec.k)
    share = rows.sum(axis=1, keepdims=True) / spec.k
    short = (rows == 0) | ((rows < share / 2) & (rows < share - 5 * np.sqrt(share)))
    if not short.any():
        return []
    return [f"cross-validation: {int(short.sum())} of {spec.n_parts} folds hold under half their share of the rows "
            f"(the fewest {int(rows.min())}, of about {int(round(float(share.mean())))}): identical rows share a "
            "fold and these rows have few distinct values, so the CV estimate is of rows unlike those trained on; "
            "give key=COLUMN (CLI --key COLUMN) to fold by a row id"]
