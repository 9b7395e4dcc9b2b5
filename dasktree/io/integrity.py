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

Both checks see only what the file lets them: a page written without a checksum
whose values were damaged within the statistics' range (a float page zeroed
decodes to plausible zeros) is learned from. :func:`verify_file` (``--verify``)
reads every page of every column, the columns a job does not use too, with the
checksums on, walks the page headers, and counts the pages that carry no
checksum.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError

__all__ = ["check_statistics", "locate_bad_page", "Verified", "verify_file"]


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


@dataclass
class Verified:
    """What :func:`verify_file` read: files, row groups, column chunks, pages, and pages without a checksum."""

    files: int = 0
    row_groups: int = 0
    chunks: int = 0
    pages: int = 0
    unchecked: int = 0

    def add(self, other: "Verified") -> None:
        for name in ("files", "row_groups", "chunks", "pages", "unchecked"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def line(self) -> str:
        text = (f"verified {self.files} files: {self.pages} pages in {self.chunks} column chunks of "
                f"{self.row_groups} row groups read with their checksums")
        if self.unchecked:
            text += (f"; {self.unchecked} pages carry none (written without checksums: damage there is seen "
                     "only if it leaves the row group's statistics)")
        return text


def verify_file(open_file, path: str, footer) -> Verified:
    """Read every page of the Parquet file ``path`` (``open_file()`` opens it; ``footer`` its
    :class:`~dasktree.io.footer.Footer`) with page checksums verified where the writer wrote them,
    check every numeric column against its statistics and walk every page header; a
    :class:`~dasktree.errors.DataError` naming the file, row group and column at the first fault."""
    import pyarrow.parquet as pq

    from .footer import page_headers

    done = Verified(files=1)
    with open_file() as f:
        file = pq.ParquetFile(f, metadata=footer.metadata(), page_checksum_verification=True)
        names = file.schema_arrow.names
        for g, chunks in enumerate(footer.groups):
            try:
                table = file.read_row_group(g)
            except (pa.ArrowException, OSError) as exc:
                raise locate_bad_page(open_file, path, [g], names, exc) from None
            check_statistics(table, footer, [g], path)
            for j, chunk in enumerate(chunks):
                f.seek(chunk.start)
                try:
                    headers = page_headers(f.read(chunk.compressed))
                except ValueError as exc:
                    leaf = file.schema.column(j).path
                    raise DataError(f"{path}: row group {g}, column {leaf!r}: {exc}: the file is corrupt") from None
                done.pages += len(headers)
                done.unchecked += sum(4 not in h for h in headers)
            done.chunks += len(chunks)
            done.row_groups += 1
    return done
