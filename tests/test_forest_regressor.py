"""DaskForestRegressor: scikit-learn's estimator checks, R^2 beside RandomForestRegressor's, the
OOB attributes, a clone, importances and the model file."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from dasktree import DaskForestRegressor
from dasktree.model.forest_model import load_forest

EXPECTED_FAILED_CHECKS: dict[str, str] = {}  # every check passes; a check that cannot is named here with why


@parametrize_with_checks([DaskForestRegressor(n_estimators=4)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("data", ["diabetes", "friedman1"])
def test_r2_beside_random_forest_regressor(data):
    """A sanity bound, not a benchmark: held-out R^2 within 0.05 of scikit-learn's forest of as
    many trees (both every feature per node and bootstraps; the seeds differ)."""
    X, y = load_diabetes(return_X_y=True) if data == "diabetes" else make_friedman1(2000, noise=1.0, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    ours = DaskForestRegressor(n_estimators=30, random_state=1, min_samples_leaf=3).fit(X_train, y_train)
    theirs = RandomForestRegressor(n_estimators=30, random_state=1, min_samples_leaf=3).fit(X_train, y_train)
    r2, expected = r2_score(y_test, ours.predict(X_test)), r2_score(y_test, theirs.predict(X_test))
    assert r2 > expected - 0.05, (r2, expected)


def test_oob_clone_importances_and_the_model_file(tmp_path):
    X, y = make_friedman1(600, noise=0.5, random_state=2)
    est = DaskForestRegressor(n_estimators=12, max_depth=6, random_state=5, oob_score=True)
    assert clone(est).get_params() == est.get_params()
    assert est.get_params()["max_features"] == 1.0
    est.fit(X, y)
    assert 0.3 < est.oob_score_ < 1.0
    assert est.oob_prediction_.shape == (600,)
    scored = ~np.isnan(est.oob_prediction_)
    assert est.oob_score_ == pytest.approx(r2_score(y[scored], est.oob_prediction_[scored]), abs=1e-9)
    importances = est.feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    assert importances[5:].max() < importances[:5].min() + 0.05  # features 5.. are noise in friedman1
    est.save(tmp_path / "f.json")
    again = DaskForestRegressor.from_model(load_forest(tmp_path / "f.json"))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
