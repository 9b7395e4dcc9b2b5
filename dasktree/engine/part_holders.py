"""A cached fit's level passes as calls on Dask actors: one :class:`PartHolder` per worker.

As Dask tasks, a level pass is two dependent stages: count, then sum a search
chunk's cells from every worker's histogram and search them. Each stage costs a
round trip through the scheduler: two stages of empty tasks take as long as
counting a million rows at a deep level (the ``latency`` benchmark claim). Actors take the scheduler off that path
(distributed's ``actor=True``: calls go from the caller to the worker holding
the object). A worker's holder keeps its encoded parts (a group per worker
thread, as the runner cached them) and its histograms of the last pass. A pass
is one call on every holder, which

1. counts each of its groups on a thread of its own
   (:func:`~dasktree.engine.part_tasks.histogram_of_many`, derived slots filled from the
   group's histogram of the last pass),
2. fetches its search chunks' cells from its peers, holder to holder
   (:meth:`PartHolder.cells`, which waits until that peer has counted),
3. searches them (:func:`~dasktree.engine.part_tasks.search_cells`) and returns only the
   chosen tests.

These are the functions the task runner uses, so the forest is the same bit
for bit. A lost worker takes its holder with it; the runner then starts again
from the Parquet files (:meth:`dasktree.engine.dask_runner.DaskRunner.apply_pass`).

A pass's plan travels with the call (under a megabyte at a deep level of a
10-fold forest), pickled once for every holder with the pass's shape and
search context: as arguments, each call serialized them anew, an array to a
frame (the ``scaling`` benchmark claim). Through a client whose ``direct_to_workers`` is off
(distributed's default for a client of a remote scheduler) it goes by way of
the scheduler, which takes longer the larger the plan; the clients dasktree
starts itself talk to the workers directly.
"""

from __future__ import annotations

import asyncio
import functools
import pickle
import weakref
from concurrent.futures import CancelledError, ThreadPoolExecutor

import numpy as np

from ..levels import small
from ..gc_pause import freeze_older_objects, unfreeze_older_objects
from ..hook_points import point
from .progress import Progress
from .part_tasks import histogram_of_many, search_cells
from .waits import LOST_SECONDS, POLL_SECONDS, HolderLost, Watch, answered, gathered, wait_calls, wait_futures

__all__ = ["PartHolder", "Holders", "HolderLost"]


class PartHolder:
    """One worker's encoded parts and its last histograms, kept between level passes (a Dask actor).

    ``jobs`` are ``(function, args, kwargs)``, one per group of parts (a worker thread's): each
    returns the group's list of :class:`~dasktree.binning.encode.Encoded` parts, and runs at the first
    pass (the holders start before it, while the client prepares). Each group counts into its own
    histogram: the derived slots need the same rows from pass to pass.

    From its start to its close (or its collection, if never closed) the worker's older objects
    (``distributed``'s state, the modules) are out of the collector's scans
    (:func:`~dasktree.gc_pause.freeze_older_objects`): a full collection of them takes 70-100 ms
    on a worker, and its peers wait for its cells meanwhile."""

    def __init__(self, *jobs: tuple):
        freeze_older_objects()
        self._thaw = weakref.finalize(self, unfreeze_older_objects)  # once: at close, or when collected
        self._jobs = list(jobs)
        self.groups: list | None = None  # the encoded groups, from the first pass on
        self._pool = _worker_threads() or ThreadPoolExecutor(max(1, len(jobs)), thread_name_prefix="dasktree-holder")
        self._peers: list = []
        self._number: int | None = None  # the pass whose histograms are held
        self._hists: list = []  # that pass's histogram of each group
        self._counted: dict[int, asyncio.Future] = {}  # pass -> done when this holder has counted it
        self._gathered: tuple | None = None  # (small pass, [((group, block), piece)]) until the next pass
        self._ready: dict[int, asyncio.Future] = {}  # small pass -> done when this holder has gathered it

    def set_peers(self, peers: list) -> int:
        """The other holders (actor handles), whose histograms the searches here sum with their own."""
        self._peers = list(peers)
        return len(self._peers)

    async def level_pass(self, number: int, shared: bytes, chunks: list, last: int | None) -> list:
        """Pass ``number``: count the plan's slots, then search ``chunks`` summed over every holder.
        ``shared`` is the pickled ``(plan, shape, context)`` every holder gets (:meth:`Holders.level_pass`);
        ``last`` is the pass whose histograms ``plan.fills`` derive from (None: no fills)."""
        plan, shape, context = pickle.loads(shared)
        loop = asyncio.get_running_loop()
        counted = self._counted_by(number)
        self._gathered = None  # a small pass's rows are grown by now
        try:
            await self._encode(number)
            point("count", number)
            if plan.fills and last != self._number:
                raise RuntimeError(f"pass {number} derives from pass {last}, but this holder has pass {self._number}")
            if not plan.fills:  # nothing derived from the last pass's histograms (every search of it is done)
                self._hists = []
            hists = await asyncio.gather(*(
                loop.run_in_executor(self._pool, functools.partial(
                    histogram_of_many, group, plan=plan, shape=shape, last=(previous,) if plan.fills else ()))
                for group, previous in zip(self.groups, self._hists or [None] * len(self.groups))))
        except BaseException as exc:
            counted.set_exception(PeerFailed(f"a peer holder could not count pass {number}: {exc!r}"))
            counted.exception()  # retrieved: no peer may ever ask
            raise
        self._number, self._hists = number, list(hists)
        counted.set_result(None)
        for old in [n for n in self._counted if n < number]:
            del self._counted[old]
        pieces = await asyncio.gather(*(self._pieces(chunk, number) for chunk in chunks))
        point("search", number)
        return list(await asyncio.gather(*(
            loop.run_in_executor(self._pool, functools.partial(
                search_cells, *cells, lo=0, hi=chunk.span[1] - chunk.span[0], chunk=chunk, context=context))
            for chunk, cells in zip(chunks, pieces))))

    async def _encode(self, number: int) -> None:
        """The first pass encodes (pass 0's tables, or the parts read now)."""
        if self.groups is None:
            point("encode", number)
            loop = asyncio.get_running_loop()
            self.groups = list(await asyncio.gather(*(
                loop.run_in_executor(self._pool, functools.partial(func, *args, **kwargs))
                for func, args, kwargs in self._jobs)))
            self._jobs = []

    async def gather(self, number: int, shared: bytes, keys: list[int]) -> list:
        """Small pass ``number`` (:mod:`dasktree.levels.small`): each group's rows of the pickled
        gather plan's jobs (``shared``), kept for the holders growing them (:meth:`pieces`) until the
        next pass. ``keys`` number this holder's groups among every holder's (the pieces' order).
        Returns, per group, its memberships of each job and its rows gathered."""
        plan = pickle.loads(shared)
        loop = asyncio.get_running_loop()
        ready = self._gathered_by(number)
        self._gathered = None
        try:
            await self._encode(number)
            point("gather", number)
            pieces = await asyncio.gather(*(
                loop.run_in_executor(self._pool, functools.partial(
                    lambda group: [small.gather_block(encoded, plan) for encoded in group], group))
                for group in self.groups))
        except BaseException as exc:
            ready.set_exception(PeerFailed(f"a peer holder could not gather pass {number}: {exc!r}"))
            ready.exception()  # retrieved: no peer may ever ask
            raise
        self._gathered = (number, [((key, b), piece) for key, group in zip(keys, pieces)
                                   for b, piece in enumerate(group)])
        ready.set_result(None)
        for old in [n for n in self._ready if n < number]:
            del self._ready[old]
        return [(sum((small.job_counts(p, plan.n_jobs) for p in group), np.zeros(plan.n_jobs, np.int64)),
                 sum(int(p[0].shape[1]) for p in group)) for group in pieces]

    async def pieces(self, number: int, lo: int, hi: int) -> list:
        """This holder's gathered pieces of small pass ``number`` cut to jobs ``lo:hi``
        (:func:`~dasktree.levels.small.piece_of_jobs`), each with its place among every holder's."""
        await self._gathered_by(number)
        point("pieces", number)
        if self._gathered is None or self._gathered[0] != number:
            raise RuntimeError(f"pieces of small pass {number} asked, but this holder has not kept them")
        held = self._gathered[1]
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(
            lambda: [(key, small.piece_of_jobs(piece, lo, hi)) for key, piece in held]))

    async def grow(self, number: int, shared: bytes, runs: list[tuple[int, int]]) -> list:
        """Grow small pass ``number``'s jobs ``lo:hi`` of each run: their pieces fetched from every holder,
        merged in the holders' order (:func:`~dasktree.levels.small.merge_gathered`: the rows in the
        order an in-process pass has them), then ``func(gathered, **kwargs)`` of the pickled
        ``(plan, func, kwargs)`` on a thread each. Returns their results in the order of ``runs``."""
        plan, func, kwargs = pickle.loads(shared)
        loop = asyncio.get_running_loop()

        async def one(lo: int, hi: int):
            fetched = await asyncio.gather(self.pieces(number, lo, hi),
                                           *(peer.pieces(number, lo, hi) for peer in self._peers))
            pieces = [piece for _, piece in sorted((p for found in fetched for p in found), key=lambda kp: kp[0])]
            point("grow", number)
            return await loop.run_in_executor(self._pool, functools.partial(
                lambda: func(small.merge_gathered(pieces, plan, jobs=(lo, hi)), **kwargs)))

        return list(await asyncio.gather(*(one(lo, hi) for lo, hi in runs)))

    def _gathered_by(self, number: int) -> asyncio.Future:
        if number not in self._ready:
            self._ready[number] = asyncio.get_running_loop().create_future()
        return self._ready[number]

    async def cells(self, number: int, lo: int, hi: int) -> list:
        """Cells ``lo:hi`` of this holder's histograms of pass ``number``, once it has counted it."""
        await self._counted_by(number)
        point("cells", number)
        if number != self._number:  # the runner starts a pass only when every search of the last is done
            raise RuntimeError(f"cells of pass {number} asked, but this holder has pass {self._number}")
        return [hist[lo:hi] for hist in self._hists]

    async def _pieces(self, chunk, number: int) -> list:
        lo, hi = chunk.span
        fetched = await asyncio.gather(*(peer.cells(number, lo, hi) for peer in self._peers))
        return [hist[lo:hi] for hist in self._hists] + [piece for pieces in fetched for piece in pieces]

    def _counted_by(self, number: int) -> asyncio.Future:
        if number not in self._counted:
            self._counted[number] = asyncio.get_running_loop().create_future()
        return self._counted[number]

    def close(self) -> None:
        """Let go of the data and the threads (the runner calls this before releasing the actor)."""
        self.groups, self._jobs, self._hists, self._peers, self._gathered = [], [], [], [], None
        if self._pool is not _worker_threads():
            self._pool.shutdown(wait=False)
        self._thaw()


class PeerFailed(RuntimeError):
    """A holder's count failed, so its peers cannot sum its cells (the failing holder raises the cause)."""


def _worker_threads():
    """The worker's own task threads, where a pass's tasks ran before holders: the counts and codes
    are allocated where they were (threads of their own would each take a malloc arena, and a 4M
    fit's peak memory grew by 5-10%). None off a worker."""
    try:
        from distributed import get_worker

        return get_worker().executors["default"]
    except (ImportError, ValueError, KeyError, AttributeError):
        return None


class Holders:
    """The client's side: a :class:`PartHolder` on every worker of a cached runner's groups.

    ``jobs`` are ``(worker, (function, args, kwargs))`` encoding each group (futures among the
    arguments are resolved on the worker); a worker's holder takes its groups in that order, and
    search chunk ``i`` goes to the holder of group ``i`` (the runner makes a chunk per worker
    thread, as it makes a group per thread)."""

    def __init__(self, client, jobs: list[tuple[str | None, tuple]]):
        by_worker: dict[str | None, list] = {}
        for worker, job in jobs:
            by_worker.setdefault(worker, []).append(job)
        self._client = client
        self.workers = list(by_worker)
        self._group_holder = [self.workers.index(worker) for worker, _ in jobs]
        self._futures = [client.submit(PartHolder, *group_jobs, workers=None if worker is None else [worker],
                                       allow_other_workers=True, actor=True, pure=False)
                         for worker, group_jobs in by_worker.items()]
        self.lost = False  # a holder's worker was lost: the others are released, not closed
        wait_futures(client, self._futures)  # bounded: a worker lost now is seen by the scheduler
        with client.as_current():  # the actors' handles call through this client, default or not
            self.actors = gathered(client, self._futures)
        where = answered(lambda: client.sync(client.scheduler.who_has, keys=[f.key for f in self._futures],
                                             callback_timeout=LOST_SECONDS))
        self._watch = Watch(client, [address for f in self._futures for address in where.get(f.key, ())])
        self._results([actor.set_peers([peer for peer in self.actors if peer is not actor]) for actor in self.actors])
        self.number: int | None = None  # the last pass every holder counted

    def level_pass(self, number: int, plan, shape, chunks: list, context, progress: Progress,
                   label: str) -> list:
        """Pass ``number`` on every holder; the search results in the order of ``chunks``.
        ``plan.fills`` derive from the holders' last pass."""
        mine: list[list[int]] = [[] for _ in self.actors]
        for i in range(len(chunks)):
            mine[self._group_holder[i % len(self._group_holder)]].append(i)
        self.number, last = None, self.number  # unknown until every holder has counted
        # pickled once for every holder: a call's arguments are serialized per call, an array to a frame,
        # and the plan and the context hold dozens of arrays (at 16 workers, two fifths of an empty
        # pass's client CPU, and of the scheduler's when the calls go through it)
        shared = pickle.dumps((plan, shape, context), protocol=pickle.HIGHEST_PROTOCOL)
        progress.start(label, len(self.actors))
        try:
            try:
                calls = [actor.level_pass(number, shared, [chunks[i] for i in indices], last)
                         for actor, indices in zip(self.actors, mine)]
            except RuntimeError as exc:  # distributed knows the worker holding an actor is gone
                raise HolderLost(str(exc)) from exc
            by_holder = self._results(calls, progress)
        except HolderLost:
            self.lost = True
            raise
        results: list = [None] * len(chunks)
        for indices, found in zip(mine, by_holder):
            for i, result in zip(indices, found):
                results[i] = result
        self.number = number
        progress.finish()
        return results

    def small_pass(self, number: int, plan, func, kwargs: dict, progress: Progress, label: str) -> tuple[list, int]:
        """Small pass ``number`` (:mod:`dasktree.levels.small`) on every holder: each gathers its groups'
        rows of ``plan``'s jobs, then the jobs are cut in runs of similar memberships, one per group
        (a worker thread's, :func:`~dasktree.levels.small.job_runs`), and the holder of group ``i``
        grows run ``i``: its rows come from every holder, and only the grown subtrees come back.
        Returns the runs' ``func(gathered, **kwargs)`` in job order, and the rows gathered."""
        self.number = None  # no histograms of this pass: the next level pass counts every node
        keys: list[list[int]] = [[] for _ in self.actors]
        for group, holder in enumerate(self._group_holder):
            keys[holder].append(group)
        progress.start(label, 2 * len(self.actors))
        shared = pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL)
        found = [group for groups in self._results(self._calls(
            lambda: [actor.gather(number, shared, mine) for actor, mine in zip(self.actors, keys)]), progress)
            for group in groups]
        counts = sum((c for c, _ in found), np.zeros(plan.n_jobs, dtype=np.int64))
        runs = small.job_runs(np.concatenate([[0], np.cumsum(counts)]), len(self._group_holder))
        mine: list[list[int]] = [[] for _ in self.actors]
        for i in range(len(runs)):
            mine[self._group_holder[i % len(self._group_holder)]].append(i)
        shared = pickle.dumps((plan, func, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        grown = self._results(self._calls(lambda: [actor.grow(number, shared, [runs[i] for i in indices])
                                                   for actor, indices in zip(self.actors, mine)]), progress)
        results: list = [None] * len(runs)
        for indices, found_runs in zip(mine, grown):
            for i, result in zip(indices, found_runs):
                results[i] = result
        progress.finish()
        return results, sum(rows for _, rows in found)

    def _calls(self, make) -> list:
        """``make()``'s calls on the holders; distributed raises RuntimeError making a call when it knows
        the worker holding an actor is gone: :class:`HolderLost`."""
        try:
            return make()
        except RuntimeError as exc:
            self.lost = True
            raise HolderLost(str(exc)) from exc

    def close(self) -> None:
        """Close every holder (after a lost worker, only release them), then release the actors.

        Released explicitly: distributed's actor handles and calls keep reference cycles, and
        a handle made before the grow loop is out of the collector's sight during it
        (:mod:`dasktree.gc_pause`), so waiting for the handles to be collected would leave
        the holders, and their data, on the workers."""
        calls = []
        for actor in [] if self.lost else self.actors:
            try:
                calls.append(actor.close())
            except Exception:  # its worker is gone, and the holder with it
                pass
        for call in calls:
            try:
                call.result(timeout=5 * POLL_SECONDS)
            except Exception:  # a holder that cannot say it closed is released all the same
                pass
        if self._futures:
            self._client.cancel(self._futures)
        self.actors, self._futures = [], []


    def _results(self, calls: list, progress: Progress | None = None) -> list:
        """Every call's result, in order, each wait bounded (:func:`~dasktree.engine.waits.wait_calls`: a
        lost holder's worker raises :class:`HolderLost`). The first failure is raised once all calls
        are over: a failing holder fails its peers' searches, and the cause is the error worth
        raising, not a :class:`PeerFailed` that happens to come first. A holder does no I/O but
        talk to its peers, so an ``OSError`` means a worker is gone: :class:`HolderLost`."""
        try:
            outcomes = wait_calls(calls, self._watch, None if progress is None else progress.advance)
        except HolderLost:
            self.lost = True
            raise
        errors = [value for ok, value in outcomes if not ok]
        if errors:
            gone = (OSError, CancelledError)  # holders do no I/O but talk to each other; a call forgotten
            if any(isinstance(e, gone) for e in errors):  # with its worker is cancelled
                self.lost = True
                raise HolderLost(f"a holder's worker cannot be reached: {next(e for e in errors if isinstance(e, gone))!r}")
            raise next((e for e in errors if not isinstance(e, PeerFailed)), errors[0])
        return [value for _, value in outcomes]
