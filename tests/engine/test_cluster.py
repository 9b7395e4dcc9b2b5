"""The cluster dasktree starts: its workers allocate as a plain Python process does."""

import os

import pytest

from dasktree.engine.cluster import connect, local_cluster

pytestmark = pytest.mark.cluster


def test_started_workers_run_without_dasks_malloc_trim_threshold(monkeypatch):
    from distributed import Client

    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with local_cluster(n_workers=1) as cluster, Client(cluster) as client:
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}
        assert len(client.scheduler_info()["workers"]) == 1
    with connect(scheduler="processes") as client:  # what a fit without client= starts
        assert set(client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_")).values()) == {None}
