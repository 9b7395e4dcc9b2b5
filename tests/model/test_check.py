"""A model file is checked whole when it loads: a damaged one is one line (exit 1), never a wrong answer
or an internal error later (a NaN CV error that cannot be saved, found by fuzzing)."""

import json

import pytest

from dasktree import DaskTreeClassifier
from dasktree.errors import DataError
from dasktree.model.model import load
from dasktree.testing import mixed_frame
from older_models import in_version5


@pytest.fixture(scope="module")
def saved():
    frame = mixed_frame(400, seed=3)
    model = DaskTreeClassifier(cv=3, keep_fold_trees=True, max_depth=3, prune="none").fit(
        frame.drop(columns=["label"]), frame["label"]).model_
    return in_version5(model)  # the columns layout, a list per node: one node damaged by hand below


def _inner(columns) -> int:
    return next(i for i, kids in enumerate(columns["children"]) if kids)


@pytest.mark.parametrize("tree, field", [("tree", "counts"), ("fold_trees", "counts"), ("fold_trees", "validation")])
def test_counts_that_are_not_their_childrens_sum_are_refused(saved, tmp_path, tree, field):
    load_ok = tmp_path / "ok.json"
    load_ok.write_text(json.dumps(saved))
    load(load_ok)  # as fitted: every node's counts are its children's sum
    damaged = json.loads(json.dumps(saved))
    # every tree's nodes as columns; a fold tree's as a JSON text (model format version 5, which this reads)
    columns = json.loads(damaged[tree][0]) if tree == "fold_trees" else damaged[tree]
    child = columns[field][columns["children"][_inner(columns)][0]]
    child[0], child[1] = child[1] + 1, child[0]  # a swap, and one row more
    if tree == "fold_trees":
        damaged[tree][0] = json.dumps(columns)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(damaged))
    with pytest.raises(DataError, match="not the sum of its children's"):
        load(path)


@pytest.mark.parametrize("child", [[[[1]]], [1, [2, 3]], ["1"]])
def test_a_child_that_is_a_list_or_no_number_is_refused(saved, tmp_path, child):
    """A node's children with a list inside (a fuzzed model nested 100 deep there was an internal
    error, exit 3, in every command loading it): one data error naming the node."""
    damaged = json.loads(json.dumps(saved))
    columns = json.loads(damaged["fold_trees"][0])  # a fold tree is kept as a JSON string (format 5)
    node = _inner(columns)
    columns["children"][node] = [*columns["children"][node][:-1], child]
    damaged["fold_trees"][0] = json.dumps(columns)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(damaged))
    with pytest.raises(DataError, match=f"node {node}'s children .* are not two or more later nodes"):
        load(path)


def test_a_report_number_too_large_for_a_float_is_one_line(saved, tmp_path, capsys):
    """Found by fuzzing: an integer of 400 digits where the CV accuracy is (JSON allows it) stopped
    ``show --format report`` with an internal error (OverflowError, exit 3)."""
    from dasktree.cli import main

    damaged = json.loads(json.dumps(saved))
    damaged["report"]["cv"]["accuracy_mean"] = 10**400
    damaged["report"]["cv"]["per_fold"][0]["accuracy"] = 10**400
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(damaged))
    code = main(["show", str(path), "--format", "report"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and "report is damaged" in err[0], err
