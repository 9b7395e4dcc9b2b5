"""DaskForestClassifier as a scikit-learn estimator: the contract checks, accuracy beside
RandomForestClassifier's, the tools, and its model file."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from dasktree import DaskForestClassifier
from dasktree.forest_estimator import load_forest_estimator

EXPECTED_FAILED_CHECKS: dict[str, str] = {}  # every check passes; a check that cannot is named here with why


@parametrize_with_checks([DaskForestClassifier(n_estimators=4)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("loader", [load_breast_cancer, load_wine, load_digits])
def test_accuracy_beside_random_forest(loader):
    """A sanity bound, not a benchmark: on held-out rows, within 3 points of scikit-learn's forest
    of as many trees (both with sqrt features and bootstraps; the seeds differ)."""
    X, y = loader(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    ours = DaskForestClassifier(n_estimators=50, random_state=1, oob_score=True).fit(X_train, y_train)
    theirs = RandomForestClassifier(50, random_state=1, oob_score=True).fit(X_train, y_train)
    assert ours.score(X_test, y_test) >= theirs.score(X_test, y_test) - 0.03
    assert abs(ours.oob_score_ - theirs.oob_score_) < 0.04
    assert ours.oob_decision_function_.shape == theirs.oob_decision_function_.shape


def test_clone_importances_and_the_model_file(tmp_path):
    X, y = load_wine(return_X_y=True)
    est = DaskForestClassifier(n_estimators=8, max_depth=4, random_state=5)
    assert clone(est).get_params() == est.get_params()
    est.fit(X, y)
    importances = est.feature_importances_
    assert importances.shape == (X.shape[1],) and importances.sum() == pytest.approx(1.0)
    theirs = RandomForestClassifier(100, random_state=0).fit(X, y).feature_importances_
    assert len(set(np.argsort(importances)[-4:]) & set(np.argsort(theirs)[-4:])) >= 2  # the same strong features
    est.save(tmp_path / "forest.json")
    again = load_forest_estimator(tmp_path / "forest.json")
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    assert again.n_estimators == 8 and len(again.estimators_) == 8
