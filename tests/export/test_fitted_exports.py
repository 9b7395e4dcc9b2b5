"""Every export of trees dasktree grows on several datasets predicts as dasktree on every
held-out row: rows drawn afresh, rows at each threshold the tree tests and the doubles either
side, null and NaN, categories the model never saw and ``__other__``."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dasktree
from dasktree.datasets import agrawal
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import (edge_rows, missing_engine, reference, score_duckdb, score_onnx, score_pmml,
                                      score_sqlite)


def _many_classes(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 40, size=n).astype(np.float64)  # ties: many rows exactly at each threshold
    b = np.round(rng.normal(size=n), 2)
    c = rng.choice([f"g{i}" for i in range(7)], size=n)
    label = ((a // 5).astype(int) + (b > 0) * 3 + np.isin(c, ["g1", "g4"]) * 2) % 10
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "label": label.astype(np.int64)})
    frame.loc[rng.random(n) < 0.05, "b"] = np.nan
    return frame


def _many_categories(n, seed):
    rng = np.random.default_rng(seed)
    city = rng.choice([f"city-{i:02d}" for i in range(14)], size=n, p=np.linspace(2, 0.2, 14) / np.linspace(2, 0.2, 14).sum())
    x = rng.normal(size=n)
    label = np.where(np.isin(city, ["city-00", "city-03", "city-11", "city-13"]) ^ (x > 0.3), "yes", "no")
    frame = pd.DataFrame({"city": city, "x": x, "label": label})
    frame.loc[rng.random(n) < 0.05, "city"] = None
    return frame


def _continuous(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(size=(n, 3))  # every value distinct: quantile bin edges, not data values
    label = np.where(X[:, 0] * X[:, 1] > 1.5, "a", np.where(X[:, 2] > 2, "b", "c"))
    return pd.DataFrame({"u": X[:, 0], "v": X[:, 1], "w": X[:, 2], "label": label})


def _agrawal(n, seed):
    return agrawal.generate(n, function=5, perturbation=0.05, seed=seed)


DATASETS = {  # name: (frame maker, target, fit parameters)
    "mixed": (mixed_frame, "label", {"max_depth": 6}),
    "multiway": (mixed_frame, "label", {"max_depth": 5, "nominal_split": "multiway", "max_arity": 4}),
    "many-classes": (_many_classes, "label", {"max_depth": 7, "nominal_split": "multiway"}),
    "other": (_many_categories, "label", {"max_depth": 5, "max_categories": 6}),
    "quantile": (_continuous, "label", {"max_depth": 6, "max_bins": 16, "max_arity": 3}),
    "agrawal": (_agrawal, "class", {"max_depth": 6, "nominal": ["elevel", "car"]}),
}


@pytest.fixture(scope="module")
def fitted():
    out = {}
    for name, (make, target, params) in DATASETS.items():
        params = dict(params)
        nominal = params.pop("nominal", ())
        model = dasktree.fit(make(3000, 0), target=target, nominal=nominal, scheduler="inprocess", **params)
        held_out = make(1500, 1).drop(columns=[target])
        if name == "mixed":  # a nominal boolean with nulls: dasktree reads it as "true" / "false"
            held_out["flag"] = held_out["flag"].astype(object).where(np.arange(len(held_out)) % 17 != 0, None)
        plain = pa.Table.from_pandas(held_out, preserve_index=False)
        tables = [plain, edge_rows(model, held_out)]
        if name == "other":  # a dictionary-encoded nominal column, as Parquet's categoricals read
            k = plain.schema.get_field_index("city")
            tables.append(plain.set_column(k, "city", plain.column("city").dictionary_encode()))
        out[name] = (model, tables)
    return out


def test_the_datasets_grow_every_kind_of_test(fitted):
    """The trees hold what the exports must get right: multi-way numeric tests, one child per
    category, nominal subsets, ``__other__``, missing values sent right as well as left."""
    tests = [(name, t, m.spec.features[t.attribute]) for name, (m, _) in fitted.items() for t in m.tree.tests if t]
    assert any(t.kind == "numeric" and t.arity > 2 for _, t, _ in tests)
    assert any(t.kind == "nominal" and t.arity > 2 for _, t, _ in tests)
    assert any(t.kind == "nominal" and any(len(g) > 1 for g in t.groups) for _, t, _ in tests)
    assert any(b.has_other for _, _, b in tests)
    assert {int(t.bin_children[0]) for _, t, _ in tests} >= {0, 1}
    assert len(fitted["many-classes"][0].classes) == 10
    assert not any(b.exact for d, t, b in tests if d == "quantile" and t.kind == "numeric")


SCORERS = {"duckdb": score_duckdb, "sqlite": score_sqlite, "onnx": score_onnx, "pmml": score_pmml}


@pytest.mark.parametrize("fmt", list(SCORERS))
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_export_predicts_as_dasktree(fitted, dataset, fmt):
    if missing_engine(fmt):
        pytest.skip(missing_engine(fmt))
    model, tables = fitted[dataset]
    for table in tables:
        labels, proba = SCORERS[fmt](model, table)
        want_labels, want_proba = reference(model, table)
        assert labels == want_labels
        np.testing.assert_array_equal(proba, want_proba)
