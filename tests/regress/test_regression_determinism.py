"""The same regression model, bit for bit, whatever the partitioning, the runner or the workers."""

import logging

import numpy as np
import pytest

from dasktree import DaskTreeRegressor
from dasktree.testing.cluster import KillAtLevel
from dasktree.testing.data import regression_frame, write_dataset

PARAMS = dict(max_depth=6, cv=4, keep_fold_trees=True, criterion="squared_error")


def _write(frame, path, n_files: int) -> str:
    return write_dataset(frame, path, n_files, row_group_size=max(1, len(frame) // (3 * n_files)))


def _bytes(data, **kw) -> str:
    return DaskTreeRegressor(**PARAMS, **kw).fit(data, target="y", key="id").model_.dumps()


@pytest.fixture
def keyed():
    frame = regression_frame(4000, seed=5)
    frame["id"] = np.arange(len(frame))
    frame["w"] = np.random.default_rng(1).integers(1, 4, size=len(frame))
    return frame


def test_same_model_whatever_the_partitioning_and_the_in_process_runner(tmp_path, keyed):
    reference = _bytes(_write(keyed, tmp_path / "one", 1), scheduler="inprocess")
    many = _write(keyed.sample(frac=1.0, random_state=3), tmp_path / "many", 13)  # other files, rows shuffled
    assert _bytes(many, scheduler="inprocess") == reference
    assert _bytes(many, cache=False) == reference  # streamed: every pass reads the row groups again
    assert _bytes(keyed, scheduler="inprocess") == reference  # the DataFrame itself


def test_weights_are_exact_multiplicities(tmp_path, keyed):
    repeated = keyed.loc[keyed.index.repeat(keyed["w"])].drop(columns="w")
    # exact bins: quantile bins place their edges by distinct rows, each counted once whatever its weight
    one = DaskTreeRegressor(max_depth=5, max_bins=8192).fit(keyed.drop(columns=["w", "id"]), target="y", sample_weight=keyed["w"].to_numpy())
    other = DaskTreeRegressor(max_depth=5, max_bins=8192).fit(repeated.drop(columns="id"), target="y")
    assert one.tree_.n_leaves == other.tree_.n_leaves
    np.testing.assert_array_equal(one.tree_.counts, other.tree_.counts)


@pytest.mark.cluster
def test_same_model_on_a_cluster_of_processes(tmp_path, keyed, cluster_client):
    path = _write(keyed, tmp_path / "data", 7)
    reference = _bytes(path, scheduler="inprocess")
    assert _bytes(path, client=cluster_client) == reference
    assert _bytes(path, client=cluster_client, cache=False) == reference


@pytest.mark.cluster
def test_a_lost_worker_gives_the_same_model(tmp_path, keyed):
    from distributed import Client, LocalCluster

    path = _write(keyed, tmp_path / "data", 6)
    reference = _bytes(path, scheduler="inprocess")
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        killer = KillAtLevel(client, "level 2")
        model = DaskTreeRegressor(client=client, progress=killer, **PARAMS).fit(path, target="y", key="id").model_
        assert killer.killed
    assert model.dumps() == reference
