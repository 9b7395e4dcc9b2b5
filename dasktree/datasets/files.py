"""A frame written as a dataset of Parquet files: what ``dasktree warm`` fits on a cluster, and what the
tests write (:mod:`dasktree.testing` hands it on)."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["write_dataset"]


def write_dataset(frame, path: str | os.PathLike, n_files: int = 1, row_group_size: int | None = None) -> str:
    """Write the pandas DataFrame ``frame`` as ``n_files`` Parquet files (consecutive row ranges) in
    directory ``path``; returns the directory."""
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
    bounds = np.linspace(0, table.num_rows, n_files + 1).astype(int)
    for i in range(n_files):
        pq.write_table(table.slice(bounds[i], bounds[i + 1] - bounds[i]),
                       os.path.join(path, f"part-{i:05d}.parquet"), row_group_size=row_group_size)
    return path
