"""dask-ml's habits: dask X and y in, lazy dask predictions out, score on the cluster; all equal to pandas."""

import numpy as np
import pandas as pd
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.testing import mixed_frame


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


def test_mismatched_partitions_are_refused(data, cluster_client):
    import dask.dataframe as dd

    X, y = data
    with pytest.raises(dasktree.InputError, match="X has 4 partitions but y has 3"):
        DaskTreeClassifier(client=cluster_client).fit(dd.from_pandas(X, npartitions=4),
                                                      dd.from_pandas(y, npartitions=3))
    frame = dd.from_pandas(X, npartitions=2)
    shorter = dd.from_pandas(pd.Series(y.to_numpy()[:2500], name="label"), npartitions=2)
    with pytest.raises(dasktree.DataError, match="partition [01]: X has 1500 rows but y has 1250"):
        DaskTreeClassifier(client=cluster_client).fit(frame, shorter)
