"""A numpy array of numbers and its labels become the Arrow table their DataFrame's conversion makes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dasktree import DaskTreeClassifier, DaskTreeRegressor
from dasktree.io.sources import array_table, frame_to_table, open_source
from tests.gathering import model_bytes

DTYPES = ["float64", "float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bool"]


def through_pandas(X: np.ndarray, y: np.ndarray, target: str | None) -> "pa.Table":  # noqa: F821
    """The twin: the DataFrame of ``X`` with ``y`` as a column, converted as any DataFrame is."""
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    name = target or "target"
    while name in frame.columns:
        name = "_" + name
    return frame_to_table(frame.assign(**{name: y}))


@st.composite
def inputs(draw):
    rows, columns = draw(st.integers(0, 30)), draw(st.integers(1, 4))
    X = draw(hnp.arrays(np.dtype(draw(st.sampled_from(DTYPES))), (rows, columns)))
    if draw(st.booleans()):
        X = np.asfortranarray(X)
    y = draw(hnp.arrays(np.dtype(draw(st.sampled_from(DTYPES))), rows))
    return X, y, draw(st.sampled_from([None, "target", "x0", "label"]))


@settings(max_examples=60, deadline=None)
@given(inputs())
def test_array_table_is_the_dataframes_table(case):
    X, y, target = case
    ours, twin = array_table(X, y, target), through_pandas(X, y, target)
    assert ours.schema == twin.schema.remove_metadata()
    assert ours.equals(twin)
    for name in ours.column_names:  # NaN is a null both ways; the other values bit for bit
        assert ours.column(name).null_count == twin.column(name).null_count


def test_other_inputs_go_through_their_dataframe():
    X = np.arange(6.0).reshape(3, 2)
    assert array_table(X, np.array(["a", "b", "a"]), None) is None  # labels as strings
    assert array_table(X.astype(object), np.array([0, 1, 0]), None) is None
    assert array_table(X, pd.Series([0, 1, 0]), None) is None
    source, target = open_source(X, np.array(["a", "b", "a"]))
    assert target == "target" and source.table.column("target").to_pylist() == ["a", "b", "a"]


def test_rows_must_agree():
    with pytest.raises(Exception, match="X has 3 rows but y has 2"):
        open_source(np.zeros((3, 2)), np.array([0, 1]))


@pytest.mark.parametrize("make", [DaskTreeClassifier, DaskTreeRegressor])
def test_a_numpy_fit_is_its_dataframes_fit(make):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (X[:, 0] > 0).astype(np.int64) if make is DaskTreeClassifier else rng.normal(size=400)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"])
    assert model_bytes(make(cv=3).fit(X, y).model_) == model_bytes(make(cv=3).fit(frame, y).model_)
