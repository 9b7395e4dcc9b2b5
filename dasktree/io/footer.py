"""A Parquet footer read by dasktree itself: the column chunks' sizes and min/max statistics.

pyarrow's Python accessors of a column chunk's metadata (``FileMetaData.row_group(i).column(j)``,
its ``statistics``, ``to_dict()``) call C++ that throws on some corrupt footers (a level histogram
of the wrong size in the size statistics, a column type that disagrees with the schema, column
metadata marked encrypted, a row group with fewer column chunks than the schema has leaves), and
those calls are not declared to let a C++ exception through: the exception ends the interpreter
(``terminate called after throwing an instance of 'parquet::ParquetException'``, SIGABRT), with no
error of ours and no exit code. ``benchmarks/repro/pyarrow_footer_abort.py`` writes such a file.

So dasktree never asks those accessors about a file it did not write. It reads the footer's
bytes (the Thrift compact encoding of ``FileMetaData``) and decodes the few fields it uses here, in
Python, where a corrupt footer is a :class:`~dasktree.errors.DataError`: the rows of each row
group, each column chunk's compressed size and its min/max statistics. pyarrow's own reads (of
the schema, of the pages) go through calls that turn its exceptions into Python ones, and stay.

The decoder is bounded: nesting deeper than :data:`MAX_DEPTH`, a container longer than the
bytes left, a field of an unknown type or bytes cut short are errors, never a recursion or
an allocation the footer asked for.
"""

from __future__ import annotations

import collections
import hashlib
import struct
import threading
from dataclasses import dataclass, field

from ..errors import DataError

__all__ = ["Footer", "ColumnChunk", "read_footer", "parse_footer", "page_headers", "MAX_DEPTH", "FOOTER_READ"]

MAX_DEPTH = 32  # Parquet's footer nests 6 deep; a deeper one is not a footer
FOOTER_READ = 64 << 10  # bytes read from a file's end at once: most footers fit (pyarrow reads as much)

# Thrift compact protocol types
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)
# Parquet physical types
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = range(8)
_UNSIGNED_CONVERTED = {11, 12, 13, 14}  # UINT_8 .. UINT_64
_INTEGER_CONVERTED = set(range(11, 19))  # UINT_8 .. UINT_64, INT_8 .. INT_64


class _Corrupt(Exception):
    pass


class _Reader:
    """The Thrift compact protocol, decoded into dicts ``{field id: value}`` and lists."""

    def __init__(self, data: bytes):
        self.data = data
        self.at = 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise _Corrupt("the footer ends early")
        b = self.data[self.at]
        self.at += 1
        return b

    def varint(self) -> int:
        data, at = self.data, self.at
        end = min(len(data), at + 10)  # 64 bits take 10 bytes at most
        shift = result = 0
        while at < end:
            b = data[at]
            at += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                self.at = at
                return result
            shift += 7
        raise _Corrupt("the footer ends early" if at >= len(data) else "a varint longer than 64 bits")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise _Corrupt("a field longer than the footer")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def value(self, kind: int, depth: int):
        if kind in (_TRUE, _FALSE):  # a bool field: its value is its type; in a list, one byte
            return kind == _TRUE
        if kind == _BYTE:
            return struct.unpack("b", self.take(1))[0]
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if kind == _BINARY:
            return self.take(self.varint())
        if kind in (_LIST, _SET):
            return self.sequence(depth + 1)
        if kind == _MAP:
            n = self.varint()
            if n > len(self.data) - self.at:
                raise _Corrupt("a map longer than the footer")
            if n == 0:
                return {}
            types = self.byte()
            return [(self.element(types >> 4, depth + 1), self.element(types & 15, depth + 1)) for _ in range(n)]
        if kind == _STRUCT:
            return self.struct(depth + 1)
        raise _Corrupt(f"a field of unknown type {kind}")

    def element(self, kind: int, depth: int):
        if kind in (_TRUE, _FALSE):  # booleans in containers take a byte each
            return self.byte() == _TRUE
        return self.value(kind, depth)

    def sequence(self, depth: int) -> list:
        if depth > MAX_DEPTH:
            raise _Corrupt("nested too deep")
        header = self.byte()
        n, kind = header >> 4, header & 15
        if n == 15:
            n = self.varint()
        if n > len(self.data) - self.at:  # every element takes a byte at least
            raise _Corrupt("a list longer than the footer")
        return [self.element(kind, depth) for _ in range(n)]

    def struct(self, depth: int = 0) -> dict:
        if depth > MAX_DEPTH:
            raise _Corrupt("nested too deep")
        fields: dict = {}
        last = 0
        while True:
            header = self.byte()
            kind = header & 15
            if kind == _STOP:
                return fields
            delta = header >> 4
            last = last + delta if delta else self.zigzag()
            fields[last] = self.value(kind, depth)


@dataclass(frozen=True)
class ColumnChunk:
    """What dasktree uses of one column chunk: its column (the top-level name), compressed bytes and
    min/max statistics decoded to Python numbers (``None``: none a check may trust)."""

    name: str
    compressed: int
    min: float | int | None = None
    max: float | int | None = None
    start: int = 0  # where its first page (the dictionary page, if any) begins in the file


@dataclass(frozen=True)
class Footer:
    """A file's footer: its digest (what says the file is the one listed), rows of each row group
    and the column chunks of each."""

    digest: str
    group_rows: list[int]
    groups: list[list[ColumnChunk]] = field(repr=False)
    body: bytes = field(repr=False, default=b"")

    def metadata(self):
        """pyarrow's ``FileMetaData`` of these bytes (parsed by pyarrow, its errors as exceptions):
        what a read passes to ``ParquetFile`` so the footer is read once."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        tail = struct.pack("<I", len(self.body)) + b"PAR1"
        return pq.read_metadata(pa.BufferReader(b"PAR1" + self.body + tail))

    def column_bytes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for group in self.groups:
            for chunk in group:
                out[chunk.name] = out.get(chunk.name, 0) + chunk.compressed
        return out


def read_footer(file, path: str) -> Footer:
    """The footer of the open file ``file`` (a pyarrow ``NativeFile``, seekable), decoded."""
    size = file.size()
    if size < 12:
        raise DataError(f"{path}: not a Parquet file: {size} bytes")
    tail_size = min(size, FOOTER_READ)
    file.seek(size - tail_size)
    tail = file.read(tail_size)
    if tail[-4:] != b"PAR1":
        raise DataError(f"{path}: not a Parquet file: its last bytes are not PAR1")
    length = struct.unpack("<I", tail[-8:-4])[0]
    if length + 12 > size:
        raise DataError(f"{path}: not a Parquet file: a footer of {length} bytes in a file of {size}")
    if length + 8 > tail_size:
        file.seek(size - 8 - length)
        body = file.read(length)
    else:
        body = tail[-8 - length:-8]
    return parse_footer(bytes(body), path)


def parse_footer(body: bytes, path: str) -> Footer:
    """The footer from its Thrift bytes (between the data and the length and magic that end the file).

    The last footers decoded are kept (by their digest): the reads of a file's parts decode its
    footer once per process."""
    digest = hashlib.blake2b(body, digest_size=16).hexdigest()
    with _LOCK:
        cached = _CACHE.get(digest)
        if cached is not None:
            _CACHE.move_to_end(digest)
            return cached
    try:
        footer = _footer(_Reader(body).struct(), digest)
    except (_Corrupt, TypeError, ValueError, KeyError, IndexError, struct.error, AttributeError) as exc:
        raise DataError(f"{path}: the Parquet footer is corrupt: {exc or type(exc).__name__}") from None
    footer = Footer(footer.digest, footer.group_rows, footer.groups, body)
    with _LOCK:
        _CACHE[digest] = footer
        while len(_CACHE) > CACHED_FOOTERS:
            _CACHE.popitem(last=False)
    return footer


CACHED_FOOTERS = 64
_CACHE: collections.OrderedDict[str, Footer] = collections.OrderedDict()
_LOCK = threading.Lock()


def _leaves(schema: list) -> list[dict]:
    """The schema's leaf elements in order (a leaf has no children), each with its top-level name."""
    if not schema or not isinstance(schema[0], dict):
        raise _Corrupt("no schema")
    leaves: list[dict] = []
    at = 1

    def walk(n_children: int, top: str | None, depth: int) -> None:  # depth 0: the top-level columns
        nonlocal at
        if depth > MAX_DEPTH:
            raise _Corrupt("a schema nested too deep")
        for _ in range(n_children):
            if at >= len(schema) or not isinstance(schema[at], dict):
                raise _Corrupt("the schema ends early")
            element = schema[at]
            at += 1
            name = element.get(4, b"")
            name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
            children = element.get(5, 0)
            if isinstance(children, int) and children > 0:
                walk(children, top or name, depth + 1)
            else:
                leaves.append({**element, "top": top or name, "leaf": name, "nested": depth > 0})

    walk(int(schema[0].get(5, 0)), None, 0)
    return leaves


def _footer(meta: dict, digest: str) -> Footer:
    leaves = _leaves(meta.get(2) or [])
    group_rows: list[int] = []
    groups: list[list[ColumnChunk]] = []
    for group in meta.get(4) or []:
        if not isinstance(group, dict):
            raise _Corrupt("a row group that is not a struct")
        columns = group.get(1) or []
        if len(columns) != len(leaves):
            raise _Corrupt(f"a row group with {len(columns)} column chunks for {len(leaves)} columns")
        chunks = []
        for leaf, chunk in zip(leaves, columns):
            data = chunk.get(3) if isinstance(chunk, dict) else None
            if not isinstance(data, dict):
                raise _Corrupt(f"column {leaf['leaf']!r} has no metadata (or encrypted metadata)")
            low, high = (None, None) if leaf["nested"] else _min_max(leaf, data)
            first, dictionary = int(data.get(9, 0)), data.get(11)
            start = dictionary if isinstance(dictionary, int) and 0 < dictionary < first else first
            chunks.append(ColumnChunk(leaf["top"], int(data.get(7, 0)), low, high, start))
        group_rows.append(int(group.get(3, 0)))
        groups.append(chunks)
    return Footer(digest, group_rows, groups)


def _min_max(leaf: dict, data: dict):
    """A numeric column chunk's min and max as Python numbers, or ``(None, None)``: no statistics,
    a type they do not decode for, or statistics of the wrong width (corrupt, so not trusted)."""
    kind = leaf.get(1)
    stats = data.get(12)
    if data.get(1) != kind or not isinstance(stats, dict) or kind not in (INT32, INT64, FLOAT, DOUBLE):
        return None, None
    logical, converted = leaf.get(10), leaf.get(6)
    integer = logical.get(10) if isinstance(logical, dict) else None
    if (converted is not None and converted not in _INTEGER_CONVERTED) or (logical is not None and integer is None):
        return None, None  # a date, time, decimal...: not a number to Arrow
    unsigned = leaf.get(6) in _UNSIGNED_CONVERTED or (isinstance(integer, dict) and integer.get(2) is False)
    if 5 in stats and 6 in stats:  # min_value / max_value: the type's own order
        low, high = stats[6], stats[5]
    elif 1 in stats and 2 in stats and not unsigned:  # the legacy min / max: signed order
        low, high = stats[2], stats[1]
    else:
        return None, None
    fmt = {INT32: "<I" if unsigned else "<i", INT64: "<Q" if unsigned else "<q", FLOAT: "<f", DOUBLE: "<d"}[kind]
    if not isinstance(low, bytes) or not isinstance(high, bytes) or len(low) != len(high) \
            or len(low) != struct.calcsize(fmt):
        return None, None
    return struct.unpack(fmt, low)[0], struct.unpack(fmt, high)[0]


def page_headers(chunk: bytes) -> list[dict]:
    """The page headers of a column chunk's bytes, in order (a dict per page: ``{field id: value}``;
    3 is the page's compressed size, 4 its CRC-32 when the writer wrote one). Raises ``ValueError``
    when a header cannot be decoded or a page runs past the chunk."""
    headers = []
    at = 0
    while at < len(chunk):
        reader = _Reader(chunk)
        reader.at = at
        try:
            header = reader.struct()
        except _Corrupt as exc:
            raise ValueError(f"page header {len(headers)} cannot be decoded: {exc}") from None
        size = header.get(3)
        if not isinstance(size, int) or size < 0 or reader.at + size > len(chunk):
            raise ValueError(f"page {len(headers)} claims {size!r} bytes, past its column chunk")
        headers.append(header)
        at = reader.at + size
    return headers
