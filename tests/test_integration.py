"""The learner end to end on real Parquet files and a real Dask cluster.

Bit-identical models whatever the partitioning or scheduler; D + 1 passes for
depth D; node groups under a small histogram budget; predictions on datasets.
"""

import glob
import json
import os

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.testing import mixed_frame, write_dataset

pytestmark = pytest.mark.cluster


def _model_text(clf):
    return clf.model_.dumps()


@pytest.fixture(scope="module")
def frames():
    frame = agrawal.generate(6000, function=2, perturbation=0.05, seed=3)
    frame["car"] = frame["car"].astype(str)  # a nominal column with 20 categories
    return {"agrawal": (frame, "class"), "mixed": (mixed_frame(3000, seed=1), "label")}


@pytest.mark.parametrize("name", ["agrawal", "mixed"])
def test_bit_identical_across_partitionings_and_schedulers(tmp_path, frames, cluster_client, name):
    frame, target = frames[name]
    params = dict(max_depth=6, max_bins=64, criterion="entropy")
    reference = _model_text(DaskTreeClassifier(**params).fit(frame.drop(columns=[target]), frame[target]))
    for n_files in (1, 3, 17):
        path = write_dataset(frame, tmp_path / f"{name}-{n_files}", n_files=n_files, row_group_size=500)
        clf = DaskTreeClassifier(client=cluster_client, **params).fit(path, target=target)
        assert clf.run_["parts"] >= n_files
        assert _model_text(clf) == reference, f"{n_files} files differ from the in-memory fit"
    threaded = DaskTreeClassifier(scheduler="threads", **params).fit(path, target=target)
    assert _model_text(threaded) == reference


def test_workers_collect_garbage_again_after_a_fit(tmp_path, frames, cluster_client):
    """The search tasks pause the cyclic collector (dasktree.gc_pause) only while they run."""
    import gc

    frame, target = frames["agrawal"]
    path = write_dataset(frame, tmp_path / "data", n_files=4)
    DaskTreeClassifier(client=cluster_client, max_depth=4, cv=3).fit(path, target=target)
    assert set(cluster_client.run(gc.isenabled).values()) == {True}


def test_a_fit_leaves_nothing_on_the_cluster(tmp_path, frames, cluster_client):
    """Once a fit returns, every task it made (the holders of a cached fit are actor tasks) is gone
    from the scheduler, so a long-running cluster keeps nothing of it."""
    import time

    def tasks() -> set:
        return set(cluster_client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks)))

    frame, target = frames["agrawal"]
    path = write_dataset(frame, tmp_path / "data", n_files=4)
    before = tasks()
    for params in (dict(max_depth=5, cv=3), dict(max_depth=3, cache=False)):
        DaskTreeClassifier(client=cluster_client, **params).fit(path, target=target)
        deadline = time.monotonic() + 60  # releases reach the scheduler asynchronously (a loaded machine: seconds)
        while (left := tasks() - before) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not left, f"{len(left)} tasks of a fit with {params} are still on the scheduler"


@pytest.mark.parametrize("cache", [True, False])
def test_depth_d_reads_the_data_d_plus_one_times(tmp_path, frames, cluster_client, cache):
    frame, target = frames["agrawal"]
    path = write_dataset(frame, tmp_path / "data", n_files=4)
    for depth in (1, 3, 5):
        clf = DaskTreeClassifier(client=cluster_client, max_depth=depth, cache=cache, prune=None).fit(path, target=target)
        assert clf.report_["depth"] == depth
        assert clf.report_["passes"] == depth + 1
        # without the cache every pass reads Parquet; with it, pass 0 reads once and keeps the
        # tables (they fit) for the first level pass to encode
        assert clf.run_["parquet_reads"] == (1 if cache else depth + 1)


def test_node_groups_cost_passes_not_correctness(tmp_path, frames, cluster_client):
    frame, target = frames["agrawal"]
    path = write_dataset(frame, tmp_path / "data", n_files=3)
    wide = DaskTreeClassifier(client=cluster_client, max_depth=5).fit(path, target=target)
    bytes_per_node = 1 * sum(f["bins"] + 1 for f in wide.report_["features"]) * 2 * 8
    tight = DaskTreeClassifier(client=cluster_client, max_depth=5,
                               max_histogram_mb=3.5 * bytes_per_node / 2**20).fit(path, target=target)
    assert tight.model_.tree.to_json() == wide.model_.tree.to_json()
    assert sum(level["derived"] for level in wide.run_["levels"]) > 0  # one group per level: subtraction
    assert tight.report_["passes"] > wide.report_["passes"]
    levels = tight.run_["levels"]
    assert max(level["groups"] for level in levels) >= 2
    assert all(level["groups"] == -(-level["frontier"] // 3) for level in levels)


def test_predict_dataset_writes_parquet_atomically(tmp_path, frames, cluster_client):
    frame, target = frames["mixed"]
    frame = frame.assign(row_id=np.arange(len(frame)))
    path = write_dataset(frame, tmp_path / "data", n_files=3)
    clf = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(path, target=target, exclude=["row_id"])
    out = tmp_path / "pred"
    files = clf.predict(path, out=str(out), keep=["row_id"])
    assert len(files) == 3 and all(os.path.exists(f) for f in files)
    result = pd.concat([pq.read_table(f).to_pandas() for f in sorted(files)]).sort_values("row_id")
    proba_cols = [f"proba_{c}" for c in clf.classes_]
    assert list(result.columns) == ["row_id", "prediction", *proba_cols]
    np.testing.assert_allclose(result[proba_cols].sum(axis=1), 1.0)
    expected = clf.predict(frame.drop(columns=[target, "row_id"]))
    np.testing.assert_array_equal(result["prediction"].to_numpy(), expected)
    np.testing.assert_allclose(result[proba_cols].to_numpy(), clf.predict_proba(path))
    # an existing output is refused, and nothing is left behind by the refusal
    with pytest.raises(dasktree.InputError, match="already exists"):
        clf.predict(path, out=str(out))
    assert sorted(os.listdir(tmp_path)) == ["data", "pred"]


def test_json_round_trip_predicts_identically(tmp_path, frames):
    frame, target = frames["mixed"]
    X, y = frame.drop(columns=[target]), frame[target]
    clf = DaskTreeClassifier(max_depth=6, nominal_split="multiway", criterion="gain_ratio").fit(X, y)
    clf.save(tmp_path / "model.json")
    loaded = dasktree.load(tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    assert loaded.model_.dumps() == clf.model_.dumps()
    assert json.loads((tmp_path / "model.json").read_text())["format"] == "dasktree.model"
    assert list(loaded.classes_) == ["high", "low", "mid"]


def test_dataset_inputs_directory_glob_file_url_and_hive(tmp_path, frames, cluster_client):
    frame, target = frames["mixed"]
    path = write_dataset(frame, tmp_path / "data", n_files=4)
    params = dict(client=cluster_client, max_depth=4)
    models = [
        DaskTreeClassifier(**params).fit(src, target=target).model_.tree.to_json()
        for src in (path, os.path.join(path, "*.parquet"), "file://" + path, sorted(glob.glob(path + "/*.parquet")))
    ]
    assert all(m == models[0] for m in models)
    single = write_dataset(frame, tmp_path / "one", n_files=1)
    one = DaskTreeClassifier(**params).fit(os.path.join(single, "part-00000.parquet"), target=target)
    assert one.model_.tree.to_json() == models[0]
    # hive partitions become a column the tree can use
    hive = tmp_path / "hive"
    for colour, group in frame.groupby(frame["colour"].fillna("none")):
        write_dataset(group.drop(columns=["colour"]), hive / f"colour={colour}", n_files=1)
    clf = DaskTreeClassifier(**params).fit(str(hive), target=target)
    assert "colour" in clf.feature_names_in_


def test_dask_dataframe_in_and_out(frames, cluster_client):
    import dask.dataframe as dd

    frame, target = frames["mixed"]
    ddf = dd.from_pandas(frame, npartitions=5)
    clf = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(ddf, target=target)
    reference = DaskTreeClassifier(max_depth=4).fit(frame.drop(columns=[target]), frame[target])
    assert clf.model_.tree.to_json() == reference.model_.tree.to_json()
    predicted = clf.predict_columns(ddf.drop(columns=[target])).compute()
    np.testing.assert_array_equal(predicted["prediction"].to_numpy(), reference.predict(frame.drop(columns=[target])))


def test_dask_dataframe_folds_do_not_depend_on_its_partitions(frames, cluster_client):
    """A worker encodes its partitions into one block with their folds (hashes of the rows' content)
    and null-target rows dropped: the forest and its CV report are the same for 2 and 7
    partitions."""
    import dask.dataframe as dd

    frame, target = frames["mixed"]
    frame = frame.copy()
    frame.loc[::13, target] = None
    fits = [DaskTreeClassifier(client=cluster_client, max_depth=4, cv=3, keep_fold_trees=True).fit(dd.from_pandas(frame, npartitions=n),
                                                                          target=target) for n in (2, 7)]
    assert fits[0].model_.to_json() == fits[1].model_.to_json()
    assert fits[0].report_["rows_skipped_null_target"] == len(frame[::13])
    assert fits[0].report_["cv"] == fits[1].report_["cv"]


def test_null_targets_are_skipped_and_counted(tmp_path, frames, cluster_client):
    frame, target = frames["mixed"]
    frame = frame.copy()
    frame.loc[::10, target] = None
    path = write_dataset(frame, tmp_path / "data", n_files=2)
    clf = DaskTreeClassifier(client=cluster_client, max_depth=3).fit(path, target=target)
    assert clf.report_["rows_skipped_null_target"] == len(frame[::10])
    assert clf.report_["rows_used"] == len(frame) - len(frame[::10])
    assert clf.tree_.counts[0].sum() == clf.report_["rows_used"]


@pytest.mark.parametrize("part_rows", [10_000, 700, 200, 130])
def test_parts_read_rows_in_file_order(tmp_path, part_rows):
    """Row i of a part is row offset + i of its file (a bad value is located by it)."""
    from dasktree.io.sources import ParquetSource

    frame = mixed_frame(2500, seed=5).assign(row_id=np.arange(2500))
    path = write_dataset(frame, tmp_path / "data", n_files=2, row_group_size=200)
    source = ParquetSource(path, part_rows=part_rows)
    for part in source.parts:
        ids = source.read(part, ["row_id"]).column("row_id").to_numpy()
        start = 0 if part.key == "part-00000.parquet" else 1250
        np.testing.assert_array_equal(ids, np.arange(start + part.offset, start + part.offset + part.n_rows))
