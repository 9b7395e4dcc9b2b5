"""Which worker holds which parts, and whether the rows read in pass 0 may stay there.

A cached fit gives each worker thread one *group*: a contiguous run of parts
of similar total rows, fixed for the fit (a worker's groups adjacent). Pass 0
reads a group in one task, the first level pass encodes it in one, and every
level pass counts it in one histogram task, so a pass costs one task per
thread whatever the number of files (a task costs the scheduler
milliseconds). The counts are exact sums, so the grouping never changes the
model.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["assign_parts", "arrow_row_bytes"]

VARIABLE_WIDTH_BYTES = 32  # a guess per value of a string or binary column (offsets and data)


def assign_parts(rows: Sequence[int], n_workers: int) -> list[tuple[int, ...]]:
    """Parts ``0..len(rows)-1`` cut into at most ``n_workers`` contiguous runs of similar rows.

    Part ``i`` goes to the run its middle row falls in when the rows are laid
    end to end and cut into ``n_workers`` equal shares. Empty runs are left out.
    """
    sizes = np.maximum(np.asarray(rows, dtype=np.float64), 0.0)
    if sizes.size == 0:
        return []
    n_workers = max(1, min(int(n_workers), sizes.size))
    total = float(sizes.sum())
    if total == 0:
        middles = (np.arange(sizes.size) + 0.5) / sizes.size
    else:
        middles = (np.cumsum(sizes) - sizes / 2) / total
    runs = np.minimum((middles * n_workers).astype(np.int64), n_workers - 1)
    return [tuple(int(i) for i in np.flatnonzero(runs == g)) for g in range(n_workers) if np.any(runs == g)]


def arrow_row_bytes(schema: pa.Schema, columns: Sequence[str]) -> int:
    """About how many bytes a row of ``columns`` takes in an Arrow table (validity bits aside)."""
    total = 0
    for name in columns:
        type_ = schema.field(name).type
        if pa.types.is_dictionary(type_):
            type_ = type_.index_type
        try:
            total += max(1, type_.bit_width // 8)
        except ValueError:  # variable width: strings, binary, nested
            total += VARIABLE_WIDTH_BYTES
    return total
