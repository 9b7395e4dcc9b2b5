import faulthandler
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# How long the tests' clusters may go without answering before a job calls them lost (exit 75): the
# default 60 s is for production; on a 2-core machine at a load of 30 a healthy cluster's first
# scatter (its workers importing pyarrow to unpickle the source) has taken longer. The tests of the
# bound itself set theirs (DASKTREE_LOST_SECONDS in their jobs' environment). Set before dasktree is
# imported: dasktree.engine.waits reads it once.
os.environ.setdefault("DASKTREE_LOST_SECONDS", "120")

CLUSTER_TEST_SECONDS = float(os.environ.get("DASKTREE_CLUSTER_TEST_SECONDS", 900))
"""How long a test that starts a cluster may run: then its stacks are dumped and it fails, instead of
hanging the suite (a loaded 2-core machine runs the slowest of them in under 6 minutes)."""


class WatchdogExpired(Exception):
    """A test that starts a cluster outlived :data:`CLUSTER_TEST_SECONDS`."""


@pytest.fixture(autouse=True)
def cluster_watchdog(request):
    """A bound on every test marked ``cluster`` (a real scheduler and workers): past
    :data:`CLUSTER_TEST_SECONDS` every thread's stack goes to stderr and the test fails with
    :class:`WatchdogExpired` (raised in the main thread by SIGALRM, which also ends a blocking
    system call there), so a wait nobody bounded shows where it waits instead of hanging."""
    if request.node.get_closest_marker("cluster") is None:
        yield
        return

    def expire(signum, frame):
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        raise WatchdogExpired(f"{request.node.nodeid} ran past {CLUSTER_TEST_SECONDS:g} s "
                              "(DASKTREE_CLUSTER_TEST_SECONDS); the stacks are above")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, CLUSTER_TEST_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def cluster_client():
    """A real 2-process LocalCluster (one thread each), shared by the integration tests. Not the
    default client: a fit finds an active default client by itself (dasktree.engine.place), and the
    tests that use this one say so with ``client=``."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def postgres_root():
    """A throwaway PostgreSQL server on a Unix socket for a test module (:mod:`dasktree.testing.postgres`);
    the test skips, saying why, where PostgreSQL is not installed."""
    from dasktree.testing.postgres import postgres_missing, postgres_server

    reason = postgres_missing()
    if reason:
        pytest.skip(reason)
    with postgres_server() as root:
        yield root


WARM_SECONDS = 2400  # every kernel compiled from an empty cache: 15 min at a load of 15 on 2 cores
_warming: dict = {}  # the pytest session's background `dasktree warm`: its process, cache and output files


def pytest_collection_finish(session):
    """Start ``dasktree warm`` for :func:`warmed_kernel_cache` as the pytest session starts, when a collected
    test uses it: a new interpreter compiling every kernel from an empty cache (minutes), at nice 10,
    so it takes a core the serial suite leaves idle and yields to the tests. The fixture waits for it."""
    if not any("warmed_kernel_cache" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    import tempfile

    root = tempfile.mkdtemp(prefix="dasktree-warmed-")
    cache = os.path.join(root, "warmed")
    out, err = open(os.path.join(root, "stdout"), "w+"), open(os.path.join(root, "stderr"), "w+")
    process = subprocess.Popen([sys.executable, "-m", "dasktree.cli", "warm", "--no-cluster", "--json"],
                               stdout=out, stderr=err, text=True, preexec_fn=lambda: os.nice(10),
                               env=dict(os.environ, NUMBA_CACHE_DIR=cache))
    _warming.update(root=root, cache=cache, process=process, out=out, err=err)


def pytest_sessionfinish(session):
    """The background warm ended (killed if no test waited for it: a pytest session cut short) and removed."""
    if not _warming:
        return
    import shutil

    process = _warming["process"]
    if process.poll() is None:
        process.kill()
    process.wait()
    _warming["out"].close()
    _warming["err"].close()
    shutil.rmtree(_warming["root"], ignore_errors=True)


@pytest.fixture(scope="session")
def warmed_kernel_cache():
    """A numba cache directory ``dasktree warm --no-cluster`` filled from empty, once per pytest session, and
    what the command reported (its JSON): the tests of the kernel cache copy it and take out the
    kernels they need missing, instead of each compiling every kernel from an empty cache again
    (minutes on 2 cores). The command started with the pytest session (:func:`pytest_collection_finish`);
    this waits for it, bounded."""
    process = _warming["process"]
    if process.poll() is None:  # a test waits for it now: its nice no longer buys anything (where allowed)
        try:
            os.setpriority(os.PRIO_PROCESS, process.pid, 0)
        except OSError:
            pass
    try:
        process.wait(timeout=WARM_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail(f"dasktree warm ran past {WARM_SECONDS} s")
    _warming["err"].seek(0)
    assert process.returncode == 0, _warming["err"].read()
    _warming["out"].seek(0)
    return Path(_warming["cache"]), json.loads(_warming["out"].read())
