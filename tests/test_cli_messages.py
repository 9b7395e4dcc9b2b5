"""Messages speak the user's names: an option, a parameter, a class; never a private function's, a test
hook's or the other interface's."""

import numpy as np
import pandas as pd
import pytest

import dasktree
from dasktree import DaskTreeRegressor
from dasktree.cli import main
from dasktree.errors import ParameterError, DataError
from dasktree.testing import write_dataset


def test_a_bad_class_weight_option_says_what_it_takes(capsys):
    """argparse worded it ``invalid _class_weight_text value``."""
    with pytest.raises(SystemExit) as stop:
        main(["fit", "d", "--target", "c", "--out", "m.json", "--class-weight", "=3"])
    assert stop.value.code == 2
    line, = capsys.readouterr().err.strip().splitlines()
    assert "argument --class-weight: must be 'balanced' or LABEL=WEIGHT,..., got '=3'" in line, line
    assert "_class_weight_text" not in line


def test_a_grid_without_cv_names_no_test_hook():
    X, y = pd.DataFrame({"x": np.arange(60.0)}), np.arange(60) % 2
    with pytest.raises(ParameterError, match=r"give cv=k too \(--cv K\)") as refused:
        dasktree.fit(X, y, param_grid={"criterion": ["gini"]})
    assert "only_fold" not in str(refused.value)


def test_labels_given_to_the_regressor_name_the_classifier(tmp_path):
    """The Python regressor was told to ``leave out --task regression``."""
    frame = pd.DataFrame({"x": np.arange(40.0), "y": np.where(np.arange(40) < 20, "low", "high")})
    write_dataset(frame, tmp_path / "d")
    with pytest.raises(DataError, match="not numeric") as refused:
        DaskTreeRegressor(max_depth=2).fit(str(tmp_path / "d"), target="y")
    assert "leave out" not in str(refused.value) and "DaskTreeClassifier" in str(refused.value)
