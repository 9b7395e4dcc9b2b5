"""Compact model files: the main tree and the CV report; fold trees only when kept."""

import json

import numpy as np
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.model import VERSION
from dasktree.testing import mixed_frame


@pytest.fixture(scope="module")
def fitted():
    frame = mixed_frame(20_000, seed=3)
    X, y = frame.drop(columns=["label"]), frame["label"]
    kept = DaskTreeClassifier(max_depth=10, cv=10, keep_fold_trees=True).fit(X, y)
    compact = DaskTreeClassifier(max_depth=10, cv=10).fit(X, y)
    return X, kept, compact


def test_a_model_without_fold_trees_predicts_the_same_and_is_5x_smaller(tmp_path, fitted):
    X, kept, compact = fitted
    assert len(kept.model_.fold_trees) == 10 and compact.model_.fold_trees == []
    assert kept.report_ == compact.report_  # the CV report does not need the fold trees kept
    kept.save(tmp_path / "kept.json")
    compact.save(tmp_path / "compact.json")
    big, small = (tmp_path / "kept.json").stat().st_size, (tmp_path / "compact.json").stat().st_size
    assert big >= 5 * small, (big, small)
    loaded = dasktree.load(tmp_path / "compact.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), kept.predict_proba(X))
    assert len(dasktree.load(tmp_path / "kept.json").fold_trees_) == 10


def test_older_format_loads_and_newer_format_says_so(tmp_path, fitted):
    X, kept, _ = fitted
    d = json.loads(kept.model_.dumps())
    d["version"] = 1  # version 1 files always held their fold trees
    (tmp_path / "v1.json").write_text(json.dumps(d))
    old = dasktree.load(tmp_path / "v1.json")
    np.testing.assert_array_equal(old.predict(X), kept.predict(X))
    d["version"] = VERSION + 1
    (tmp_path / "new.json").write_text(json.dumps(d))
    with pytest.raises(dasktree.DataError, match=rf"version {VERSION + 1} is newer than this dasktree reads"):
        dasktree.load(tmp_path / "new.json")
