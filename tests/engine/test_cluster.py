"""The cluster dasktree starts: its workers allocate as a plain Python process does."""

import os

import pytest

from dasktree.engine.cluster import close_local_cluster, connect, local_cluster

pytestmark = pytest.mark.cluster


def test_started_workers_run_without_dasks_malloc_trim_threshold(monkeypatch):
    from distributed import Client

    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with local_cluster(n_workers=1) as cluster, Client(cluster) as client:
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}
        assert len(client.scheduler_info()["workers"]) == 1
    with connect(scheduler="processes") as client:  # what a fit without client= starts
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}


def _linger_at_exit():
    """A worker whose interpreter would not end by itself: its exit waits an hour."""
    import atexit
    import time

    atexit.register(time.sleep, 3600)


def test_a_started_cluster_leaves_no_worker_process_or_directory_even_one_that_would_not_exit():
    """A fit's cluster ends with the job: its worker processes are gone (not left to end their
    interpreters, which can take longer than the fit's close waits) and so are their directories."""
    with connect(scheduler="processes") as client:  # what a fit without client= starts
        pids = set(client.run(os.getpid).values())
        directories = set(client.run(lambda dask_worker: dask_worker.local_directory).values())
        client.run(_linger_at_exit)
        assert pids and all(psutil_alive(pid) for pid in pids)
    assert [pid for pid in pids if psutil_alive(pid)] == []
    assert [path for path in directories if os.path.exists(path)] == []


def test_close_local_cluster_ends_a_cluster_the_caller_started():
    from distributed import Client

    cluster = local_cluster(n_workers=2)
    with Client(cluster) as client:
        pids = set(client.run(os.getpid).values())
        directories = set(client.run(lambda dask_worker: dask_worker.local_directory).values())
        client.run(_linger_at_exit)
    close_local_cluster(cluster)
    assert cluster.status.name == "closed"
    assert [pid for pid in pids if psutil_alive(pid)] == []
    assert [path for path in directories if os.path.exists(path)] == []


def psutil_alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
