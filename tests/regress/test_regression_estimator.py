"""DaskTreeRegressor as a scikit-learn estimator, on in-memory data, dask collections and datasets."""

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from sklearn.base import is_regressor
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import dasktree
from dasktree import DaskTreeRegressor
from dasktree.regress.task import REGRESSION


@parametrize_with_checks([DaskTreeRegressor()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_sklearn_tools_take_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] * 2 + rng.normal(scale=0.1, size=300)
    assert is_regressor(DaskTreeRegressor())
    assert cross_val_score(DaskTreeRegressor(max_depth=4), X, y, cv=3).mean() > 0.8
    search = GridSearchCV(DaskTreeRegressor(), {"max_depth": [2, 5]}, cv=3).fit(X, y)
    assert search.best_params_ == {"max_depth": 5}


def test_dask_collections_and_datasets_give_the_same_tree(frame, dataset, tmp_path):
    import dask.dataframe as dd

    X, y = frame.drop(columns="y"), frame["y"]
    reference = DaskTreeRegressor(max_depth=5, cv=3, scheduler="inprocess").fit(dataset, target="y")
    in_memory = DaskTreeRegressor(max_depth=5, prune="none").fit(frame, target="y")  # the grown tree
    np.testing.assert_array_equal(in_memory.tree_.counts, reference.model_.grown_tree.counts)
    lazy = DaskTreeRegressor(max_depth=5, prune="none").fit(dd.from_pandas(X, npartitions=4), dd.from_pandas(y, npartitions=3))
    np.testing.assert_array_equal(lazy.tree_.counts, in_memory.tree_.counts)
    predicted = lazy.predict(dd.from_pandas(X, npartitions=4))
    assert hasattr(predicted, "compute")  # lazy: a dask Series
    np.testing.assert_array_equal(predicted.compute().to_numpy(), in_memory.predict(X))
    files = in_memory.predict(dataset, out=str(tmp_path / "pred"), keep=["x2"])
    table = pq.read_table(files)
    assert table.column_names == ["x2", "prediction"] and table.num_rows == len(frame)


def test_cv_report_pruning_and_a_saved_model(frame, tmp_path):
    reg = DaskTreeRegressor(cv=5, prune="cv").fit(frame, target="y")
    cv = reg.cv_report_
    assert len(cv["per_fold"]) == 5 and cv["rmse"] == pytest.approx(np.sqrt(cv["mse"]))
    table = reg.cp_table_
    assert list(table.columns[:5]) == ["alpha", "leaves", "train_mse", "cv_mse", "cv_se"]
    assert reg.ccp_alpha_ > 0 and reg.tree_.n_leaves < reg.model_.grown_tree.n_leaves
    assert reg.ccp_alpha_ in table["alpha"].to_list()
    path = tmp_path / "m.json"
    reg.save(path)
    loaded = dasktree.load(path)  # a regressor's model file loads as a model of the regression task
    assert isinstance(loaded, DaskTreeRegressor) and loaded.model_.task is REGRESSION
    X = frame.drop(columns="y")
    np.testing.assert_array_equal(loaded.model_.predict_values(dasktree.model.predict.as_table(loaded.model_, X)),
                                  reg.predict(X))


def test_bad_parameters_name_themselves():
    X, y = np.zeros((10, 1)), np.arange(10.0)
    with pytest.raises(dasktree.errors.ParameterError, match="criterion must be one of"):
        DaskTreeRegressor(criterion="gini").fit(X, y)
    with pytest.raises(dasktree.errors.ParameterError, match="give cv=k too"):
        DaskTreeRegressor(prune="cv-min").fit(X, y)
    with pytest.raises(ValueError, match="Input y contains NaN"):
        DaskTreeRegressor().fit(X, np.r_[np.nan, y[1:]])


def test_the_regressor_exports_as_the_classifier_does(frame):
    reg = DaskTreeRegressor(max_depth=3).fit(frame, target="y")
    assert "prediction" in reg.to_sql() and reg.to_pmml().lstrip().startswith("<?xml")
    assert len(reg.to_onnx()) > 0
