"""Parts grouped per worker: contiguous runs of similar rows; pass 0's tables kept or not, same model."""

import dataclasses

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.engine.part_groups import arrow_row_bytes, assign_parts
from dasktree.engine.dask_runner import DaskRunner


def test_runs_are_contiguous_and_balanced():
    assert assign_parts([10] * 8, 2) == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert assign_parts([100, 1, 1, 1, 1, 100], 2) == [(0, 1, 2), (3, 4, 5)]
    assert assign_parts([5, 5], 4) == [(0,), (1,)]  # fewer parts than workers
    assert assign_parts([0, 0, 0], 2) == [(0,), (1, 2)]  # no rows known: by count
    assert assign_parts([], 3) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=60), st.integers(1, 12))
def test_every_part_once_in_order_and_no_run_much_above_its_share(rows, n_workers):
    runs = assign_parts(rows, n_workers)
    assert [i for run in runs for i in run] == list(range(len(rows)))
    assert 1 <= len(runs) <= n_workers and all(runs)
    share = sum(rows) / min(n_workers, len(rows))
    # a run holds its share plus at most half of each of its two end parts
    assert all(sum(rows[i] for i in run) <= share + max(rows) + 1e-9 for run in runs)


def test_row_bytes_of_arrow_types():
    schema = pa.schema([("a", pa.float64()), ("b", pa.int8()), ("c", pa.bool_()), ("d", pa.string()),
                        ("e", pa.dictionary(pa.int16(), pa.string())), ("f", pa.timestamp("ms"))])
    assert arrow_row_bytes(schema, ["a", "b", "c"]) == 8 + 1 + 1
    assert arrow_row_bytes(schema, ["d", "e", "f"]) == 32 + 2 + 8


@pytest.mark.cluster
def test_tables_kept_or_read_again_give_the_same_model(tmp_path, cluster_client, monkeypatch):
    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 12000, n_files=5, function=7, perturbation=0.05, seed=4)
    params = dict(max_depth=5, cv=3)
    kept = DaskTreeClassifier(client=cluster_client, **params).fit(path, target="class")
    assert kept.run_["parquet_reads"] == 1
    monkeypatch.setattr(DaskRunner, "_tables_fit", lambda self: False)  # as if they did not fit in memory
    read_again = DaskTreeClassifier(client=cluster_client, **params).fit(path, target="class")
    assert read_again.run_["parquet_reads"] == 2
    assert read_again.model_.dumps() == kept.model_.dumps()
    assert sum(level["derived"] for level in read_again.run_["levels"]) > 0


@pytest.mark.cluster
def test_a_group_per_worker_thread_same_model(tmp_path, cluster_client):
    from distributed import Client, LocalCluster

    from dasktree.io.schema import resolve_roles
    from dasktree.io.sources import open_source

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 9000, n_files=7, function=2, perturbation=0.05, seed=5)
    reference = DaskTreeClassifier(client=cluster_client, max_depth=5, cv=2).fit(path, target="class")
    with LocalCluster(n_workers=1, threads_per_worker=3, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        source, _ = open_source(path, target="class")
        runner = DaskRunner(client, source, resolve_roles(source.schema, "class"))
        runner.summary(max_bins=255)
        assert [parts for _, parts in runner._groups] == [(0, 1), (2, 3, 4), (5, 6)]  # three threads, in order
        assert len({worker for worker, _ in runner._groups}) == 1
        runner.close()
        threaded = DaskTreeClassifier(client=client, max_depth=5, cv=2).fit(path, target="class")
    assert threaded.model_.dumps() == reference.model_.dumps()


@pytest.mark.cluster
def test_workers_without_a_memory_limit_count_their_hosts_memory(tmp_path):
    """memory_limit=0 is no limit, not no memory: the cache and the kept tables are then bounded by
    the host's physical memory shared among its workers, not taken whatever the data's size."""
    import psutil
    from distributed import Client

    from dasktree.engine.cluster import close_local_cluster, local_cluster
    from dasktree.io.schema import resolve_roles
    from dasktree.io.sources import open_source

    path = str(tmp_path / "data")
    agrawal.write_parquet(path, 2000, n_files=2, function=2, seed=6)
    source, _ = open_source(path, target="class")
    # closed as a fit closes its own: a graceful close waits on the workers' exits, and under load
    # its nannies' kill outlived their bound (TimeoutError out of LocalCluster.__exit__)
    cluster = local_cluster(n_workers=2, memory_limit=0)
    try:
        with Client(cluster) as client:
            runner = DaskRunner(client, source, resolve_roles(source.schema, "class"))
            assert runner._memory() == 2 * (psutil.virtual_memory().total // 2)
            assert runner._tables_fit()  # 2,000 rows fit
            source.parts[0] = dataclasses.replace(source.parts[0], n_rows=psutil.virtual_memory().total)
            assert not runner._fits(1)  # as many rows as bytes of memory do not
            runner.close()
    finally:
        close_local_cluster(cluster)
