"""Waits on the cluster that always end: every wait on a future or an actor call is bounded.

A fit waits on two kinds of things: Dask futures (pass 0, uncached passes) and
calls on the holders (:mod:`dasktree.engine.part_holders`, Dask actors). Dask reruns a
lost task from its lineage, but an actor lives on one worker: when that worker
dies, a call on it, or a call of a peer holder waiting for its cells, may
never answer. So no wait here is open-ended. Every ``POLL_SECONDS`` a waiting
client asks the scheduler which workers there are:

- a worker that held a holder of the pass is gone: :class:`HolderLost`, and the
  runner starts the pass again on new holders (:meth:`DaskRunner.apply_pass`);
- the scheduler cannot be reached, or the cluster has had no worker, for
  :data:`LOST_SECONDS`: :class:`~dasktree.errors.TransientError`, a
  one-line error that a retry may fix (exit 75);
- no worker has been heard from (none sent the scheduler its heartbeat: every
  one stopped, say by SIGSTOP, or its machine frozen) and the wait made no
  progress, for :data:`LOST_SECONDS`: :class:`~dasktree.errors.TransientError`
  too. The scheduler lists a silent worker until its ``worker-ttl`` (5 minutes
  by default), so the workers' heartbeats are what tells a stall;
- the client lost its connection to the scheduler, or the scheduler answering is
  another one than the run started with (restarted at the same address): at
  once :class:`~dasktree.errors.TransientError`. distributed cancels every future
  of a client that loses its scheduler, and a new scheduler knows nothing of the
  run's data and holders, so the run cannot go on (``--checkpoint`` resumes it).

A single call to the scheduler (a scatter, a question about its workers) is
bounded too (:func:`answered`): a scheduler that stops answering without
dying (a stopped process, a full machine) ends the run after :data:`LOST_SECONDS`.
Fetching the results of finished futures (:func:`gathered`) is watched the same
way: the workers holding them may stop answering while the scheduler does.

``DASKTREE_LOST_SECONDS`` in the environment sets :data:`LOST_SECONDS` (a job
on a cluster that scales from zero may want minutes).

A wait that runs out of time, or a question the scheduler does not answer, is an exception
``distributed`` raises through ``Client.sync``, which keeps it in a closure's cell that its own
traceback's frames hold: a reference cycle. Its frames hold the waiting caller's (``f_back``), and
their futures, until the cyclic collector runs; the scheduler keeps those tasks meanwhile, after the
fit has returned. Every exception of ``distributed`` a wait here swallows, or a pass retries after,
is let go of by :func:`release_frames`.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
import weakref
from typing import Callable, Iterable, TypeVar

from ..errors import TransientError

__all__ = ["POLL_SECONDS", "LOST_SECONDS", "HolderLost", "Watch", "wait_futures", "wait_calls", "gathered",
           "answered", "workers_of", "remember_scheduler", "scheduler_lost", "check_scheduler_alive",
           "release_frames"]

T = TypeVar("T")

POLL_SECONDS = 1.0
"""How often a waiting client asks the scheduler about its workers."""

LOST_SECONDS = float(os.environ.get("DASKTREE_LOST_SECONDS", 60))
"""How long a cluster without workers, a scheduler that does not answer, or workers none of which
is heard from while a wait makes no progress, is waited for."""


class HolderLost(Exception):
    """A holder's worker cannot be reached: lost, and the holder's data with it."""


_FIRST_SCHEDULER: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # client -> its scheduler's id


def release_frames(exc: BaseException | None) -> None:
    """Let go of what a caught exception's tracebacks hold (their frames' locals, and the callers'
    frames they link to), along its chain of causes: an exception ``distributed`` raised is in a reference
    cycle (see the module), and would keep them, and the futures in them, until the cyclic collector runs."""
    seen: set[int] = set()
    chain = [exc]
    while chain:
        exc = chain.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)  # a frame still running (the catcher's) is left as it is
        exc.__traceback__ = None
        chain += [exc.__context__, exc.__cause__]


def answered(call: Callable[[], T], seconds: float | None = None) -> T:
    """``call()``, a call to the scheduler, given ``seconds`` (default :data:`LOST_SECONDS`) to
    answer; no answer by then, or a lost connection, is a :class:`~dasktree.errors.TransientError`.

    The call runs on a thread of its own: some of ``distributed``'s calls (a scatter) take a
    timeout but wait on a stopped scheduler regardless. A call given up on is left to its
    (daemon) thread, and the run ends."""
    seconds = LOST_SECONDS if seconds is None else seconds
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="dasktree-scheduler-call", daemon=True)
    thread.start()
    thread.join(seconds)
    error = outcome.get("error")
    if thread.is_alive() or isinstance(error, TimeoutError):
        raise TransientError(f"the Dask cluster (its scheduler, or the workers a call needs) did not answer for "
                             f"{seconds:g} s: the cluster was lost; "
                             "a retry may succeed") from None
    if isinstance(error, OSError):  # distributed's CommClosedError among them: the connection is gone
        raise TransientError(f"the connection to the Dask scheduler was lost ({type(error).__name__}); "
                             "a retry may succeed") from None
    if error is not None:
        raise error
    return outcome["value"]


def workers_of(client, seconds: float | None = None) -> dict:
    """The scheduler's workers (address -> their information), asked within ``seconds``
    (:func:`answered`; ``Client.scheduler_info`` asks with no bound)."""
    seconds = LOST_SECONDS if seconds is None else seconds
    info = answered(lambda: client.sync(client.scheduler.identity, n_workers=-1, callback_timeout=seconds), seconds)
    return info.get("workers", {})


def remember_scheduler(client) -> None:
    """Note which scheduler ``client`` runs on now: another one later (restarted) has lost the run."""
    info = answered(lambda: client.sync(client.scheduler.identity, n_workers=0, callback_timeout=LOST_SECONDS))
    _FIRST_SCHEDULER[client] = info.get("id")


def scheduler_lost(client, info: dict | None = None) -> str | None:
    """Why the run on ``client`` cannot go on for its scheduler (None: it can): the connection
    lost (distributed cancelled the run's futures), the scheduler another one than at
    :func:`remember_scheduler`, or (without ``info``, the scheduler's identity) no answer."""
    status = getattr(client, "status", "running")
    if status != "running":
        return f"the connection to the Dask scheduler was lost ({status})"
    if info is None:
        try:
            info = client.sync(client.scheduler.identity, n_workers=0, callback_timeout=5 * POLL_SECONDS)
        except Exception as exc:  # noqa: BLE001 - whatever it is, the scheduler did not answer
            release_frames(exc)
            return f"the Dask scheduler does not answer ({type(exc).__name__})"
    first = _FIRST_SCHEDULER.get(client)
    if first is not None and info.get("id") != first:
        return "the Dask scheduler was restarted (its state, the run's data, is gone)"
    return None


def check_scheduler_alive(client, info: dict | None = None) -> None:
    """Raise :class:`~dasktree.errors.TransientError` if :func:`scheduler_lost` says why."""
    why = scheduler_lost(client, info)
    if why is not None:
        raise TransientError(f"{why} in the middle of the run; a retry may succeed "
                             "(with --checkpoint it resumes from the last level pass saved)")


class Watch:
    """The health of a cluster as one wait sees it: raises when it cannot go on.

    ``holders`` are the addresses of the workers whose loss ends the wait at once (the
    workers holding a pass's actors). A worker is *heard from* when its heartbeat (the
    scheduler's ``last_seen`` of it) changes between two checks; :meth:`progressed` (a
    future or call of the wait finished) counts as hearing from the cluster too, and a
    stall is counted from the first check after it (a watch kept from pass to pass is
    not blamed for the time the client spent between them)."""

    def __init__(self, client, holders: Iterable[str] = (), lost_seconds: float | None = None):
        self.client = client
        self.holders = {h for h in holders if h is not None}
        self.lost_seconds = LOST_SECONDS if lost_seconds is None else lost_seconds
        self.unwell_since: float | None = None
        self.heard = time.monotonic()  # when a worker was last heard from, or the stall began
        self._last_seen: dict[str, object] | None = None  # worker -> its heartbeat's time (None: a new stall)

    def progressed(self) -> None:
        """Something the wait waits on finished: the cluster works, whatever its heartbeats say."""
        self.heard, self._last_seen = time.monotonic(), None

    def check(self) -> None:
        """Ask the scheduler (within ``POLL_SECONDS`` x 5); raise if the cluster cannot go on."""
        if getattr(self.client, "status", "running") != "running":
            check_scheduler_alive(self.client)  # the connection is lost: the run's futures are cancelled
        try:
            info = self.client.sync(self.client.scheduler.identity, n_workers=-1,
                                    callback_timeout=5 * POLL_SECONDS)
        except Exception as exc:  # the scheduler does not answer: lost, or too busy to say
            release_frames(exc)
            info, workers, problem = None, None, f"the Dask scheduler does not answer ({type(exc).__name__})"
        if info is not None:
            check_scheduler_alive(self.client, info)  # another scheduler than the run's: its state is gone
            workers = set(info.get("workers", {}))
            problem = None if workers else "the cluster has no workers"
            self._listen(info.get("workers", {}))
        if workers is not None and self.holders - workers:
            raise HolderLost(f"worker {sorted(self.holders - workers)[0]} holding part of the data was lost")
        now = time.monotonic()
        if workers and now - self.heard > self.lost_seconds:
            raise TransientError(f"no Dask worker has answered for {self.lost_seconds:g} s (stopped, or their "
                                 "machines frozen) and nothing finished: the cluster was lost; a retry may succeed")
        if problem is None:
            self.unwell_since = None
        elif self.unwell_since is None:
            self.unwell_since = now
        elif now - self.unwell_since > self.lost_seconds:
            raise TransientError(f"{problem} for {self.lost_seconds:g} s: the cluster was lost; a retry may succeed")

    def _listen(self, workers: dict) -> None:
        """Note each worker's heartbeat; one that changed since the last check is a worker heard from
        (the first check of a stall takes the heartbeats as they stand, and starts it)."""
        seen = {address: w.get("last_seen") for address, w in workers.items()}
        if self._last_seen is None or any(self._last_seen.get(address, when) != when for address, when in seen.items()):
            self.heard = time.monotonic()
        self._last_seen = seen


def wait_futures(client, futures: list, on_done: Callable[[], None] | None = None,
                 watch: Watch | None = None) -> None:
    """Until every future is done (finished, erred or cancelled), checking the cluster every
    ``POLL_SECONDS``; ``on_done`` once per future done."""
    from distributed import wait

    watch = watch or Watch(client)
    pending = list(futures)
    while pending:
        try:
            with client.as_current():  # distributed's wait asks for the default client: this one, default or not
                done, not_done = wait(pending, timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
        except TimeoutError as exc:  # nothing finished this poll: the common case of a busy cluster
            release_frames(exc)
            watch.check()
            continue
        watch.progressed()
        if on_done is not None:
            for _ in done:
                on_done()
        pending = list(not_done)


def wait_calls(calls: list, watch: Watch, on_done: Callable[[], None] | None = None) -> list:
    """Each actor call's outcome in order, ``(True, result)`` or ``(False, exception)``, checking the
    cluster every ``POLL_SECONDS`` while one is outstanding."""
    outcomes = []
    for call in calls:
        while True:
            try:
                outcomes.append((True, call.result(timeout=POLL_SECONDS)))
                watch.progressed()
                break
            except TimeoutError as exc:
                release_frames(exc)
                if call.done():  # it ended just now, or its outcome is a TimeoutError: ask once more
                    outcomes.append(_outcome(call))
                    break
                watch.check()
            except Exception as exc:
                outcomes.append((False, exc))
                break
        if on_done is not None:
            on_done()
    return outcomes


def gathered(client, futures: list, watch: Watch | None = None) -> list:
    """``client.gather(futures)`` (futures done, :func:`wait_futures`), checking the cluster every
    ``POLL_SECONDS`` while the results come: their workers may stop answering while the scheduler
    does, and a gather waits on them unbounded. Given up on, the gather is left to its (daemon) thread."""
    watch = watch or Watch(client)
    outcome: dict = {}

    def run() -> None:
        try:
            with client.as_current():  # an actor's handle binds to the current client as it arrives
                outcome["value"] = client.gather(futures)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="dasktree-gather", daemon=True)
    thread.start()
    while True:
        thread.join(POLL_SECONDS)
        if not thread.is_alive():
            break
        watch.check()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _outcome(call) -> tuple[bool, object]:
    """A call that is done: ``(True, result)`` or ``(False, exception)``."""
    try:
        return True, call.result(timeout=POLL_SECONDS)
    except Exception as exc:
        return False, exc
