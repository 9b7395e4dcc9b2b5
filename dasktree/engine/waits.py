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
  one-line error that a retry may fix (exit 75).

``DASKTREE_LOST_SECONDS`` in the environment sets :data:`LOST_SECONDS` (a job
on a cluster that scales from zero may want minutes).
"""

from __future__ import annotations

import os
import time
from typing import Callable, Iterable

from ..errors import TransientError

__all__ = ["POLL_SECONDS", "LOST_SECONDS", "HolderLost", "Watch", "wait_futures", "wait_calls"]

POLL_SECONDS = 1.0
"""How often a waiting client asks the scheduler about its workers."""

LOST_SECONDS = float(os.environ.get("DASKTREE_LOST_SECONDS", 60))
"""How long a cluster without workers, or a scheduler that does not answer, is waited for."""


class HolderLost(Exception):
    """A holder's worker cannot be reached: lost, and the holder's data with it."""


class Watch:
    """The health of a cluster as one wait sees it: raises when it cannot go on.

    ``holders`` are the addresses of the workers whose loss ends the wait at once (the
    workers holding a pass's actors)."""

    def __init__(self, client, holders: Iterable[str] = (), lost_seconds: float | None = None):
        self.client = client
        self.holders = {h for h in holders if h is not None}
        self.lost_seconds = LOST_SECONDS if lost_seconds is None else lost_seconds
        self.unwell_since: float | None = None

    def check(self) -> None:
        """Ask the scheduler (within ``POLL_SECONDS`` x 5); raise if the cluster cannot go on."""
        try:
            info = self.client.sync(self.client.scheduler.identity, n_workers=-1,
                                    callback_timeout=5 * POLL_SECONDS)
            workers = set(info.get("workers", {}))
            problem = None if workers else "the cluster has no workers"
        except Exception as exc:  # the scheduler does not answer: lost, or too busy to say
            workers, problem = None, f"the Dask scheduler does not answer ({type(exc).__name__})"
        if workers is not None and self.holders - workers:
            raise HolderLost(f"worker {sorted(self.holders - workers)[0]} holding part of the data was lost")
        now = time.monotonic()
        if problem is None:
            self.unwell_since = None
        elif self.unwell_since is None:
            self.unwell_since = now
        elif now - self.unwell_since > self.lost_seconds:
            raise TransientError(f"{problem} for {self.lost_seconds:g} s: the cluster was lost; a retry may succeed")


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
        except TimeoutError:
            watch.check()
            continue
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
                break
            except TimeoutError:
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


def _outcome(call) -> tuple[bool, object]:
    """A call that is done: ``(True, result)`` or ``(False, exception)``."""
    try:
        return True, call.result(timeout=POLL_SECONDS)
    except Exception as exc:
        return False, exc
