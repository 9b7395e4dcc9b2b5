"""A worker lost in the middle of a fit: Dask reruns its tasks and the model is the same, bit for bit.

The cluster is a `dask scheduler` and two `dask worker` processes under nannies
(:func:`~dasktree.testing.cluster.cluster_processes`), ended by signals within a bound: a
LocalCluster's own close timed out under load (its nannies' close waits on workers a loaded
machine has not run yet) and failed a fit that had passed. One cluster serves the module: each
test kills one worker, its nanny starts a new one, and the next test starts once both are
connected again (a new cluster per test cost its start and its workers' first imports each time).
"""

import pytest

from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.testing.cluster import KillAtLevel, cluster_processes

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster():
    with cluster_processes(2) as procs:
        yield procs


@pytest.fixture
def client(cluster):
    """A client of the module's cluster once both its workers are connected (a worker the previous
    test killed is back: its nanny started a new one)."""
    from distributed import Client

    cluster.wait_for_workers()
    with Client(cluster.address, set_as_default=False) as client:
        yield client


def test_fit_survives_a_lost_worker(tmp_path, client):
    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 20000, n_files=6, function=7, perturbation=0.05, seed=2)
    params = dict(max_depth=5, cv=3, keep_fold_trees=True)
    reference = DaskTreeClassifier(scheduler="threads", **params).fit(path, target="class").model_.dumps()
    killer = KillAtLevel(client, "level 2")
    clf = DaskTreeClassifier(client=client, progress=killer, **params).fit(path, target="class")
    assert killer.killed
    assert clf.model_.dumps() == reference


def test_mdlp_refinement_survives_a_lost_worker(tmp_path, client):
    """A worker killed as the refinement pass (exact distinct values inside the quantile bins, for
    MDLP) starts: the pass is made again from the Parquet files, as a histogram pass is, and the
    cut points are those of an undisturbed run."""
    from dasktree import Discretizer

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 20000, n_files=6, function=7, perturbation=0.05, seed=5)
    reference = Discretizer("mdlp", max_bins=32, scheduler="threads").fit(path, target="class")
    assert any(c["refined"] for c in reference.report_["columns"].values()), "nothing refined: the test did not test"
    killer = KillAtLevel(client, "discretize (refinement)")
    disc = Discretizer("mdlp", max_bins=32, client=client, progress=killer).fit(path, target="class")
    assert killer.killed
    assert disc.cut_points_ == reference.cut_points_


@pytest.mark.parametrize("cache", [True, False])
def test_a_gathering_pass_survives_a_lost_worker(tmp_path, client, cache):
    """A worker killed as a small pass starts (:mod:`dasktree.levels.small`: the small nodes' rows
    gathered and their subtrees grown on the workers, on the holders when cached, else as tasks):
    the pass is made again from the Parquet files and the model is the level-wise one."""
    from dasktree.levels.small import small_node_rows

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 20000, n_files=6, function=7, perturbation=0.05, seed=3)
    params = dict(cv=3, keep_fold_trees=True)
    with small_node_rows(0):
        reference = DaskTreeClassifier(scheduler="inprocess", **params).fit(path, target="class").model_
    with small_node_rows(3000):
        in_process = DaskTreeClassifier(scheduler="inprocess", **params).fit(path, target="class").model_
        first = next(lv["level"] for lv in in_process.run["levels"] if lv.get("small_nodes"))
        assert first > 0, "gathered at the root: the holders would not have counted a level first"
        killer = KillAtLevel(client, f"level {first} (small nodes in memory)")
        clf = DaskTreeClassifier(client=client, progress=killer, cache=cache, **params).fit(path, target="class")
        assert killer.killed
    assert trees_of(in_process) == trees_of(clf.model_) == trees_of(reference)


@pytest.mark.parametrize("stage", ["gather", "pieces", "grow"])
def test_a_worker_killed_inside_a_small_pass_gives_the_same_model(tmp_path, client, stage):
    """A holder SIGKILLed inside a small pass (:mod:`dasktree.hook_points`: gathering its rows,
    serving its gathered pieces to a peer, growing a run of nodes): the pass is made again and the
    model is the in-process fit's."""
    from dasktree.levels.small import small_node_rows
    from dasktree.testing.hooks import arm

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 20000, n_files=6, function=7, perturbation=0.05, seed=3)
    params = dict(cv=3, keep_fold_trees=True)
    marker = tmp_path / "killed"
    with small_node_rows(3000):
        reference = DaskTreeClassifier(scheduler="inprocess", **params).fit(path, target="class").model_
        assert any(lv.get("small_nodes") for lv in reference.run["levels"])
        client.run(arm, f"{stage}:1:{marker}")  # the first small pass's point: one worker dies there
        try:
            clf = DaskTreeClassifier(client=client, cache=True, **params).fit(path, target="class")
        finally:
            client.run(arm, None)
    assert marker.exists(), f"no worker reached {stage}: the test did not test"
    assert trees_of(clf.model_) == trees_of(reference)


def trees_of(model) -> str:
    """The bins, the grown tree and every fold tree as JSON (the report says how the fit ran)."""
    import json

    return json.dumps({"bins": model.spec.to_json(),
                       "trees": [t.to_json() for t in [model.grown_tree, *model.fold_trees]]}, sort_keys=True)
