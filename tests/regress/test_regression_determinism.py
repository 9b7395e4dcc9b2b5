"""The same regression model, bit for bit, whatever the partitioning, the runner or the workers."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
def test_a_cached_fit_counts_and_searches_on_the_holders(tmp_path, keyed, cluster_client):
    """A cached regression fit's level passes are calls on the holders, as classification's: no counting
    or search task goes through the scheduler, and the model is the in-process one. (Level-wise to the
    end: a decrease rule keeps the small nodes in the passes.)"""
    from distributed import get_task_stream

    params = dict(PARAMS, min_impurity_decrease=1e-9)
    path = _write(keyed, tmp_path / "data", 5)
    reference = DaskTreeRegressor(**params, scheduler="inprocess").fit(path, target="y", key="id")
    assert reference.model_.report["passes"] >= 5
    with get_task_stream(cluster_client) as stream:
        fitted = DaskTreeRegressor(**params, client=cluster_client).fit(path, target="y", key="id")
    assert fitted.model_.dumps() == reference.model_.dumps()
    names = {task["key"][0] if isinstance(task["key"], tuple) else task["key"] for task in stream.data}
    assert not {name for name in names if "histogram" in name or "search" in name or "add_counts" in name}


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


def test_a_checkpoint_replays_to_the_same_model(tmp_path, keyed):
    import os

    path = _write(keyed, tmp_path / "data", 4)
    reference = _bytes(path, scheduler="inprocess")
    saved = tmp_path / "checkpoint"
    first = DaskTreeRegressor(**PARAMS).fit(path, target="y", key="id", checkpoint=str(saved)).model_.dumps()
    assert first == reference
    passes = sorted(p for p in os.listdir(saved) if p.startswith("pass-"))
    assert len(passes) == 7  # depth 6: levels 0..5, then the fold trees' leaves at depth 6 (held-out rows)
    for name in passes[4:]:  # as if the client was lost after the fourth pass
        os.remove(saved / name)
    again = DaskTreeRegressor(**PARAMS).fit(path, target="y", key="id", checkpoint=str(saved))
    assert again.model_.dumps() == reference
    other = dict(PARAMS, max_depth=5)
    with pytest.raises(Exception, match="checkpoint"):
        DaskTreeRegressor(**other).fit(path, target="y", key="id", checkpoint=str(saved))


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 9), st.integers(50, 900), st.booleans())
def test_any_partitioning_gives_the_same_bytes(n_files, part_rows, weighted):
    import tempfile

    frame = regression_frame(1200, seed=9)
    frame["id"] = np.arange(len(frame))
    weight = "w" if weighted else None
    if weighted:
        frame["w"] = (np.arange(len(frame)) % 3 + 1).astype(np.int64)
    with tempfile.TemporaryDirectory() as root:
        one = write_dataset(frame, f"{root}/one", 1)
        many = write_dataset(frame.sample(frac=1.0, random_state=n_files), f"{root}/many", n_files,
                             row_group_size=max(1, part_rows // 2))
        fits = [DaskTreeRegressor(max_depth=4, cv=3).fit(path, target="y", key="id", sample_weight=weight)
                for path in (one, many)]
    assert fits[0].model_.dumps() == fits[1].model_.dumps()


def test_fold_trees_are_the_trees_of_their_training_rows(keyed):
    """Fold tree t is the tree grown on the rows outside part t (exact bins; the forest keeps the whole
    data's fixed point, so the two agree up to its rounding)."""
    import pyarrow as pa

    folds = (keyed["id"] % 4).astype(np.int64)
    data = keyed.assign(fold=folds).drop(columns=["w"])
    forest = DaskTreeRegressor(max_depth=5, cv=4, prune="none", keep_fold_trees=True, max_bins=8192).fit(
        data, target="y", folds="fold").model_
    rows = pa.Table.from_pandas(data, preserve_index=False)
    span = float(np.ptp(data["y"]))
    for t, fold_tree in enumerate(forest.fold_trees):
        alone = DaskTreeRegressor(max_depth=5, max_bins=8192, prune="none").fit(
            data[data.fold != t].drop(columns=["fold", "id"]), target="y").model_
        assert fold_tree.n_leaves == alone.tree.n_leaves
        own = rows.filter(pa.array((folds != t).to_numpy()))  # its rows (a held-out value between two of
        # them may fall on either side: the forest's bins have it, the tree alone's do not)
        np.testing.assert_allclose(forest.predict_values(own, fold_tree), alone.predict_values(own),
                                   rtol=0, atol=1e-8 * span)
        assert fold_tree.validation[0, 0] == int((folds == t).sum())
