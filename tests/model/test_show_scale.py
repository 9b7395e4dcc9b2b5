"""``dasktree show`` (text, dot) and the tree picture read every node's value once, whatever the
tree's size: reading ``tree.value[i]`` per leaf recomputed all of them (quadratic: 15 s for 15,902
leaves). The counts of calls below are the complexity; no test here times anything. ``--max-depth``
cuts the printed tree and says how many nodes it leaves out."""

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.cli import main
from dasktree.errors import DataError
from dasktree.model import model as model_module
from dasktree.model.check import check_model_parts
from dasktree.model.text import export_dot, export_text, subtree_sizes
from dasktree.model.grown_json import from_runs, runs
from dasktree.model.model import TreeModel, load
from dasktree.regress import task as regression_module
from dasktree.testing.exports import full_binary_model, random_model, random_regression_model

TASKS = ["classification", "regression"]


@pytest.fixture
def value_reads(monkeypatch):
    """How often every node's value is computed: ``TreeModel.value`` and the regression node means."""
    calls = {"value": 0, "means": 0}
    value = TreeModel.value.fget

    def counted_value(self):
        calls["value"] += 1
        return value(self)

    means = regression_module.node_means

    def counted_means(tree):
        calls["means"] += 1
        return means(tree)

    monkeypatch.setattr(model_module.TreeModel, "value", property(counted_value))
    monkeypatch.setattr(regression_module, "node_means", counted_means)
    return calls


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("export", [export_text, export_dot])
def test_text_and_dot_compute_the_values_once(task, export, value_reads):
    model = full_binary_model(9, task=task)  # 512 leaves: once per leaf would be hundreds of calls
    text = export(model)
    assert text.count("value: [" if task == "regression" else "class: ") == 512
    assert value_reads["value"] + value_reads["means"] == 1


@pytest.mark.parametrize("task", TASKS)
def test_picture_texts_compute_the_values_once(task, value_reads):
    pytest.importorskip("matplotlib")
    from dasktree.model.plot import _node_texts, _pyplot

    model = full_binary_model(7, task=task)
    text, colour = _node_texts(model), model.task.leaf_colours(model, _pyplot())
    for i in range(model.tree.n_nodes):
        text(i, model.tree.tests[i] is None)
        colour(i)
    assert value_reads["value"] + value_reads["means"] == 2  # once for the texts, once for the colours


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_values_equal_a_node_by_node_twin(seed):
    """Empty nodes (random_model has some) take their parent's probabilities, as a walk from the root."""
    tree = random_model(seed, max_nodes=60).tree
    total = tree.counts.sum(axis=1)
    want = np.zeros(tree.counts.shape)
    for i in range(tree.n_nodes):
        if total[i] > 0:
            want[i] = tree.counts[i] / total[i]
    for i in range(tree.n_nodes):
        for c in tree.children[i]:
            if total[c] == 0:
                want[c] = want[i]
    np.testing.assert_array_equal(tree.value, want)
    parents = tree.parents()
    assert parents[0] == -1 and all(parents[c] == i for i in range(tree.n_nodes) for c in tree.children[i])


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(0, 4), regression=st.booleans())
def test_max_depth_counts_the_nodes_it_cuts(seed, depth, regression):
    model = (random_regression_model if regression else random_model)(seed, max_nodes=60)
    tree = model.tree
    text = export_text(model, max_depth=depth)
    shown = sum(1 for d in tree.depth if d <= depth)
    below = tree.n_nodes - shown
    cut = [i for i in range(tree.n_nodes) if tree.depth[i] == depth and tree.tests[i] is not None]
    assert text.count("(truncated: ") == len(cut)
    assert sum(subtree_sizes(tree)[i] - 1 for i in cut) == below
    if below:
        assert text.splitlines()[-1] == f"({below} of {tree.n_nodes} nodes below depth {depth} not shown)"
    else:
        assert text == export_text(model)
    dot = export_dot(model, max_depth=depth)
    assert sum(re.match(r"  n\d+ \[", line) is not None for line in dot.splitlines()) == shown


def test_sizes_of_subtrees():
    tree = full_binary_model(3).tree
    assert subtree_sizes(tree) == [15, 7, 7, 3, 3, 3, 3] + [1] * 8


@pytest.mark.parametrize("task", TASKS)
def test_show_max_depth_on_the_command(task, tmp_path, capsys):
    path = tmp_path / "model.json"
    full_binary_model(10, task=task).save(path)
    assert main(["show", str(path), "--max-depth", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 + 4 + 4 + 1  # two branches at depth 0, four at depth 1, four cut leaves, the count
    assert out[-1] == f"({2047 - 7} of 2047 nodes below depth 2 not shown)"
    assert main(["show", str(path), "--max-depth", "1", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.count("(truncated: 1022 nodes below)") == 2 and " -> n2 " in dot and "n3 " not in dot


@pytest.mark.parametrize("argv, message", [
    (["--max-depth", "-1"], "--max-depth -1: a depth is 0 (the root) or more"),
    (["--max-depth", "2", "--format", "report"], "--max-depth 2: it cuts the tree of --format text or dot, not "
                                                 "--format report"),
])
def test_show_max_depth_refused(argv, message, tmp_path, capsys):
    path = tmp_path / "model.json"
    full_binary_model(2).save(path)
    assert main(["show", str(path), *argv]) == 2
    assert capsys.readouterr().err.strip() == f"dasktree: error: {message}"


def test_a_code_table_sending_a_code_to_a_missing_child_is_named(tmp_path):
    """The model check reads every test's code table in one reduction: the node it names is the first bad one."""
    model = full_binary_model(3)
    d = json.loads(model.dumps())

    def send(node: int, code: int, child: int) -> None:  # the file's code tables are runs
        test = d["tree"]["tests"][node]
        table = from_runs(test[3])
        table[code] = child
        test[3] = runs(table)

    send(5, 3, 2)
    send(6, 1, -1)
    with pytest.raises(DataError, match="node 5's code table sends a code to a child it does not have"):
        model_module.Model.from_json(d)
    send(5, 3, 1)
    with pytest.raises(DataError, match="node 6's code table sends a code to a child it does not have"):
        model_module.Model.from_json(d)
    loaded = load_model_again(model, tmp_path)
    check_model_parts(loaded.spec, {"tree": loaded.tree}, "model")


def load_model_again(model, tmp_path):
    path = tmp_path / "again.json"
    model.save(path)
    return load(path)
