"""A loaded tree's tests are columns (:class:`~dasktree.model.node_table.NodeTests`), each ``Test`` made
when first read: the same tests, routing, file and checks as the per-test code they replace (kept here as
naive twins), old files still load, and a 30,000-leaf model loads without making a single ``Test``."""

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.cli import main
from dasktree.errors import DataError
from dasktree.model import node_table
from dasktree.model.check import _check_tree
from dasktree.model.text import export_dot, export_text
from dasktree.model.grown_json import arrays_to_json, from_runs, grown_from_json, grown_to_json, runs
from dasktree.model.model import READS, VERSION, Model, TreeModel, load
from dasktree.model.node_table import NodeTests
from dasktree.split.api import Test as SplitTest
from dasktree.testing.exports import full_binary_model, random_model, random_regression_model

DATA = Path(__file__).resolve().parent.parent / "data"


# ---------------------------------------------------------------- the per-test code the columns replace
def naive_tests_from_columns(column: list) -> list:
    out = []
    for t in column:
        if t is None:
            out.append(None)
            continue
        attribute, kind, default, pairs, extra = t
        out.append(SplitTest.from_json({"attribute": attribute, "kind": kind, "default": default,
                                   "bin_children": from_runs(pairs).tolist(),
                                   ("thresholds" if kind == "numeric" else "groups"): extra}))
    return out


def naive_grown_to_json(tree) -> dict:
    tests = []
    for test in tree.tests:
        if test is None:
            tests.append(None)
            continue
        d = test.to_json()
        extra = d["thresholds"] if d["kind"] == "numeric" else d["groups"]
        tests.append([d["attribute"], d["kind"], d["default"], runs(d["bin_children"]), extra])
    out = {"layout": "columns", "depth": tree.depth.tolist(), "counts": tree.counts.tolist(),
           "children": [list(c) for c in tree.children], "tests": tests,
           "leaf": [tree.leaf_reason[i] if i < len(tree.leaf_reason) and tree.tests[i] is None else ""
                    for i in range(tree.n_nodes)]}
    if tree.validation is not None:
        out["validation"] = tree.validation.tolist()
    return out


def naive_routing(tree, widths):
    attribute = np.array([-1 if t is None else t.attribute for t in tree.tests], dtype=np.int32)
    offsets = np.zeros(tree.n_nodes, dtype=np.int64)
    tables, size = [], 0
    for i, test in enumerate(tree.tests):
        offsets[i] = size
        if test is not None:
            tables.append(np.asarray(tree.children[i], dtype=np.int64)[test.bin_children.astype(np.int64)])
            size += int(widths[test.attribute])
    table = np.concatenate(tables).astype(np.int32) if tables else np.zeros(1, np.int32)
    return attribute, offsets, table


def naive_check(tree, widths, where="m"):
    """The model check node by node, as it was before the columns."""
    n = tree.n_nodes
    parent = np.full(n, -1, dtype=np.int64)
    for i, (test, kids) in enumerate(zip(tree.tests, tree.children)):
        if test is None:
            if kids:
                raise DataError(f"{where}: leaf {i} has children")
            continue
        if len(kids) < 2 or any(not isinstance(c, int) or isinstance(c, bool) or not i < c < n for c in kids):
            raise DataError(f"{where}: node {i}'s children {kids[:5]} are not two or more later nodes")
        for c in kids:
            if parent[c] != -1:
                raise DataError(f"{where}: node {c} is the child of both node {parent[c]} and node {i}")
            parent[c] = i
        if not 0 <= test.attribute < widths.size:
            raise DataError(f"{where}: node {i} tests attribute {test.attribute}, of {widths.size}")
        table = test.bin_children
        if table.ndim != 1 or table.size != widths[test.attribute] or table.size == 0:
            raise DataError(f"{where}: node {i}'s code table has {table.size} entries for "
                            f"{int(widths[test.attribute])} codes")
        if not 0 <= test.default < len(kids):
            raise DataError(f"{where}: node {i}'s code table sends a code to a child it does not have")
        if test.kind not in ("numeric", "nominal"):
            raise DataError(f"{where}: node {i}'s test is of unknown kind {test.kind!r}")
    for i, (test, kids) in enumerate(zip(tree.tests, tree.children)):  # every table's codes, after every node
        if test is not None and (test.bin_children.min() < 0 or test.bin_children.max() >= len(kids)):
            raise DataError(f"{where}: node {i}'s code table sends a code to a child it does not have")
    if np.any(parent[1:] == -1):
        raise DataError(f"{where}: node {int(np.flatnonzero(parent[1:] == -1)[0]) + 1} is no node's child")


def _same_tests(got, want) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.to_json() == b.to_json() and a.bin_children.dtype == b.bin_children.dtype
            assert (a.arity, a.cut, a.identity) == (b.arity, b.cut, b.identity)


def _model(seed: int, regression: bool):
    return (random_regression_model if regression else random_model)(seed, max_nodes=60)


# ---------------------------------------------------------------- twins
@settings(max_examples=80, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), regression=st.booleans())
def test_columns_give_the_tests_the_per_test_code_gave(seed, regression):
    tree = _model(seed, regression).tree
    column = naive_grown_to_json(tree)["tests"]
    assert grown_to_json(tree) == naive_grown_to_json(tree)
    _same_tests(NodeTests.from_columns(json.loads(json.dumps(column))), naive_tests_from_columns(column))
    _same_tests(NodeTests.from_nodes([n.get("test") for n in json.loads(json.dumps(tree.to_json()))["nodes"]]),
                tree.tests)
    table = NodeTests.from_tests(tree.tests)
    assert list(table) == list(tree.tests) and table.n_leaves == tree.n_leaves
    loaded = grown_from_json(json.loads(json.dumps(grown_to_json(tree))))
    assert isinstance(loaded.tests, NodeTests) and loaded.to_json() == tree.to_json()
    assert grown_to_json(loaded) == grown_to_json(tree) and loaded.n_leaves == tree.n_leaves


@settings(max_examples=80, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), regression=st.booleans(),
       shared=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=30))
def test_tests_shared_by_nodes_give_each_node_its_own_tests_columns(seed, regression, shared):
    """A fit's nodes share their tests (one object at many nodes, as the grower makes each distinct test
    once): the columns read each distinct test once and give every node the runs, thresholds, table,
    attribute and default of its own test, as a table written out per node gave them."""
    tests = list(_model(seed, regression).tree.tests)
    inner = [i for i, t in enumerate(tests) if t is not None]
    for a, b in shared:
        if inner:
            tests[inner[a % len(inner)]] = tests[inner[b % len(inner)]]
    table = NodeTests.from_tests(tests)
    assert all(x is y for x, y in zip(table, tests)) and len(table) == len(tests)
    mine = [t for t in tests if t is not None]
    pairs = [runs(t.bin_children) for t in mine]
    assert table.run_value.tolist() == [v for p in pairs for v in p[0::2]]
    assert table.run_length.tolist() == [n for p in pairs for n in p[1::2]]
    assert np.diff(table.run_start)[inner].tolist() == [len(p) // 2 for p in pairs]
    written = np.concatenate([t.bin_children for t in mine]).astype(np.int16) if mine else np.zeros(0, np.int16)
    assert table.tables.dtype == np.int16 and np.array_equal(table.tables, written)
    assert table.thresholds.tolist() == [float(x) for t in mine for x in t.thresholds]
    assert table.attribute[inner].tolist() == [t.attribute for t in mine]
    assert table.default[inner].tolist() == [t.default for t in mine]
    assert [table.kind[i] for i in inner] == [t.kind for t in mine]

@settings(max_examples=80, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), regression=st.booleans())
def test_the_routing_plan_is_the_per_test_one(seed, regression):
    model = _model(seed, regression)
    loaded = grown_from_json(json.loads(json.dumps(grown_to_json(model.tree))))
    for tree in (model.tree, loaded):
        plan = tree.routing_plan(model.spec.widths)
        attribute, offsets, table = naive_routing(model.tree, model.spec.widths)
        np.testing.assert_array_equal(plan.entry_attribute, attribute)
        np.testing.assert_array_equal(plan.entry_offset, offsets)
        np.testing.assert_array_equal(plan.table, table)
        assert plan.table.dtype == np.int32 and plan.entry_attribute.dtype == np.int32 and plan.entry_offset.dtype == np.int64


def _valid(tree: TreeModel) -> TreeModel:
    """``tree`` with every inner node's counts its children's sum (as a fit's)."""
    counts = tree.counts.copy()
    for i in range(tree.n_nodes - 1, -1, -1):
        if tree.children[i]:
            counts[i] = counts[tree.children[i]].sum(axis=0)
    return TreeModel(list(tree.tests), [list(c) for c in tree.children], counts, tree.depth)


DAMAGE = ["child", "swap", "leaf child", "attribute", "default", "kind", "table", "short table", "none"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), damage=st.sampled_from(DAMAGE), pick=st.integers(0, 10**6),
       value=st.integers(-3, 70))
def test_the_check_of_every_node_at_once_names_what_the_node_by_node_check_named(seed, damage, pick, value):
    model = random_model(seed, max_nodes=60)
    tree = _valid(model.tree)
    widths = model.spec.widths
    inner = [i for i, t in enumerate(tree.tests) if t is not None]
    leaves = [i for i, t in enumerate(tree.tests) if t is None]
    tests, children = list(tree.tests), [list(c) for c in tree.children]
    if inner:
        i = inner[pick % len(inner)]
        t = tests[i]
        if damage == "child":
            children[i][pick % len(children[i])] = value
        elif damage == "swap" and len(inner) > 1:
            j = inner[(pick + 1) % len(inner)]
            children[i][0], children[j][0] = children[j][0], children[i][0]
        elif damage == "leaf child":
            children[leaves[pick % len(leaves)]] = [value]
        elif damage in ("attribute", "default", "kind", "table", "short table"):
            table = t.bin_children.copy()
            if damage == "table":
                table[pick % table.size] = value
            elif damage == "short table":
                table = table[:value % (table.size + 1)]
            tests[i] = SplitTest(value if damage == "attribute" else t.attribute,
                            "other" if damage == "kind" else t.kind, table,
                            value if damage == "default" else t.default, t.thresholds, t.groups)
    damaged = TreeModel(tests, children, tree.counts, tree.depth)

    def outcome(check, t):
        try:
            check(t)
        except (DataError, IndexError) as exc:  # the naive twin's own IndexError on a child past the end
            return type(exc).__name__, str(exc)
        return None

    want = outcome(lambda t: naive_check(t, widths), damaged)
    if want is not None and want[0] == "IndexError":
        return  # a bad child index the twin itself trips on; the check's own message is tested below
    as_columns = TreeModel(NodeTests.from_tests(tests), children, tree.counts, tree.depth)
    for t in (damaged, as_columns):
        got = outcome(lambda t: _check_tree(t, widths, tree.counts.shape[1], "m"), t)
        if want is None:
            assert got is None or "not the sum of its children's" in got[1]
        else:
            assert got == want


def test_a_child_past_the_last_node_is_named():
    model = full_binary_model(2)
    tree = model.tree
    children = [list(c) for c in tree.children]
    children[2] = [5, 99]
    with pytest.raises(DataError, match=r"node 2's children \[5, 99\] are not two or more later nodes"):
        _check_tree(TreeModel(tree.tests, children, tree.counts, tree.depth), model.spec.widths, 3, "m")


@pytest.mark.parametrize("column, message", [
    ([[0, "numeric", 0, [0, 1, 1], [1.0]]], "runs are not"),
    ([[0, "numeric", 0, [0, 0, 1, 2], [1.0]]], "length below 1"),
    ([[0, "numeric", 0, [0, 1, 40000, 2], [1.0]]], "beyond int16"),
    ([[0, "numeric", 0, [0, 1, 1, 2]]], "a test is"),
    ([[0, "numeric", 0, [0, 1, 1, 2], ["x"]]], "could not convert|invalid literal"),
    ([[0, "nominal", 0, [0, 1, 1, 2], [[1.5], [2]]]], "integer"),
    ({"a": 1}, "a list"),
])
def test_malformed_columns_fail_when_read_not_when_a_test_is(column, message):
    with pytest.raises((ValueError, TypeError), match=message):
        NodeTests.from_columns(column)


# ---------------------------------------------------------------- files
@pytest.mark.parametrize("task, depth", [("classification", 16), ("regression", 12)])
def test_a_30000_leaf_model_loads_without_making_a_test(task, depth, tmp_path, monkeypatch, capsys):
    """``dasktree show``'s path on a model of 32,768 leaves (and its 65,536-leaf grown tree; a regression
    model 16 times smaller): loading makes no ``Test``, reading one makes it once, and printing makes none
    (the branch labels are read from the columns), of the shown tree or the grown tree. No time is measured
    here (``benchmarks/show.py`` does)."""
    model = full_binary_model(depth, task=task, bins=255, pruned_at=depth - 1, n_features=6)
    assert model.tree.n_leaves == 2 ** (depth - 1) and model.full_tree.n_leaves == 2**depth
    path = tmp_path / "m.json"
    model.save(path)
    made = []
    make = NodeTests._make
    monkeypatch.setattr(NodeTests, "_make", lambda self, i: made.append(i) or make(self, i))
    loaded = load(path)
    assert made == [] and loaded.tree.n_leaves == model.tree.n_leaves
    assert loaded.full_tree.tests._tables is None  # the grown tree's code tables stay runs
    assert [loaded.tree.tests[i] for i in (0, 1)] and made == [0, 1]  # made when read, once each
    assert [loaded.tree.tests[i] for i in (0, 1)] and made == [0, 1]
    text = export_text(loaded)
    assert made == [0, 1]  # the text reads the columns
    assert text == export_text(model)
    assert main(["show", str(path)]) == 0
    assert capsys.readouterr().out == text


def test_the_model_file_writes_every_tree_as_arrays():
    model = full_binary_model(3)
    d = json.loads(model.dumps())
    assert d["version"] == VERSION == 7 and READS[-1] == VERSION
    assert d["tree"]["layout"] == "arrays" and d["tree"] == arrays_to_json(model.tree)


def test_the_kept_trees_are_saved_as_json_texts_and_shown_as_objects(tmp_path, capsys):
    """Format versions 5 and 6: the grown tree and the fold trees, which ``show`` does not print, are each a
    JSON text in the file (read as one string by a reader that does not use them); ``show --format json``
    prints them as objects (their columns as lists of numbers), and a file holding them as objects loads the
    same."""
    model = dataclasses.replace(full_binary_model(5, pruned_at=3), fold_trees=[full_binary_model(2).tree])
    d = json.loads(model.dumps())
    assert isinstance(d["full_tree"], str) and json.loads(d["full_tree"]) == arrays_to_json(model.full_tree)
    assert [json.loads(t) for t in d["fold_trees"]] == [arrays_to_json(model.fold_trees[0])]
    path = tmp_path / "m.json"
    model.save(path)
    assert main(["show", str(path), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["full_tree"] == arrays_to_json(model.full_tree, binary=False)
    assert shown["fold_trees"][0]["layout"] == "arrays"
    (tmp_path / "shown.json").write_text(json.dumps(shown))
    assert load(tmp_path / "shown.json").dumps() == model.dumps()
    d["full_tree"] = d["full_tree"][:-1]  # its text cut short: damaged, said in one line
    (tmp_path / "cut.json").write_text(json.dumps(d))
    with pytest.raises(DataError, match="cut.json: malformed model: full_tree: not JSON"):
        load(tmp_path / "cut.json")


FIXTURES = sorted(p for p in os.listdir(DATA) if p.startswith("model-v") and not p.endswith(".expected.json"))


def test_the_previous_formats_have_their_fixtures():
    assert FIXTURES == [f"model-v{v}-{task}.json" for v in (3, 4, 5) for task in ("classification", "regression")]


@pytest.mark.parametrize("name", FIXTURES)
def test_a_file_of_a_previous_format_loads_as_it_did(name, tmp_path):
    """A file a previous version (format version 3, 4 or 5) wrote, ``tests/data/model-v3-*.json``,
    ``model-v4-*.json`` and ``model-v5-*.json`` (the version 4 files loaded and saved again by version 5),
    and beside it that version's text and predictions of it (``.expected.json``,
    which says how the model was fitted: cv=3 with its fold trees kept, pruned, so it holds a pruned tree,
    its grown tree and fold trees) load to the same trees, text and predictions, eagerly and as ``show``
    reads them, and save again in this version's format."""
    import pyarrow as pa

    from dasktree.testing import mixed_frame
    from dasktree.testing.data import regression_frame

    path = DATA / name
    old = json.loads(path.read_text())
    expected = json.loads((DATA / name.replace(".json", ".expected.json")).read_text())
    version = int(name[len("model-v")])
    assert old["version"] == version and old["fold_trees"] and "full_tree" in old
    as_saved = (lambda t: t.to_json()) if version == 3 else grown_to_json  # version 3: a node list
    assert ("nodes" in old["tree"]) == (version == 3)
    model = load(path)
    assert as_saved(model.tree) == old["tree"]
    kept = (lambda raw: json.loads(raw)) if version == 5 else (lambda raw: raw)  # version 5: JSON texts
    assert [as_saved(t) for t in model.fold_trees] == [kept(t) for t in old["fold_trees"]]
    assert grown_to_json(model.full_tree) == kept(old["full_tree"])
    assert export_text(model) == expected["text"] == export_text(load(path, lazy=True))
    frame = (mixed_frame(600, seed=5).drop(columns=["label"]) if "classification" in name
             else regression_frame(600, seed=5).drop(columns=["y"]))
    values = model.predict_values(pa.Table.from_pandas(frame, preserve_index=False))
    np.testing.assert_array_equal(values, np.asarray(expected["predict_values"]))
    again = tmp_path / "again.json"
    model.save(again)
    assert load(again).dumps() == model.dumps() and json.loads(again.read_text())["version"] == VERSION
    assert as_saved(Model.from_json(json.loads(model.dumps())).tree) == old["tree"]
    assert load(again, lazy=True).dumps() == model.dumps()


def test_node_tests_is_a_sequence_of_tests():
    tree = full_binary_model(2).tree
    table = grown_from_json(grown_to_json(tree)).tests
    assert isinstance(table, node_table.NodeTests) and len(table) == 7
    assert table[-1] is None and table[0].to_json() == tree.tests[0].to_json() and table[0] is table[0]
    assert [t is None for t in table[1:4]] == [False, False, True]
    with pytest.raises(IndexError):
        table[7]
