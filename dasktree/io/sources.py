"""Input data as a list of *parts*: Parquet row-group ranges or in-memory slices.

A :class:`Source` knows its Arrow schema, splits itself into :class:`Part`
descriptors (small, picklable) and reads one part as an Arrow table. Parquet
parts are built from pyarrow fragments and row groups, so every part carries its
file and the offset of its first row there (where a bad value is said to be; the
cross-validation folds hash a row's content, not its place: :mod:`dasktree.io.folds`).
Nothing here imports Dask; the runners ship parts to workers.

Accepted inputs: a Parquet file, a directory (hive partitions become columns),
a glob, an fsspec URL of any of these, a list of files; the same of CSV files
(:mod:`dasktree.io.csv_source`); a pandas DataFrame, a numpy array (with ``y``),
or a dask DataFrame.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from ..errors import DaskTreeError, DataError, InputError
from .footer import Footer, read_footer
from .integrity import check_statistics, locate_bad_page
from .redact import redact
from .retries import retrying

__all__ = ["Part", "Source", "FileSource", "ParquetSource", "TableSource", "DaskFrameSource", "open_source",
           "open_path"]

DEFAULT_PART_ROWS = 1 << 20


@dataclass(frozen=True)
class Part:
    """One unit of work: rows ``[offset, offset + n_rows)`` of one file or table.

    ``key`` names the file (relative to the dataset root) or the in-memory
    table; with ``offset`` it locates the part's rows.
    """

    index: int
    key: str
    offset: int
    n_rows: int
    row_groups: tuple[int, ...] = ()


class Source:
    """Base of the input sources. Subclasses set ``schema`` and ``parts``."""

    schema: pa.Schema
    parts: list[Part]
    description: str

    @property
    def n_rows(self) -> int:
        return sum(p.n_rows for p in self.parts)

    def read(self, part: Part, columns: Sequence[str]) -> pa.Table:  # pragma: no cover
        raise NotImplementedError

    def bytes_of(self, columns: Sequence[str]) -> int:
        """Bytes one read of ``columns`` takes from storage (0: the data is in memory)."""
        return 0


def _group_row_groups(sizes: Sequence[int], target_rows: int) -> list[tuple[int, ...]]:
    """Consecutive row groups of one file, gathered up to ``target_rows`` rows."""
    groups: list[tuple[int, ...]] = []
    current: list[int] = []
    rows = 0
    for i, n in enumerate(sizes):
        if current and rows + n > target_rows:
            groups.append(tuple(current))
            current, rows = [], 0
        current.append(i)
        rows += n
    if current:
        groups.append(tuple(current))
    return groups


class FileSource(Source):
    """Files on an fsspec filesystem cut into runs of *row groups* (Parquet's, or a CSV file's chunks of
    records: :mod:`dasktree.io.csv_source`): ``group_rows[key]`` holds the rows of each of the file's groups,
    a part's ``row_groups`` the ones it reads, so the out-of-core runner can cut parts into shorter pieces."""

    KIND = "data"  # what its files hold, for messages: "Parquet", "CSV"
    group_rows: dict[str, list[int]]
    column_bytes: dict[str, int]
    _fsspec: Any
    root: str

    def files(self) -> dict[str, str]:  # pragma: no cover
        """Each file's key (its path below the root) and its path."""
        raise NotImplementedError

    def bytes_of(self, columns: Sequence[str]) -> int:
        """Stored bytes one read of ``columns`` takes (Parquet: their column chunks; CSV: the files)."""
        return sum(self.column_bytes.get(c, 0) for c in columns)

    def _relative(self, path: str) -> str:
        """The file's path below the dataset root: the part's key."""
        return posixpath.relpath(path, self.root) if self.root else path

    def _list_files(self, fs, paths: list[str]) -> tuple[str, list[str]]:
        files: list[str] = []
        root: str | None = None
        for raw in paths:
            _, p = _strip(fs, raw)
            if any(ch in p for ch in "*?["):
                matched = sorted(m for m in fs.glob(p) if not fs.isdir(m))
                if not matched:
                    raise InputError(f"{raw}: no file matches this pattern")
                files += matched
            elif fs.isdir(p):
                root = p.rstrip("/")
                found = sorted(
                    f for f in fs.find(p)
                    if not _hidden(f[len(root):]) and not fs.isdir(f)
                )
                if not found:
                    raise DataError(f"{raw}: directory holds no {self.KIND} files")
                files += found
            elif fs.exists(p):
                files.append(p)
            else:
                raise InputError(f"{raw}: no such file or directory")
        if root is None:
            root = posixpath.commonpath(sorted({posixpath.dirname(f) for f in files}))
        return root, files

    def verify(self) -> "VerifiedRecords":
        """Every part read whole, every column parsed, before the work (``--verify``): files without
        page checksums (CSV) are checked for what a read can find, a value that does not parse or a
        ragged record, named by file, line and column as the fit would at that part."""
        rows = sum(self.read(part, self.schema.names).num_rows for part in self.parts)
        return VerifiedRecords(len(self.files()), rows)

    def fingerprint(self) -> list[list]:
        """``[file, size, modified]`` of every file (its key below the root), sorted: what says the data
        is still the data a checkpoint was made of (:mod:`dasktree.checkpoint`)."""
        rows = []
        for key, path in sorted(self.files().items()):
            info = self._fsspec.info(path)
            modified = info.get("mtime", info.get("LastModified", info.get("updated", "")))
            rows.append([key, int(info.get("size") or 0), str(modified)])
        return rows


@dataclass(frozen=True)
class VerifiedRecords:
    """What :meth:`FileSource.verify` read of files without page checksums."""

    files: int
    rows: int

    def line(self) -> str:
        return (f"verified {self.files} files: {self.rows:,} records read and every value parsed "
                "(CSV carries no checksums: damage that still parses is not seen)")


class ParquetSource(FileSource):
    """A Parquet dataset on any fsspec filesystem."""

    KIND = "Parquet"

    def __init__(self, path: str | os.PathLike | Sequence[str], *, part_rows: int = DEFAULT_PART_ROWS,
                 storage_options: dict | None = None):
        import fsspec
        import pyarrow.dataset as ds
        from pyarrow.fs import FSSpecHandler, PyFileSystem

        self.description = redact(str(path)) if not isinstance(path, (list, tuple)) else f"{len(path)} files"
        paths = [os.fspath(p) for p in path] if isinstance(path, (list, tuple)) else [os.fspath(path)]
        try:
            fs, _ = fsspec.core.url_to_fs(paths[0], **(storage_options or {}))
        except (ImportError, ValueError) as exc:
            raise InputError(f"cannot open {paths[0]!r}: {exc}") from None
        try:
            root, files = retrying(lambda: self._list_files(fs, paths), self.description)
        except DaskTreeError:
            raise
        except ValueError as exc:  # fsspec's word on a path it cannot list (a bucket-less "s3://")
            raise InputError(f"cannot list {self.description}: {exc}") from None
        self._fsspec = fs
        self._fs = PyFileSystem(FSSpecHandler(fs))
        self.root = root
        try:
            if len(paths) == 1 and fs.isdir(_strip(fs, paths[0])[1]):
                dataset = retrying(lambda: ds.dataset(
                    files, format="parquet", filesystem=self._fs, partitioning="hive",
                    partition_base_dir=root,
                ), self.description)
            else:
                dataset = retrying(lambda: ds.dataset(files, format="parquet", filesystem=self._fs),
                                   self.description)
        except (pa.ArrowException, OSError) as exc:
            from .not_parquet import convert_hint, text_format

            fmt = text_format(files) if len(paths) == 1 else None
            if fmt is not None:
                raise DataError(convert_hint(paths[0], fmt)) from None
            raise DataError(f"{self.description}: not a readable Parquet dataset: {_first_line(exc)}") from None
        fragments = sorted(dataset.get_fragments(), key=lambda f: f.path)
        self.schema = dataset.schema
        self._format = ds.ParquetFileFormat()
        self._expressions: dict[str, Any] = {}
        self.parts = []
        self.column_bytes: dict[str, int] = {}  # compressed bytes of each column's chunks, all files
        self._signatures: dict[str, str] = {}  # file -> its footer's digest, checked at every read
        self.group_rows: dict[str, list[int]] = {}  # rows of each row group of each file (by its key)
        first_schema = None
        for fragment in fragments:
            footer, physical = self._list_footer(fragment.path)
            if first_schema is None:
                first_schema = (fragment.path, physical)
            else:
                _check_same_schema(first_schema, (fragment.path, physical))
            rel = self._relative(fragment.path)
            self._expressions[rel] = (fragment.path, fragment.partition_expression)
            self._signatures[rel] = footer.digest
            sizes = footer.group_rows
            self.group_rows[rel] = sizes
            for name, size in footer.column_bytes().items():
                self.column_bytes[name] = self.column_bytes.get(name, 0) + size
            offset = 0
            for groups in _group_row_groups(sizes, part_rows):
                n = sum(sizes[i] for i in groups)
                self.parts.append(Part(len(self.parts), rel, offset, n, groups))
                offset += n

    def files(self) -> dict[str, str]:
        return {key: path for key, (path, _) in self._expressions.items()}

    def _list_footer(self, path: str) -> tuple[Footer, pa.Schema]:
        """A file's footer, read by :mod:`dasktree.io.footer` (never through pyarrow's accessors of a
        column chunk, which abort the interpreter on some corrupt footers), and its Arrow schema."""
        def attempt():
            with self._fs.open_input_file(path) as f:
                footer = read_footer(f, path)
            return footer, footer.metadata().schema.to_arrow_schema()

        try:
            return retrying(attempt, path)
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:  # a column name not UTF-8: pyarrow's
            raise DataError(f"{path}: not a Parquet file: {_first_line(exc)}") from None

    def verify(self):
        """Every page of every file read with its checksum, where the writer wrote one
        (:func:`~dasktree.io.integrity.verify_file`, ``--verify``): what was read, or a
        :class:`~dasktree.errors.DataError` naming the file, row group and column at the first fault."""
        from .integrity import Verified, verify_file

        done = Verified()
        for key, (path, _) in sorted(self._expressions.items()):
            footer, _ = self._list_footer(path)
            if footer.digest != self._signatures[key]:
                raise DataError(f"{path}: the file changed since it was listed (its footer differs)")
            done.add(retrying(lambda: verify_file(lambda: self._fs.open_input_file(path), path, footer), path))
        return done

    def read(self, part: Part, columns: Sequence[str]) -> pa.Table:
        """The part's rows, in file order, with hive partition columns filled in.

        Row groups are read with ``ParquetFile.read_row_groups``, which keeps
        their order (a dataset fragment restricted to row groups may not),
        so row ``i`` of the result is row ``offset + i`` of the file.
        """
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        path, expression = self._expressions[part.key]
        keys = ds.get_partition_keys(expression) if expression is not None else {}
        in_file = [c for c in columns if c not in keys]

        def attempt():
            with self._fs.open_input_file(path) as f:
                footer = read_footer(f, path)  # the footer read once, by dasktree (dasktree.io.footer)
                if footer.digest != self._signatures[part.key]:
                    raise DataError(f"{path}: the file changed since the fit listed it (its footer differs): "
                                    "the data changed under the fit")
                file = pq.ParquetFile(f, metadata=footer.metadata(),
                                      page_checksum_verification=True)  # where the pages have them
                return footer, file.read_row_groups(list(part.row_groups), columns=in_file)

        try:
            footer, table = retrying(attempt, path)  # a store failing for a while: backoff (dasktree.io.retries)
        except FileNotFoundError:
            raise DataError(f"{path}: the file is gone since the fit listed it: the data changed under the fit") from None
        except (pa.ArrowException, OSError) as exc:
            raise locate_bad_page(lambda: self._fs.open_input_file(path), path, list(part.row_groups),
                                  in_file, exc) from None
        check_statistics(table, footer, list(part.row_groups), path)  # corrupt pages decode too
        arrays = []
        for name in columns:
            field = self.schema.field(name)
            if name in keys:
                arrays.append(pa.array([keys[name]] * table.num_rows, type=field.type))
            else:  # the file's own type: kinds agree across files (checked), the encoders cast
                arrays.append(table.column(name))
        return pa.table(arrays, names=list(columns))


def _strip(fs, path: str) -> tuple[Any, str]:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    stripped = fs._strip_protocol(path)
    return protocol, stripped


def _hidden(rel: str) -> bool:
    """Files pyarrow and Spark skip: names starting with ``_`` or ``.`` (``_SUCCESS``, ``.crc``)."""
    return any(piece.startswith(("_", ".")) and "=" not in piece for piece in rel.split("/") if piece)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _check_same_schema(first: tuple[str, pa.Schema], other: tuple[str, pa.Schema]) -> None:
    """Files of one dataset must agree on columns and on each column's kind."""
    from .schema import arrow_kind

    (path_a, a), (path_b, b) = first, other
    names_a, names_b = set(a.names), set(b.names)
    if names_a != names_b:
        missing = sorted(names_a - names_b) or sorted(names_b - names_a)
        raise DataError(
            f"mixed schemas: {path_b} and {path_a} differ in columns {missing}"
        )
    for name in a.names:
        ta, tb = a.field(name).type, b.field(name).type
        if ta != tb and arrow_kind(ta) != arrow_kind(tb):
            raise DataError(
                f"mixed schemas: column {name!r} is {ta} in {path_a} but {tb} in {path_b}"
            )


class TableSource(Source):
    """An in-memory Arrow table cut into row slices."""

    def __init__(self, table: pa.Table, *, description: str = "in-memory table",
                 part_rows: int = DEFAULT_PART_ROWS):
        self.table = table
        self.schema = table.schema
        self.description = description
        n = table.num_rows
        step = max(1, part_rows)
        starts = range(0, n, step) if n else [0]
        self.parts = [
            Part(i, "table", s, min(step, n - s)) for i, s in enumerate(starts)
        ]

    def read(self, part: Part, columns: Sequence[str]) -> pa.Table:
        return self.table.select(list(columns)).slice(part.offset, part.n_rows)


class DaskFrameSource(Source):
    """A dask DataFrame: each Dask partition is a part (read on the workers)."""

    def __init__(self, frame):
        self.frame = frame
        self.schema = pa.Schema.from_pandas(frame._meta, preserve_index=False)
        self.description = "dask DataFrame"
        self.parts = [Part(i, f"partition-{i}", 0, -1) for i in range(frame.npartitions)]

    @property
    def n_rows(self) -> int:  # unknown until read
        return -1

    def read(self, part: Part, columns: Sequence[str]) -> pa.Table:
        raise InputError("a dask DataFrame is read through its own graph, not by part")


def frame_to_table(frame) -> pa.Table:
    """A pandas DataFrame as an Arrow table, column names as strings."""
    frame = frame.rename(columns=str)
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise DataError(f"cannot convert the DataFrame to Arrow: {_first_line(exc)}") from None


NUMBER_KINDS = "biuf"
"""numpy dtype kinds whose arrays :func:`array_table` takes as they are: booleans, integers, floats."""


def array_table(array: np.ndarray, y, target: str | None) -> pa.Table | None:
    """A 2-D numpy array of numbers (columns ``x0, x1, ...``) and ``y`` (a numpy array of numbers, as
    column ``target``, default ``"target"``, made unique) as an Arrow table, the one
    :func:`frame_to_table` makes of their DataFrame (NaN a null, as pandas' conversion reads it)
    without building the DataFrame; None for any other input (its DataFrame's conversion decides)."""
    if array.dtype.kind not in NUMBER_KINDS or not isinstance(y, np.ndarray) or y.ndim != 1 \
            or y.dtype.kind not in NUMBER_KINDS:
        return None
    if len(y) != array.shape[0]:
        raise InputError(f"X has {array.shape[0]} rows but y has {len(y)}")
    names = [f"x{i}" for i in range(array.shape[1])]
    name = target or "target"
    while name in names:
        name = "_" + name
    columns = [pa.array(array[:, i], from_pandas=True) for i in range(array.shape[1])]
    return pa.table([*columns, pa.array(y, from_pandas=True)], names=[*names, name])


def open_source(data, y=None, *, target: str | None = None, part_rows: int = DEFAULT_PART_ROWS,
                storage_options: dict | None = None) -> tuple[Source, str]:
    """Turn any accepted input into a :class:`Source` and the target column's name.

    ``storage_options`` go to fsspec for a path or URL (e.g. an S3 endpoint).
    ``data`` with ``y``: ``y`` is attached as a column named ``target`` (default
    ``"target"``, made unique). Without ``y``, ``target`` must name a column.
    """
    if isinstance(data, (str, os.PathLike)) or (
        isinstance(data, (list, tuple)) and data and all(isinstance(p, (str, os.PathLike)) for p in data)
    ):
        if y is not None:
            raise InputError("y is not accepted with a dataset path: name the column with target=")
        return open_path(data, part_rows=part_rows, storage_options=storage_options), _need_target(target)
    if is_dask_frame(data):
        if y is not None:
            raise InputError("y is not accepted with a dask DataFrame: name the column with target=")
        return DaskFrameSource(data), _need_target(target)
    import pandas as pd  # here: a dataset's path needs no pandas (a fifth of a second to import)

    if isinstance(data, np.ndarray) or (isinstance(data, list) and not isinstance(data, str)):
        array = np.asarray(data)
        if array.ndim != 2:
            raise InputError(f"X must be 2-D (rows x features), got shape {array.shape}")
        table = array_table(array, y, target)
        if table is not None:  # numbers: their Arrow columns straight from the array, no DataFrame between
            return TableSource(table, description="DataFrame", part_rows=part_rows), table.column_names[-1]
        data = pd.DataFrame(array, columns=[f"x{i}" for i in range(array.shape[1])])
    if isinstance(data, pd.DataFrame):
        frame = data.reset_index(drop=True)
        if y is not None:
            y = np.asarray(y) if not isinstance(y, pd.Series) else y.reset_index(drop=True)
            if len(y) != len(frame):
                raise InputError(f"X has {len(frame)} rows but y has {len(y)}")
            name = target or (str(y.name) if isinstance(y, pd.Series) and y.name is not None else "target")
            while name in frame.columns:
                name = "_" + name
            frame = frame.assign(**{name: y})
            target = name
        return TableSource(frame_to_table(frame), description="DataFrame", part_rows=part_rows), _need_target(target)
    raise InputError(
        f"cannot learn from {type(data).__name__}: pass a Parquet path or URL, "
        "a CSV path, a pandas or dask DataFrame, or a numpy array with y"
    )


def open_path(data, *, part_rows: int = DEFAULT_PART_ROWS, storage_options: dict | None = None) -> FileSource:
    """A dataset's path, URL, glob or list of them as its source: CSV (a
    :class:`~dasktree.io.csv_source.CSV`, or files named ``*.csv`` / ``*.tsv``, compressed or not, or a
    directory of them: :mod:`dasktree.io.csv_source`), else Parquet."""
    from .csv_source import CSV, CsvSource, is_csv_path

    if isinstance(data, CSV) or is_csv_path(data, storage_options):
        return CsvSource(data, part_rows=part_rows, storage_options=storage_options)
    return ParquetSource(data, part_rows=part_rows, storage_options=storage_options)


def _need_target(target: str | None) -> str:
    if not target:
        raise InputError("no target: name the class column with target= (CLI: --target)")
    return target


def is_dask_frame(obj) -> bool:
    """Whether ``obj`` is a dask DataFrame, told by its class's name and package: io/ never imports
    Dask (the engine reads the frame, through its own graph)."""
    return any(c.__name__ == "DataFrame" and c.__module__.partition(".")[0] == "dask" for c in type(obj).__mro__)
