"""Out of core in this process: every pass streams the dataset's pieces through a pool of threads.

When a dataset's codes do not fit in memory (or with ``cache=False``), a fit
still runs here, without a cluster (:func:`dasktree.engine.memory_plan.runner_kind`).
Each pass hands the dataset's *pieces* (runs of a file's row groups, at most
:data:`PIECE_ROWS` rows unless one row group holds more) to ``threads`` threads;
a thread takes a piece, counts it into its own int64 histogram, then lets it go.
The first level pass reads the piece from Parquet and encodes it, and the piece's
codes go to a spill on local disk (:mod:`dasktree.engine.spill`); the later
passes read them back with each row's node from the last pass, and skip pieces
whose rows all reached leaves (without room for a spill, every pass reads
Parquet). The compiled kernels and Arrow's readers release the GIL, so
the threads read and count in parallel, and no more than ``threads`` pieces are
in memory at once. Pass 0 adds each piece's summary to one running sum as it comes
(:func:`~dasktree.binning.summary_stream.merge_streaming`, bounded by the grid). So the
peak memory is

    BASE + threads x piece rows x row bytes + (threads + 2) x histogram + summary

whatever the rows (:class:`~dasktree.engine.memory_plan.MemoryPlan` plans it
against ``memory_limit`` and lowers ``max_histogram_mb`` to fit it). What a pass
frees goes back to the system as it goes (glibc's ``malloc_trim``: every
``threads`` pieces of pass 0, and after each pass): otherwise the heap keeps pass
0's sketches, fragmented over the threads' arenas, through every later pass, and
that residue grows with the pieces read (on 4M continuous rows, a peak of 914 MB
without it, 716 MB with it).

It runs the same functions of :mod:`dasktree.engine.part_tasks` as the other runners,
on rows whose folds follow their content (:mod:`dasktree.io.row_hash`), and the
counts are exact integers: the forest is the same, bit for bit, as the cached
fit's and the cluster's.
"""

from __future__ import annotations

import threading

import numpy as np

from ..binning.spec import BinSpec
from ..binning.summary import Summary
from ..binning.summary_stream import merge_streaming
from ..io.schema import Roles
from ..io.sources import FileSource, Part, Source
from .local_runner import LocalRunner
from .memory_plan import MEMORY_SHARE, MemoryPlan, _row_bytes
from .progress import Progress
from .spill import Spill, spill_bytes
from .part_tasks import PassShape, encode_part, histogram_of, summarize_tables

__all__ = ["StreamRunner", "pieces_of", "PIECE_ROWS"]

PIECE_ROWS = 1 << 17  # a piece gathers a file's consecutive row groups up to this many rows


def pieces_of(source: Source, rows: int = PIECE_ROWS) -> list[Part]:
    """The source's parts cut at row groups into runs of at most ``rows`` rows (one row group
    larger than that is a piece alone). A piece keeps its part's file and offset."""
    if not isinstance(source, FileSource):
        return list(source.parts)
    pieces: list[Part] = []
    for part in source.parts:
        sizes = source.group_rows[part.key]
        offset, run, n = part.offset, [], 0
        for g in part.row_groups:
            if run and n + sizes[g] > rows:
                pieces.append(Part(len(pieces), part.key, offset, n, tuple(run)))
                offset, run, n = offset + n, [], 0
            run.append(g)
            n += sizes[g]
        if run:
            pieces.append(Part(len(pieces), part.key, offset, n, tuple(run)))
    return pieces


class StreamRunner(LocalRunner):
    """Every pass reads the dataset anew, a piece per thread at a time; nothing is cached.

    ``memory_limit`` (bytes; None: this machine's memory) is planned against
    (:class:`~dasktree.engine.memory_plan.MemoryPlan`): :attr:`max_histogram_mb` is the
    histogram budget the fit's node groups must keep to."""

    def __init__(self, source: Source, roles: Roles, *, folds=None, progress: Progress | None = None,
                 threads: int = 1, memory_limit: int | None = None, piece_rows: int = PIECE_ROWS):
        super().__init__(source, roles, folds=folds, progress=progress, threads=threads, keep_tables=False)
        self.pieces = pieces_of(source, piece_rows)
        largest = max((p.n_rows for p in self.pieces), default=0)
        self.memory = MemoryPlan.of(memory_limit, self.threads, largest, _row_bytes(source, roles))
        self.max_histogram_mb = self.memory.max_histogram_mb()
        self.spill: Spill | None = None
        self.spill_read = 0  # bytes the level passes read back from the spill
        self.no_room = False  # the spill's disk had no room: every pass reads Parquet

    def _spill(self) -> Spill | None:
        """The spill of this spec's pieces, made at the first level pass when its disk has room."""
        if self.spill is None and not self.no_room:
            spec, repeats = self.spec, (self.folds.repeats if self.folds is not None else 1)
            need = spill_bytes(self.source.n_rows, spec.n_features, np.dtype(spec.code_dtype).itemsize, repeats,
                               spec.weighting is not None)
            self.spill = Spill.create(need, memory_room=self.memory.limit // MEMORY_SHARE)
            self.no_room = self.spill is None
        return self.spill if self.spill is not None and self.spill.active else None

    def summary(self, max_bins: int) -> Summary:
        self._count(True)
        self.progress.start("pass 0 (summary)", len(self.pieces))
        source, roles = self.source, self.roles

        def one(piece: Part) -> Summary:
            table = source.read(piece, roles.columns)
            return summarize_tables([table], parts=[piece], source=source, roles=roles, max_bins=max_bins)

        def trimmed(summaries):  # the sketches merged so far, given back every few pieces
            for i, summary in enumerate(summaries):
                if i % self.threads == 0:
                    _trim()
                yield summary

        merged = merge_streaming(trimmed(self._stream(one, self.pieces, self.threads + 1)))
        _trim()
        self.progress.finish()
        return merged

    def prepare(self, spec: BinSpec, n_folds: int, level_passes: bool = True) -> None:
        """Count with ``spec`` from now on; raises when one node's histogram cannot fit the memory limit.
        Pieces spilled under another spec or folds are dropped."""
        self._last = None
        if self.spill is not None and (self.spec is not spec or self.shape.n_folds != n_folds):
            self.spill.close()
            self.spill = None
        self.spec = spec
        self.shape = PassShape.of(spec, n_folds)
        slices = n_folds * (self.folds.repeats if self.folds is not None else 1)  # the root's, the most
        self.memory.check_node(spec.total_bins * spec.n_classes * 8 * slices,
                               f"{spec.n_features} attributes of {spec.total_bins} bins in all"
                               f"{f' and {slices} fold parts' if slices > 1 else ''}")

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        """One pass: every piece read back from the spill (else read from Parquet and encoded) and
        counted, a thread's pieces into its own histogram; then ``func(total, chunk, **kwargs)`` per chunk."""
        self._count(False)  # a Parquet read is counted below, if a piece needed one
        self._last = None  # a level pass keeps its histogram once it is searched (LocalRunner.level_pass)
        read_parquet = []
        self.progress.start(label, len(self.pieces))
        source, roles, spec, folds, shape = self.source, self.roles, self.spec, self.folds, self.shape
        counters: list[np.ndarray] = []
        mine = threading.local()
        lock = threading.Lock()
        spill = self._spill()
        walks = plan.keeps_starts  # a classification plan's rows keep start nodes

        def one(piece: Part) -> None:
            counter = getattr(mine, "counter", None)
            if counter is None:
                counter = mine.counter = np.zeros(plan.size, dtype=np.int64)
                with lock:
                    counters.append(counter)
            if spill is not None and walks and spill.skips(piece.index, plan.forest_id, plan.start_width):
                return
            encoded = None if spill is None else spill.load(piece.index)
            if encoded is None:
                encoded = encode_part(piece, source=source, roles=roles, spec=spec, folds=folds)
                read_parquet.append(True)  # list.append: atomic across the threads
            histogram_of(encoded, plan=plan, shape=shape, out=counter)
            if spill is not None:
                spill.store(piece.index, encoded)

        for _ in self._stream(one, self.pieces, 2 * self.threads):
            pass
        self.parquet_reads += int(bool(read_parquet))
        if spill is not None:
            self.spill_read, spill.bytes_read = self.spill_read + spill.bytes_read, 0
        total = counters[0] if counters else np.zeros(plan.size, dtype=np.int64)
        for counter in counters[1:]:  # exact integers: the same sum in any grouping
            total += counter
        del counters
        results = [func(total, chunk, **kwargs) for chunk in chunks]
        del total
        _trim()
        self.progress.finish()
        return results

    def small_pass(self, gather, func, label: str, **kwargs) -> list:
        """One pass gathering the rows of ``gather``'s jobs (:mod:`dasktree.levels.small`), a piece at a
        time (from the spill, else Parquet), then ``func(chunk, **kwargs)`` per chunk of jobs on the
        threads. Only the gathered rows stay: :attr:`gather_budget_mb` bounds them."""
        from ..levels import small

        self._count(False)
        self._last = None
        read_parquet = []
        self.progress.start(label, len(self.pieces) + 1)
        source, roles, spec, folds = self.source, self.roles, self.spec, self.folds
        spill = self._spill()

        def one(piece: Part) -> tuple:
            encoded = None if spill is None else spill.load(piece.index)
            if encoded is None:
                encoded = encode_part(piece, source=source, roles=roles, spec=spec, folds=folds)
                read_parquet.append(True)
            if spill is not None:
                spill.store(piece.index, encoded)
            return small.gather_block(encoded, gather, once)

        once = small.gathers_once(self)  # a bagged forest's rows once, grown in chunks of members
        pieces = list(self._stream(one, self.pieces, 2 * self.threads))
        self.parquet_reads += int(bool(read_parquet))
        gathered = small.merge_gathered(pieces, gather, once=once)
        del pieces
        self.rows_gathered = gathered.n_rows
        results = self._map(lambda chunk: func(chunk, **kwargs), gathered.chunks(4 * self.threads))
        del gathered
        _trim()
        self.progress.finish()
        return results

    keeps_rows = False  # rows gathered once are copies: the pieces are let go

    @property
    def gather_budget_mb(self) -> float:
        """What gathered rows may take: the histograms' share of the memory plan (a small pass holds
        no histogram)."""
        return float(self.max_histogram_mb) * (self.threads + 2)

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        super().close()


def _trim() -> None:
    """Give the memory freed by a pass back to the system (glibc's ``malloc_trim``; elsewhere nothing)."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            import ctypes

            _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM = None
