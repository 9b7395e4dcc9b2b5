"""Runners make the passes: in this process, or as Dask work on a cluster.

Both run the same functions of :mod:`dasktree.engine.part_tasks` and
:func:`dasktree.levels.level_search.search_group`, so they give the same forest bit for bit.

:class:`~dasktree.engine.local_runner.LocalRunner` reads and encodes every part once, on a
pool of threads in this process, and keeps the codes in memory; it is the
default for in-memory data and for datasets that fit (no cluster to start). :class:`DaskRunner`
maps the per-part work over the workers and gathers only the chosen tests. It
keeps what the workers have of the fit (the source and bin spec scattered, a
group of parts per worker thread, the cached codes), survives lost workers, and
makes each pass by one of two strategies:

- :class:`~dasktree.engine.holder_passes.HolderPasses`: a cached fit's level passes, with no
  tasks at all. On a small cluster a task costs the scheduler milliseconds, as much as the
  counting of a deep level at a million rows; so a cached fit gives each worker thread a
  fixed group of parts (:mod:`dasktree.engine.part_groups`): pass 0 reads a group in one task
  and, while the tables fit in memory, keeps them for the first level pass to encode (the data
  is read from Parquet once). A holder on each worker (a Dask actor) then keeps the worker's
  groups and counts, exchanges and searches them; derived slots are filled from each group's
  own histogram of the last pass (:mod:`dasktree.kernels.subtraction`).
- :class:`~dasktree.engine.task_graph_passes.TaskGraphPasses`: every other pass as a task
  graph (pass 0, a fit without the cache, which reads and encodes anew each pass, the first
  level pass after a lost worker, a discretization's pass): a histogram task per group, then
  a task per search chunk summing only its own cells (a *reduce-scatter*), or, for the other
  passes, one tree reduction ``split_every`` at a time (:func:`~dasktree.engine.task_graph_passes.tree_reduce`,
  which also merges pass 0's summaries).
"""

from __future__ import annotations

import collections
import itertools

from ..binning.spec import BinSpec
from ..binning.summary import Summary, merge_all
from ..errors import TransientError
from ..io.schema import Roles
from ..io.sources import DaskFrameSource, Source
from ..kernels.ragged import firsts
from .holder_passes import HolderPasses
from .part_groups import arrow_row_bytes, assign_parts, frame_groups, physical_memory
from .progress import Progress
from .runner import PassCounter
from .task_graph_passes import TaskGraphPasses, drain, gather_of_parts, tree_reduce
from .part_tasks import (
    PassShape,
    encode_frames,
    encode_parts,
    histogram_of_many,
    histogram_of_parts,
    read_parts,
    search_cells,
    summarize_frame,
    summarize_part,
    summarize_parts,
    summarize_tables,
)
from .waits import (
    LOST_SECONDS,
    HolderLost,
    Watch,
    answered,
    check_scheduler_alive,
    gathered,
    release_frames,
    wait_futures,
    workers_of,
)

__all__ = ["DaskRunner"]


class DaskRunner(PassCounter):
    """The passes as Dask work on a ``distributed`` cluster: on the holders or as task graphs (see the module)."""

    def __init__(self, client, source: Source, roles: Roles, *, folds=None, cache: bool | str = "auto",
                 split_every: int = 8, progress: Progress | None = None):
        super().__init__(progress)
        self.client, self.source, self.roles, self.folds = client, source, roles, folds
        self.cache, self.split_every = cache, split_every
        self.encoded: list | None = None  # one future per group: the list of its encoded parts
        self._groups: list[tuple[str | None, tuple[int, ...]]] | None = None  # (worker, its parts)
        self._tables: list | None = None  # pass 0's tables per group, until the first level pass encodes them
        self._memory_bytes: int | None = None  # what the workers may hold (DaskRunner._memory)
        self._holder_passes = HolderPasses(client)  # started on the cached groups by the first level pass
        self._task_passes = TaskGraphPasses(client, split_every, self.progress)
        if isinstance(source, DaskFrameSource):
            self._frames = client.compute(source.frame.to_delayed())  # futures of pandas partitions
            self._source = None
        else:
            self._frames = None
            [self._source] = answered(lambda: client.scatter([source], broadcast=True, hash=False,
                                                             timeout=LOST_SECONDS))

    def _map(self, func, label: str, **kwargs) -> list:
        if self._frames is not None:
            return [self.client.submit(func[1], frame, index=i, pure=False, **kwargs)
                    for i, frame in enumerate(self._frames)]
        return self.client.map(func[0], self.source.parts, source=self._source, pure=False, **kwargs)

    def _submit(self, func, *args, worker: str | None, **kwargs):
        """A task meant for ``worker`` (which holds its inputs), free to run elsewhere if it is gone."""
        return self.client.submit(func, *args, workers=None if worker is None else [worker],
                                  allow_other_workers=True, pure=False, **kwargs)

    @property
    def threads(self) -> int:
        """The workers' threads, which a gathering pass grows its runs of jobs on (as many runs as threads,
        :meth:`_small_pass`, whichever workers hold the rows): what its jobs are balanced over
        (:func:`dasktree.levels.small.balanced`)."""
        return max(1, len(self._threads()))

    @property
    def derived(self) -> int:
        """Nodes derived so far rather than counted (on the holders)."""
        return self._holder_passes.derived

    def summary(self, max_bins: int) -> Summary:
        """Pass 0 on the workers; a worker lost while it runs (a merged summary it held is gone, and the
        parts' summaries it came from were let go) makes the pass again from the Parquet files, as a
        level pass does: the summary is a pure function of the data."""
        self._count(True)
        for attempt in range(3):
            try:
                return self._summary(max_bins)
            except _lost_worker_errors() as exc:
                check_scheduler_alive(self.client)
                if attempt == 2:
                    raise TransientError(f"pass 0 (summary): workers lost three times over ({exc}); a retry may "
                                         "succeed") from exc
                self._rescatter(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def _summary(self, max_bins: int) -> Summary:
        if self._frames is None and self._tables_fit():  # read each group once, keep it, summarize it
            self._groups = self._assign()
            self._tables = [self._submit(read_parts, self._parts(parts), worker=worker, source=self._source,
                                         roles=self.roles) for worker, parts in self._groups]
            futures = [self._submit(summarize_tables, tables, worker=worker, parts=self._parts(parts),
                                    source=self._source, roles=self.roles, max_bins=max_bins)
                       for tables, (worker, parts) in zip(self._tables, self._groups)]
        elif self._frames is None:  # a group of parts per worker thread, read one part at a time
            futures = [self._submit(summarize_parts, self._parts(parts), worker=worker, source=self._source,
                                    roles=self.roles, max_bins=max_bins) for worker, parts in self._assign()]
        else:
            futures = self._map((summarize_part, summarize_frame), "summary", roles=self.roles, max_bins=max_bins)
        # the merges go with the parts' summaries, and each summary is let go once merged: a continuous
        # column's sketch is larger than its values, so all of them at once grow with the rows
        root = tree_reduce(self.client, _merge_many, futures, self.split_every)
        drain(self.client, self.progress, futures, "pass 0 (summary)")
        wait_futures(self.client, root)
        [result] = gathered(self.client, root)
        del root
        if self._frames is not None:  # global row offsets of the partitions: each part's first row
            rows = dict((key, n) for key, _, n in result.parts)
            sizes = [rows[f"partition-{i}"] for i in range(len(self._frames))]
            self._frame_offsets = firsts(sizes)
        self.progress.finish()
        return result

    def prepare(self, spec: BinSpec, n_folds: int, level_passes: bool = True) -> None:
        """Encode with ``spec`` from now on; codes cached under another spec are dropped. With the
        cache and ``level_passes`` to come, the holders start now, on the workers where the first
        level pass will encode."""
        self._holder_passes.forget()  # the holders hold the codes
        if self.encoded is not None and (getattr(self, "spec", None) is not spec or self.shape.n_folds != n_folds):
            self.client.cancel(self.encoded)
            self.encoded = None
        self.spec = spec
        self.shape = PassShape.of(spec, n_folds)
        [self._spec] = answered(lambda: self.client.scatter([spec], broadcast=True, hash=False, timeout=LOST_SECONDS))
        if self._frames is not None:
            use_cache = True
        elif self.cache == "auto":
            use_cache = self._fits(spec.n_features * spec.code_dtype.itemsize + 4 + 2)
        else:
            use_cache = bool(self.cache)
        self.use_cache = use_cache
        if not use_cache:
            self._tables = None
        elif level_passes:
            try:
                self._start_holders()
            except _lost_worker_errors() as exc:  # the first level pass starts them again, on the workers there are
                check_scheduler_alive(self.client)
                self._rescatter(exc)

    def _fits(self, row_bytes: int) -> bool:
        """``row_bytes`` per row within a quarter of the cluster's memory."""
        return self.source.n_rows * row_bytes <= self._memory() / 4

    def _memory(self) -> int:
        """Bytes the workers may hold (asked once): their memory limits, and for a worker without one
        (``memory_limit=0``) its host's physical memory shared among the workers on that host."""
        if self._memory_bytes is None:
            workers = workers_of(self.client)
            total = sum(info.get("memory_limit") or 0 for info in workers.values())
            unlimited = [w for w, info in workers.items() if not info.get("memory_limit")]
            if unlimited:
                on_host = collections.Counter(info.get("host") for info in workers.values())
                physical = answered(lambda: self.client.run(physical_memory, workers=unlimited,
                                                            callback_timeout=LOST_SECONDS))
                total += sum(physical[w] // on_host[workers[w].get("host")] for w in unlimited)
            self._memory_bytes = total
        return self._memory_bytes

    def _tables_fit(self) -> bool:
        """Whether pass 0 may keep the tables it reads: with the cache on, tables and codes (at two
        bytes an attribute) within a quarter of the cluster's memory."""
        if self.cache is False:
            return False
        columns = self.roles.columns
        return self._fits(arrow_row_bytes(self.source.schema, columns) + 2 * len(columns) + 6)

    def _threads(self) -> list[str]:
        """Each worker once per thread it runs (sorted): one group of parts, one task a pass, per thread."""
        info = workers_of(self.client)
        return [w for w in sorted(info) for _ in range(max(1, int(info[w].get("nthreads", 1) or 1)))]

    def _assign(self) -> list[tuple[str | None, tuple[int, ...]]]:
        """A group of parts per worker thread (contiguous, similar rows; a worker's groups adjacent;
        :func:`~dasktree.engine.part_groups.assign_parts`)."""
        threads = self._threads()
        runs = assign_parts([p.n_rows for p in self.source.parts], max(1, len(threads)))
        return [(threads[g] if threads else None, parts) for g, parts in enumerate(runs)]

    def _parts(self, indices: tuple[int, ...]) -> list:
        return [self.source.parts[i] for i in indices]

    def level_pass(self, plan, requests, context, label: str):
        """Count the plan's nodes and search them, a search chunk per worker thread, either task's: the
        context cuts the chunks and searches each where its cells are summed (``context.pass_chunks``,
        ``context.search_cells``), and merges their results (``context.merge``). Cached, the holders
        fill the derived slots (:mod:`dasktree.kernels.subtraction`) from their histograms of the last
        pass; without the cache (or after a lost worker) every node is counted."""
        plan, chunks = context.pass_chunks(plan, requests, max(1, len(self._threads())))  # a task costs ms
        return context.merge(self.apply_pass(plan, search_cells, chunks, label, context=context, scatter=True))

    def apply_pass(self, plan, func, chunks: list, label: str, scatter: bool = False, **kwargs) -> list:
        """One pass: histograms summed on the workers, then ``func(hist, chunk, **kwargs)`` per chunk
        next to the sum; only their results come back. With ``scatter`` the chunks are
        search chunks of contiguous cells (``chunk.span``), and each sums only its own
        (``func`` is :func:`~dasktree.engine.part_tasks.search_cells`, the context's search): cached, on the holders
        (:class:`~dasktree.engine.holder_passes.HolderPasses`), else as a task graph
        (:class:`~dasktree.engine.task_graph_passes.TaskGraphPasses`), as every other pass is.

        A worker lost mid-pass is survived: Dask reruns computed tasks from their lineage, but
        data scattered from here (the source, the bin spec, the plan) has none, so when a pass
        fails for lost data it is scattered again and the pass redone from the Parquet files.
        Every step is a pure function of exact counts: the result is the same.
        """
        self.passes += 1  # one logical pass, however many attempts it takes
        for attempt in range(3):
            try:
                return self._apply_pass(plan, func, chunks, label, scatter, **kwargs)
            except _lost_worker_errors() as exc:
                check_scheduler_alive(self.client)  # a lost scheduler lost every worker's data: no retry here
                if attempt == 2:
                    raise TransientError(f"{label}: workers lost three times over ({exc}); a retry may succeed") from exc
                self._rescatter(exc)
                plan = plan.counting_all()  # the parents' sums may be lost too
        raise AssertionError("unreachable")  # pragma: no cover

    gather_budget_mb: float | None = None  # small nodes' gathered rows, over the cluster (None: the default)
    rows_gathered = 0  # rows the last small pass gathered

    def small_pass(self, gather, func, label: str, **kwargs) -> list:
        """One pass gathering the rows of ``gather``'s jobs (:mod:`dasktree.levels.small`) where they
        are, then ``func(gathered, **kwargs)`` once per run of jobs of similar memberships, one run per
        worker thread, next to the rows; only the results come back, in job order. Cached, on the
        holders (:meth:`~dasktree.engine.holder_passes.HolderPasses.small_pass`), else as tasks
        reading the parts anew (:meth:`~dasktree.engine.task_graph_passes.TaskGraphPasses.small_pass`).
        A lost worker is survived as in :meth:`apply_pass`: the pass is made again, the same result."""
        self.passes += 1
        for attempt in range(3):
            try:
                results, self.rows_gathered = self._small_pass(gather, func, label, kwargs)
                return results
            except _lost_worker_errors() as exc:
                check_scheduler_alive(self.client)
                if attempt == 2:
                    raise TransientError(f"{label}: workers lost three times over ({exc}); a retry may succeed") from exc
                self._rescatter(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def _small_pass(self, gather, func, label: str, kwargs: dict) -> tuple[list, int]:
        n_runs = max(1, len(self._threads()))
        if self.use_cache:
            if not self._holder_passes.started:
                self._start_holders()
            return self._holder_passes.small_pass(self.passes, gather, func, kwargs, self.progress, label)
        self.parquet_reads += 1
        [plan] = answered(lambda: self.client.scatter([gather], broadcast=True, hash=False, timeout=LOST_SECONDS))
        gathers = [self._submit(gather_of_parts, self._parts(parts), worker=worker, source=self._source,
                                roles=self.roles, spec=self._spec, folds=self.folds, plan=plan)
                   for worker, parts in self._assign()]
        return self._task_passes.small_pass(gather, func, kwargs, gathers, n_runs, label)

    def _rescatter(self, lost: BaseException | None = None) -> None:
        """After a lost worker (``lost``, what the pass raised): scatter the inputs again and forget the
        cached codes and tables (the groups are made again for the workers there are). The scheduler may
        still list the dead worker for a moment (a broadcast to it fails): try again after a pause. The
        failed attempt's futures are let go of (:func:`~dasktree.engine.waits.release_frames`), so the
        scheduler forgets them now, not at the next cyclic collection."""
        import time

        release_frames(lost)
        self._holder_passes.forget()
        if self.encoded:
            self.client.cancel(self.encoded)
        self.encoded, self._tables, self._groups = None, None, None
        watch = Watch(self.client)  # no workers for LOST_SECONDS: TransientError
        for attempt in itertools.count():
            try:
                if self._frames is None:
                    [self._source] = self.client.scatter([self.source], broadcast=True, hash=False, timeout=5)
                if getattr(self, "spec", None) is not None:  # pass 0 has none yet
                    [self._spec] = self.client.scatter([self.spec], broadcast=True, hash=False, timeout=5)
                return
            except (*_lost_worker_errors(), TimeoutError, OSError) as exc:
                watch.check()
                if attempt >= 9 and watch.unwell_since is None:  # workers there, but unreachable
                    raise TransientError(f"cannot send the inputs to the workers again ({exc!r})") from exc
                release_frames(exc)  # trying again: this attempt's frames are not kept
                time.sleep(0.5)

    def _apply_pass(self, plan, func, chunks: list, label: str, scatter: bool, **kwargs) -> list:
        if self.use_cache and scatter:  # the level passes of a cached fit: the holders, no tasks
            if not self._holder_passes.started:
                self._start_holders()
            return self._holder_passes.level_pass(self.passes, plan, self.shape, chunks, kwargs["context"],
                                                  self.progress, label)
        reads = self.encoded is None
        # physical reads (a redone pass reads again); pass 0's kept tables are not read again
        self.parquet_reads += int(reads and not (self.use_cache and self._tables))
        if self.use_cache and reads:
            self.encoded = self._encode()
        n_tasks = len(self.encoded) if self.use_cache else len(self.source.parts)
        return self._task_passes.run(plan, func, chunks, label, self._histograms, n_tasks, scatter=scatter, **kwargs)

    def _histograms(self, plan) -> list:
        """A histogram task per group counting every slot of ``plan`` (a future, or the plan itself):
        cached, from the group's codes; else read anew, one part in memory at a time."""
        if not self.use_cache:
            return [self._submit(histogram_of_parts, self._parts(parts), worker=worker, source=self._source,
                                 roles=self.roles, spec=self._spec, folds=self.folds, plan=plan, shape=self.shape)
                    for worker, parts in self._assign()]
        return [self._submit(histogram_of_many, encoded, worker=worker, plan=plan, shape=self.shape)
                for encoded, (worker, _) in zip(self.encoded, self._groups)]

    def _start_holders(self) -> None:
        """A holder per worker, to encode the groups at the first level pass (:mod:`dasktree.engine.holder_passes`)."""
        self.parquet_reads += int(self._frames is None and not self._tables)  # pass 0's tables are not read again
        self._holder_passes.start(self._encode_jobs())

    def _encode_jobs(self) -> list[tuple[str | None, tuple]]:
        """Per group, (its worker, (function, args, kwargs)) encoding its parts: pass 0's tables when
        kept, else read anew (a dask DataFrame's partitions are grouped by the worker holding them).
        The groups stay the same from pass to pass, as derived slots need."""
        options = dict(roles=self.roles, spec=self._spec, folds=self.folds)
        if self._frames is not None:
            who_has = answered(lambda: self.client.sync(self.client.scheduler.who_has, keys=[f.key for f in self._frames],
                                                        callback_timeout=LOST_SECONDS))
            self._groups = frame_groups([min(who_has.get(f.key, ()), default=None) for f in self._frames],
                                        self._threads())
            return [(worker, (encode_frames, [self._frames[i] for i in parts],
                              dict(indices=list(parts), offsets=[int(self._frame_offsets[i]) for i in parts], **options)))
                    for worker, parts in self._groups]
        if self._groups is None:
            self._groups = self._assign()
        tables, self._tables = self._tables or [None] * len(self._groups), None  # the codes replace them
        return [(worker, (encode_parts, [t], dict(parts=self._parts(parts), source=self._source, **options)))
                for t, (worker, parts) in zip(tables, self._groups)]

    def _encode(self) -> list:
        """One task per group encoding its parts (:meth:`_encode_jobs`), kept on its worker."""
        return [self._submit(func, *args, worker=worker, **kwargs) for worker, (func, args, kwargs) in self._encode_jobs()]

    def close(self) -> None:
        self._holder_passes.forget()  # the holders hold the codes
        for futures in (self.encoded, self._frames):
            if futures:
                self.client.cancel(futures)
        self.encoded, self._tables = None, None


def _lost_worker_errors() -> tuple:
    """What a lost worker raises here (imported late: in-process fits never load distributed)."""
    from concurrent.futures import (
        CancelledError,  # one future's or several's (FuturesCancelledError)
    )

    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    return (CancelledError, KilledWorker, CommClosedError, HolderLost)


def _merge_many(*summaries: Summary) -> Summary:
    return merge_all(list(summaries))

