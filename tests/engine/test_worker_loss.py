"""A worker lost in the middle of a fit: Dask reruns its tasks and the model is the same, bit for bit."""

import logging
import os
import signal

import pytest

from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.engine.progress import Progress

pytestmark = pytest.mark.cluster


class KillAtLevel(Progress):
    """A progress sink that kills one worker process when a given level pass starts."""

    def __init__(self, client, label: str):
        super().__init__(enabled=False)
        self.client, self.label, self.killed = client, label, False

    def start(self, label, total):
        super().start(label, total)
        if label == self.label and not self.killed:
            victim = sorted(self.client.scheduler_info()["workers"])[0]
            pid = self.client.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGKILL)  # the nanny starts a new worker; the lost tasks rerun
            self.killed = True


def test_fit_survives_a_lost_worker(tmp_path):
    from distributed import Client, LocalCluster

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 20000, n_files=6, function=7, perturbation=0.05, seed=2)
    params = dict(max_depth=5, cv=3)
    reference = DaskTreeClassifier(scheduler="threads", **params).fit(path, target="class").model_.dumps()
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        killer = KillAtLevel(client, "level 2")
        clf = DaskTreeClassifier(client=client, progress=killer, **params).fit(path, target="class")
        assert killer.killed
    assert clf.model_.dumps() == reference
