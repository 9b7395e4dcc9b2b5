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

A small pass (:mod:`dasktree.levels.small`) is a gathering task per group of parts,
then per run of jobs a task cutting each group's rows to the run's and one growing
the run: only the grown subtrees come back.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..levels import small
from ..kernels.histogram import add_counts
from .progress import Progress
from .part_tasks import cells_of, encode_part, search_cells
from .waits import LOST_SECONDS, answered, gathered, wait_futures

__all__ = ["TaskGraphPasses", "tree_reduce", "drain", "gather_of_parts", "SCATTER_BYTES", "EMBED_PLAN_BYTES"]

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
        chunks are search chunks of contiguous cells (``chunk.span``), each
        summing only its own and searching them as the pass's context does
        (:func:`~dasktree.engine.part_tasks.search_cells`)."""
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

    def small_pass(self, plan, func, kwargs: dict, gathers: list, n_runs: int, label: str) -> tuple[list, int]:
        """A small pass: ``gathers`` are a task per group of parts, each its rows of ``plan``'s jobs
        (:func:`gather_of_parts`); the jobs are cut in ``n_runs`` runs of similar memberships
        (:func:`~dasktree.levels.small.job_runs`), each grown by one task from every group's rows of
        it. Returns the runs' ``func(gathered, **kwargs)`` in job order, and the rows gathered."""
        client = self.client
        counted = [client.submit(_counts_of, g, n_jobs=plan.n_jobs, pure=False) for g in gathers]
        wait_futures(client, counted)
        found = gathered(client, counted)
        counts = sum((c for c, _ in found), np.zeros(plan.n_jobs, dtype=np.int64))
        runs = small.job_runs(np.concatenate([[0], np.cumsum(counts)]), n_runs)
        tasks = [client.submit(_grow_run, *[client.submit(_run_of, g, lo=lo, hi=hi, pure=False) for g in gathers],
                               lo=lo, hi=hi, plan=plan, grow=func, kwargs=kwargs, pure=False) for lo, hi in runs]
        drain(client, self.progress, list(gathers), label)
        wait_futures(client, tasks)
        results = gathered(client, tasks)
        self.progress.finish()
        return results, sum(rows for _, rows in found)

    def _send_plan(self, plan, n_tasks: int):
        """The plan as the histogram tasks' argument: in the tasks while its copies are small (a
        broadcast scatter costs a round trip to every worker), else scattered once."""
        arrays = (getattr(plan, f.name) for f in dataclasses.fields(plan))
        size = sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))  # counting_all: no fills
        if size * n_tasks <= EMBED_PLAN_BYTES:
            return plan
        [future] = answered(lambda: self.client.scatter([plan], broadcast=True, hash=False, timeout=LOST_SECONDS))
        return future

    def _search_task(self, hists: list, chunk, plan, **kwargs):
        """The task summing a search chunk's cells of every worker's histogram and searching them
        (reduce-scatter: a large histogram goes to each chunk in pieces of only its cells)."""
        lo, hi = chunk.span
        if len(hists) > 1 and plan.hist_bytes > SCATTER_BYTES:
            pieces, lo, hi = [self.client.submit(cells_of, h, lo, hi, pure=False) for h in hists], 0, hi - lo
        else:
            pieces = hists
        return self.client.submit(search_cells, *pieces, lo=lo, hi=hi, chunk=chunk, pure=False, **kwargs)


def gather_of_parts(parts: list, *, source, roles, spec, folds, plan) -> list[tuple]:
    """Read and encode a group of parts one at a time, each kept only as its rows some job of the
    gather ``plan`` holds (:func:`~dasktree.levels.small.gather_block`)."""
    return [small.gather_block(encode_part(part, source=source, roles=roles, spec=spec, folds=folds), plan)
            for part in parts]


def _counts_of(pieces: list[tuple], *, n_jobs: int) -> tuple[np.ndarray, int]:
    """A group's memberships of each job, and its rows gathered."""
    return (sum((small.job_counts(p, n_jobs) for p in pieces), np.zeros(n_jobs, dtype=np.int64)),
            sum(int(p[0].shape[1]) for p in pieces))


def _run_of(pieces: list[tuple], *, lo: int, hi: int) -> list[tuple]:
    """A group's pieces cut to jobs ``lo:hi`` (:func:`~dasktree.levels.small.piece_of_jobs`)."""
    return [small.piece_of_jobs(p, lo, hi) for p in pieces]


def _grow_run(*groups: list[tuple], lo: int, hi: int, plan, grow, kwargs: dict):
    """Jobs ``lo:hi`` grown (``grow(gathered, **kwargs)``) from every group's rows of them, in the groups' order."""
    pieces = [p for group in groups for p in group]
    return grow(small.merge_gathered(pieces, plan, jobs=(lo, hi)), **kwargs)
