"""Model format version 7: the report's cp table as typed columns (``dasktree.model.grown_json``'s
``rows_to_json``). The same rows back, of the same types; a file of version 6 (the table a list of rows)
loads to the same model; a damaged column is one line."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree import DaskTreeRegressor
from dasktree.cli import main
from dasktree.errors import DataError
from dasktree.model.grown_json import rows_from_json, rows_to_json
from dasktree.model.model import VERSION, Model, load

VALUES = {
    "int": st.integers(-2**70, 2**70),
    "float": st.floats(allow_nan=True, allow_infinity=True),
    "none": st.none(),
    "mixed": st.one_of(st.integers(-5, 5), st.floats(-1, 1), st.none(), st.text(max_size=3)),
}


@st.composite
def tables(draw):
    keys = draw(st.lists(st.text(min_size=1, max_size=4), max_size=4, unique=True))
    kinds = [draw(st.sampled_from(sorted(VALUES))) for _ in keys]
    n = draw(st.integers(0, 30))
    return [{k: draw(VALUES[kind]) for k, kind in zip(keys, kinds)} for _ in range(n)]


def _same(a, b) -> bool:
    """Equal rows of equal types (a NaN equal to a NaN), ``b``'s keys sorted (as a file's JSON orders them)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and sorted(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=150, deadline=None)
@given(tables())
def test_the_columns_give_the_rows_back(rows):
    d = rows_to_json(rows)
    text = json.dumps(d)  # NaN and infinities stay in the lists they are written as
    assert _same(rows, rows_from_json(json.loads(text)))


def test_whole_numbers_and_floats_are_typed_and_none_is_null():
    rows = [{"alpha": 0.5 * i, "leaves": 100 - i, "cv_error": None} for i in range(5)]
    d = rows_to_json(rows)
    assert d["columns"]["alpha"]["dtype"] == "<f8" and d["columns"]["leaves"]["dtype"] == "<i1"
    assert d["columns"]["cv_error"] is None and rows_from_json(d) == rows


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = 3 * np.sin(X[:, 0]) + X[:, 1] + rng.normal(size=600)
    return DaskTreeRegressor(cv=3).fit(X, y).model_


def test_a_saved_cv_model_holds_its_cp_table_as_columns_and_loads_the_same(fitted, tmp_path):
    path = tmp_path / "m.json"
    fitted.save(path)
    d = json.loads(path.read_text())
    table = d["report"]["prune"]["cp_table"]
    assert d["version"] == VERSION == 7 and table["layout"] == "arrays"
    assert table["rows"] == len(fitted.report["prune"]["cp_table"]) > 10
    loaded = load(path)
    assert loaded.report == fitted.report and loaded.dumps() == fitted.dumps()
    readable = fitted.to_json(kept_as_text=False)  # show --format json: the rows as they are
    assert readable["report"]["prune"]["cp_table"] == fitted.report["prune"]["cp_table"]


def test_a_version_6_file_with_its_table_as_rows_loads_to_the_same_model(fitted, tmp_path):
    d = json.loads(fitted.dumps())
    d["version"] = 6
    d["report"]["prune"]["cp_table"] = fitted.report["prune"]["cp_table"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(d))
    loaded = load(path)
    assert loaded.report == fitted.report and loaded.dumps() == fitted.dumps()


@pytest.mark.parametrize("damage, said", [
    (lambda t: {**t, "rows": t["rows"] + 1}, "has .* entries for"),
    (lambda t: {**t, "keys": t["keys"][:-1]}, "rows, keys and columns disagree"),
    (lambda t: {**t, "columns": {**t["columns"], "alpha": {"dtype": "<f8", "base64": "!!"}}}, "base64"),
    (lambda t: {**t, "layout": "rows"}, "is a list of rows or"),
])
def test_a_damaged_table_is_one_line(fitted, damage, said, tmp_path, capsys):
    d = json.loads(fitted.dumps())
    d["report"]["prune"]["cp_table"] = damage(d["report"]["prune"]["cp_table"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(DataError, match=f"bad.json: malformed model: .*{said}"):
        Model.from_json(json.loads(path.read_text()), where=str(path))
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed model" in err
