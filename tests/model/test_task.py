"""A task is an object: one ``Model`` class whose ``task`` answers what differs between classification and
regression, looked up by the name a model file gives, and no code that compares a task's name."""

import re
from pathlib import Path

import numpy as np
import pytest

from dasktree.errors import DataError
from dasktree.model.model import Model
from dasktree.model.task import CLASSIFICATION, TASKS, Classification, Task, task_named
from dasktree.regress.task import REGRESSION, Regression
from dasktree.testing.exports import full_binary_model

PACKAGE = Path(__file__).resolve().parents[2] / "dasktree"
INTERFACE = {name for name in vars(Classification) if not name.startswith("_")} - set(vars(Task))


def test_each_task_answers_the_same_questions():
    assert set(TASKS) == {"classification", "regression"}
    assert TASKS["classification"] is CLASSIFICATION and TASKS["regression"] is REGRESSION
    own = {name for name in vars(Regression) if not name.startswith("_")} - set(vars(Task))
    assert own == INTERFACE, "a task method one task lacks"
    for name in own:
        assert getattr(Regression, name) is not getattr(Task, name, None)


def test_a_model_file_names_its_task():
    for model in (full_binary_model(4), full_binary_model(4, task="regression")):
        loaded = Model.from_json(model.to_json())
        assert type(loaded) is Model and loaded.task is model.task
        assert loaded.dumps() == model.dumps()
    assert "task" not in full_binary_model(2).to_json()  # old classification files have none
    d = full_binary_model(2, task="regression").to_json()
    d["task"] = "ranking"
    with pytest.raises(DataError, match="unknown task 'ranking'; this dasktree reads"):
        Model.from_json(d)
    with pytest.raises(ValueError, match="unknown task"):
        task_named(None)


def test_comparing_a_task_with_a_name_is_refused_not_silently_false():
    with pytest.raises(TypeError, match="compare model.task.name"):
        _ = CLASSIFICATION == "classification"
    assert CLASSIFICATION != REGRESSION and CLASSIFICATION == task_named("classification")


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_node_values_and_rows_are_the_tasks(task):
    model = full_binary_model(4, task=task)
    tree = model.tree
    if task == "classification":
        np.testing.assert_array_equal(model.node_values(), tree.value)
        np.testing.assert_array_equal(model.task.node_rows(tree), tree.counts.sum(axis=1))
    else:
        np.testing.assert_array_equal(model.task.node_rows(tree), tree.counts[:, 0])
        with pytest.raises(TypeError, match="predicts numbers"):
            model.predict_proba_table(None)


def test_no_code_compares_a_task_name():
    """At most the task objects' own names: a switch on a task's name is what the task object replaces."""
    compare = re.compile(r'(==|!=)\s*"(regression|classification)"|"(regression|classification)"\s*(==|!=)')
    found = [f"{p.relative_to(PACKAGE)}:{i}" for p in sorted(PACKAGE.rglob("*.py"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if compare.search(line)]
    assert len(found) <= 3, found


def test_one_shape_of_folds_and_old_regression_files_load_in_it():
    """Both tasks' CV reports say ``folds`` (the number), ``repeats`` and ``per_fold`` (the list); a
    regression file written before (``k`` and a list ``folds``) loads in that shape."""
    model = full_binary_model(2, task="regression")
    per_fold = [{"fold": f, "rows": 10, "mse": 1.5, "rmse": 1.5 ** 0.5, "r2": 0.5, "leaves": 3} for f in range(3)]
    old = {**model.to_json(), "report": {"cv": {"k": 3, "folds": per_fold, "mse": 1.5, "r2": 0.5}, "leaves": 4}}
    loaded = Model.from_json(old)
    assert loaded.report == {"cv": {"folds": 3, "repeats": 1, "per_fold": [{"repeat": 0, **f} for f in per_fold],
                                    "mse": 1.5, "r2": 0.5}, "leaves": 4}
    assert Model.from_json(loaded.to_json()).report == loaded.report  # the new shape reads as it is
    without = {**old, "report": {"cv": {"k": 3, "folds": [], "estimated_from": "cp table"}}}
    assert Model.from_json(without).report["cv"] == {"folds": 3, "repeats": 1, "per_fold": [],
                                                      "estimated_from": "cp table"}
