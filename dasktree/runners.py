"""Runners make the passes: in this process, or as Dask tasks on a cluster.

Both run the same functions of :mod:`dasktree.tasks` and
:func:`dasktree.grow.search_group`, so they give the same forest bit for bit.

:class:`LocalRunner` reads and encodes every part once and keeps the codes in
memory; it is for in-memory inputs (no cluster to start). :class:`DaskRunner`
maps the per-part work over the workers, sums histograms by a tree reduction
on the workers (``split_every`` at a time), runs the split searches there on
the summed histogram and gathers only the chosen tests. When the encoded data
fits (``cache``), it stays on the workers after the first level pass, so later
passes read no Parquet at all; otherwise every pass reads and encodes anew.
"""

from __future__ import annotations

import numpy as np

from .binning import BinSpec, Summary, merge_all
from .dataset import DaskFrameSource, Source
from .grow import NodeResult, SearchContext, SearchRequest, search_group
from .progress import Progress
from .schema import Roles
from .tasks import (
    PassShape,
    add_histograms,
    encode_frame,
    encode_part,
    histogram_of,
    histogram_of_many,
    histogram_of_part,
    summarize_frame,
    summarize_part,
)

__all__ = ["LocalRunner", "DaskRunner"]


class _Counting:
    """Pass count and per-pass seconds, shared by the runners."""

    def __init__(self, progress: Progress | None):
        self.progress = progress or Progress(enabled=False)
        self.passes = 0
        self.parquet_reads = 0

    def _count(self, reads_source: bool) -> None:
        self.passes += 1
        self.parquet_reads += int(reads_source)


class LocalRunner(_Counting):
    """All parts in this process; the codes are kept after the first level pass."""

    def __init__(self, source: Source, roles: Roles, *, folds=None, progress: Progress | None = None):
        super().__init__(progress)
        self.source, self.roles, self.folds = source, roles, folds
        self.encoded = None
        self.spec: BinSpec | None = None

    def summary(self, max_bins: int) -> Summary:
        self._count(True)
        self.progress.start("pass 0 (summary)", len(self.source.parts))
        parts = []
        for part in self.source.parts:
            parts.append(summarize_part(part, source=self.source, roles=self.roles, max_bins=max_bins))
            self.progress.advance()
        self.progress.finish()
        return merge_all(parts)

    def prepare(self, spec: BinSpec, n_folds: int) -> None:
        """Encode with ``spec`` from now on; codes cached under another spec are dropped."""
        if self.encoded is not None and (self.spec is not spec or self.shape.n_folds != n_folds):
            self.encoded = None
        self.spec = spec
        self.shape = PassShape.of(spec, n_folds)

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        """One pass: the histogram of ``plan``'s slots, then ``func(hist, chunk, **kwargs)`` per chunk."""
        self._count(self.encoded is None)
        self.progress.start(label, len(self.source.parts))
        if self.encoded is None:
            self.encoded = [
                encode_part(p, source=self.source, roles=self.roles, spec=self.spec, folds=self.folds)
                for p in self.source.parts
            ]
        total = None
        for encoded in self.encoded:
            h = histogram_of(encoded, plan=plan, shape=self.shape)
            total = h if total is None else total + h
            self.progress.advance()
        results = [func(total, chunk, **kwargs) for chunk in chunks]
        self.progress.finish()
        return results

    def level_pass(self, plan, requests: list[SearchRequest], context: SearchContext, label: str) -> list[NodeResult]:
        [results] = self.apply_pass(plan, search_group, [requests], label, context=context)
        return results

    @property
    def n_dropped(self) -> int:
        return sum(e.n_dropped for e in self.encoded or [])

    def close(self) -> None:
        self.encoded = None


def _tree_reduce(client, futures: list, split_every: int):
    """Sum futures of histograms on the workers, ``split_every`` at a time."""
    while len(futures) > 1:
        futures = [
            client.submit(add_histograms, *futures[i:i + split_every], pure=False)
            for i in range(0, len(futures), split_every)
        ]
    return futures[0]


def _chunks(items: list, n: int) -> list[list]:
    n = max(1, min(n, len(items)))
    size = -(-len(items) // n)
    return [items[i:i + size] for i in range(0, len(items), size)]


class DaskRunner(_Counting):
    """The passes as Dask tasks on a ``distributed`` cluster."""

    def __init__(self, client, source: Source, roles: Roles, *, folds=None, cache: bool | str = "auto",
                 split_every: int = 8, progress: Progress | None = None):
        super().__init__(progress)
        self.client, self.source, self.roles, self.folds = client, source, roles, folds
        self.cache = cache
        self.split_every = split_every
        self.encoded: list | None = None
        self.n_dropped = 0
        if isinstance(source, DaskFrameSource):
            self._frames = client.compute(source.frame.to_delayed())  # futures of pandas partitions
            self._source = None
        else:
            self._frames = None
            [self._source] = client.scatter([source], broadcast=True, hash=False)

    def _map(self, func, label: str, **kwargs) -> list:
        if self._frames is not None:
            offsets = getattr(self, "_frame_offsets", None)
            return [
                self.client.submit(func[1], frame, index=i, pure=False,
                                   **({"offset": int(offsets[i])} if func[1] is encode_frame else {}), **kwargs)
                for i, frame in enumerate(self._frames)
            ]
        return self.client.map(func[0], self.source.parts, source=self._source, pure=False, **kwargs)

    def _wait(self, futures: list, label: str) -> None:
        from distributed import as_completed

        self.progress.start(label, len(futures))
        for _ in as_completed(futures):
            self.progress.advance()

    def summary(self, max_bins: int) -> Summary:
        self._count(True)
        futures = self._map((summarize_part, summarize_frame), "summary", roles=self.roles, max_bins=max_bins)
        self._wait(futures, "pass 0 (summary)")
        while len(futures) > 1:
            futures = [
                self.client.submit(_merge_many, *futures[i:i + self.split_every], pure=False)
                for i in range(0, len(futures), self.split_every)
            ]
        result = futures[0].result()
        if self._frames is not None:  # global row offsets of the partitions: the row keys of the folds
            rows = dict((key, n) for key, _, n in result.parts)
            sizes = [rows[f"partition-{i}"] for i in range(len(self._frames))]
            self._frame_offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.progress.finish()
        return result

    def prepare(self, spec: BinSpec, n_folds: int) -> None:
        """Encode with ``spec`` from now on; codes cached under another spec are dropped."""
        if self.encoded is not None and (getattr(self, "spec", None) is not spec or self.shape.n_folds != n_folds):
            self.client.cancel(self.encoded)
            self.encoded = None
        self.spec = spec
        self.shape = PassShape.of(spec, n_folds)
        [self._spec] = self.client.scatter([spec], broadcast=True, hash=False)
        if self._frames is not None:
            use_cache = True
        elif self.cache == "auto":
            use_cache = self._fits(spec)
        else:
            use_cache = bool(self.cache)
        self.use_cache = use_cache

    def _fits(self, spec: BinSpec) -> bool:
        """Encoded data within a quarter of the cluster's memory."""
        info = self.client.scheduler_info()
        limit = sum(w.get("memory_limit", 0) or 0 for w in info.get("workers", {}).values())
        row_bytes = spec.n_features * spec.code_dtype.itemsize + 4 + 2
        return limit == 0 or self.source.n_rows * row_bytes <= limit / 4

    def level_pass(self, plan, requests: list[SearchRequest], context: SearchContext, label: str) -> list[NodeResult]:
        n_workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        chunks = _balanced(requests, 2 * n_workers)
        return [r for chunk in self.apply_pass(plan, search_group, chunks, label, context=context) for r in chunk]

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        """One pass: histograms summed on the workers, then ``func(hist, chunk, **kwargs)`` per chunk
        as tasks next to the sum; only their results come back.

        A worker lost mid-pass is survived: Dask reruns computed tasks from their lineage, but
        data scattered from here (the source, the bin spec, the plan) has none, so when a pass
        fails for lost data it is scattered again and the pass redone from the Parquet files.
        Every step is a pure function of exact counts: the result is the same.
        """
        from distributed.client import FutureCancelledError

        from distributed import KilledWorker

        self.passes += 1  # one logical pass, however many attempts it takes
        for attempt in range(3):
            try:
                return self._apply_pass(plan, func, chunks, label, **kwargs)
            except (FutureCancelledError, KilledWorker):
                if attempt == 2:
                    raise
                self._rescatter()
        raise AssertionError("unreachable")  # pragma: no cover

    def _rescatter(self) -> None:
        """After a lost worker: scatter the inputs again and forget the cached codes."""
        if self.encoded:
            self.client.cancel(self.encoded)
        self.encoded = None
        if self._frames is None:
            [self._source] = self.client.scatter([self.source], broadcast=True, hash=False)
        [self._spec] = self.client.scatter([self.spec], broadcast=True, hash=False)

    def _apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        reads = self.encoded is None
        self.parquet_reads += int(reads)  # physical reads: a redone pass reads again
        [plan_future] = self.client.scatter([plan], broadcast=True, hash=False)
        if self.use_cache:
            if self.encoded is None:
                self.encoded = self._map((encode_part, encode_frame), "encode", roles=self.roles,
                                         spec=self._spec, folds=self.folds)
                hists = [
                    self.client.submit(histogram_of, e, plan=plan_future, shape=self.shape, pure=False)
                    for e in self.encoded
                ]
            else:
                # One task per worker over the parts it holds: fewer tasks and histograms to sum.
                hists = [
                    self.client.submit(histogram_of_many, *held, plan=plan_future, shape=self.shape,
                                       workers=None if worker is None else [worker],
                                       allow_other_workers=True, pure=False)
                    for worker, held in self._by_worker().items()
                ]
        else:
            hists = self._map((histogram_of_part, None), "histogram", roles=self.roles, spec=self._spec,
                              folds=self.folds, plan=plan_future, shape=self.shape)
        self._wait(hists, label)
        total = _tree_reduce(self.client, hists, self.split_every)
        tasks = [self.client.submit(func, total, chunk, pure=False, **kwargs) for chunk in chunks]
        results = self.client.gather(tasks)
        self.progress.finish()
        del total, hists
        return results

    def _by_worker(self) -> dict[str | None, list]:
        """Encoded parts grouped by the worker holding them (None: not held, e.g. a lost worker)."""
        who_has = self.client.who_has(self.encoded)
        groups: dict[str | None, list] = {}
        for future in self.encoded:
            holders = sorted(who_has.get(future.key, ()))
            groups.setdefault(holders[0] if holders else None, []).append(future)
        return groups

    def dropped_rows(self) -> int:
        if not self.encoded:
            return 0
        return int(sum(self.client.gather([self.client.submit(_dropped, e, pure=False) for e in self.encoded])))

    def close(self) -> None:
        if self.encoded:
            self.client.cancel(self.encoded)
        if self._frames:
            self.client.cancel(self._frames)
        self.encoded = None


def _balanced(requests: list[SearchRequest], n_tasks: int) -> list[list[SearchRequest]]:
    """Search tasks of similar work: nodes dealt round-robin by decreasing tree count.

    A node's search costs about the same per tree that decides there, so
    dealing the biggest first keeps one large node from idling the others.
    """
    order = sorted(requests, key=lambda r: (-len(r.trees), r.node))
    n_tasks = max(1, min(n_tasks, len(order)))
    buckets: list[list[SearchRequest]] = [[] for _ in range(n_tasks)]
    for i, request in enumerate(order):
        buckets[i % n_tasks].append(request)
    return [sorted(b, key=lambda r: r.node) for b in buckets if b]


def _merge_many(*summaries: Summary) -> Summary:
    return merge_all(list(summaries))


def _dropped(encoded) -> int:
    return encoded.n_dropped
