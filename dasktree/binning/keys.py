"""Feature columns that look like row keys, read off pass 0's summary (no pass of their own).

A row key (an id, a row number) is unique per row: a tree splits on it as readily as on
anything else, and learns the order the rows were written in. A column looks like one when

- it holds whole numbers (an integer column), none missing, and every value is distinct and
  they fill their range: in every cell of the summary's sketch (exact values, or grid cells
  ``[lo, max]``), the count equals the whole numbers in the cell (``floor(max) - ceil(lo) + 1``),
  which is what a dense id gives and what a measurement almost never gives;
- or it is a nominal column (strings) whose every value appears once.

Columns of fewer than :data:`MIN_ROWS` rows are not judged (anything is unique in a few rows).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from .summary import GRID_BITS

__all__ = ["MIN_ROWS", "key_like_columns", "key_warnings", "kept_for_keys"]

MIN_ROWS = 100


def _cell_low(cell: int, grid_bits: int) -> float:
    """The smallest float of a grid cell of the summary (non-negative values only; else -inf)."""
    image = np.array([cell << (64 - grid_bits)], dtype=np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    if not image[0] & sign:
        return -math.inf
    return float((image & ~sign).view(np.float64)[0])


def _dense_distinct_integers(sketch, rows: int, grid_bits: int) -> bool:
    counts = np.asarray(sketch.counts, dtype=np.int64)
    if int(counts.sum()) != rows:
        return False
    if sketch.exact:
        return bool((counts == 1).all())
    for cell, count, largest in zip(sketch.keys.tolist(), counts.tolist(), np.asarray(sketch.maxes).tolist()):
        low = _cell_low(int(cell), grid_bits)
        if not math.isfinite(low) or count != math.floor(largest) - math.ceil(low) + 1:
            return False
    return True


def key_like_columns(summary, roles, schema: pa.Schema) -> list[str]:
    """The features of ``roles`` that look like row keys in ``summary`` (pass 0's), in feature order."""
    rows = int(summary.n_rows - summary.n_zero_weight)
    if rows < MIN_ROWS:
        return []
    out = []
    for j, name in enumerate(roles.features):
        if int(summary.n_missing[j]):
            continue
        sketch, values = summary.numeric[j], summary.nominal[j]
        if sketch is not None:
            kind = schema.field(name).type if name in schema.names else None
            if kind is not None and pa.types.is_integer(kind) and _dense_distinct_integers(sketch, rows, GRID_BITS):
                out.append(name)
        elif values is not None and len(values) == rows and all(c == 1 for c in values.values()):
            out.append(name)
    return out


def kept_for_keys(summary, roles, schema: pa.Schema):
    """``summary`` with only the numeric sketches :func:`key_like_columns` reads (integer columns');
    the others are let go once the bins are made: on continuous columns they are the largest
    thing pass 0 leaves (a few MB a column), and a fit would otherwise hold them through every
    level pass."""
    import dataclasses

    def integral(name: str) -> bool:
        return name in schema.names and pa.types.is_integer(schema.field(name).type)

    return dataclasses.replace(summary, numeric=[
        sketch if sketch is None or integral(name) else None for name, sketch in zip(roles.features, summary.numeric)])


def key_warnings(columns: list[str], tree, features: list[str]) -> list[str]:
    """One sentence per key-like column: what, how many splits of ``tree`` test it, and the fix."""
    used = {name: 0 for name in columns}
    for test in tree.tests:
        if test is not None and features[test.attribute] in used:
            used[features[test.attribute]] += 1
    return [f"column {name!r} looks like a row key (every value distinct, one per row) and is tested by "
            f"{used[name]} splits: leave it out (exclude=[{name!r}], CLI --exclude {name})"
            for name in columns]
