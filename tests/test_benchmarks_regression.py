"""The regression claim's parts: its data written once and deterministic, the peers' regression jobs,
and dasktree's regression learner scoring each fold with a fit on the other folds."""

from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

pytest.importorskip("sklearn")

from benchmarks import accuracy_peers, harness, jobs, regression  # noqa: E402


@pytest.fixture
def data(tmp_path, monkeypatch):
    """The claim's data folder moved to a temporary one."""
    monkeypatch.setattr(harness, "DATA", str(tmp_path))
    return tmp_path


def test_friedman_is_written_once_as_16_files_of_distinct_values(data, monkeypatch):
    path = regression.friedman(1600)
    files = sorted(os.listdir(path))
    assert len(files) == 16 and all(f.endswith(".parquet") for f in files)
    table = pq.read_table(path)
    assert table.num_rows == 1600 and table.column_names == [f"x{j}" for j in range(10)] + ["y"]
    for name in table.column_names:
        assert len(np.unique(table.column(name).to_numpy())) == 1600  # continuous: every value distinct
    before = [os.stat(os.path.join(path, f)).st_mtime_ns for f in files]
    assert regression.friedman(1600) == path  # found, not written again
    assert [os.stat(os.path.join(path, f)).st_mtime_ns for f in files] == before
    wide = pq.read_table(regression.friedman(320, features=100))
    assert wide.num_columns == 101 and wide.num_rows == 320
    monkeypatch.setattr(harness, "DATA", str(data / "again"))  # written anew elsewhere: the same values
    assert wide.equals(pq.read_table(regression.friedman(320, features=100)))


def test_agrawal_hvalue_keeps_the_nine_attributes_and_leaves_the_class_out(data):
    from dasktree.datasets.agrawal import ATTRIBUTES

    table = pq.read_table(regression.agrawal_hvalue(2000))
    assert table.num_rows == 2000 and table.column_names == list(ATTRIBUTES)
    assert not os.path.exists(os.path.join(str(data), "agrawal-hvalue-2000-16.partial"))


def test_the_peers_regression_jobs_learn_the_same_kind_of_tree(data):
    pytest.importorskip("lightgbm")
    path = regression.friedman(4000)
    X, y = jobs.load_regression(path, "y")
    assert X.shape == (4000, 10) and X.dtype == np.float32 and y.dtype == np.float64
    sk, lgb = jobs.sklearn_reg(path, "4", "y"), jobs.lightgbm_reg(path, "4", "y")
    assert 0.5 < sk["training_r2"] < 1 and 0.5 < lgb["training_r2"] < 1
    assert abs(sk["training_r2"] - lgb["training_r2"]) < 0.05  # depth 4 on 10 columns: near the same tree
    cv = jobs.lightgbm_reg_cv(path, "4", "5", "y")
    assert cv["training_r2"] == lgb["training_r2"] and 0.3 < cv["cv_r2"] < cv["training_r2"]


def test_dasktree_regression_scores_each_fold_by_a_fit_on_the_others():
    from sklearn.datasets import load_diabetes

    from dasktree import DaskTreeRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    y = y.to_numpy(dtype=float)
    fold = accuracy_peers.regression_folds(len(y), 3, seed=0)
    result = accuracy_peers.dasktree_regression(X, y, [], fold, {"max_depth": 3})
    assert result["rows"] == [int(np.sum(fold == f)) for f in range(3)]
    for f in range(3):
        tree = DaskTreeRegressor(max_depth=3).fit(X[fold != f], y[fold != f])
        assert result["sse"][f] == pytest.approx(float(np.sum((tree.predict(X[fold == f]) - y[fold == f]) ** 2)))
        assert result["leaves"][f] == tree.model_.tree.n_leaves
    pruned = accuracy_peers.dasktree_regression(X, y, [], fold, {"max_depth": 3, "cv": 3})
    assert all(p <= g for p, g in zip(pruned["leaves"], result["leaves"]))
