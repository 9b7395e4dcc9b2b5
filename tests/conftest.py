import faulthandler
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis's timed checks are timed asserts: a property's examples have no deadline, and slow input
# generation is not a failure (its too_slow health check fails a property whose first ten inputs took
# over 30 s to generate: at a load of 22 the row-hash tables' first draw took 86 s). A test's own
# @settings keeps these unless it names them.
settings.register_profile("dasktree-suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dasktree-suite")

# How long the tests' clusters may go without answering before a job calls them lost (exit 75): the
# default 60 s is for production; on a 2-core machine at a load of 30 a healthy cluster's first
# scatter (its workers importing pyarrow to unpickle the source) has taken longer. The tests of the
# bound itself set theirs (DASKTREE_LOST_SECONDS in their jobs' environment). Set before dasktree is
# imported: dasktree.engine.waits reads it once.
os.environ.setdefault("DASKTREE_LOST_SECONDS", "120")

_warm_key = pytest.StashKey[str]()
_shells: list = []  # the background warm's shell, in the process that started it

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
    tests that use this one say so with ``client=``. Started and closed as a fit's own cluster is
    (:func:`dasktree.engine.cluster.close_local_cluster`: bounded, its workers killed once their nannies
    close): distributed's graceful close waits 5 s for each worker's interpreter to exit, and at a load
    of 13 that wait ran out and failed the last test of a worker at its teardown."""
    from distributed import Client

    from dasktree.engine.cluster import close_local_cluster, local_cluster

    cluster = local_cluster(n_workers=2, threads_per_worker=1, processes=True)
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    close_local_cluster(cluster)


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
_WARM_ROOT = "dasktree_warm_root"  # the key of the warm's directory in an xdist worker's input
_SHARED = "dasktree_shared_cache"  # the key of "the workers' cache is the warm's copy" in a worker's input
_shared_key = pytest.StashKey[bool]()
_set_cache_dir: list = []  # NUMBA_CACHE_DIR as the controller found it, when it set the workers' shared one


def _distributed(config) -> bool:
    """Whether this process is pytest-xdist's controller, about to start workers (``-n`` above 0)."""
    return getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")


def pytest_configure(config):
    """The directory of the pytest session's ``dasktree warm`` (:func:`warmed_kernel_cache`), made once: by
    the process that runs the tests or, under pytest-xdist (``-n``), by the controller, which hands it to
    every worker (:func:`pytest_configure_node`) and outlives them to clean it up.

    Under pytest-xdist, unless ``NUMBA_CACHE_DIR`` is already set, the controller also starts that warm
    here, before the workers exist, and points their ``NUMBA_CACHE_DIR`` (read by numba when a worker
    imports it, and inherited by every process a test starts: CLI commands, cluster workers) at
    ``shared/`` beside it, which the warm's shell fills with a copy of what it compiled. The workers
    collect while it runs and wait for it before their first test (:func:`pytest_collection_finish`),
    so no worker compiles what another compiled, and the warm a cache test needs from empty is the same
    one; its own directory is left as the warm wrote it."""
    if hasattr(config, "workerinput"):
        return
    import tempfile

    root = tempfile.mkdtemp(prefix="dasktree-warmed-")
    config.stash[_warm_key] = root
    config.stash[_shared_key] = _distributed(config) and not os.environ.get("NUMBA_CACHE_DIR")
    if config.stash[_shared_key]:
        _set_cache_dir.append(os.environ.get("NUMBA_CACHE_DIR"))
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(root, "shared")
        _start_warm(root, nice=0)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist: each worker is told where the one warm writes, and whether its cache is the warm's copy."""
    node.workerinput[_WARM_ROOT] = node.config.stash[_warm_key]
    node.workerinput[_SHARED] = node.config.stash[_shared_key]


def _warm_root(config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return workerinput[_WARM_ROOT] if workerinput is not None else config.stash[_warm_key]


def _shared_cache(config) -> bool:
    workerinput = getattr(config, "workerinput", None)
    return workerinput[_SHARED] if workerinput is not None else config.stash[_shared_key]


def pytest_collection_modifyitems(config, items):
    """The tests that wait for the warm run last (stable otherwise), so a background warm has the whole
    run to finish at nice 10 before a test waits for it."""
    items.sort(key=lambda item: "warmed_kernel_cache" in getattr(item, "fixturenames", ()))


def _start_warm(root: str, nice: int) -> None:
    """Start ``dasktree warm --no-cluster`` into ``root/warmed`` (a new interpreter compiling every kernel
    from an empty cache: minutes), at ``nice``. A shell runs it, copies what it compiled to
    ``root/shared`` (the workers' shared cache, :func:`pytest_configure`) and writes the warm's exit status
    to ``rc`` when it ends, so a test or a worker in any process can wait for it; the shell and the warm
    are a process group of their own, whose id is written to ``root/pgid``."""
    script = ('"$0" -m dasktree.cli warm --no-cluster --json >"$1/stdout" 2>"$1/stderr"; status=$?; '
              'mkdir -p "$1/shared" && cp -R "$1/warmed/." "$1/shared/" 2>>"$1/stderr"; '
              'echo $status >"$1/rc.part" && mv "$1/rc.part" "$1/rc"')
    shell = subprocess.Popen(["sh", "-c", script, sys.executable, root],
                             preexec_fn=(lambda: os.nice(nice)) if nice else None,
                             start_new_session=True, stdin=subprocess.DEVNULL,
                             env=dict(os.environ, NUMBA_CACHE_DIR=os.path.join(root, "warmed")))
    Path(root, "pgid").write_text(str(shell.pid))
    _shells.append(shell)  # kept, to be reaped when the session ends


def pytest_collection_finish(session):
    """Under a shared cache (:func:`pytest_configure`), a worker waits here, after collecting and before its
    first test, for the warm to end (bounded; a warm that failed leaves the tests to compile what they
    call, and only the tests of :func:`warmed_kernel_cache` fail on it).

    Otherwise, start ``dasktree warm`` for :func:`warmed_kernel_cache` as the pytest session starts, when
    a collected test uses it, at nice 10, so it takes a core the tests leave idle and yields to them.
    One per pytest session: under pytest-xdist every worker collects the same tests and the first
    worker (``gw0``) starts it."""
    config = session.config
    root = _warm_root(config)
    if _shared_cache(config):
        failed = hasattr(config, "workerinput") and _wait_for_warm(root)
        if failed:  # said once, where the run's output shows it; the tests go on, compiling as they go
            sys.stderr.write(f"{config.workerinput['workerid']}: {failed}\n")
        return
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get("workerid") != "gw0":
        return
    if not any("warmed_kernel_cache" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    _start_warm(root, nice=10)


def _wait_for_warm(root: str) -> str | None:
    """Wait until the warm in ``root`` wrote its ``rc``, at most :data:`WARM_SECONDS`; what went wrong, if
    anything (a warm that ended without an exit status, or ran past the bound)."""
    group = _warm_group(root)
    if group is None:
        return f"no background dasktree warm was started in {root}"
    deadline = time.monotonic() + WARM_SECONDS
    rc = Path(root, "rc")
    while not rc.exists():
        if not _group_alive(group) and not rc.exists():
            return f"dasktree warm (process group {group}) ended without an exit status"
        if time.monotonic() > deadline:
            return f"dasktree warm ran past {WARM_SECONDS} s"
        time.sleep(0.5)
    return None


def _warm_group(root: str) -> int | None:
    try:
        return int(Path(root, "pgid").read_text())
    except FileNotFoundError:
        return None


def pytest_unconfigure(config):
    """The background warm ended (killed if no test waited for it: a pytest session cut short) and its
    directory removed, by the process that made it (the controller under pytest-xdist); its shell
    reaped by the process that started it."""
    for shell in _shells:
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
    for previous in _set_cache_dir:
        if previous is None:
            os.environ.pop("NUMBA_CACHE_DIR", None)
        else:
            os.environ["NUMBA_CACHE_DIR"] = previous
    _set_cache_dir.clear()
    if _warm_key not in config.stash:
        return
    import shutil

    root = config.stash[_warm_key]
    group = _warm_group(root)
    if group is not None:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10  # gone before its files are removed: a dying warm still writes
        while _group_alive(group) and time.monotonic() < deadline:
            time.sleep(0.05)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def warmed_kernel_cache(pytestconfig):
    """A numba cache directory ``dasktree warm --no-cluster`` filled from empty, once per pytest session, and
    what the command reported (its JSON): the tests of the kernel cache copy it and take out the
    kernels they need missing, instead of each compiling every kernel from an empty cache again
    (minutes on 2 cores). The command started with the pytest session (:func:`pytest_configure` under
    pytest-xdist, else :func:`pytest_collection_finish`); this waits for its ``rc``, bounded, and fails
    at once if it died without one."""
    root = Path(_warm_root(pytestconfig))
    group = _warm_group(str(root))
    assert group is not None, f"no background dasktree warm was started in {root}"
    try:  # a test waits for it now: its nice no longer buys anything (where allowed)
        os.setpriority(os.PRIO_PGRP, group, 0)
    except OSError:
        pass
    failed = _wait_for_warm(str(root))
    if failed:
        pytest.fail(failed)
    code = int((root / "rc").read_text())
    assert code == 0, (root / "stderr").read_text()
    return root / "warmed", json.loads((root / "stdout").read_text())


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
