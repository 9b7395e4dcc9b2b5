"""dask-ml's habits: dask X and y in, lazy dask predictions out, score on the cluster; all equal to pandas."""

import numpy as np
import pandas as pd
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.testing import mixed_frame, write_dataset


@pytest.fixture(scope="module")
def data():
    frame = mixed_frame(3000, seed=4)
    return frame.drop(columns=["label"]), frame["label"]


def test_dask_frame_and_series_in_dask_out_equal_pandas(data, cluster_client):
    import dask.array as da
    import dask.dataframe as dd

    X, y = data
    reference = DaskTreeClassifier(max_depth=4).fit(X, y)
    dX, dy = dd.from_pandas(X, npartitions=4), dd.from_pandas(y, npartitions=4)
    clf = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(dX, dy)
    assert clf.model_.tree.to_json() == reference.model_.tree.to_json()
    predicted = clf.predict(dX)
    proba = clf.predict_proba(dX)
    assert isinstance(predicted, dd.Series) and isinstance(proba, da.Array)  # lazy
    assert predicted.npartitions == dX.npartitions
    np.testing.assert_array_equal(predicted.compute().to_numpy(), reference.predict(X))
    np.testing.assert_array_equal(proba.compute(), reference.predict_proba(X))
    assert clf.score(dX, dy) == pytest.approx(reference.score(X, y))
    columns = clf.predict_columns(dX, keep=["k"]).compute()
    assert list(columns.columns) == ["k", "prediction", *[f"proba_{c}" for c in clf.classes_]]


def test_dask_arrays_in_equal_numpy(cluster_client):
    import dask.array as da

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
    reference = DaskTreeClassifier(max_depth=5).fit(X, y)
    dX, dy = da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500)
    clf = DaskTreeClassifier(client=cluster_client, max_depth=5).fit(dX, dy)
    assert clf.model_.tree.to_json() == reference.model_.tree.to_json()
    np.testing.assert_array_equal(clf.predict(dX).compute().to_numpy(), reference.predict(X))
    assert clf.score(dX, dy) == pytest.approx(reference.score(X, y))


def test_readme_pattern_x_and_y_of_one_parquet_frame_are_paired_row_by_row(data, cluster_client, tmp_path):
    """``ddf = dd.read_parquet(dir); X = ddf.drop(...); y = ddf[...]``: dask reads the one-column ``y``
    in fewer partitions than ``X`` (it fuses narrow reads); fit, predict and score pair them row by row."""
    import dask.dataframe as dd

    X, y = data
    reference = DaskTreeClassifier(max_depth=4).fit(X, y)
    ddf = dd.read_parquet(write_dataset(X.assign(label=y), tmp_path / "train", n_files=6))
    dX, dy = ddf.drop(columns=["label"]), ddf["label"]
    assert dX.optimize().npartitions != dy.optimize().npartitions  # what dask does: the case at hand
    clf = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(dX, dy)
    assert clf.model_.tree.to_json() == reference.model_.tree.to_json()
    np.testing.assert_array_equal(clf.predict(dX).compute().to_numpy(), reference.predict(X))
    assert clf.score(dX, dy) == pytest.approx(reference.score(X, y))


def test_x_and_y_of_different_partitionings_are_paired_row_by_row(data, cluster_client, tmp_path):
    """Unknown divisions (Parquet written in 5 files beside 2) pair by partition lengths; known
    divisions (from_pandas, 4 partitions beside 3) by index, as pandas does; weights too."""
    import dask.dataframe as dd

    X, y = data
    w = pd.Series(np.arange(len(y)) % 3 + 1.0, name="w")
    reference = DaskTreeClassifier(max_depth=4).fit(X, y, sample_weight=w.to_numpy())
    dX = dd.read_parquet(write_dataset(X, tmp_path / "X", n_files=5))
    dy = dd.read_parquet(write_dataset(y.to_frame(), tmp_path / "y", n_files=2))["label"]
    dw = dd.from_pandas(w, npartitions=3).clear_divisions()
    assert dX.npartitions == 5 and dy.npartitions == 2 and not dX.known_divisions
    clf = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(dX, dy, sample_weight=dw)
    assert clf.model_.tree.to_json() == reference.model_.tree.to_json()
    assert clf.score(dX, dy, sample_weight=dw) == pytest.approx(reference.score(X, y, sample_weight=w))
    by_index = DaskTreeClassifier(client=cluster_client, max_depth=4).fit(
        dd.from_pandas(X, npartitions=4), dd.from_pandas(y, npartitions=3), sample_weight=dd.from_pandas(w, npartitions=2))
    assert by_index.model_.tree.to_json() == reference.model_.tree.to_json()


def test_x_and_y_of_different_lengths_are_refused(data, cluster_client):
    import dask.dataframe as dd

    X, y = data
    frame = dd.from_pandas(X, npartitions=2).clear_divisions()
    shorter = dd.from_pandas(pd.Series(y.to_numpy()[:2500], name="label"), npartitions=2).clear_divisions()
    with pytest.raises(dasktree.DataError, match="X has 3000 rows but y has 2500"):
        DaskTreeClassifier(client=cluster_client).fit(frame, shorter)


def test_one_expressions_x_and_y_are_paired_by_dask_itself_through_its_public_api(tmp_path):
    """``X = ddf.drop(...); y = ddf[...]``: dask's ``are_co_aligned`` (``dask.dataframe.api``, not its
    private modules) says dask pairs their rows, so no partition's length is counted; two reads of
    as many files are not paired so."""
    import dask.dataframe as dd

    from dasktree.estimator_input import _same_rows

    frame = mixed_frame(400, seed=1)
    ddf = dd.read_parquet(write_dataset(frame, tmp_path / "one", n_files=3))
    assert not ddf.known_divisions
    assert _same_rows(ddf.drop(columns=["label"]), ddf["label"])
    other = dd.read_parquet(write_dataset(frame[["label"]], tmp_path / "other", n_files=3))["label"]
    assert ddf.npartitions == other.npartitions and not _same_rows(ddf.drop(columns=["label"]), other)
