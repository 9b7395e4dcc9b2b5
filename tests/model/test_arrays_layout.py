"""Model format version 6 and on: every tree as typed arrays (``dasktree.model.grown_json``'s ``arrays`` layout).
The same tree back in both forms (base64 as saved, lists as ``show --format json`` prints), each column in
the narrowest integer type, and a damaged column one line naming what is wrong."""

import base64
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.cli import main
from dasktree.errors import DataError
from dasktree.model.grown_json import arrays_to_json, grown_from_json, grown_to_json
from dasktree.model.model import VERSION, Model, load
from dasktree.model.text import export_text
from dasktree.testing.exports import full_binary_model, random_model, random_regression_model


def _same_tree(got, want) -> None:
    assert got.to_json() == want.to_json()  # depth, counts, validation, children, leaf reasons, every test
    assert grown_to_json(got) == grown_to_json(want)  # the tests' groups too
    assert got.links()[0].tolist() == [len(k) for k in want.children]


@settings(max_examples=80, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), regression=st.booleans(), binary=st.booleans())
def test_the_arrays_give_the_tree_back(seed, regression, binary):
    """Random trees (multi-way, nominal groups, empty nodes, every default child), through JSON text."""
    model = (random_regression_model if regression else random_model)(seed, max_nodes=60)
    d = json.loads(json.dumps(arrays_to_json(model.tree, binary=binary)))
    assert all(isinstance(v, dict) for k, v in d.items() if k in ("counts", "children", "thresholds")) == binary
    _same_tree(grown_from_json(d), model.tree)


def test_a_saved_model_is_arrays_and_loads_to_the_same_model(tmp_path, capsys):
    model = full_binary_model(6, pruned_at=4)
    d = json.loads(model.dumps())
    assert d["version"] == VERSION == 7 and d["tree"]["layout"] == "arrays"
    assert d["tree"]["depth"]["dtype"] == "<i1" and d["tree"]["thresholds"]["dtype"] == "<f8"
    assert json.loads(d["full_tree"])["layout"] == "arrays"  # the grown tree still a JSON text, read lazily
    path = tmp_path / "m.json"
    model.save(path)
    loaded = load(path)
    _same_tree(loaded.tree, model.tree)
    _same_tree(loaded.full_tree, model.full_tree)
    assert loaded.dumps() == model.dumps() and export_text(loaded) == export_text(model)
    assert main(["show", str(path), "--format", "json"]) == 0  # readable: every column a list of numbers
    shown = json.loads(capsys.readouterr().out)
    assert shown["tree"]["depth"] == model.tree.depth.tolist() and isinstance(shown["full_tree"], dict)
    (tmp_path / "shown.json").write_text(json.dumps(shown))
    assert load(tmp_path / "shown.json").dumps() == model.dumps()


def test_counts_wider_than_a_small_integer_keep_their_type():
    model = full_binary_model(2)
    model.tree.counts[0, 0] = 2**40  # not a sum any more: only the column's type is looked at here
    d = arrays_to_json(model.tree)
    assert d["counts"]["dtype"] == "<i8" and grown_from_json(d).counts[0, 0] == 2**40


def _b64(values, dtype) -> dict:
    return {"dtype": dtype, "base64": base64.b64encode(np.asarray(values, dtype=dtype).tobytes()).decode()}


DAMAGES = {  # column -> (new value or a function of the tree's JSON, what the one line says)
    "base64": (lambda t: {**t["depth"], "base64": t["depth"]["base64"][:-2] + "!!"}, "base64 is damaged"),
    "dtype": (lambda t: {**t["depth"], "dtype": "<u8"}, "a column is a list of numbers or"),
    "ragged": (lambda t: {**t["counts"], "base64": base64.b64encode(b"\x01\x02\x03").decode()},
               "not a whole number of|not a multiple of"),
    "short": (lambda t: t["depth"] | {"base64": base64.b64encode(base64.b64decode(t["depth"]["base64"])[:-1]).decode()},
              "the column depth has 6 entries for 7 nodes"),
    "bools": (lambda t: [True] * 7, "a column holds other than integers"),
    "nan": (lambda t: _b64([np.nan, 1.0, 2.0], "<f8"), "not finite"),
    "children": (lambda t: _b64([2, 2, 0, 0, 0, 0, 0], "<i1"), "counts of children do not add up"),
    "kind": (lambda t: _b64([0, 0, 0, 5, -1, -1, -1], "<i1"), "kind or leaf reason is none of the file's"),
    "leaf test": (lambda t: _b64([0, 0, 0, 1, 1, 1, 1], "<i1"), "a leaf has a test's"),
    "run length": (lambda t: _b64(np.zeros(len(base64.b64decode(t["run_length"]["base64"]))), "<i1"),
                   "run has a length below 1"),
}
COLUMN = {"base64": "depth", "dtype": "depth", "ragged": "counts", "short": "depth", "bools": "depth",
          "nan": "thresholds", "children": "child_count", "kind": "kind", "leaf test": "attribute",
          "run length": "run_length"}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_column_is_one_line(damage, tmp_path, capsys):
    model = full_binary_model(2, n_features=2)  # 7 nodes, 3 tests of one threshold
    d = json.loads(model.dumps())
    make, said = DAMAGES[damage]
    d["tree"][COLUMN[damage]] = make(d["tree"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(DataError, match=f"bad.json: malformed model: .*({said})"):
        load(path)
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed model" in err


def test_a_version_6_model_of_json_lists_is_checked_as_any(tmp_path):
    """The readable form goes through the same check: a child named twice is refused by name."""
    model = full_binary_model(2)
    d = model.to_json(kept_as_text=False)
    d["tree"]["children"][2] = 1  # node 0's children [1, 1]: node 2 is no node's child
    with pytest.raises(DataError, match="malformed model: tree"):
        Model.from_json(json.loads(json.dumps(d)))
