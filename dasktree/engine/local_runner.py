"""The in-process runner: every pass in this process, on a pool of threads.

On one machine, with data whose encoded rows fit in memory, this is the
embedded default (:mod:`dasktree.engine.place`): no worker processes to start, no data
moved between processes; the compiled kernels release the GIL, so the threads
count in parallel. It runs the same functions of :mod:`dasktree.engine.part_tasks` and
:func:`dasktree.levels.level_search.search_group` as :class:`dasktree.engine.dask_runner.DaskRunner`,
so both give the same forest bit for bit.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from ..binning.spec import BinSpec
from ..binning.summary import Summary
from ..binning.summary_stream import merge_streaming
from ..levels import small
from ..io.schema import Roles
from ..io.sources import Source
from ..kernels.subtraction import fill_derived, fills_of
from .part_groups import arrow_row_bytes, assign_parts, physical_memory
from .progress import Progress
from .runner import PassCounter
from .part_tasks import PassShape, encode_parts, histogram_of, summarize_tables

__all__ = ["LocalRunner", "IN_PROCESS", "fits_in_memory", "cores"]


@dataclass
class _LastPass:
    """A level pass's summed histogram and where its nodes' slots were: what the next pass's
    derived slots are filled from."""

    forest_id: str
    hist: np.ndarray
    node_slot: np.ndarray  # every node's slot, derived ones included (-1: not in the pass)
    slot_base: np.ndarray
    slot_wide: np.ndarray | None

IN_PROCESS = "inprocess"
"""``scheduler=`` naming this runner explicitly (the default picks it when the data fits)."""

MEMORY_SHARE = 4  # the in-process runner takes data whose tables and codes fit in this share of memory


def cores() -> int:
    """The processors this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def fits_in_memory(source: Source, roles: Roles) -> bool:
    """Whether a Parquet dataset's Arrow tables and codes of ``roles``' columns fit in a quarter of
    this machine's memory, as this runner keeps them (:func:`dasktree.engine.place.choose` decides
    with it where a fit runs)."""
    columns = roles.columns
    row_bytes = arrow_row_bytes(source.schema, columns) + 2 * len(columns) + 6
    return source.n_rows * row_bytes <= physical_memory() // MEMORY_SHARE


class LocalRunner(PassCounter):
    """All parts in this process, on a pool of threads; the codes are kept after the first level pass.

    The numba kernels (encoding, counting) and numpy's sorts release the GIL, so
    ``threads`` threads count one group of parts each (contiguous, similar rows,
    :func:`~dasktree.engine.part_groups.assign_parts`), as the worker threads of a
    cluster do, without starting processes or moving data between them. The
    counts are exact integers, so the sums do not depend on the grouping or on
    the number of threads. With ``keep_tables`` pass 0's Arrow tables stay in
    memory for the first level pass to encode (Parquet is read once).
    """

    def __init__(self, source: Source, roles: Roles, *, folds=None, progress: Progress | None = None,
                 threads: int = 1, keep_tables: bool = False):
        super().__init__(progress)
        self.source, self.roles, self.folds = source, roles, folds
        self.threads = max(1, int(threads))
        self.keep_tables = keep_tables
        self.encoded = None
        self._tables: list | None = None  # pass 0's tables per part, until the first level pass encodes them
        self.spec: BinSpec | None = None
        self._pool = None
        self._last: _LastPass | None = None  # the last level pass's summed histogram, for subtraction
        self.derived = 0  # nodes derived rather than counted so far

    def _map(self, func, items: list) -> list:
        """``func`` over ``items``, in order, on the pool (in this thread when there is one thread)."""
        if self.threads == 1 or len(items) < 2:
            out = []
            for item in items:
                out.append(func(item))
                self.progress.advance()
            return out
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="dasktree")
        out = []
        for result in self._pool.map(func, items):
            out.append(result)
            self.progress.advance()
        return out

    def _stream(self, func: Callable, items: list, window: int) -> Iterator:
        """``func`` over ``items`` on the pool, in order, at most ``window`` results outstanding."""
        if self.threads == 1 or len(items) < 2:
            for item in items:
                yield func(item)
                self.progress.advance()
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="dasktree")
        queue: list = []
        for item in items:
            queue.append(self._pool.submit(func, item))
            if len(queue) >= window:
                yield queue.pop(0).result()
                self.progress.advance()
        for future in queue:
            yield future.result()
            self.progress.advance()

    def summary(self, max_bins: int) -> Summary:
        self._count(True)
        self.progress.start("pass 0 (summary)", len(self.source.parts))
        source, roles = self.source, self.roles

        def one(part):
            table = source.read(part, roles.columns)
            summary = summarize_tables([table], parts=[part], source=source, roles=roles, max_bins=max_bins)
            return summary, (table if self.keep_tables else None)

        tables = []

        def summaries():  # merged as they come (a continuous column's sketch is larger than its values)
            for summary, table in self._stream(one, self.source.parts, self.threads + 1):
                tables.append(table)
                yield summary

        merged = merge_streaming(summaries())
        self._tables = tables if self.keep_tables else None
        self.progress.finish()
        return merged

    def prepare(self, spec: BinSpec, n_folds: int, level_passes: bool = True) -> None:
        """Encode with ``spec`` from now on; codes cached under another spec are dropped.
        (``level_passes`` is the Dask runner's: whether to start its holders. In process there are none.)"""
        if self.encoded is not None and (self.spec is not spec or self.shape.n_folds != n_folds):
            self.encoded = None
        self._last = None
        self.spec = spec
        self.shape = PassShape.of(spec, n_folds)

    def _encode(self, label: str) -> list:
        """One block of encoded rows per thread's group of parts (pass 0's tables when kept)."""
        groups = assign_parts([p.n_rows for p in self.source.parts], self.threads)
        tables, self._tables = self._tables, None  # the codes replace them
        source, roles, spec, folds = self.source, self.roles, self.spec, self.folds

        def one(group):
            parts = [source.parts[i] for i in group]
            kept = None if tables is None else [tables[i] for i in group]
            return encode_parts(kept, parts=parts, source=source, roles=roles, spec=spec, folds=folds)

        return [block for blocks in self._map(one, groups) for block in blocks]

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        """One pass: the histogram of ``plan``'s slots, then ``func(hist, chunk, **kwargs)`` per chunk."""
        self._count(self.encoded is None and self._tables is None)
        self._last = None  # a level pass keeps its histogram once it is searched
        if self.encoded is None:
            self.encoded = self._encode(label)
        self.progress.start(label, len(self.encoded))
        shape = self.shape

        def one(encoded):
            return histogram_of(encoded, plan=plan, shape=shape, out=np.zeros(plan.size, dtype=np.int64))

        hists = self._map(one, self.encoded) or [np.zeros(plan.size, dtype=np.int64)]
        total = hists[0]
        for h in hists[1:]:  # exact integers: the sum is the same in any grouping
            total += h
        results = [func(total, chunk, **kwargs) for chunk in chunks]
        self.progress.finish()
        return results

    max_histogram_mb: float | None = None  # under a memory_limit: the histograms' budget (engine.place)
    gather_budget_mb: float | None = None  # small nodes' gathered rows may take this much (None: the default)
    rows_gathered = 0  # rows the last small pass gathered
    gathers_once = True  # a bagged forest's rows gathered once, its members grown from them (levels.small)
    keeps_rows = True  # the encoded rows stay: a root gathered once views their multiplicities

    def small_pass(self, gather: small.GatherPlan, func, label: str, **kwargs) -> Iterator:
        """One pass gathering the rows of ``gather``'s jobs (:mod:`dasktree.levels.small`), then
        ``func(chunk, **kwargs)`` per chunk of jobs on the threads; their results in order, each given as
        soon as it and those before it are grown, while the threads grow the next (the caller attaches
        one chunk's subtrees while the others grow, and a grower's room, twice its rows' nodes, is let go
        chunk by chunk rather than held for the whole pass). A bagged forest's rows are gathered once and
        grown in chunks of members (:class:`~dasktree.levels.small.BagRows`)."""
        self._count(self.encoded is None and self._tables is None)
        self._last = None
        if self.encoded is None:
            self.encoded = self._encode(label)
        self.progress.start(label, len(self.encoded) + 1)
        once = small.gathers_once(self)
        pieces = self._map(lambda encoded: small.gather_block(encoded, gather, once), self.encoded)
        gathered = small.merge_gathered(pieces, gather, once=once)
        del pieces
        self.rows_gathered = gathered.n_rows
        chunks = gathered.chunks(4 * self.threads if self.threads > 1 else 1)
        return self._grown(lambda chunk: func(chunk, **kwargs), chunks)

    def _grown(self, grow, chunks: list) -> Iterator:
        """:meth:`small_pass`'s chunks grown, in order, one more outstanding than there are threads (the
        threads stay busy while the caller takes a result)."""
        yield from self._stream(grow, chunks, self.threads + 1)
        self.progress.finish()

    def level_pass(self, plan, requests, context, label: str):
        """Count ``plan`` and search ``requests`` in the summed histogram as ``context`` does
        (``context.search``), either task's. A branch's largest child is derived, not counted,
        when the last pass counted its parent (:mod:`dasktree.kernels.subtraction`): the summed
        histogram of the last pass is kept for it, one histogram more than the pass's own."""
        last, self._last = self._last, None
        fills = None
        if plan.derived and last is not None and last.forest_id == plan.forest_id and not plan.mixed:
            fills = fills_of(plan, last.node_slot, last.slot_base, last.slot_wide)
            counting = dataclasses.replace(plan, fills=())  # the derived nodes' rows move, uncounted
        else:
            counting, last = plan.counting_all(), None
        held = [last]  # let go once the derived slots are filled

        def search(total: np.ndarray, chunk, *, context) -> object:
            if fills is not None:
                fill_derived(total, [held[0].hist], fills, plan.cells)
            held.clear()
            slots = plan.kept_slots()
            if slots is not None:
                self._last = _LastPass(plan.forest_id, total, *slots)
            return context.search(total, chunk)

        [results] = self.apply_pass(counting, search, [requests], label, context=context)
        if fills is not None:
            self.derived += len(plan.derived)
        return results

    def close(self) -> None:
        self._last = None
        self.encoded, self._tables = None, None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
