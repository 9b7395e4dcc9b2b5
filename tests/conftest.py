import logging

import pytest


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
