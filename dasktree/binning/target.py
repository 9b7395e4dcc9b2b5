"""A regression target in fixed point: the exact, order-free statistics of a node.

Floating-point sums depend on the order of addition, so a tree grown from them
changes with the partitioning. Here pass 0 finds the target's range
``[lo, hi]``; every row's target becomes the integer
``q = round((y - lo) / step)`` with ``step = (hi - lo) / 2**BITS``, and a
node's statistics are integer sums of ``w`` and ``w * q`` (``w`` the row's
multiplicity, :mod:`dasktree.io.weights`): the same in any order. A value keeps
``BITS`` = 30 bits of the range (its error is at most ``step / 2``, about
``5e-10`` of the range). The sums fit int64 while the rows weigh less than
``2**33`` in all (:data:`MAX_TOTAL`); a sum of squares is kept in three 15-bit
pieces (:func:`square_pieces`), each as wide as ``q``.

A constant target has ``step`` 1 (every ``q`` is 0): the tree is one leaf. A
target with a NaN or an infinity, or a range too wide for float64
(``hi - lo`` overflows), is refused with one line (:class:`~dasktree.errors.DataError`);
a null target skips its row, as in classification.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ["BITS", "MAX_TOTAL", "TargetScale", "TargetRange", "target_range", "square_pieces"]

BITS = 30
SCALE = 1 << BITS
MAX_TOTAL = 1 << 33
"""Rows (weighted: the sum of the multiplicities) past which the int64 sums of ``w * q`` could overflow."""
HALF = 15  # square_pieces: q = h * 2**HALF + l


@dataclass(frozen=True)
class TargetRange:
    """Pass 0's statistics of the target over some rows: its least and greatest finite value."""

    lo: float = float("inf")
    hi: float = float("-inf")

    def merge(self, other: "TargetRange") -> "TargetRange":
        return TargetRange(min(self.lo, other.lo), max(self.hi, other.hi))


def _numbers(column, name: str, where: str) -> np.ndarray:
    """The target's non-null values as float64; a column that is not numeric is refused."""
    import pyarrow as pa  # here: a model file's target scale is read without pyarrow (`dasktree show`)
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
            or pa.types.is_boolean(column.type) or pa.types.is_decimal(column.type)):
        raise DataError(f"target {name!r}{where} is {column.type}, not numeric: a regression target is a number "
                        "(labels are classified: DaskTreeClassifier, dasktree fit --task classification)")
    values = column.drop_null()
    return np.asarray(pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def target_range(column, name: str, where: str = "") -> TargetRange:
    """The range of a part's target; a NaN or an infinity is refused (one line naming the column)."""
    where = f" in {where}" if where else ""
    values = _numbers(column, name, where)
    if values.size == 0:
        return TargetRange()
    if not np.isfinite(values).all():
        bad = values[~np.isfinite(values)][0]
        raise DataError(f"target {name!r} has a non-finite value ({bad}){where}: a regression target must be a "
                        "finite number (null skips the row)")
    return TargetRange(float(values.min()), float(values.max()))


@dataclass(frozen=True)
class TargetScale:
    """How targets become fixed-point integers: ``q = round((y - lo) / step)``, ``0 <= q <= 2**BITS``."""

    lo: float
    step: float

    @classmethod
    def of(cls, seen: TargetRange, name: str) -> "TargetScale":
        if seen.lo > seen.hi:
            raise DataError(f"target {name!r} has no value to learn from")
        width = seen.hi - seen.lo
        if not np.isfinite(width):
            raise DataError(f"target {name!r} spans [{seen.lo}, {seen.hi}], too wide a range for float64: "
                            "rescale it (e.g. divide by 1e100)")
        return cls(seen.lo, width / SCALE if width > 0 else 1.0)

    def encode(self, column, name: str = "target") -> np.ndarray:
        """Each row's ``q`` (int32), -1 for a null target; values outside the range are clipped to it
        (new data at prediction time; training rows are always inside)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        valid = np.ones(len(column), dtype=bool) if column.null_count == 0 else \
            np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        values = np.asarray(pc.cast(column.fill_null(0), pa.float64()).to_numpy(zero_copy_only=False), np.float64)
        if not np.isfinite(values[valid]).all():
            raise DataError(f"target {name!r} has a non-finite value: a regression target must be a finite number")
        q = np.rint(np.clip((values - self.lo) / self.step, 0, SCALE)).astype(np.int32)
        q[~valid] = -1
        return q

    def value(self, q_mean):
        """The target value of a mean ``q`` (a float or an array of them)."""
        return self.lo + np.asarray(q_mean, dtype=np.float64) * self.step

    def to_json(self) -> dict:
        return {"lo": self.lo, "step": self.step, "bits": BITS}

    @classmethod
    def from_json(cls, d: dict) -> "TargetScale":
        if int(d.get("bits", BITS)) != BITS:
            raise ValueError(f"target in {d.get('bits')}-bit fixed point; this dasktree keeps {BITS}")
        return cls(float(d["lo"]), float(d["step"]))


def square_pieces(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q**2 = hh * 2**(2 HALF) + hl * 2**(HALF + 1) + ll`` with each piece below ``2**BITS``: int64 sums
    of them over rows stay exact where a sum of ``q**2`` (up to ``2**60`` a row) would overflow."""
    q = np.asarray(q, dtype=np.int64)
    h, l = q >> HALF, q & ((1 << HALF) - 1)
    return h * h, h * l, l * l


def square_sum(hh: int, hl: int, ll: int) -> int:
    """The exact sum of squares (a Python int) from the sums of :func:`square_pieces`."""
    return (int(hh) << (2 * HALF)) + (int(hl) << (HALF + 1)) + int(ll)
