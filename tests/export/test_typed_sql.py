"""Dates, timestamps and decimals: dasktree reads them as numbers (days, units since 1970, doubles);
the SQL export given the columns' types compares them with DATE / TIMESTAMP literals and sends
every row, at the thresholds too, where dasktree sends it. ONNX and PMML take the numbers."""

import datetime
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dasktree
from dasktree.cli import main
from dasktree.errors import InputError
from dasktree.export.sql import sql_select
from dasktree.export.sql_types import count_bound
from dasktree.testing.exports import edge_rows, missing_engine, reference, score_onnx, score_pmml

duckdb = pytest.importorskip("duckdb")


def _table(n, seed):
    rng = np.random.default_rng(seed)
    days = rng.integers(17000, 19000, size=n)
    micros = rng.integers(1_500_000_000_000_000, 1_600_000_000_000_000, size=n)
    nanos = rng.integers(1_500_000_000_000_000_000, 1_600_000_000_000_000_000, size=n)
    cents = rng.integers(-100_000, 100_000, size=n)
    label = np.where((days > 18000) ^ (micros % 7 > 3), "a", np.where(nanos > 1.55e18, "b", "c"))
    label = np.where(cents > 50_000, "c", label)
    return pa.table({
        "day": pa.array(days.astype("int32"), pa.date32()),
        "at": pa.array(micros, pa.timestamp("us")),
        "at_ns": pa.array(nanos, pa.timestamp("ns")),
        "at_utc": pa.array(micros // 1000, pa.timestamp("ms", tz="UTC")),
        "amount": pa.array([decimal.Decimal(int(c)).scaleb(-2) for c in cents], pa.decimal128(12, 2)),
        "label": pa.array(label),
    })


@pytest.fixture(scope="module")
def fitted():
    table = _table(3000, 0)
    model = dasktree.fit(table.to_pandas(), target="label", scheduler="inprocess", max_depth=6)
    held_out = _table(800, 1).drop_columns(["label"])
    return model, held_out, edge_rows(model, held_out.to_pandas())


def _duckdb(model, table, types, dialect="duckdb"):
    con = duckdb.connect()
    con.register("held_out", table)
    out = con.sql(sql_select(model, table="held_out", keep=(), dialect=dialect, types=types)).to_arrow_table()
    labels = out.column("prediction").to_pylist()
    return labels, np.column_stack([out.column(f"proba_{c}").to_numpy() for c in model.classes])


def test_the_tree_tests_every_temporal_column(fitted):
    model = fitted[0]
    tested = {model.spec.features[t.attribute].name for t in model.tree.tests if t is not None}
    assert tested >= {"day", "at", "at_ns", "amount"}


def test_typed_sql_predicts_as_dasktree_at_every_threshold(fitted):
    model, held_out, edges = fitted
    for table in (held_out, _typed_like(edges, held_out.schema), _at_count_bounds(model, held_out)):
        labels, proba = _duckdb(model, table, held_out.schema)
        want_labels, want_proba = reference(model, table)
        assert labels == want_labels
        np.testing.assert_array_equal(proba, want_proba)
    sql = sql_select(model, types=held_out.schema, dialect="duckdb")
    assert "DATE '" in sql and "TIMESTAMP '" in sql and "isnan(\"day\")" not in sql


def _at_count_bounds(model, held_out: pa.Table) -> pa.Table:
    """Rows whose temporal count is the last one dasktree (reading counts as doubles) sends left of a
    threshold, and the next: nanosecond counts beyond 2**53 round to doubles 256 apart."""
    parts = []
    for test in model.tree.tests:
        if test is None:
            continue
        field = held_out.schema.field(model.spec.features[test.attribute].name)
        if not pa.types.is_timestamp(field.type) and not pa.types.is_date32(field.type):
            continue
        for t in test.thresholds:
            for count in (count_bound(t) - 1, count_bound(t), count_bound(t) + 1):
                row = held_out.slice(len(parts) % held_out.num_rows, 1)
                k = row.schema.get_field_index(field.name)
                storage = pa.int64() if pa.types.is_timestamp(field.type) else pa.int32()
                parts.append(row.set_column(k, field.name, pa.array([count], storage).cast(field.type)))
    assert any(c % 1000 for p in parts for c in p.column("at_ns").cast(pa.int64()).to_pylist())
    return pa.concat_tables(parts)


def _typed_like(edges: pa.Table, schema: pa.Schema) -> pa.Table:
    """Edge rows (numbers at each threshold, floored as dasktree floors nothing: the counts are
    integers) back in the columns' own types."""
    columns = {}
    for field in schema:
        values = edges.column(field.name)
        if pa.types.is_date(field.type) or pa.types.is_timestamp(field.type):
            if not pa.types.is_integer(values.type) and not pa.types.is_temporal(values.type):
                values = pa.array([None if v is None or v != v else int(np.floor(v)) for v in values.to_pylist()], pa.int64())
            values = values.cast(pa.int64() if pa.types.is_timestamp(field.type) else pa.int32()).cast(field.type)
        else:
            values = values.cast(field.type) if not pa.types.is_decimal(field.type) else values
        columns[field.name] = values
    return pa.table(columns)


def test_onnx_and_pmml_take_the_numbers(fitted):
    for fmt in ("onnx", "pmml"):
        if missing_engine(fmt):
            pytest.skip(missing_engine(fmt))
    model, held_out, _ = fitted
    want_labels, want_proba = reference(model, held_out)
    for score in (score_onnx, score_pmml):
        labels, proba = score(model, held_out)
        assert labels == want_labels
        np.testing.assert_array_equal(proba, want_proba)


def test_types_sqlite_cannot_hold_are_refused(fitted, tmp_path, capsys):
    model, held_out, _ = fitted
    with pytest.raises(InputError, match="SQLite has no date or timestamp type"):
        sql_select(model, dialect="sqlite", types=held_out.schema)
    with pytest.raises(InputError, match="durations only as numbers"):
        sql_select(model, types={"day": pa.duration("s")})
    path = tmp_path / "m.json"
    model.save(path)
    data = tmp_path / "data.parquet"
    import pyarrow.parquet as pq

    pq.write_table(held_out, data)
    out = tmp_path / "m.sql"
    assert main(["export", str(path), "--format", "sql", "--out", str(out), "--types-from", str(data)]) == 1
    assert "only DuckDB's TIMESTAMP_NS holds" in capsys.readouterr().err  # nanosecond thresholds, ANSI SQL
    assert main(["export", str(path), "--format", "sql", "--out", str(out), "--types-from", str(data),
                 "--dialect", "duckdb"]) == 0
    assert "DATE '" in out.read_text() and "TIMESTAMP_NS '" in out.read_text()
    assert main(["export", str(path), "--format", "sql", "--out", str(tmp_path / "x.sql"), "--dialect", "sqlite",
                 "--types-from", str(data)]) == 1
    assert "SQLite has no date" in capsys.readouterr().err
    assert not (tmp_path / "x.sql").exists()
