"""Passes as Dask task graphs, around one tree reduction.

Every pass that is not a cached fit's level pass (pass 0, a fit without the
cache, the first level pass after a lost worker's, a discretization's pass) is a
graph of tasks: one histogram task per group of parts (a worker thread's), then
per chunk one task next to the sums; only the chunks' results come back. A
level pass is a *reduce-scatter*: each search chunk's task sums only its own
cells from every worker's histogram, so no worker receives a whole large
histogram; the other passes sum by :func:`tree_reduce`, ``split_every`` at a
time, as pass 0 merges its summaries. The other strategy, a cached fit's level
passes on the holders, is :mod:`dasktree.engine.holder_passes`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..kernels.histogram import add_counts
from .progress import Progress
from .search_chunks import SearchChunk
from .part_tasks import cells_of, search_cells
from .waits import LOST_SECONDS, answered, gathered, wait_futures

__all__ = ["TaskGraphPasses", "tree_reduce", "drain", "SCATTER_BYTES", "EMBED_PLAN_BYTES"]

SCATTER_BYTES = 8 * 2**20  # a level's histogram above this goes to the search chunks in pieces
EMBED_PLAN_BYTES = 2**20  # a pass plan whose copies (one per histogram task) fit in this travels in the tasks


def tree_reduce(client, func, futures: list, split_every: int, *, until: int = 1, once: bool = False) -> list:
    """``futures`` combined by ``func`` on the workers, ``split_every`` at a time, until at most
    ``until`` are left (with ``once``, at least one round even when that many are given)."""
    while len(futures) > until or once:
        futures = [client.submit(func, *futures[i:i + split_every], pure=False)
                   for i in range(0, len(futures), split_every)]
        once = False
    return list(futures)


def drain(client, progress: Progress, futures: list, label: str) -> None:
    """Until ``futures`` are done, the list emptied as they finish: a result nothing else needs
    is let go on its worker at once (:func:`~dasktree.engine.waits.wait_futures`, bounded)."""
    progress.start(label, len(futures))
    while futures:
        wait_futures(client, futures[:1])
        done = [f.done() for f in futures]
        for _ in range(sum(done)):
            progress.advance()
        futures[:] = [f for f, d in zip(futures, done) if not d]


class TaskGraphPasses:
    """Passes as task graphs on ``client`` (see the module); the runner gives each pass its histogram tasks."""

    def __init__(self, client, split_every: int, progress: Progress):
        self.client, self.split_every, self.progress = client, split_every, progress

    def run(self, plan, func, chunks: list, label: str, histograms: Callable[[object], list], n_tasks: int,
            scatter: bool = False, **kwargs) -> list:
        """One pass: ``histograms(plan)`` (``n_tasks`` tasks, each counting every slot of the plan),
        then ``func(hist, chunk, **kwargs)`` per chunk as tasks next to the sum. With ``scatter`` the
        chunks are :class:`~dasktree.engine.search_chunks.SearchChunk` s of contiguous cells, each
        summing only its own (``func`` is the search)."""
        plan = plan.counting_all()  # none derives: no task keeps the last pass's histograms
        hists = histograms(self._send_plan(plan, n_tasks))
        sums = list(hists)
        # The whole pass goes to the scheduler at once; waiting on the histograms only shows progress.
        if scatter:
            tasks = [self._search_task(sums, c, plan, **kwargs) for c in chunks]
        else:
            [total] = tree_reduce(self.client, add_counts, sums, self.split_every, once=True)  # int64
            tasks = [self.client.submit(func, total, chunk, pure=False, **kwargs) for chunk in chunks]
        del sums
        drain(self.client, self.progress, hists, label)
        wait_futures(self.client, tasks)
        results = gathered(self.client, tasks)
        self.progress.finish()
        return results

    def _send_plan(self, plan, n_tasks: int):
        """The plan as the histogram tasks' argument: in the tasks while its copies are small (a
        broadcast scatter costs a round trip to every worker), else scattered once."""
        arrays = (getattr(plan, f.name) for f in dataclasses.fields(plan))
        size = sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))  # counting_all: no fills
        if size * n_tasks <= EMBED_PLAN_BYTES:
            return plan
        [future] = answered(lambda: self.client.scatter([plan], broadcast=True, hash=False, timeout=LOST_SECONDS))
        return future

    def _search_task(self, hists: list, chunk: SearchChunk, plan, **kwargs):
        """The task summing a search chunk's cells of every worker's histogram and searching them
        (reduce-scatter: a large histogram goes to each chunk in pieces of only its cells)."""
        lo, hi = chunk.span
        if len(hists) > 1 and plan.hist_bytes > SCATTER_BYTES:
            pieces, lo, hi = [self.client.submit(cells_of, h, lo, hi, pure=False) for h in hists], 0, hi - lo
        else:
            pieces = hists
        return self.client.submit(search_cells, *pieces, lo=lo, hi=hi, chunk=chunk, pure=False, **kwargs)
