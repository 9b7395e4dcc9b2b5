"""A level pass's search chunks: contiguous runs of the frontier's slots, of similar work.

Each chunk's search sums its own cells of every worker's histogram and
searches its nodes (a task, or a holder's share of a call: :mod:`dasktree.engine.dask_runner`,
:mod:`dasktree.engine.part_holders`); a derived node
and its siblings always share a chunk (:mod:`dasktree.kernels.subtraction`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..levels.level_search import SearchContext, SearchRequest

__all__ = ["SearchChunk", "search_chunks", "in_units", "MIN_CHUNK_SLICES"]

MIN_CHUNK_SLICES = 64  # a search task's least work, in node slices: fewer, fuller tasks at narrow levels


@dataclass(frozen=True)
class SearchChunk:
    """A search task's share of a level pass: cells ``lo:hi`` and its requests (bases relative to ``lo``).

    One object, not a list, in a task's arguments: Dask does not walk it looking for futures.
    """

    lo: int
    hi: int
    requests: list[SearchRequest]
    units: tuple[int, int] | None = None  # a mixed layout's units lo:hi of the chunk (PassPlan.narrowed)
    unit_base: np.ndarray | None = None  # per request: its first unit, relative to units[0]
    wide: np.ndarray | None = None  # per request: whether its slot holds int32 counts

    @property
    def span(self) -> tuple[int, int]:
        """What the chunk sums of each worker's histogram: its units in a mixed layout, else its cells."""
        return self.units or (self.lo, self.hi)


def search_chunks(requests: list[SearchRequest], plan, n_tasks: int,
                context: SearchContext | None = None) -> list[SearchChunk]:
    """Search chunks of similar work, each a contiguous run of slots.

    A node's binary search costs about its cells times (its slices to sum +
    the trees deciding there). A multi-way search (Block-Opt-P) is quadratic
    in the blocks of each numeric attribute, at most ``min(bins, rows)``: a
    node then weighs ``trees x sum_a min(width_a, rows)**2`` besides. Cutting
    the running total into at most ``n_tasks`` equal shares (none smaller than
    ``MIN_CHUNK_SLICES`` slices' worth) gives a huge node a chunk of its own
    and deals the small ones to the rest, so one big node cannot idle a worker.
    """
    requests = sorted(requests, key=lambda r: r.slot)
    cells = plan.cells
    cost = np.array([cells * (int(plan.slot_slices[r.slot]) + len(r.trees)) for r in requests], dtype=np.float64)
    max_arity = 2 if context is None else max(split.max_arity for split in context.searches)
    if max_arity > 2:
        numeric = np.array([k == "numeric" for k in context.layout.kinds])
        widths = context.layout.widths[numeric].astype(np.float64)
        rows = np.array([r.rows if r.rows > 0 else np.inf for r in requests])
        blocks = np.minimum(widths[None, :], rows[:, None])  # (requests, numeric attributes)
        cost += np.array([len(r.trees) for r in requests]) * (blocks ** 2).sum(axis=1) * max_arity
    total = float(cost.sum()) or 1.0
    n_tasks = int(max(1, min(n_tasks, total // (MIN_CHUNK_SLICES * cells))))
    middle = np.cumsum(cost) - cost / 2
    share = np.minimum((middle / total * n_tasks).astype(np.int64), n_tasks - 1)
    position = {r.slot: i for i, r in enumerate(requests)}
    for d in plan.derived:  # a derived node and its siblings (adjacent slots) go to one chunk
        members = [position[s] for s in (d.slot, *d.siblings)]
        share[min(members):max(members) + 1] = share[min(members)]
    chunks = []
    for k in np.unique(share):
        members = [requests[i] for i in np.flatnonzero(share == k)]
        lo = int(plan.slot_base[members[0].slot])
        last = members[-1].slot
        hi = int(plan.slot_base[last] + plan.slot_slices[last] * cells)
        chunks.append(SearchChunk(lo, hi, [dataclasses.replace(r, base=r.base - lo)
                                      for r in members]))
    return chunks


def in_units(chunk: SearchChunk, plan) -> SearchChunk:
    """``chunk`` (made on the uniform layout) with where its requests are in ``plan``'s mixed layout."""
    slots = np.array([r.slot for r in chunk.requests], dtype=np.int64)
    base = plan.slot_base[slots]
    lo, last = int(base[0]), int(slots[-1])
    hi = int(plan.slot_base[last] + plan.slot_units()[last])
    return dataclasses.replace(chunk, units=(lo, hi), unit_base=base - lo, wide=plan.slot_wide[slots])
