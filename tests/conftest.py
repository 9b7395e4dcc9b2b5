import logging

import pytest


@pytest.fixture(scope="session")
def cluster_client():
    """A real 2-process LocalCluster (one thread each), shared by the integration tests."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()
