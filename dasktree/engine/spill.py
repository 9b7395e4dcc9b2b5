"""The streamed fit's codes on local disk: each piece encoded once, read back as codes every pass.

SLIQ and SPRINT keep their attribute lists on disk and read them once per
level; a streamed fit (:mod:`dasktree.engine.stream_runner`) does the same with
its encoded pieces. The first level pass reads a piece's row groups from
Parquet, encodes them and writes the piece's arrays (codes, classes, fold parts,
weights) to a file of a private directory; every later pass reads those bytes
back (one or two bytes a value, sequentially, often from the page cache) instead
of decoding Parquet and binning every value again. The rows' start nodes (where
each row's walk resumes, :class:`~dasktree.binning.encode.Encoded`) are written
after every pass too, so a pass walks rows down from their last node, as the
cached fit does, not from the root. A piece whose rows have all reached leaves
is not read at all.

The spill goes under ``where`` (default: :func:`tempfile.gettempdir`, so
``$TMPDIR`` chooses the disk) in a ``dasktree-spill-PID@HOST-*`` directory removed when the
fit ends; one left by a killed process of this host is removed by the next spill made there. It is made only when that disk has room for the codes and a margin
(:func:`spill_bytes`), and, on a file system kept in memory (tmpfs), when the codes
fit in a quarter of the memory limit, as codes kept in memory must; otherwise, or when a write fails (a disk filling up
meanwhile), the passes read Parquet as before. Either way the counts, and the
forest, are the same: the spill holds exactly the arrays the pass would have
encoded, and a row walked from its last node reaches the node it would reach
from the root.

Memory: a piece read back takes its codes' bytes, less than the Arrow table and
codes the formula of :class:`~dasktree.engine.memory_plan.MemoryPlan` counts for
it; the files themselves are the page cache's, not the process's.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass

import numpy as np

from ..binning.encode import Encoded

__all__ = ["Spill", "spill_bytes", "spill_record", "MARGIN_BYTES"]

MARGIN_BYTES = 1 << 30  # left free on the spill's disk beyond the codes, for everything else on it
START_BYTES = 8  # a row's start nodes as spilled: up to two int32 lines (more lines take more, rarely)


def spill_bytes(n_rows: int, n_features: int, code_bytes: int, repeats: int = 1, weighted: bool = False) -> int:
    """Bytes a spill of ``n_rows`` rows takes: codes, class (int32), fold parts (int16 per
    repetition), weights (int32) and two lines of start nodes."""
    row = n_features * code_bytes + 4 + 2 * repeats + (4 if weighted else 0) + START_BYTES
    return n_rows * row


@dataclass
class _Piece:
    """What a spilled piece's file holds: the arrays' shapes and dtypes, and its state."""

    codes: tuple
    code_dtype: np.dtype
    part_shape: tuple
    weighted: bool
    n_dropped: int
    reordered: int = 0  # the Encoded's reorder count when its rows were written
    start_shape: tuple | None = None  # the start lines written (leading lines holding a start), or None
    start_width: int = 0
    start_dtype: np.dtype | None = None
    start_forest: str = ""
    grouped: tuple | None = None
    live: bool = True  # some row still has a start (False: every row of it reached a leaf)


class Spill:
    """Spilled pieces by index, in one private directory; thread-safe for distinct pieces.

    :meth:`load` gives a piece's :class:`~dasktree.binning.encode.Encoded` as last stored (None
    when not spilled); :meth:`store` writes what a pass changed. After any failed write the spill
    stops (every file removed) and :attr:`active` is False: the passes read Parquet again."""

    def __init__(self, directory: str):
        self.directory = directory
        self.pieces: dict[int, _Piece] = {}
        self.active = True
        self.bytes_read = 0
        self._lock = threading.Lock()

    @classmethod
    def create(cls, need: int, where: str | None = None, memory_room: int | None = None) -> "Spill | None":
        """A spill under ``where`` (default: the system's temporary directory) when its disk has
        ``need`` bytes free beyond :data:`MARGIN_BYTES`; else None. On a file system kept in memory
        (tmpfs, ramfs: ``/tmp`` on some systems) the spill takes memory, so it is made only when
        ``need`` is at most ``memory_room`` too."""
        where = where or tempfile.gettempdir()
        try:
            if shutil.disk_usage(where).free < need + MARGIN_BYTES:
                return None
            if memory_room is not None and need > memory_room and in_memory_file_system(where):
                return None
            remove_orphans(where)
            return cls(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}@{socket.gethostname()}-", dir=where))
        except OSError:
            return None

    def _path(self, index: int, kind: str) -> str:
        return os.path.join(self.directory, f"piece-{index:06d}.{kind}")

    def skips(self, index: int, forest_id: str, width: int) -> bool:
        """Whether piece ``index`` counts nothing in forest ``forest_id``: every row reached a leaf."""
        piece = self.pieces.get(index) if self.active else None
        return (piece is not None and not piece.live and piece.start_forest == forest_id
                and piece.start_width == width)

    def load(self, index: int) -> Encoded | None:
        """Piece ``index`` as last stored, or None when it is not spilled (or the spill stopped)."""
        piece = self.pieces.get(index) if self.active else None
        if piece is None:
            return None
        try:
            with open(self._path(index, "rows"), "rb") as f:
                codes = _read(f, piece.code_dtype, piece.codes)
                n = piece.codes[1]
                y = _read(f, np.dtype(np.int32), (n,))
                part = _read(f, np.dtype(np.int16), piece.part_shape)
                weight = _read(f, np.dtype(np.int32), (n,)) if piece.weighted else None
            start = None
            if piece.start_dtype is not None:
                start = np.zeros((piece.start_width, n), dtype=piece.start_dtype)
                if piece.start_shape is not None:
                    with open(self._path(index, "start"), "rb") as f:
                        start[:piece.start_shape[0]] = _read(f, piece.start_dtype, piece.start_shape)
        except (OSError, ValueError):
            self.stop()
            return None
        with self._lock:
            self.bytes_read += codes.nbytes + y.nbytes + part.nbytes + (0 if weight is None else weight.nbytes)
        return Encoded(codes, y, part, piece.n_dropped, start, piece.start_forest, piece.grouped, weight,
                       reorders=piece.reordered)

    def store(self, index: int, encoded: Encoded) -> None:
        """Write what a pass changed of piece ``index``: all its arrays the first time or after its
        rows were reordered, else only its start nodes."""
        if not self.active:
            return
        piece = self.pieces.get(index)
        try:
            if piece is None or piece.reordered != encoded.reorders:
                piece = _Piece(encoded.codes.shape, encoded.codes.dtype, encoded.part.shape,
                               encoded.weight is not None, encoded.n_dropped, encoded.reorders)
                with open(self._path(index, "rows"), "wb") as f:
                    for array in (encoded.codes, encoded.y, encoded.part, encoded.weight):
                        if array is not None:
                            np.ascontiguousarray(array).tofile(f)
            self._store_start(index, piece, encoded)
        except OSError:
            self.stop()
            return
        with self._lock:
            self.pieces[index] = piece

    def _store_start(self, index: int, piece: _Piece, encoded: Encoded) -> None:
        start = encoded.start
        piece.start_forest, piece.grouped = encoded.start_forest, encoded.grouped
        if start is None:
            piece.start_dtype, piece.start_shape, piece.start_width, piece.live = None, None, 0, True
            return
        lines = 0
        for lines, line in enumerate(start, 1):  # the leading lines holding a start (the rest are zeros)
            if not line.any():
                lines -= 1
                break
        piece.start_dtype, piece.start_width, piece.live = start.dtype, start.shape[0], lines > 0
        piece.start_shape = (lines, start.shape[1]) if lines else None
        if lines:
            with open(self._path(index, "start"), "wb") as f:
                np.ascontiguousarray(start[:lines]).tofile(f)

    def stop(self) -> None:
        """Stop spilling: every file removed; the passes read Parquet again."""
        self.active = False
        self.pieces.clear()
        shutil.rmtree(self.directory, ignore_errors=True)

    def close(self) -> None:
        self.stop()


PREFIX = "dasktree-spill-"  # a spill's directory: PREFIX + pid@host + a random suffix


def remove_orphans(where: str) -> None:
    """Remove the spills under ``where`` left by processes of this host that are gone (killed
    before they could remove their own). Another host's spills, and a live process's, stay."""
    host = socket.gethostname()
    for name in os.listdir(where):
        owner, _, rest = name[len(PREFIX):].partition("@")
        if not name.startswith(PREFIX) or not owner.isdigit() or rest.rpartition("-")[0] != host:
            continue
        if not _alive(int(owner)):
            shutil.rmtree(os.path.join(where, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


MEMORY_FILE_SYSTEMS = ("tmpfs", "ramfs")


def in_memory_file_system(path: str) -> bool:
    """Whether ``path`` lies on a file system kept in memory (the longest mount point of
    ``/proc/mounts`` holding it; False where that file is absent)."""
    path = os.path.realpath(path)
    best, kind = "", ""
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ")
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, fields[2]
    except OSError:
        return False
    return kind in MEMORY_FILE_SYSTEMS


def spill_record(runner) -> dict:
    """The run record's line on the spill: bytes the level passes read back from it (a streaming
    runner's; nothing for the others)."""
    read = getattr(runner, "spill_read", None)
    return {} if read is None else {"spill_bytes_read": int(read)}


def _read(f, dtype: np.dtype, shape: tuple) -> np.ndarray:
    """``shape`` values of ``dtype`` read from ``f`` at its position (a short file is an error)."""
    count = int(np.prod(shape))
    out = np.fromfile(f, dtype=dtype, count=count)
    if out.size != count:
        raise ValueError("spill file shorter than written")
    return out.reshape(shape)
