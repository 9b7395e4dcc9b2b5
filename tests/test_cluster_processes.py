"""The tests' wait for a cluster's workers (:func:`dasktree.testing.cluster.wait_for_workers`): bounded
by the machine's speed measured as it waits, ended at once when one of the cluster's processes ended,
and it says which of the two ended it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from dasktree.testing.cluster import startup_seconds, wait_for_workers


def _unused_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def test_a_process_that_ended_ends_the_wait_at_once():
    ended = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    ended.wait()
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"1 of the cluster's processes ended \(exit 3\) before 2 workers"):
        wait_for_workers(_unused_address(), 2, [ended], floor=600)
    assert time.monotonic() - started < 60  # at once, not at the 600 s floor


def test_the_bound_follows_the_machine_and_says_so():
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with pytest.raises(TimeoutError, match=r"no scheduler answered at .* within 2 s \(0\.01x the .* s an import"):
            wait_for_workers(_unused_address(), 1, [alive], floor=2, factor=0.01)
    finally:
        alive.kill()
        alive.wait()
    assert 0 < startup_seconds() < 600
