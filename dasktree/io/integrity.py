"""Corrupt Parquet is not learned from: decoded values against the file's own statistics and checksums.

A data page overwritten on disk may decode without error into garbage (values
of 1e307 in a column whose statistics say at most 1.3e5). Two checks catch it
where the file makes them possible, on every read of a dataset
(:meth:`dasktree.io.sources.ParquetSource.read`: pass 0, uncached passes,
prediction):

- page checksums (CRC-32 of each page, written by dasktree and by writers that
  enable them) are verified while decoding (pyarrow's
  ``page_checksum_verification``);
- each numeric column's decoded minimum and maximum in each row group must lie
  within that row group's min/max statistics (written by default by pyarrow,
  Spark, DuckDB...).

A mismatch is a :class:`~dasktree.errors.DataError` naming the file, the row
group and the column (exit 1). The check is one vectorised min/max per column
and row group, over data already in memory.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError

__all__ = ["check_statistics", "locate_bad_page"]


def check_statistics(table: pa.Table, footer, row_groups: list[int], path: str) -> None:
    """Raise if a numeric column of ``table`` (``row_groups`` of the file ``path``, in order) holds a
    value outside its row group's min/max statistics (``footer``: the file's
    :class:`~dasktree.io.footer.Footer`, read by dasktree, not through pyarrow's column accessors)."""
    if table.num_rows == 0:
        return
    names = [n for n in table.column_names
             if pa.types.is_integer(table.schema.field(n).type) or pa.types.is_floating(table.schema.field(n).type)]
    start = 0
    for g in row_groups:
        chunks = {c.name: c for c in footer.groups[g] if c.min is not None}
        for name in names:
            stats = chunks.get(name)
            if stats is None:
                continue
            values = table.column(name).slice(start, footer.group_rows[g])
            low, high = pc.min_max(values).values()
            if low.is_valid and (low.as_py() < stats.min or high.as_py() > stats.max):
                bad = low.as_py() if low.as_py() < stats.min else high.as_py()
                raise DataError(f"{path}: row group {g}, column {name!r}: decoded value {bad!r} outside the "
                                f"row group's statistics [{stats.min!r}, {stats.max!r}]: the file is corrupt")
        start += footer.group_rows[g]


def locate_bad_page(open_file, path: str, row_groups: list[int], columns: list[str], error: BaseException) -> DataError:
    """After a failed read (a checksum mismatch, an undecodable page): the error naming the first
    row group and column that cannot be read on their own."""
    import pyarrow.parquet as pq

    for g in row_groups:
        for name in columns:
            try:
                with open_file() as f:
                    pq.ParquetFile(f, page_checksum_verification=True).read_row_group(g, columns=[name])
            except (pa.ArrowException, OSError) as exc:
                return DataError(f"{path}: row group {g}, column {name!r}: cannot be read: {_first_line(exc)}")
    return DataError(f"{path}: cannot read: {_first_line(error)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
