"""Which worker holds which parts, and whether the rows read in pass 0 may stay there.

A cached fit gives each worker thread one *group*: a contiguous run of parts
of similar total rows, fixed for the fit (a worker's groups adjacent; a dask
DataFrame's partitions grouped by the worker holding them). Pass 0 reads a
group in one task, and the worker's holder (:mod:`dasktree.engine.part_holders`) encodes
it at the first level pass and counts it, on one thread, at every pass, so a
pass costs the same whatever the number of files. The counts are exact sums,
so the grouping never changes the model. Whether the data fits is judged
against the workers' memory limits, or their hosts' memory
(:func:`physical_memory`) for a worker without one.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

__all__ = ["assign_parts", "frame_groups", "arrow_row_bytes", "physical_memory"]

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


def frame_groups(holder_of: Sequence[str | None], threads: Sequence[str]) -> list[tuple[str | None, tuple[int, ...]]]:
    """A dask DataFrame's partitions grouped by the worker holding each (``holder_of[i]``; None:
    not known), workers in sorted order: each worker's partitions cut into contiguous runs, one
    per thread it runs (``threads`` lists a worker once per thread)."""
    by_worker: dict[str | None, list[int]] = {}
    for i, worker in enumerate(holder_of):
        by_worker.setdefault(worker, []).append(i)
    return [(worker, tuple(parts[i] for i in run))
            for worker, parts in sorted(by_worker.items(), key=str)
            for run in assign_parts([1] * len(parts), max(1, list(threads).count(worker)))]


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


def physical_memory() -> int:
    """This host's physical memory in bytes (run on a worker without a memory limit)."""
    import psutil

    return int(psutil.virtual_memory().total)
