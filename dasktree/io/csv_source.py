"""CSV as a source of parts: files, a directory, a glob or any fsspec URL, compressed or not.

Opening a CSV dataset reads each file once, in blocks, to find where its records
start (:mod:`dasktree.io.csv_scan`): every :data:`CHUNK_ROWS` data records make a
*chunk*, the CSV's row group, with its byte offset in the (decompressed) file.
Parts are runs of a file's chunks up to ``part_rows`` rows, the out-of-core
runner's pieces are shorter runs, as with Parquet's row groups; a part's row key
is ``(file below the root, row offset)`` as Parquet's. A part is read with
pyarrow's streaming CSV reader (``pyarrow.csv.open_csv``) over its byte range
only: an uncompressed file is read from the part's offset, a compressed one
(``.gz``, ``.bz2``, ``.zst``, ``.lz4``, ``.br``, ``.xz``) is decompressed from its
start up to it, then the part's bytes. No file is ever held whole in memory.

Column types are decided once: from the user's ``types`` and, for the other
columns, pyarrow's inference over the first block (:data:`INFER_BYTES`) of the
first file; a column empty there is float64. Every file and part is then read
with these types, so no piece can guess another type. An empty field is missing
(null) in every column, strings included, as a null is in Parquet. A value that
does not parse, or a record with another number of fields than the header, is a
:class:`~dasktree.errors.DataError` naming the file, the line and the column.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..errors import DaskTreeError, DataError, InputError, ParameterError
from .csv_scan import Scan, scan, scan_bytes
from .redact import redact
from .retries import retrying
from .sources import DEFAULT_PART_ROWS, FileSource, Part, _first_line, _group_row_groups, _hidden, _strip

__all__ = ["CSV", "CsvSource", "is_csv_path", "parse_types", "CHUNK_ROWS", "INFER_BYTES", "COMPRESSIONS"]

CHUNK_ROWS = 1 << 14
"""Data records per chunk: the finest cut of a CSV file into parts and pieces."""

INFER_BYTES = 1 << 22
"""Bytes of the first file whose values pyarrow infers the column types from (the user's types aside)."""

COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd", ".lz4": "lz4", ".br": "brotli",
                ".xz": "xz"}
"""File endings read as compressed, and their codec (pyarrow's; ``xz`` through Python's ``lzma``)."""

KEPT_STREAMS = 8
"""Decompressing streams a source keeps open between reads, to continue rather than start again."""

CSV_ENDINGS = (".csv", ".tsv")
"""File endings (before any compression ending) taken for CSV without being told; ``.tsv`` is tab-separated."""


@dataclass(frozen=True, eq=False)
class CSV(os.PathLike):
    """CSV data with its reading options, accepted wherever a dataset's path is.

    A path ending in ``.csv`` or ``.tsv`` (compressed or not), or a directory of
    such files, is read as CSV with the defaults below without this; wrap it to
    give column types, another delimiter or no header, or to read files with
    other endings as CSV.

    Parameters
    ----------
    path : str, os.PathLike or list of them
        A file, a directory (its files, hidden ones aside), a glob or an fsspec URL of any of these.
    types : mapping of str to str or pyarrow.DataType, optional
        Column types that replace inference, e.g. ``{"zip": "string", "amount": "float64"}``
        (any pyarrow type alias: ``int64``, ``float64``, ``string``, ``bool``, ``date32``, ``timestamp[s]``).
    delimiter : str, default ","
        One character (``"\\t"`` for tab; a ``.tsv`` file's default).
    header : bool, default True
        Whether each file's first record names the columns; without it the columns are
        ``names`` or, without those, ``f0``, ``f1``, ...
    names : sequence of str, optional
        The columns' names (with ``header=True``, they replace the header's).
    """

    path: Any
    types: Mapping[str, Any] | None = None
    delimiter: str | None = None
    header: bool = True
    names: Sequence[str] | None = None
    storage_options: dict | None = field(default=None, repr=False)

    def __fspath__(self) -> str:
        path = self.path[0] if isinstance(self.path, (list, tuple)) else self.path
        return os.fspath(path)

    def __str__(self) -> str:
        return ", ".join(os.fspath(p) for p in self.path) if isinstance(self.path, (list, tuple)) \
            else os.fspath(self.path)


def _base_name(path: str) -> str:
    """The file's name without a compression ending, lowercase."""
    name = posixpath.basename(str(path).rstrip("/")).lower()
    for ending in COMPRESSIONS:
        if name.endswith(ending):
            return name[:-len(ending)]
    return name


def _looks_csv(path: str) -> bool:
    return _base_name(path).endswith(CSV_ENDINGS)


def is_csv_path(data, storage_options: dict | None = None) -> bool:
    """Whether ``data`` (a path, URL, glob or list of them) names CSV files: their names end in
    ``.csv`` / ``.tsv`` (compressed or not), or a directory's or a glob's files all do."""
    paths = [os.fspath(p) for p in data] if isinstance(data, (list, tuple)) else [os.fspath(data)]
    if all(_looks_csv(p) for p in paths):
        return True
    if len(paths) != 1:
        return False
    import fsspec

    try:
        fs, _ = fsspec.core.url_to_fs(paths[0], **(storage_options or {}))
        _, p = _strip(fs, paths[0])
        if any(ch in p for ch in "*?["):
            files = [f for f in retrying(lambda: fs.glob(p), redact(paths[0]))]
        elif retrying(lambda: fs.isdir(p), redact(paths[0])):
            root = p.rstrip("/")
            files = [f for f in retrying(lambda: fs.find(p), redact(paths[0])) if not _hidden(f[len(root):])]
        else:
            return False
    except (ImportError, ValueError, OSError):
        return False
    return bool(files) and all(_looks_csv(f) for f in files)


def parse_types(text: str | None) -> dict[str, str]:
    """``"a=float64,zip=string"`` as ``{"a": "float64", "zip": "string"}`` (the CLI's ``--csv-types``)."""
    types: dict[str, str] = {}
    for item in [t for t in (text or "").split(",") if t.strip()]:
        name, eq, type_ = item.partition("=")
        if not eq or not name.strip() or not type_.strip():
            raise ParameterError(f"--csv-types: {item!r} is not COLUMN=TYPE (e.g. zip=string,amount=float64)")
        types[name.strip()] = type_.strip()
    return types


def _arrow_type(name: str, value) -> pa.DataType:
    if isinstance(value, pa.DataType):
        return value
    try:
        return pa.type_for_alias(str(value))
    except (ValueError, KeyError, TypeError):
        raise ParameterError(f"CSV types: {value!r} for column {name!r} is not a type; use one of int64, float64, "
                         "string, bool, date32, timestamp[s] (pyarrow's names)") from None


class _Bounded:
    """A binary stream's next ``n`` bytes as a file pyarrow's reader can take (``pyarrow.PythonFile``)."""

    def __init__(self, stream, n: int):
        self.stream, self.left, self.closed = stream, n, False

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self.stream.read(size) if size else b""
        self.left -= len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


class CsvSource(FileSource):
    """A CSV dataset on any fsspec filesystem (see the module's documentation)."""

    KIND = "CSV"

    def __init__(self, data, *, part_rows: int = DEFAULT_PART_ROWS, storage_options: dict | None = None,
                 schema_only: bool = False):
        """``schema_only``: list the files and fix the types, no scan (no parts): what ``dasktree fit
        --task auto`` needs to see the target's type without reading the data twice."""
        import fsspec

        options = data if isinstance(data, CSV) else CSV(data)
        path = options.path
        storage_options = options.storage_options if options.storage_options is not None else storage_options
        self.description = redact(str(options)) if not isinstance(path, (list, tuple)) else f"{len(path)} files"
        paths = [os.fspath(p) for p in path] if isinstance(path, (list, tuple)) else [os.fspath(path)]
        try:
            fs, _ = fsspec.core.url_to_fs(paths[0], **(storage_options or {}))
        except (ImportError, ValueError) as exc:
            raise InputError(f"cannot open {paths[0]!r}: {exc}") from None
        self._fsspec = fs
        try:
            self.root, files = retrying(lambda: self._list_files(fs, paths), self.description)
        except DaskTreeError:
            raise
        except ValueError as exc:  # fsspec's word on a path it cannot list (a bucket-less "s3://")
            raise InputError(f"cannot list {self.description}: {exc}") from None
        delimiter = options.delimiter
        if delimiter is None:
            delimiter = "\t" if all(_base_name(f).endswith(".tsv") for f in files) else ","
        if len(delimiter) != 1 or delimiter in "\r\n\"":
            raise ParameterError(f"CSV delimiter {delimiter!r}: give one character other than a quote or a line end")
        self.delimiter, self.header = delimiter, bool(options.header)
        self._paths: dict[str, str] = {}
        self.group_rows: dict[str, list[int]] = {}
        self._starts: dict[str, np.ndarray] = {}  # data start of each chunk (and the file's end), per file
        self._lines: dict[str, np.ndarray] = {}  # the 0-based line of each chunk's first record
        self._quoted_newlines: dict[str, bool] = {}
        self._sizes: dict[str, int] = {}  # stored (compressed) bytes: what says the file is still the one listed
        self.column_bytes: dict[str, int] = {}
        self._streams: list[tuple[str, int, Any]] = []  # (path, position, stream): see _at
        self._lock = threading.Lock()
        self.parts = []
        if schema_only:
            try:
                self.schema = self._infer(files[0], options)
                return
            except DataError:
                pass  # the scan below says where the file is wrong
        scans = dict(zip(files, _map_threads(lambda f: retrying(lambda: self._scan(f), f), files)))
        for file in files:  # ragged rows first: the inference would stop at one without its line
            found = scans[file]
            if found.bad_line >= 0:
                raise DataError(f"{file}: line {found.bad_line + 1}: {found.bad_fields} fields where the header has "
                                f"{found.header_fields}: a ragged row (or a delimiter {delimiter!r} in an unquoted value)")
        first = next((f for f in files if scans[f].header_fields), files[0])  # an empty file has no types
        self.schema = self._infer(first, options)
        names = self.schema.names
        for file in files:
            rel = self._relative(file)
            self._paths[rel] = file
            found = scans[file]
            if not found.header_fields:  # an empty file: no header, no rows
                self.group_rows[rel], self._starts[rel], self._lines[rel] = [], np.array([found.size]), found.lines
                self._quoted_newlines[rel], self._sizes[rel] = False, int(retrying(lambda f=file: fs.size(f), file) or 0)
                continue
            if found.header_fields != len(names):
                raise DataError(f"mixed schemas: {file} has {found.header_fields} columns, {first} has {len(names)}")
            if self.header and options.names is None and file != first:
                self._check_header(file, found, names)
            sizes = found.chunk_rows(CHUNK_ROWS)
            self.group_rows[rel] = sizes
            self._starts[rel] = np.append(found.starts, found.size)
            self._lines[rel] = found.lines
            self._quoted_newlines[rel] = found.quoted_newlines
            self._sizes[rel] = int(retrying(lambda f=file: fs.size(f), file) or 0)
            offset = 0
            for groups in _group_row_groups(sizes, part_rows):
                n = sum(sizes[i] for i in groups)
                self.parts.append(Part(len(self.parts), rel, offset, n, groups))
                offset += n
        self.column_bytes = {name: 0 for name in names}
        self.stored_bytes = sum(self._sizes.values())

    def bytes_of(self, columns: Sequence[str]) -> int:
        """The files' stored bytes: a read of any columns reads (and parses) every byte."""
        return self.stored_bytes if len(columns) else 0

    # -- opening ----------------------------------------------------------------------------------------

    def _open(self, path: str):
        """The file's decompressed bytes as a stream (the caller closes it)."""
        raw = self._fsspec.open(path, "rb")
        codec = _codec(path)
        if codec is None:
            return raw
        if codec == "xz":
            import lzma

            return lzma.open(raw, "rb")
        return pa.CompressedInputStream(pa.PythonFile(raw, mode="r"), codec)

    def _parse_options(self, quoted_newlines: bool = True):
        import pyarrow.csv as pcsv

        return pcsv.ParseOptions(delimiter=self.delimiter, newlines_in_values=quoted_newlines)

    def _infer(self, first: str, options: CSV) -> pa.Schema:
        """The columns and their types: the user's, else pyarrow's inference over the first
        :data:`INFER_BYTES` of the first file (a column empty there: float64)."""
        import pyarrow.csv as pcsv

        given = {name: _arrow_type(name, t) for name, t in (options.types or {}).items()}
        names = list(options.names) if options.names is not None else None
        if names is not None and len(set(names)) != len(names):
            raise ParameterError(f"CSV names: a column is named twice in {names}")
        read = pcsv.ReadOptions(block_size=INFER_BYTES, skip_rows=1 if (self.header and names) else 0,
                                column_names=names, autogenerate_column_names=not self.header and names is None)
        # the given columns read as text here: a bad value among them is found by the read, with its line
        convert = pcsv.ConvertOptions(column_types={name: pa.string() for name in given}, strings_can_be_null=True)

        def attempt():
            with self._open(first) as stream:
                reader = pcsv.open_csv(stream, read_options=read, parse_options=self._parse_options(),
                                       convert_options=convert)
                schema = reader.schema
                reader.close() if hasattr(reader, "close") else None
                return schema

        try:
            schema = retrying(attempt, first)
        except pa.ArrowInvalid as exc:
            if "Empty CSV file" in str(exc):
                raise DataError(f"{first}: empty file: no header or rows") from None
            raise DataError(f"{first}: not readable as CSV: {_first_line(exc)}") from None
        except (pa.ArrowException, OSError, EOFError) as exc:
            raise DataError(f"{first}: not readable as CSV: {_first_line(exc)}") from None
        try:
            found = schema.names
        except UnicodeDecodeError:  # pyarrow keeps the header's bytes; they decode only on asking
            raise DataError(f"{first}: the header is not UTF-8 text") from None
        if len(set(found)) != len(found):
            twice = sorted({n for n in found if found.count(n) > 1})
            raise DataError(f"{first}: the header names column {twice[0]!r} twice")
        unknown = [n for n in given if n not in found]
        if unknown:
            raise InputError(f"CSV types: no column {unknown[0]!r} in {first}; columns are {found[:20]}")
        fields = [pa.field(f.name, given.get(f.name, pa.float64() if pa.types.is_null(f.type) else f.type))
                  for f in schema]
        return pa.schema(fields)

    def _scan(self, path: str) -> Scan:
        try:
            with self._open(path) as stream:
                return scan(stream.read, delimiter=self.delimiter, header=self.header, every=CHUNK_ROWS)
        except (pa.ArrowException, EOFError) as exc:
            raise DataError(f"{path}: cannot be read: {_first_line(exc)}") from None
        except OSError as exc:
            if _DECOMPRESSION.search(str(exc)):  # damaged compressed data: no retry reads it
                raise DataError(f"{path}: cannot be read: {_first_line(exc)}") from None
            raise

    def _check_header(self, path: str, found: Scan, names: list[str]) -> None:
        import pyarrow.csv as pcsv

        with self._open(path) as stream:
            head = stream.read(found.data_start)
        try:
            theirs = pcsv.read_csv(pa.BufferReader(head), parse_options=self._parse_options()).schema.names
        except pa.ArrowInvalid:
            theirs = []
        except UnicodeDecodeError:
            raise DataError(f"{path}: the header is not UTF-8 text") from None
        if theirs != names:
            differ = sorted(set(theirs) ^ set(names)) or ["(their order)"]
            raise DataError(f"mixed schemas: {path} and {self._paths[next(iter(self._paths))]} differ in "
                            f"columns {differ}")

    # -- the source's face ----------------------------------------------------------------------------

    def files(self) -> dict[str, str]:
        return dict(self._paths)

    def read(self, part: Part, columns: Sequence[str]) -> pa.Table:
        """The part's rows, in file order, as the schema's types (one streaming read of its bytes)."""
        import pyarrow.csv as pcsv

        path = self._paths[part.key]
        starts = self._starts[part.key]
        if not part.row_groups:
            return self.schema.empty_table().select(list(columns))
        first, last = part.row_groups[0], part.row_groups[-1]
        begin, end = int(starts[first]), int(starts[last + 1])
        read = pcsv.ReadOptions(column_names=self.schema.names, block_size=1 << 20)
        convert = pcsv.ConvertOptions(column_types={f.name: f.type for f in self.schema},
                                      include_columns=list(columns), strings_can_be_null=True)

        def attempt():
            if int(self._fsspec.size(path) or 0) != self._sizes[part.key]:
                raise DataError(f"{path}: the file changed since the fit listed it (its size differs): "
                                "the data changed under the fit")
            with self._at(path, begin) as stream:
                reader = pcsv.open_csv(pa.PythonFile(_Bounded(stream, end - begin), mode="r"), read_options=read,
                                       parse_options=self._parse_options(self._quoted_newlines[part.key]),
                                       convert_options=convert)
                table = reader.read_all()
                stream.position = end
                return table

        try:
            table = retrying(attempt, path)
        except FileNotFoundError:
            raise DataError(f"{path}: the file is gone since the fit listed it: the data changed under the fit") from None
        except pa.ArrowInvalid as exc:
            raise self._locate(part, exc) from None
        except (pa.ArrowException, OSError, EOFError) as exc:
            raise DataError(f"{path}: cannot be read: {_first_line(exc)}") from None
        if table.num_rows != part.n_rows:
            raise DataError(f"{path}: {table.num_rows} rows where the listing found {part.n_rows} from line "
                            f"{int(self._lines[part.key][first]) + 1}: the data changed under the fit")
        return table.select(list(columns))

    @contextlib.contextmanager
    def _at(self, path: str, begin: int):
        """The file's decompressed stream moved to byte ``begin``. A compressed file's stream is kept
        when the read sets its ``position`` (up to :data:`KEPT_STREAMS` of them), and the next read at
        or after that position continues it: a file's parts read in order decompress it once, not once
        from its start per part."""
        codec = _codec(path)
        held = None
        if codec is not None:
            with self._lock:
                mine = [k for k in self._streams if k[0] == path and k[1] <= begin]
                if mine:
                    held = max(mine, key=lambda k: k[1])
                    self._streams.remove(held)
        stream, position = (held[2], held[1]) if held is not None else (self._open(path), 0)
        kept = _Positioned(stream)
        try:
            _skip(stream, begin - position)
            yield kept
        except BaseException:
            stream.close()
            raise
        if codec is None or kept.position is None:
            stream.close()
            return
        with self._lock:
            self._streams.append((path, kept.position, stream))
            if len(self._streams) > KEPT_STREAMS:
                self._streams.pop(0)[2].close()

    def __getstate__(self) -> dict:  # a worker opens its own streams
        state = dict(self.__dict__)
        state["_streams"], state["_lock"] = [], None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _locate(self, part: Part, exc: BaseException) -> DataError:
        """The one line naming the file, line and column of the value pyarrow could not convert."""
        import pyarrow.csv as pcsv

        path = self._paths[part.key]
        text = _first_line(exc)
        where = f"{path}: from line {int(self._lines[part.key][part.row_groups[0]]) + 1}"
        match = re.search(r"column #(\d+): CSV conversion error to (\S+): invalid value '(.*)'", text)
        if not match:
            return DataError(f"{where}: not readable as CSV: {text}")
        column, type_, value = self.schema.names[int(match.group(1))], match.group(2), match.group(3)
        starts = self._starts[part.key]
        begin, end = int(starts[part.row_groups[0]]), int(starts[part.row_groups[-1] + 1])
        hint = f"give its type (--csv-types {column}=string, Python CSV(types=...)) or fix the value"
        with self._open(path) as stream:
            _skip(stream, begin)
            raw = stream.read(end - begin)
        try:
            as_text = pcsv.read_csv(pa.BufferReader(raw), read_options=pcsv.ReadOptions(column_names=self.schema.names),
                                    parse_options=self._parse_options(self._quoted_newlines[part.key]),
                                    convert_options=pcsv.ConvertOptions(column_types={column: pa.string()},
                                                                        include_columns=[column]))
        except pa.ArrowException:  # the column as text is no better (bytes that are not UTF-8): no line
            return DataError(f"{where}, column {column!r}: {_shown(value)} is not {type_}: {hint}")
        values = as_text.column(0).to_pylist()
        if value not in values:
            return DataError(f"{where}, column {column!r}: {_shown(value)} is not {type_}: {hint}")
        row = values.index(value)
        records = scan_bytes(raw, delimiter=self.delimiter, header=False, every=1)
        line = int(self._lines[part.key][part.row_groups[0]]) + int(records.lines[row])
        return DataError(f"{path}: line {line + 1}, column {column!r}: {_shown(value)} is not {type_}: {hint}")


_DECOMPRESSION = re.compile(r"(?i)compress|gzip|zlib|inflate|lzma|bz2|zstd|brotli|lz4|snappy")
"""What an error of a codec's decompression says (pyarrow raises them as OSError)."""


def _shown(value: str, most: int = 60) -> str:
    """A bad value for a message: whole when short, else its start and its length."""
    return repr(value) if len(value) <= most else f"{value[:most]!r}... ({len(value):,} characters)"


class _Positioned:
    """A stream lent by :meth:`CsvSource._at`; the reader sets ``position`` when it read up to there."""

    def __init__(self, stream):
        self.stream, self.position = stream, None

    def read(self, n: int = -1) -> bytes:
        return self.stream.read(n)


def _map_threads(func, items: list) -> list:
    """``func`` over ``items`` on a thread per core (the scan kernel and the decompression release the GIL),
    in order; the first error raised as it is."""
    if len(items) < 2:
        return [func(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    with ThreadPoolExecutor(max(1, min(threads, len(items)))) as pool:
        return list(pool.map(func, items))


def _codec(path: str) -> str | None:
    return next((c for e, c in COMPRESSIONS.items() if str(path).lower().endswith(e)), None)


def _skip(stream, n: int) -> None:
    """Move ``stream`` ``n`` bytes on: a seek where it can, else reading (decompressing) them."""
    if n <= 0:
        return
    seekable = getattr(stream, "seekable", None)
    if seekable is not None and seekable() and not isinstance(stream, pa.NativeFile):
        stream.seek(n)
        return
    while n > 0:
        got = stream.read(min(n, 1 << 23))
        if not got:
            raise EOFError("the file ended before the part")
        n -= len(got)
