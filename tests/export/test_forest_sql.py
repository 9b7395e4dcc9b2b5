"""A forest's SQL (DuckDB) predicts every row as the forest does: the same mean probabilities, to
the bit, and the same labels."""

import numpy as np
import pyarrow as pa
import pytest

import dasktree
from dasktree.export.forest_sql import forest_sql_select
from dasktree.testing import mixed_frame

duckdb = pytest.importorskip("duckdb")


def test_the_sql_forest_predicts_every_row_as_the_forest():
    forest = dasktree.fit_forest(mixed_frame(2500, seed=7), target="label", n_estimators=5, max_depth=5,
                                 random_state=4)
    table = pa.Table.from_pandas(mixed_frame(1500, seed=9).drop(columns=["label"]), preserve_index=False)
    con = duckdb.connect()
    try:
        con.register("held_out", table)
        result = con.sql(forest_sql_select(forest, table="held_out", dialect="duckdb", keep=())).to_arrow_table()
    finally:
        con.close()
    expected = forest.predict_proba_table(table)
    got = np.column_stack([result.column(f"proba_{c}").to_numpy() for c in forest.classes])
    np.testing.assert_array_equal(got, expected)
    labels = np.asarray(forest.classes)[np.argmax(expected, axis=1)]
    assert result.column("prediction").to_pylist() == labels.tolist()


def test_the_sql_regression_forest_predicts_every_row_as_the_forest():
    frame = mixed_frame(2500, seed=7)
    forest = dasktree.fit_forest_regression(frame.drop(columns=["label"]), target="x", n_estimators=5, max_depth=5,
                                            random_state=4)
    table = pa.Table.from_pandas(mixed_frame(1500, seed=9).drop(columns=["label", "x"]), preserve_index=False)
    con = duckdb.connect()
    try:
        con.register("held_out", table)
        result = con.sql(forest_sql_select(forest, table="held_out", dialect="duckdb", keep=())).to_arrow_table()
    finally:
        con.close()
    assert result.column_names == ["prediction"]
    np.testing.assert_array_equal(result.column("prediction").to_numpy(), forest.predict_values(table))
