"""A worker lost in the middle of a fit: Dask reruns its tasks and the model is the same, bit for bit."""

import logging

import pytest

from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.testing.cluster import KillAtLevel

pytestmark = pytest.mark.cluster


def test_fit_survives_a_lost_worker(tmp_path):
    from distributed import Client, LocalCluster

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 20000, n_files=6, function=7, perturbation=0.05, seed=2)
    params = dict(max_depth=5, cv=3, keep_fold_trees=True)
    reference = DaskTreeClassifier(scheduler="threads", **params).fit(path, target="class").model_.dumps()
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        killer = KillAtLevel(client, "level 2")
        clf = DaskTreeClassifier(client=client, progress=killer, **params).fit(path, target="class")
        assert killer.killed
    assert clf.model_.dumps() == reference
