"""Cut points applied: values to interval codes or labels, for tables, frames and Parquet parts.

Plain functions of the cut points, used by :class:`~dasktree.discretize.Discretizer`
(its ``transform`` and ``transform_dataset``) and on the workers.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..errors import DataError
from ..io.schema import numeric_values
from ..io.sources import Part, Source

__all__ = ["interval_labels", "transform_table", "transform_frame"]

def _number(t: float) -> str:
    if math.isinf(t):
        return "inf" if t > 0 else "-inf"
    text = repr(float(t))
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def interval_labels(cut_points: Sequence[float]) -> list[str]:
    """Names of the ``len(cut_points) + 1`` intervals: ``(a, b]``, the last ``(a, inf)``.

    Each number is the cut point exactly, written as the shortest decimal that reads back as the
    same float (Python's ``repr``): cut 191306.71 names ``(191306.71, inf)``, and 191306.9 falls in
    it; ``0.1 + 0.2`` shows as ``0.30000000000000004``.
    """
    bounds = [-math.inf, *(float(x) for x in cut_points), math.inf]
    labels = [f"({_number(lo)}, {_number(hi)}]" for lo, hi in zip(bounds[:-2], bounds[1:-1])]
    labels.append(f"({_number(bounds[-2])}, inf)")
    return labels


def _codes(x: np.ndarray, cut_points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, missing mask): interval ``i`` holds ``t[i-1] < x <= t[i]``."""
    missing = np.isnan(x)
    codes = np.searchsorted(cut_points, x, side="left").astype(np.int32)
    codes[missing] = 0
    return codes, missing


def _column(column, name: str, cut_points: list[float], labels: bool) -> pa.Array:
    x = numeric_values(column, name)
    codes, missing = _codes(x, np.asarray(cut_points, dtype=np.float64))
    if labels:
        names = np.asarray(interval_labels(cut_points), dtype=object)[codes]
        names[missing] = None
        return pa.array(names, type=pa.string())
    return pa.array(codes, type=pa.int32(), mask=missing)


def check_columns(present: Sequence[str], cut_points: dict, where: str) -> None:
    absent = [name for name in cut_points if name not in set(present)]
    if absent:
        raise DataError(f"column {absent[0]!r} that the discretizer was fitted on is missing from {where}")


def transform_table(table: pa.Table, cut_points: dict[str, list[float]], *, labels: bool = False,
                    where: str = "the data") -> pa.Table:
    """``table`` with each column of ``cut_points`` replaced by its interval codes (int32) or labels."""
    check_columns(table.column_names, cut_points, where)
    arrays = [
        _column(table.column(name), name, cut_points[name], labels) if name in cut_points else table.column(name)
        for name in table.column_names
    ]
    return pa.table(arrays, names=table.column_names)


def transform_frame(frame, cut_points: dict[str, list[float]], *, labels: bool = False,
                    where: str = "the DataFrame"):
    """A pandas DataFrame with each column of ``cut_points`` replaced by codes (``Int32``) or labels.

    Other columns are the input's own objects, untouched.
    """
    import pandas as pd

    names = [str(c) for c in frame.columns]
    check_columns(names, cut_points, where)
    out = frame.copy(deep=False)
    for position, name in enumerate(names):
        if name not in cut_points:
            continue
        series = frame.iloc[:, position]
        try:
            column = pa.array(series, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(f"column {name!r} cannot be read as numbers: {exc}") from None
        array = _column(column, name, cut_points[name], labels)
        if labels:
            values = array.to_pandas().array  # positional: no index to align on
        else:
            codes = array.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int32)
            values = pd.arrays.IntegerArray(codes, array.is_null().to_numpy(zero_copy_only=False))
        out.isetitem(position, pd.Series(values, index=frame.index, name=series.name))
    return out


# ---------------------------------------------------------------- datasets
def transform_part(part: Part, *, source: Source, cut_points: dict, labels: bool, directory: str, fs) -> str:
    import pyarrow.parquet as pq

    table = source.read(part, source.schema.names)
    out = transform_table(table, cut_points, labels=labels, where=part.key)
    path = f"{directory}/part-{part.index:05d}.parquet"
    with fs.open(path, "wb") as f:
        pq.write_table(out, f, write_page_checksum=True)  # readers can tell a damaged page
    return path
