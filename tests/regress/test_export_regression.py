"""Every export of a regression tree predicts the very doubles ``Model.predict_values``
gives, row for row: trees grown on several datasets (missing values, nominal attributes with
``__other__``, quantile bins, targets of every scale) scored on held-out rows, rows at each
threshold and the doubles either side, null and NaN, unseen categories; and random trees on
random rows (hypothesis). SQL in DuckDB and SQLite, ONNX in onnxruntime, PMML in JPMML."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dasktree import fit_regression
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import (edge_rows, missing_engine, random_regression_model, random_rows, reference,
                                      score_duckdb, score_onnx, score_pmml, score_sqlite)


def _mixed(n, seed):
    """Numeric with NaN, integer, nominal with nulls, boolean; y from all of them."""
    frame = mixed_frame(n, seed).drop(columns=["label"])
    rng = np.random.default_rng(seed + 100)
    frame["y"] = (2.0 * frame["x"].fillna(-1.0) + (frame["colour"] == "red") * 3.0 - (frame["k"] > 30) * 1.5
                  + frame["flag"] * 0.7 + rng.normal(scale=0.3, size=n))
    return frame


def _categories(n, seed):
    """Fourteen cities (six kept by max_categories, the rest ``__other__``), nulls; y by city and x."""
    rng = np.random.default_rng(seed)
    weights = np.linspace(2, 0.2, 14)
    city = rng.choice([f"city-{i:02d}" for i in range(14)], size=n, p=weights / weights.sum())
    x = rng.normal(size=n)
    level = {f"city-{i:02d}": (i * 7) % 5 for i in range(14)}
    y = np.array([level[c] for c in city], dtype=np.float64) * 10.0 + np.where(x > 0.3, 4.0, 0.0) + rng.normal(size=n)
    frame = pd.DataFrame({"city": city, "x": x, "y": y})
    frame.loc[rng.random(n) < 0.05, "city"] = None
    return frame


def _continuous(n, seed):
    """Every value distinct (quantile bin edges), a target in the millions with a fraction."""
    rng = np.random.default_rng(seed)
    X = rng.lognormal(size=(n, 3))
    y = 1e6 * X[:, 0] * X[:, 1] + 1e3 * np.sin(X[:, 2]) + rng.normal(size=n)
    return pd.DataFrame({"u": X[:, 0], "v": X[:, 1], "w": X[:, 2], "y": y})


def _counts(n, seed):
    """Integer features with ties at every threshold; a small integer target (poisson)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 40, size=n)
    b = rng.integers(-5, 5, size=n)
    y = rng.poisson(1.0 + (a > 20) * 3.0 + (b < 0) * 2.0)
    return pd.DataFrame({"a": a.astype(np.int64), "b": b.astype(np.int32), "y": y.astype(np.int64)})


def _tiny(n, seed):
    """A target of tiny magnitude and range: every value far from 1."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": 1e-12 * (x > 0) + 3e-13 * x + 1e-9})


DATASETS = {  # name: (frame maker, fit parameters); grown trees (prune "none"): every kind of test to export
    "mixed": (_mixed, {"max_depth": 6, "prune": "none"}),
    "mixed-pruned": (_mixed, {"max_depth": 8, "cv": 4, "prune": "cv"}),
    "categories": (_categories, {"max_depth": 5, "max_categories": 6, "prune": "none"}),
    "quantile": (_continuous, {"max_depth": 6, "max_bins": 16, "prune": "none"}),
    "poisson": (_counts, {"max_depth": 5, "criterion": "poisson", "min_samples_leaf": 5, "prune": "none"}),
    "tiny": (_tiny, {"max_depth": 4, "max_leaf_nodes": 6, "prune": "none"}),
}


@pytest.fixture(scope="module")
def fitted():
    out = {}
    for name, (make, params) in DATASETS.items():
        nominal = ["flag"] if "flag" in make(10, 0) else []
        model = fit_regression(make(2500, 0), target="y", nominal=nominal, scheduler="inprocess", **params)
        held_out = make(1200, 1).drop(columns=["y"])
        if name.startswith("mixed"):  # a nominal boolean with nulls: dasktree reads it as "true" / "false"
            held_out["flag"] = held_out["flag"].astype(object).where(np.arange(len(held_out)) % 17 != 0, None)
        plain = pa.Table.from_pandas(held_out, preserve_index=False)
        tables = [plain, edge_rows(model, held_out)]
        if name == "categories":  # a dictionary-encoded nominal column, as Parquet's categoricals read
            k = plain.schema.get_field_index("city")
            tables.append(plain.set_column(k, "city", plain.column("city").dictionary_encode()))
        out[name] = (model, tables)
    return out


def test_the_trees_hold_what_the_exports_must_get_right(fitted):
    """Regression trees with nominal subsets, ``__other__``, missing values sent either way, a
    pruned tree, and values far from 1."""
    assert all(m.task.name == "regression" for m, _ in fitted.values())
    tests = [(name, t, m.spec.features[t.attribute]) for name, (m, _) in fitted.items() for t in m.tree.tests if t]
    assert any(t.kind == "nominal" and any(len(g) > 1 for g in t.groups) for _, t, _ in tests)
    assert any(b.has_other for _, _, b in tests)
    assert {int(t.bin_children[0]) for _, t, _ in tests} >= {0, 1}
    pruned = fitted["mixed-pruned"][0]
    assert pruned.full_tree is not None and pruned.tree.n_leaves < pruned.full_tree.n_leaves
    assert fitted["tiny"][0].tree.n_leaves == 6
    assert np.abs(fitted["tiny"][0].node_values()).max() < 1e-8
    assert np.abs(fitted["quantile"][0].node_values()).max() > 1e6


SCORERS = {"duckdb": score_duckdb, "sqlite": score_sqlite, "onnx": score_onnx, "pmml": score_pmml}


@pytest.mark.parametrize("fmt", list(SCORERS))
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_export_predicts_the_values_dasktree_predicts(fitted, dataset, fmt):
    if missing_engine(fmt):
        pytest.skip(missing_engine(fmt))
    model, tables = fitted[dataset]
    for table in tables:
        got, proba = SCORERS[fmt](model, table)
        want = model.predict_values(table)
        assert proba.shape == (table.num_rows, 0)
        np.testing.assert_array_equal(np.asarray(got, dtype=np.float64), want)  # the same doubles, not close ones
        assert reference(model, table)[0] == want.tolist()


RANDOM = {
    "duckdb": score_duckdb,
    "duckdb-flat": lambda m, t: score_duckdb(m, t, shape="flat"),
    "postgres-in-duckdb": lambda m, t: score_duckdb(m, t, dialect="postgres"),
    "sqlite": score_sqlite,
    "sqlite-nested": lambda m, t: score_sqlite(m, t, shape="nested"),
    "onnx": score_onnx,
    "pmml": score_pmml,
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_regression_trees_and_rows(name):
    """Random tests of every kind, nodes without rows (their parent's value), targets of any scale."""
    engine = name.split("-")[0] if name != "postgres-in-duckdb" else "duckdb"
    if missing_engine(engine):
        pytest.skip(missing_engine(engine))

    @settings(max_examples=12 if name == "pmml" else 30, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**32 - 1))
    def check(seed):
        model = random_regression_model(seed)
        table = random_rows(model, 60, seed + 1)
        got, _ = RANDOM[name](model, table)
        np.testing.assert_array_equal(np.asarray(got, dtype=np.float64), model.predict_values(table))

    check()


def test_a_constant_target_is_one_leaf_in_every_engine():
    frame = _mixed(500, 0).assign(y=4.25)
    model = fit_regression(frame, target="y", scheduler="inprocess", max_depth=4)
    assert model.tree.n_leaves == 1
    table = pa.Table.from_pandas(frame.drop(columns=["y"]), preserve_index=False)
    for fmt, score in SCORERS.items():
        if missing_engine(fmt):
            continue
        got, _ = score(model, table)
        assert got == [4.25] * table.num_rows, fmt


def _temporal(n, seed):
    rng = np.random.default_rng(seed)
    days = rng.integers(17000, 19000, size=n)
    micros = rng.integers(1_500_000_000_000_000, 1_600_000_000_000_000, size=n)
    y = (days > 18000) * 10.0 + (micros % 7 > 3) * 2.5 + (micros > 1.55e15) * 0.125 + rng.normal(size=n)
    return pa.table({"day": pa.array(days.astype("int32"), pa.date32()), "at": pa.array(micros, pa.timestamp("us")),
                     "y": pa.array(y)})


def test_typed_sql_compares_dates_and_timestamps_as_dasktree_does():
    """Given the columns' types, the SQL compares DATE / TIMESTAMP literals; every row, the counts
    at each threshold and either side too, gets the value dasktree predicts."""
    duckdb = pytest.importorskip("duckdb")
    from dasktree.export.sql_types import count_bound

    model = fit_regression(_temporal(3000, 0).to_pandas(), target="y", scheduler="inprocess", max_depth=6,
                           prune="none")  # the grown tree: both columns tested
    held_out = _temporal(600, 1).drop_columns(["y"])
    tested = {model.spec.features[t.attribute].name for t in model.tree.tests if t is not None}
    assert tested == {"day", "at"}
    bounds = []
    for test in model.tree.tests:
        if test is None:
            continue
        field = held_out.schema.field(model.spec.features[test.attribute].name)
        storage = pa.int64() if pa.types.is_timestamp(field.type) else pa.int32()
        for t in test.thresholds:
            for count in (count_bound(t) - 1, count_bound(t), count_bound(t) + 1):
                row = held_out.slice(len(bounds) % held_out.num_rows, 1)
                k = row.schema.get_field_index(field.name)
                bounds.append(row.set_column(k, field.name, pa.array([count], storage).cast(field.type)))
    sql = model.export("sql", dialect="duckdb", table="held_out", keep=(), types=held_out.schema)
    assert "DATE '" in sql and "TIMESTAMP '" in sql
    for table in (held_out, pa.concat_tables(bounds)):
        con = duckdb.connect()
        con.register("held_out", table)
        got = con.sql(sql).to_arrow_table().column("prediction").to_numpy()
        np.testing.assert_array_equal(got, model.predict_values(table))
