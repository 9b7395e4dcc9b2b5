"""Hypothesis: random trees (every kind of test dasktree grows, every default child, empty groups,
``__other__``) on random rows (at every edge, beside it, NaN, null, unseen categories): each
export predicts the class and the probabilities dasktree predicts, row for row."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dasktree.testing.exports import (missing_engine, random_model, random_rows, reference, score_duckdb,
                                      score_onnx, score_pmml, score_sqlite)

SCORERS = {
    "duckdb": score_duckdb,
    "sqlite": score_sqlite,
    "ansi-in-duckdb": lambda m, t: score_duckdb(m, t, dialect="ansi"),
    "duckdb-flat": lambda m, t: score_duckdb(m, t, shape="flat"),
    # DuckDB's parser is PostgreSQL's: the postgres dialect's NaN test and types, short of a server
    "postgres-in-duckdb": lambda m, t: score_duckdb(m, t, dialect="postgres"),
    "sqlite-nested": lambda m, t: score_sqlite(m, t, shape="nested"),
    "onnx": score_onnx,
    "pmml": score_pmml,
}
EXAMPLES = {"pmml": 15}


def _same(model, table, scorer):
    labels, proba = scorer(model, table)
    want_labels, want_proba = reference(model, table)
    assert labels == want_labels
    np.testing.assert_array_equal(proba, want_proba)


@pytest.mark.parametrize("name", list(SCORERS))
def test_random_trees_and_rows(name):
    engine = {"ansi-in-duckdb": "duckdb", "duckdb-flat": "duckdb", "postgres-in-duckdb": "duckdb",
              "sqlite-nested": "sqlite"}.get(name, name)
    if missing_engine(engine):
        pytest.skip(missing_engine(engine))

    @settings(max_examples=EXAMPLES.get(name, 40), deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**32 - 1))
    def check(seed):
        model = random_model(seed)
        table = random_rows(model, 60, seed + 1)
        if name == "ansi-in-duckdb":  # ANSI knows NULL, not NaN (DuckDB's NaN is above every number)
            table = _nan_as_null(table)
        _same(model, table, SCORERS[name])

    check()


def _nan_as_null(table):
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = {}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_floating(col.type):
            col = pc.if_else(pc.is_nan(col), pa.scalar(None, col.type), col)
        columns[name] = col
    return pa.table(columns)
