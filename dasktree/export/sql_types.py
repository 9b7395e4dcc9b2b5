"""Literals for the SQL export in the columns' own types: dates and timestamps.

dasktree reads a date as days (``date32``) or milliseconds (``date64``) since the epoch and a
timestamp as its count of units since the epoch (UTC), then compares them as doubles with the
thresholds (:func:`dasktree.io.schema.numeric_values`). Those counts are integers, so for a
threshold ``t`` there is a largest count ``B(t)`` whose double is ``<= t`` (:func:`count_bound`:
``floor(t)`` below 2**53; above, where doubles are sparser than integers, the last integer that
rounds to ``t`` or below, as nanosecond timestamps do), and ``x <= t`` exactly when
``x <= B(t)``, ``x > t`` exactly when ``x > B(t)``: the SQL compares the column with the ``DATE``
/ ``TIMESTAMP`` literal of ``B(t)`` (for ``date64``, ``floor(B(t) / 86400000)`` days) and sends
every row where dasktree does. Given no types, every numeric column is compared as a number.
"""

from __future__ import annotations

import math
import os
from typing import Callable, Mapping

import numpy as np
import pyarrow as pa

from ..errors import InputError

__all__ = ["literal_writer", "schema_of"]

DAY_MS = 86_400_000
_UNITS = {"s": 1_000_000, "ms": 1_000, "us": 1}  # microseconds per unit


def schema_of(path: str | os.PathLike) -> pa.Schema:
    """The Arrow schema of a Parquet file or dataset (directory, glob-free path)."""
    import pyarrow.dataset as ds

    try:
        return ds.dataset(os.fspath(path), format="parquet").schema
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"{path}: cannot read a Parquet schema: {exc}") from None


def literal_writer(name: str, type_: pa.DataType | None, dialect: str,
                   number: Callable[[float], str]) -> Callable[[float], str]:
    """How a threshold on column ``name`` of Arrow type ``type_`` is written in ``dialect``:
    ``number`` (a double literal) unless the column is a date or a timestamp."""
    if type_ is None or not (pa.types.is_date(type_) or pa.types.is_timestamp(type_) or pa.types.is_duration(type_)):
        return number
    if dialect == "sqlite":
        raise InputError(f"column {name!r} is {type_}, and SQLite has no date or timestamp type: store it as "
                         "the count dasktree reads (days, or the unit since the epoch) and export without types")
    if pa.types.is_duration(type_):
        raise InputError(f"column {name!r} is {type_}: the SQL export compares durations only as numbers "
                         "(their count of units); export without types")
    if pa.types.is_date(type_):
        per_day = DAY_MS if pa.types.is_date64(type_) else 1
        return lambda t: _date(name, count_bound(t) // per_day)
    unit, tz = type_.unit, type_.tz
    return lambda t: _timestamp(name, count_bound(t), unit, tz is not None, dialect)


def count_bound(t: float) -> int:
    """The largest integer ``x`` with ``float(x) <= t`` (``t`` finite): the count a temporal
    threshold stands for once dasktree has read the counts as doubles."""
    if abs(t) < 2**53:
        return math.floor(t)
    base = int(t)  # an integer: doubles this large have no fraction
    mid = base + int(math.nextafter(t, math.inf) - t) // 2  # rounds to t or above (ties to even)
    return mid if float(mid) <= t else mid - 1


def _date(name: str, days: int) -> str:
    try:
        text = str(np.datetime64(days, "D"))
    except OverflowError:
        text = ""
    if not _plain_year(text):
        raise InputError(f"column {name!r}: a threshold of {days} days since 1970 is no date SQL can write")
    return f"DATE '{text}'"


def _timestamp(name: str, count: int, unit: str, zoned: bool, dialect: str) -> str:
    if unit == "ns" and count % 1000:
        if dialect != "duckdb" or zoned:
            raise InputError(f"column {name!r}: the threshold {count} ns since 1970 needs nanoseconds, which "
                             "only DuckDB's TIMESTAMP_NS holds: export with --dialect duckdb")
        text = str(np.datetime64(count, "ns")).replace("T", " ")
        return f"TIMESTAMP_NS '{text}'"
    micros = count // 1000 if unit == "ns" else count * _UNITS[unit]
    try:
        text = str(np.datetime64(micros, "us")).replace("T", " ")
    except OverflowError:
        text = ""
    if not _plain_year(text):
        raise InputError(f"column {name!r}: a threshold of {count} {unit} since 1970 is no timestamp SQL can write")
    if zoned:
        return f"TIMESTAMP WITH TIME ZONE '{text}+00:00'"
    return f"TIMESTAMP '{text}'"


def _plain_year(text: str) -> bool:
    """A literal SQL reads: years 0001 to 9999 (numpy writes others with a sign or more digits)."""
    return len(text) >= 10 and text[4] == "-" and text[:4].isdigit() and text[:4] != "0000"


def column_types(types: pa.Schema | Mapping[str, pa.DataType] | None) -> dict[str, pa.DataType]:
    if types is None:
        return {}
    if isinstance(types, pa.Schema):
        return {f.name: f.type for f in types}
    return dict(types)
