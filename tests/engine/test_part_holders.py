"""The holders (Dask actors) that make a cached fit's level passes: a failing one, and none left behind."""

import gc
import threading

import pytest

from dasktree.binning.spec import bin_spec as make_bin_spec
from dasktree.datasets import agrawal
from dasktree.engine.part_holders import PeerFailed
from dasktree.engine.dask_runner import DaskRunner
from dasktree.levels.grow import GrowParams, grow
from dasktree.io.schema import resolve_roles
from dasktree.io.sources import open_source

pytestmark = pytest.mark.cluster


def test_a_holder_that_cannot_count_fails_the_pass_with_its_own_error(tmp_path, cluster_client):
    """One holder counts, then waits for its peer's cells; the peer's count fails. The pass raises the
    peer's error (not the waiting holder's :class:`PeerFailed`), and nothing waits forever."""
    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 4000, n_files=4, function=2, seed=1)
    source, _ = open_source(path, target="class")
    roles = resolve_roles(source.schema, "class")
    runner = DaskRunner(cluster_client, source, roles)
    spec = make_bin_spec(runner.summary(max_bins=64), roles, max_bins=64, max_categories=64)
    runner.prepare(spec, 1, level_passes=False)
    jobs = runner._encode_jobs()
    assert len({worker for worker, _ in jobs}) == 2
    jobs[-1] = (jobs[-1][0], (list, ["not encoded"], {}))  # the last worker's group: a list of characters
    runner._holder_passes.start(jobs)
    raised = []

    def fit():
        try:
            grow(runner, spec, GrowParams(max_depth=2))
        except Exception as exc:
            raised.append(exc)

    thread = threading.Thread(target=fit, daemon=True)
    thread.start()
    thread.join(60)
    try:
        assert not thread.is_alive(), "the level pass hangs"
        [error] = raised
        assert isinstance(error, AttributeError) and not isinstance(error, PeerFailed), error
    finally:
        runner.close()


def test_a_fit_leaves_no_holder_on_the_workers(tmp_path, cluster_client):
    import time

    from dasktree import DaskTreeClassifier

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 3000, n_files=3, function=7, perturbation=0.05, seed=2)
    clf = DaskTreeClassifier(client=cluster_client, max_depth=4, cv=2).fit(path, target="class")
    assert clf.run_["parquet_reads"] == 1  # cached: the level passes were the holders'
    deadline = time.monotonic() + 60  # releases reach the workers asynchronously (a loaded machine: seconds)
    while any(cluster_client.run(lambda dask_worker: len(dask_worker.state.actors)).values()):
        assert time.monotonic() < deadline, "holders are still on the workers after the fit"
        time.sleep(0.05)
    # a holder keeps its worker's older objects frozen (dasktree.gc_pause) for its life only
    assert set(cluster_client.run(gc.get_freeze_count).values()) == {0}
