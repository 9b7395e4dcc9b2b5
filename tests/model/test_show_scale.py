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
from dasktree.model.text import branch_labels, export_dot, export_text, subtree_sizes, tree_labels
from dasktree.model.grown_json import from_runs, runs
from dasktree.model.model import TreeModel, load
from dasktree.regress import task as regression_module
from dasktree.testing.exports import full_binary_model, random_model, random_regression_model
from older_models import in_version5

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


def walked_text(model, max_depth=None) -> str:
    """The twin of ``export_text``: a walk from the root, depth first, a line per branch and leaf."""
    tree = model.tree
    leaf_text = model.task.leaf_texts(model, tree)
    labels = tree_labels(tree, model.spec)
    size = [1] * tree.n_nodes
    for i in range(tree.n_nodes - 1, -1, -1):
        size[i] += sum(size[c] for c in tree.children[i])
    lines, cut, stack = [], 0, [(0, 0, None)]
    while stack:
        i, d, label = stack.pop()
        if label is not None:
            lines.append("|   " * (d - 1) + "|--- " + label)
        tested = tree.tests[i] is not None
        if not tested or (max_depth is not None and 0 <= max_depth <= tree.depth[i]):
            more = f" (truncated: {size[i] - 1} nodes below)" if tested else ""
            cut += size[i] - 1 if tested else 0
            lines.append("|   " * d + leaf_text(i) + more)
            continue
        stack += reversed([(c, d + 1, text) for c, text in zip(tree.children[i], labels(i))])
    if cut:
        lines.append(f"({cut} of {tree.n_nodes} nodes below depth {max_depth} not shown)")
    return "\n".join(lines) + "\n"


@settings(max_examples=80, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), depth=st.one_of(st.none(), st.integers(-1, 5)), regression=st.booleans())
def test_the_text_built_from_arrays_is_the_walks(seed, depth, regression):
    """``export_text`` places every line at once from the tree's arrays: the same text as a walk, on random
    trees (multi-way and nominal tests, every default child, empty nodes), cut at every depth."""
    model = (random_regression_model if regression else random_model)(seed, max_nodes=60)
    assert export_text(model, max_depth=depth) == walked_text(model, depth)


def test_the_text_of_a_deep_pruned_model_is_the_walks():
    model = full_binary_model(9, task="regression", pruned_at=7)
    for depth in (None, 0, 3, 7):
        assert export_text(model, max_depth=depth) == walked_text(model, depth)


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
    d = in_version5(model)  # the columns layout: a test per node, its code table as runs

    def send(node: int, code: int, child: int) -> None:
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


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_branch_labels_read_from_the_columns_equal_each_tests_own(seed):
    """The twin: ``tree_labels`` (the columns, no ``Test`` made) against ``branch_labels`` of each test, on
    random numeric, nominal and multi-way tests, of the fitted tree's list and of the file's columns."""
    import dataclasses

    from dasktree.model.grown_json import grown_to_json
    from dasktree.model.node_table import NodeTests

    model = random_model(seed, max_nodes=60)
    columns = NodeTests.from_columns(json.loads(json.dumps(grown_to_json(model.tree)))["tests"])
    loaded = dataclasses.replace(model, tree=dataclasses.replace(model.tree, tests=columns))
    for tree in (model.tree, loaded.tree):
        labels = tree_labels(tree, model.spec)
        for i, test in enumerate(model.tree.tests):
            if test is not None:
                assert labels(i) == branch_labels(test, model.spec)
    assert export_text(loaded) == export_text(model) and export_dot(loaded) == export_dot(model)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("form", ["text", "dot"])
def test_show_decodes_the_shown_tree_alone_and_makes_no_test(task, form, tmp_path, capsys, monkeypatch):
    """``show`` of a pruned model reads the tree it prints and nothing else: the grown tree beside it
    (here 1,024 leaves; 65,536 in benchmarks/show.py) stays undecoded, and the printed tree's tests are
    read as columns, once for every node: no ``Test`` object made per node, every node's values computed
    once. Counts of calls, not time."""
    from collections import Counter

    from dasktree.model import grown_json
    from dasktree.model.node_table import NodeTests

    model = full_binary_model(10, task=task, pruned_at=8)
    path = tmp_path / "model.json"
    model.save(path)
    want = (export_text if form == "text" else export_dot)(load(path))
    calls = Counter()

    def counting(name, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(grown_json, "grown_from_json", counting("grown_from_json", grown_json.grown_from_json))
    monkeypatch.setattr(NodeTests, "_make", counting("_make", NodeTests._make))
    monkeypatch.setattr(NodeTests, "from_arrays", classmethod(counting("from_arrays", NodeTests.from_arrays.__func__)))
    monkeypatch.setattr(model.task, "leaf_texts", counting("leaf_texts", model.task.leaf_texts))
    monkeypatch.setattr(model.task, "leaf_texts_of", counting("leaf_texts_of", model.task.leaf_texts_of))
    assert main(["show", str(path), "--format", form]) == 0
    assert capsys.readouterr().out == want
    assert calls == {"grown_from_json": 1, "from_arrays": 1, "leaf_texts" if form == "dot" else "leaf_texts_of": 1}, calls


def test_a_lazily_loaded_model_reads_its_grown_tree_when_first_used(tmp_path, capsys):
    """``load(path, lazy=True)`` (``show``'s) keeps the grown tree unread until used; then it is read and
    checked as an eager load checks it, and is a ``TreeModel`` like any other (pickled, saved)."""
    import pickle

    model = full_binary_model(6, pruned_at=3)
    path = tmp_path / "model.json"
    model.save(path)
    lazy = load(path, lazy=True)
    assert "_later" in vars(lazy.full_tree) and "counts" not in vars(lazy.full_tree)
    assert pickle.loads(pickle.dumps(lazy)).dumps() == model.dumps()
    assert type(lazy.full_tree) is TreeModel and lazy.full_tree.to_json() == load(path).full_tree.to_json()
    assert load(path, lazy=True).dumps() == model.dumps()
    d = in_version5(model)  # the columns layout (a list per node), which this reads
    grown = json.loads(d["full_tree"])  # a JSON text in the file (model format versions 5 and 6)
    grown["children"][1] = [0, 2]  # a node that is its own grandparent's child: damaged
    d["full_tree"] = json.dumps(grown)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(DataError, match="bad.json: malformed model: full_tree"):
        load(bad)
    shown = load(bad, lazy=True)
    assert export_text(shown) == export_text(model)  # show prints the tree it read and checked
    for _ in range(2):  # the damage is said at each use, not once
        with pytest.raises(DataError, match="bad.json: malformed model: full_tree"):
            shown.full_tree.n_leaves
    assert main(["show", str(bad)]) == 0 and capsys.readouterr().out == export_text(model)
    assert main(["show", str(bad), "--format", "json"]) == 1
    assert "malformed model: full_tree" in capsys.readouterr().err
    assert main(["prune", str(bad), "--mode", "none", "--out", str(tmp_path / "p.json")]) == 1


def test_show_imports_neither_the_fit_nor_the_compiled_kernels(tmp_path):
    """``dasktree show`` in a process of its own loads none of Dask, distributed, numba, scikit-learn,
    matplotlib (seconds of imports before a byte is read); ``dasktree.fit`` is still the function, before
    and after the submodule of that name loads."""
    import subprocess
    import sys

    for task in TASKS:
        full_binary_model(4, task=task, pruned_at=2).save(tmp_path / f"{task}.json")
    code = f"""
import sys
from dasktree.cli import main
for task in {TASKS!r}:
    assert main(["show", {str(tmp_path)!r} + "/" + task + ".json"]) == 0
    assert main(["show", {str(tmp_path)!r} + "/" + task + ".json", "--format", "dot"]) == 0
heavy = sorted(m for m in ("dask", "distributed", "numba", "sklearn", "scipy", "matplotlib") if m in sys.modules)
print("heavy:", heavy, file=sys.stderr)
import dasktree, dasktree.fit
assert callable(dasktree.fit) and dasktree.fit is sys.modules["dasktree.fit"].fit
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "heavy: []"
