"""Large arrays of the level passes, in Arrow's memory pool.

A worker's first level pass frees the tables pass 0 read (hundreds of MB at
millions of rows) into Arrow's default memory pool, which keeps that memory
for its next allocations. numpy's large arrays come from the C allocator
instead, as fresh mappings of pages the process has never touched; on the
virtual machines these benchmarks run on, such memory costs 1.2-2.9 ms per MB
to fault in, memory reused from the pool 0.02-0.17 ms per MB (after 0.2-5 s,
``benchmarks/README.md``). A deep forest level's histogram is tens of MB, new
at every level: from the pool, it reuses what the tables and the earlier
levels left. The arrays are ordinary numpy arrays over an Arrow buffer, which
they keep alive.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["empty", "zeros"]


def empty(shape, dtype) -> np.ndarray:
    """An uninitialized C-contiguous array in Arrow's default memory pool (64-byte aligned)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    n = int(np.prod(shape, dtype=np.int64))
    buffer = pa.allocate_buffer(max(n * dtype.itemsize, 1))
    return np.frombuffer(buffer, dtype=dtype, count=n).reshape(shape)


def zeros(shape, dtype) -> np.ndarray:
    """:func:`empty`, filled with zeros."""
    out = empty(shape, dtype)
    out.fill(0)
    return out
