"""A classification level pass's search chunks: contiguous runs of the frontier's slots, of similar
work (:func:`search_chunks`), and their search (:func:`search_cells`).

On a cluster each chunk's search sums its own cells of every worker's histogram and searches its
nodes (a task, or a holder's share of a call: :mod:`dasktree.engine.dask_runner`,
:mod:`dasktree.engine.part_holders`); a derived node and its siblings always share a chunk
(:mod:`dasktree.kernels.subtraction`). The runners reach these through the pass's
:class:`~dasktree.levels.level_search.SearchContext` (``pass_chunks``, ``search_cells``), as they reach
regression's search through its own context (:class:`dasktree.regress.grow.RegressionSearch`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..gc_pause import collector_paused
from ..kernels.subtraction import slot_cells
from .level_search import SearchContext, SearchRequest, search_group
from .results import PackedResults, concat

__all__ = ["SearchChunk", "search_chunks", "in_units", "search_cells", "MIN_CHUNK_SLICES", "SEARCH_BLOCK_CELLS"]

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


SEARCH_BLOCK_CELLS = 1 << 20  # cells a search task sums and searches at a time: one 8 MB int64 buffer


def search_cells(*hists: np.ndarray, lo: int, hi: int, chunk, context,
                 block_cells: int = SEARCH_BLOCK_CELLS) -> PackedResults:
    """Sum cells ``lo:hi`` of every worker's histogram (a search chunk's share) and search the
    chunk's nodes (``chunk.requests``, bases relative to the chunk) in them; the results packed
    for the trip to the client. In a mixed layout (``chunk.units`` set) ``lo:hi`` are the chunk's
    units, and each request's slices are read at its own unit (:func:`_widen`).

    The sum is made a block of nodes at a time (about ``block_cells`` cells, at least one node)
    into one buffer, searched, and the buffer reused for the next block: a deep forest level's
    chunk is tens of millions of cells, and an int64 copy of it all is memory a worker must
    fault in fresh at every level (the searches are per node: blocks change nothing of the
    results). The collector is paused meanwhile: a deep forest level still makes thousands of
    short-lived objects here (a request per node and its arrays; :mod:`dasktree.gc_pause`)."""
    requests = chunk.requests
    cells = int(context.layout.widths.sum()) * context.n_classes
    spans = [(r.base, r.base + r.n_slices * cells) for r in requests]
    blocks: list[tuple[int, int]] = []  # runs of requests [first, last)
    for k, (start, end) in enumerate(spans):
        if not blocks or end - spans[blocks[-1][0]][0] > block_cells:
            blocks.append((k, k + 1))
        else:
            blocks[-1] = (blocks[-1][0], k + 1)
    with collector_paused():
        results: list[PackedResults] = []
        buffer = np.empty(max((spans[b - 1][1] - spans[a][0] for a, b in blocks), default=0), dtype=np.int64)
        for first, last in blocks:
            start, end = spans[first][0], spans[last - 1][1]
            total = buffer[:end - start]
            if chunk.units is None:
                np.copyto(total, hists[0][lo + start:lo + end])
                for h in hists[1:]:
                    total += h[lo + start:lo + end]
            else:
                _widen(total, hists, lo, chunk, range(first, last), start, cells)
            block = [dataclasses.replace(r, base=r.base - start) for r in requests[first:last]]
            results.append(search_group(total, block, context))
        return concat(results, context.n_folds * context.n_repeats, context.n_classes)


def _widen(total: np.ndarray, hists: tuple, lo: int, chunk, members: range, start: int, cells: int) -> None:
    """Sum the requests ``members`` of a mixed-layout chunk (``chunk.units``: each request's first
    unit and whether its slot is wide) from every histogram, as int64 cells at their uniform bases
    less ``start``. Requests adjacent in both layouts, with slots of one width, are copied as one
    run (a deep level's chunk is thousands of small nodes, mostly narrow and side by side)."""
    requests = [chunk.requests[i] for i in members]
    n = np.array([r.n_slices for r in requests], dtype=np.int64) * cells
    base = np.array([r.base for r in requests], dtype=np.int64) - start
    at = lo + chunk.unit_base[members.start:members.stop].astype(np.int64)
    wide = chunk.wide[members.start:members.stop].astype(bool)
    units = np.where(wide, 2 * n, n)
    joins = (wide[1:] == wide[:-1]) & (base[1:] == base[:-1] + n[:-1]) & (at[1:] == at[:-1] + units[:-1])
    run_first = np.flatnonzero(np.concatenate([[True], ~joins]))
    for a, b in zip(run_first.tolist(), np.append(run_first[1:], n.size).tolist()):
        size = int(base[b - 1] + n[b - 1] - base[a])
        out = total[base[a]:base[a] + size]
        np.copyto(out, slot_cells(hists[0], int(at[a]), size, bool(wide[a])))
        for h in hists[1:]:
            out += slot_cells(h, int(at[a]), size, bool(wide[a]))
