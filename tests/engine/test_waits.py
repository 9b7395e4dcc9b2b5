"""The waits on the cluster let go of what they waited on: a wait that ran out of time leaves no
reference cycle holding the futures, so their tasks leave the scheduler once the fit drops them, not
at the next cyclic collection (a fit on a loaded machine once left four tasks on the scheduler for
over a minute after it returned)."""

import gc
import time
import weakref

import pytest

from dasktree.engine.waits import POLL_SECONDS, release_frames, wait_futures


class Held:
    """A stand-in for a future: what a caller's frame holds while it waits."""


def _raise_as_distributed_does():
    """``distributed``'s ``Client.sync`` keeps the exception in a closure's cell, which its traceback's
    frames hold: the exception, its frames and their callers' frames make a cycle."""
    error = None

    def run():
        nonlocal error
        try:
            raise TimeoutError("no answer")
        except TimeoutError as exc:
            error = exc

    run()
    raise error


def _wait_in_a_frame(held, release: bool) -> None:
    try:
        _raise_as_distributed_does()
    except TimeoutError as exc:
        if release:
            release_frames(exc)
    assert held is not None


@pytest.mark.parametrize("release", [False, True])
def test_a_caught_exception_of_a_cycle_keeps_the_callers_locals_until_released(release):
    gc.disable()
    try:
        held = Held()
        ref = weakref.ref(held)
        _wait_in_a_frame(held, release)
        del held
        assert (ref() is None) == release  # without release_frames the cycle keeps the frame's locals alive
    finally:
        gc.enable()
        gc.collect()


def test_release_frames_follows_the_chain_and_takes_none():
    release_frames(None)
    try:
        try:
            _raise_as_distributed_does()
        except TimeoutError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as exc:
        release_frames(exc)
        assert exc.__traceback__ is None and exc.__cause__.__traceback__ is None


def _slow(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@pytest.mark.cluster
def test_a_wait_that_timed_out_leaves_no_task_on_the_scheduler(cluster_client):
    """A task longer than a poll makes ``distributed.wait`` time out in :func:`wait_futures`; with the
    collector off, the task must still leave the scheduler once its future is dropped."""
    def tasks() -> set:
        return set(cluster_client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks)))

    gc.disable()
    try:
        future = cluster_client.submit(_slow, 2.5 * POLL_SECONDS, pure=False)
        key = future.key
        wait_futures(cluster_client, [future])
        assert future.done()
        del future
        deadline = time.monotonic() + 30  # a release reaches the scheduler asynchronously
        while key in (left := tasks()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert key not in left, "the waited-on task is still on the scheduler: a cycle holds its future"
    finally:
        gc.enable()
