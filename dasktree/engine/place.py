"""Where a job's passes run, chosen by one rule and closed in one place.

:func:`open_runner` gives the fit and :class:`dasktree.Discretizer` a runner for
their passes; :func:`open_parts` gives the one-pass jobs (a dataset's
predictions, a model's evaluation, a discretizer's write) a map over the parts.
Both choose with :func:`choose`:

1. ``client=``: that client's cluster.
2. ``scheduler=``: ``"inprocess"`` (this process, a thread per core),
   ``"processes"`` / ``"threads"`` (a ``LocalCluster`` started and closed for
   the job) or a scheduler's address.
3. A ``distributed`` client already active in this process
   (``distributed.default_client()``; looked for only when ``distributed`` is
   imported already, and never started).
4. Else this process: in-memory data, a dask collection (its partitions
   computed here by dask's threaded scheduler), a dataset whose tables and
   codes fit in a quarter of ``memory_limit`` (default: this machine's memory),
   and every one-pass job (it streams the parts). A dataset too large for that, or
   fit with ``cache=False``, stays here too: every pass streams its row groups
   through a bounded pool of threads (:class:`~dasktree.engine.stream_runner.StreamRunner`,
   :func:`~dasktree.engine.memory_plan.runner_kind`).

On a cluster, the job's client is the current one while it runs (``Client.as_current``), so
``distributed``'s helpers that look for a client find it, even one made with
``set_as_default=False``. No process cluster is started unless asked for (``scheduler="processes"``), so a script without ``if __name__ == "__main__":`` never starts workers that
re-run it.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..errors import ParameterError
from ..io.schema import Roles
from ..io.sources import DaskFrameSource, Part, Source, TableSource
from .cluster import SCHEDULERS, connect
from .local_runner import IN_PROCESS, LocalRunner, cores
from .memory_plan import STREAM, cached_histogram_mb, runner_kind
from .progress import Progress, gather_with_progress
from .waits import LOST_SECONDS, answered, workers_of

__all__ = ["Place", "choose", "active_client", "large_dataset_place", "open_runner", "open_parts", "cluster_for", "check_scheduler_option",
           "as_progress", "IN_PROCESS"]


@dataclass(frozen=True)
class Place:
    """Where a job runs: ``"here"`` (this process), ``"client"`` (``client``'s cluster) or
    ``"connect"`` (a cluster ``scheduler`` names: started for the job, or reached at its address)."""

    kind: str
    client: Any = None
    scheduler: str | None = None
    stream: bool = False  # here: every pass reads the row groups anew (the data's codes do not fit)


def active_client():
    """The ``distributed`` client active in this process, or None (none is started, and
    ``distributed`` is not imported when nothing imported it yet)."""
    if sys.modules.get("distributed") is None:  # never imported (or blocked): no client can be active
        return None
    try:
        from distributed import default_client

        return default_client()
    except (ValueError, ImportError):  # no client
        return None


def large_dataset_place() -> Place:
    """Where a dataset too large for this process's memory (or fit with ``cache=False``) is learned: in
    this process, every pass streaming its row groups (:class:`~dasktree.engine.stream_runner.StreamRunner`)."""
    return Place("here", stream=True)


def choose(source: Source, roles: Roles | None = None, *, client=None, scheduler: str | None = None,
           cache: bool | str | None = "auto", streams: bool = False, memory_limit: int | None = None) -> Place:
    """The place of a job over ``source`` (see the module's rule). ``streams``: the job reads each part
    once and keeps nothing (a one-pass job), so any dataset runs here. ``cache=False`` (read the data
    anew every pass) streams a dataset here; so does one whose tables and codes exceed a quarter of
    ``memory_limit`` (bytes; None: this machine's memory)."""
    if client is not None:
        return Place("client", client=client)
    if scheduler is not None:
        check_scheduler_option(scheduler)
        return Place("here") if scheduler == IN_PROCESS else Place("connect", scheduler=scheduler)
    active = active_client()
    if active is not None:
        return Place("client", client=active)
    if streams or isinstance(source, (TableSource, DaskFrameSource)):
        return Place("here")
    if roles is None or runner_kind(source, roles, cache=cache, memory_limit=memory_limit) != STREAM:
        return Place("here")
    return large_dataset_place()


def check_scheduler_option(scheduler) -> None:
    """A ``scheduler=`` that names no place is bad usage (exit 2), said before any work."""
    if not isinstance(scheduler, str) or (scheduler not in (IN_PROCESS, *SCHEDULERS) and ":" not in scheduler):
        raise ParameterError(f"scheduler {scheduler!r}: expected {IN_PROCESS!r}, 'processes', 'threads' or an "
                             "address like tcp://host:8786")


def as_progress(progress) -> Progress:
    """``progress=`` as a :class:`Progress`: one given, or a bar on stderr when true."""
    return progress if isinstance(progress, Progress) else Progress(enabled=bool(progress))


def computed_here(source: DaskFrameSource, roles: Roles) -> TableSource:
    """A dask DataFrame's ``roles`` columns computed in this process (dask's threaded scheduler), as a
    table whose parts key their rows as the cluster's runner does: global row indices of ``"frame"``."""
    import dask
    import pandas as pd

    from ..io.sources import frame_to_table

    frames = dask.compute(*source.frame[list(roles.columns)].to_delayed(), scheduler="threads")
    frame = pd.concat(frames, ignore_index=True) if frames else source.frame._meta[list(roles.columns)]
    table = TableSource(frame_to_table(frame), description=source.description)
    table.parts = [Part(p.index, "frame", p.offset, p.n_rows) for p in table.parts]
    return table


@contextmanager
def open_runner(source: Source, roles: Roles, *, folds=None, client=None, scheduler: str | None = None,
                cache: bool | str | None = "auto", progress=None, security=None,
                memory_limit: int | None = None) -> Iterator:
    """A runner for the passes over ``source`` (:class:`~dasktree.engine.runner.Runner`), where
    :func:`choose` says, closed (and any cluster started for it) when the block ends. The runner's
    ``workers`` is the number of Dask workers (0 in this process). ``cache=None``: the runner's
    choice (no cache on a cluster: a job of few passes). ``memory_limit`` (bytes) is what a streaming
    runner plans against (:class:`~dasktree.engine.memory_plan.MemoryPlan`)."""
    bar = as_progress(progress)
    place = choose(source, roles, client=client, scheduler=scheduler, cache=cache, memory_limit=memory_limit)
    if place.kind == "here":
        if isinstance(source, DaskFrameSource):
            source = computed_here(source, roles)
        if place.stream:
            from .stream_runner import StreamRunner

            runner = StreamRunner(source, roles, folds=folds, progress=bar, threads=cores(),
                                  memory_limit=memory_limit)
        else:
            runner = LocalRunner(source, roles, folds=folds, progress=bar, threads=cores(),
                                 keep_tables=not isinstance(source, TableSource))
            if memory_limit is not None:  # what the kept data leaves goes to the histograms
                runner.max_histogram_mb = cached_histogram_mb(source, roles, memory_limit, runner.threads)
        runner.workers = 0
        try:
            yield runner
        finally:
            runner.close()
        return
    from .dask_runner import DaskRunner

    with connect(place.client, place.scheduler, on_cluster=bar.cluster, security=security) as dask_client, \
            dask_client.as_current():
        runner = DaskRunner(dask_client, source, roles, folds=folds, cache=False if cache is None else cache,
                            progress=bar)
        try:
            runner.workers = len(workers_of(dask_client))  # bounded: a stopped scheduler ends the job
            yield runner
        finally:
            runner.close()


class _HereParts:
    """Parts mapped in this process, a part at a time per thread (the kernels, Parquet's reader and
    writer release the GIL)."""

    def __init__(self, source: Source, progress: Progress | None):
        self.source, self.progress = source, progress

    def map(self, func: Callable, label: str, **shared) -> list:
        from concurrent.futures import ThreadPoolExecutor

        bar = self.progress
        if bar is not None:
            bar.start(label, len(self.source.parts))
        out = []
        with ThreadPoolExecutor(cores(), thread_name_prefix="dasktree") as pool:
            for result in pool.map(lambda part: func(part, source=self.source, **shared), self.source.parts):
                out.append(result)
                if bar is not None:
                    bar.advance()
        if bar is not None:
            bar.finish()
        return out


class _ClusterParts:
    """Parts mapped as one task each on a cluster; the source and the large shared arguments are
    scattered to every worker once."""

    def __init__(self, client, source: Source, progress: Progress | None):
        self.client, self.source, self.progress = client, source, progress

    def map(self, func: Callable, label: str, **shared) -> list:
        small = (str, int, float, bool, tuple, type(None))
        large = {k: v for k, v in shared.items() if not isinstance(v, small)}
        scattered = answered(lambda: self.client.scatter([self.source, *large.values()], broadcast=True, hash=False,
                                                         timeout=LOST_SECONDS))
        kwargs = {**shared, **dict(zip(large, scattered[1:]))}
        futures = [self.client.submit(func, part, source=scattered[0], pure=False, **kwargs)
                   for part in self.source.parts]
        return gather_with_progress(self.client, futures, self.progress, label)


@contextmanager
def open_parts(source: Source, *, client=None, scheduler: str | None = None, progress=None,
               security=None) -> Iterator:
    """A map over ``source``'s parts, ``parts.map(func, label, **shared)`` (``func(part, source=,
    **shared)`` per part, results in part order), where :func:`choose` puts a one-pass job."""
    place = choose(source, client=client, scheduler=scheduler, streams=True)
    if place.kind == "here":
        yield _HereParts(source, progress)
        return
    on_cluster = None if progress is None else progress.cluster
    with connect(place.client, place.scheduler, on_cluster=on_cluster, security=security) as dask_client, \
            dask_client.as_current():
        yield _ClusterParts(dask_client, source, progress)


@contextmanager
def cluster_for(client=None, scheduler: str | None = None, progress=None, security=None) -> Iterator:
    """The client several jobs share: ``client``, or one on the cluster ``scheduler`` names (started
    once for them all); None when the jobs run by the rule of :func:`choose` (no ``scheduler``, or
    ``"inprocess"``)."""
    if client is None and scheduler in (None, IN_PROCESS):
        yield None
        return
    if client is None:
        check_scheduler_option(scheduler)  # bad usage before a cluster starts
    on_cluster = None if progress is None else progress.cluster
    with connect(client, scheduler, on_cluster=on_cluster, security=security) as dask_client:
        yield dask_client
