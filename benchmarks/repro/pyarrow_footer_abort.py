"""pyarrow aborts the interpreter on a Parquet footer whose size statistics hold a level histogram
of the wrong length.

A reproducer for a report to Apache Arrow; it needs pyarrow alone. It writes a one-column file
(``x``: three int64 values, nullable, so its maximum definition level is 1 and its column chunk's
``SizeStatistics.definition_level_histogram`` has 2 entries), then re-encodes the footer with a
third entry in that histogram (the Thrift list header ``0x26``, 2 x i64, becomes ``0x36`` and a
zero is inserted; the footer's length is fixed). Nothing else changes: the file stays valid Thrift.

Then, each in a child process:

- ``pq.read_table(path)``: ``OSError: Definition level histogram size mismatch, size: 3,
  expected: 2`` (the C++ exception is turned into a Python one: fine);
- ``pq.read_metadata(path).row_group(0).column(0)``: ``terminate called after throwing an instance
  of 'parquet::ParquetException'`` and SIGABRT. ``RowGroupMetaData.column`` calls
  ``parquet::RowGroupMetaData::ColumnChunk``, whose ``ColumnChunkMetaDataImpl`` constructor runs
  ``SizeStatistics::Validate`` and throws; ``ColumnChunk`` is declared in
  ``pyarrow/includes/libparquet.pxd`` without ``except +``, so the exception crosses Cython and
  ends the process. ``FileMetaData.to_dict()`` does the same. The other throws of that
  constructor and of ``statistics()`` (a column type that disagrees with the schema, metadata
  marked encrypted, statistics of a type that cannot be decoded) abort the same way.

The fix upstream: declare ``ColumnChunk`` (and ``RowGroup``, ``statistics``, ``geo_statistics``)
``except +`` so a corrupt footer raises. dasktree reads the footers of its inputs itself
(:mod:`dasktree.io.footer`) and never calls those accessors.

Usage: ``python benchmarks/repro/pyarrow_footer_abort.py [DIRECTORY]``; prints each call's exit
code and last line of stderr, and exits 0 if the bug shows (the metadata call killed by SIGABRT).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def write_file(path: str, table=None) -> str:
    """Write the file (``table``: default one int64 column ``x`` of 3 values; no nulls in its first
    column): valid Thrift, the first column chunk's definition level histogram one entry too long."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"x": pa.array([1, 2, 3], pa.int64())}) if table is None else table
    pq.write_table(table, path, compression="none", row_group_size=len(table) or 1)
    data = open(path, "rb").read()
    length = struct.unpack("<I", data[-8:-4])[0]
    body, footer = data[:-8 - length], data[-8 - length:-8]
    # SizeStatistics: repetition_level_histogram [] (field 2, list header 0x06), then
    # definition_level_histogram [0, rows] (field 3, list header 0x26: two i64, zigzag varints)
    histogram = b"\x29\x06\x19\x26\x00" + _varint(2 * len(table))
    if histogram not in footer:
        raise RuntimeError(f"this pyarrow ({pa.__version__}) writes no size statistics in the expected "
                           "form; the reproducer needs one that does (pyarrow >= 20)")
    longer = b"\x29\x06\x19\x36\x00\x00" + _varint(2 * len(table))  # [0, 0, rows]: 3 entries for max level 1
    footer = footer.replace(histogram, longer, 1)
    with open(path, "wb") as f:
        f.write(body + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return path


CALLS = {
    "read_table": "import pyarrow.parquet as pq; pq.read_table({path!r})",
    "row_group(0).column(0)": "import pyarrow.parquet as pq; pq.read_metadata({path!r}).row_group(0).column(0)",
    "to_dict()": "import pyarrow.parquet as pq; pq.read_metadata({path!r}).to_dict()",
}


def run(path: str) -> dict[str, tuple[int, str]]:
    """Each call in a child process: its exit code and the last line of its stderr."""
    out = {}
    for name, code in CALLS.items():
        proc = subprocess.run([sys.executable, "-c", code.format(path=path)], capture_output=True, text=True,
                              timeout=120)
        lines = proc.stderr.strip().splitlines()
        out[name] = (proc.returncode, lines[-1] if lines else "")
    return out


def main() -> int:
    import pyarrow as pa

    directory = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    path = write_file(os.path.join(directory, "histogram.parquet"))
    print(f"pyarrow {pa.__version__}, Python {sys.version.split()[0]}; wrote {path}")
    results = run(path)
    for name, (code, line) in results.items():
        print(f"{name}: exit {code}: {line}")
    return 0 if results["row_group(0).column(0)"][0] == -6 else 1


if __name__ == "__main__":
    sys.exit(main())
