"""The level passes of a cached fit on the holders: no tasks at all.

A holder on each worker (a Dask actor, :mod:`dasktree.engine.part_holders`) keeps
the worker's encoded groups, counts them, fetches its search chunks' cells from
the other holders and searches them. Derived slots are filled from each group's
own histogram of the last pass (:mod:`dasktree.kernels.subtraction`): the
holders keep that pass's histograms, and :class:`HolderPasses` keeps where its
slots were (without them, as after a lost worker, every node is counted).
A small pass (:mod:`dasktree.levels.small`) is two calls on every holder: gather
the small nodes' rows, then grow a run of them each, the rows fetched holder to holder.
The other strategy, every pass as a task graph, is
:mod:`dasktree.engine.task_graph_passes`; :class:`~dasktree.engine.dask_runner.DaskRunner`
chooses between them.
"""

from __future__ import annotations

from ..kernels.subtraction import fills_of
from .part_holders import Holders
from .progress import Progress

__all__ = ["HolderPasses"]


class HolderPasses:
    """A cached fit's level passes as calls on one holder per worker, started on the cached groups by
    :meth:`start` (the runner does it at the first level pass, or before it while preparing)."""

    def __init__(self, client):
        self.client = client
        self.holders: Holders | None = None
        self.last_slots: tuple | None = None  # (node -> slot, slot -> first cell, slot -> wide) of the last pass (None: none to derive from)
        self.derived = 0  # nodes derived so far rather than counted

    @property
    def started(self) -> bool:
        return self.holders is not None

    def start(self, jobs: list[tuple[str | None, tuple]]) -> None:
        """A holder per worker, to run ``jobs`` (per group, its worker and the encoding of its parts)
        at the first level pass (:class:`~dasktree.engine.part_holders.Holders`)."""
        self.holders = Holders(self.client, jobs)

    def level_pass(self, number: int, plan, shape, chunks: list, context, progress: Progress, label: str) -> list:
        """Pass ``number`` on the holders, either task's: count ``plan`` (its derived slots filled from the
        holders' histograms of the last pass, when they have them) and search ``chunks`` as ``context`` does."""
        if not (plan.derived and self.holders.number is not None and self.last_slots):
            plan = plan.counting_all()
        # the holders count; which slots are derived from what is in the fills
        counting = plan.for_workers(fills_of(plan, *self.last_slots) if plan.derived else ())
        results = self.holders.level_pass(number, counting, shape, chunks, context, progress, label)
        self.last_slots = plan.kept_slots()
        self.derived += len(plan.derived)
        return results

    def small_pass(self, number: int, plan, func, kwargs: dict, progress: Progress, label: str) -> tuple[list, int]:
        """Small pass ``number`` on the holders (:meth:`~dasktree.engine.part_holders.Holders.small_pass`):
        the grown subtrees in job order, and the rows gathered. It counts nothing, so the next
        level pass derives nothing from the last."""
        self.last_slots = None
        return self.holders.small_pass(number, plan, func, kwargs, progress, label)

    def forget(self) -> None:
        """Close the holders and forget what they kept of the last pass (the runner's cached codes stay)."""
        if self.holders is not None:
            self.holders.close()
        self.holders, self.last_slots = None, None
