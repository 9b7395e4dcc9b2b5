"""Messages speak the user's names: an option, a parameter, a class; never a private function's, a test
hook's or the other interface's."""

import re

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


def test_help_points_to_the_guide_page_that_says_it():
    """``export --help`` sent the reader to the README for what docs/guide/exports.md says."""
    import argparse
    from pathlib import Path

    from dasktree.cli.parser import build_parser

    root = Path(__file__).resolve().parent.parent
    verbs = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    for verb, parser in verbs.items():
        text = " ".join(parser.format_help().split())
        assert "README" not in text, verb
        for page in re.findall(r"docs/[\w/.-]+\.md", text):
            assert (root / page).is_file(), (verb, page)
    assert "docs/guide/exports.md" in " ".join(verbs["export"].format_help().split())


@pytest.mark.parametrize("task, target", [("classification", "label"), ("regression", "amount")])
def test_the_level_bars_show_the_bound_for_both_tasks(tmp_path, capsys, task, target):
    """A classification fit's bars said ``level 0/3``, a regression fit's ``level 0``."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=400), "z": rng.normal(size=400)})
    frame["label"] = np.where(frame.x > 0, "a", "b")
    frame["amount"] = frame.x * 3.0 + frame.z
    write_dataset(frame.drop(columns="amount" if task == "classification" else "label"), tmp_path / "d", n_files=2)
    assert main(["fit", str(tmp_path / "d"), "--target", target, "--task", task, "--max-depth", "3",
                 "--out", str(tmp_path / "m.json"), "--scheduler", "inprocess"]) == 0
    bars = [line for line in capsys.readouterr().err.splitlines() if ": level " in line]
    assert bars and all(re.search(r"pass \d+: level [0-3]/3 ", line) for line in bars), bars


@pytest.mark.parametrize("task, target", [("classification", "label"), ("regression", "amount")])
def test_a_run_resumed_from_a_checkpoint_says_so(tmp_path, capsys, task, target):
    """A checkpoint holding the first two level passes (a fit stopped in level 2): the run says it
    resumed there, once, and the model is the uninterrupted fit's."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=600), "z": rng.normal(size=600)})
    frame["label"] = np.where(frame.x + frame.z > 0, "a", "b")
    frame["amount"] = frame.x * 3.0 + frame.z
    data = tmp_path / "d"
    write_dataset(frame.drop(columns="amount" if task == "classification" else "label"), data, n_files=2)
    fit = ["fit", str(data), "--target", target, "--task", task, "--max-depth", "5", "--scheduler", "inprocess"]
    assert main([*fit, "--out", str(tmp_path / "plain.json"), "--quiet"]) == 0
    ckpt = tmp_path / "ckpt"
    estimator = dasktree.DaskTreeClassifier if task == "classification" else DaskTreeRegressor
    estimator(max_depth=5, scheduler="inprocess").fit(str(data), target=target, checkpoint=str(ckpt))
    passes = sorted(ckpt.glob("pass-*.npz"))
    assert len(passes) > 3
    for later in passes[2:]:
        later.unlink()
    capsys.readouterr()
    assert main([*fit, "--out", str(tmp_path / "resumed.json"), "--checkpoint", str(ckpt)]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "resumed" in line]
    assert said == [f"dasktree: resumed from {ckpt} at level 2 (2 level passes replayed)"], said
    assert (tmp_path / "resumed.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
