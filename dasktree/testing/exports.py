"""Helpers for the export tests: each export run in its real engine, rows at every threshold,
and random models.

The scorers take a model and held-out rows and return ``(labels, proba)`` as the exported model
computes them (a regression model's: its predicted values, and no probability columns): :func:`score_duckdb` and :func:`score_sqlite` run the SQL export, :func:`score_onnx`
runs the ONNX export in onnxruntime, :func:`score_pmml` the PMML export in JPMML's evaluator
(``jpmml_evaluator``, Java). :func:`reference` is what dasktree predicts for the same rows.
"""

from __future__ import annotations

import math
import os
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa

from ..binning.spec import OTHER, BinSpec, FeatureBins
from ..io.schema import NOMINAL, NUMERIC, nominal_values, numeric_values
from ..model.model import Model, TreeModel
from ..model.predict import predict_table
from ..split.api import nominal_test, numeric_test

__all__ = ["reference", "score_duckdb", "score_sqlite", "score_onnx", "score_pmml", "edge_rows", "random_model",
           "random_regression_model", "random_rows", "UNSEEN", "missing_engine", "pmml_xsd"]

UNSEEN = "never-seen-category"


ENGINES = {"duckdb": "duckdb", "sqlite": "sqlite3", "onnx": "onnxruntime", "pmml": "jpmml_evaluator"}


def missing_engine(fmt: str) -> str | None:
    """Why the engine that scores ``fmt`` ("duckdb", "sqlite", "onnx", "pmml") cannot run here, or None."""
    import importlib.util
    import shutil

    module = ENGINES[fmt]
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed (pip install 'dasktree[export]')"
    if fmt == "onnx" and importlib.util.find_spec("onnx") is None:
        return "onnx is not installed (pip install 'dasktree[export]')"
    if fmt == "pmml" and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime: JPMML-Evaluator runs on the JVM"
    return None


def pmml_xsd(directory) -> str | None:
    """The PMML 4.4 XML schema as JPMML's pmml-model jar ships it (no PyPI package ships DMG's own
    file), extracted into ``directory``; None where ``jpmml_evaluator`` or its jar is missing."""
    import glob
    import importlib.util
    import zipfile

    spec = importlib.util.find_spec("jpmml_evaluator")
    if spec is None or spec.origin is None:
        return None
    jars = glob.glob(os.path.join(os.path.dirname(spec.origin), "dependencies", "pmml-model-[0-9]*.jar"))
    if not jars:
        return None
    with zipfile.ZipFile(jars[0]) as jar:
        jar.extract("pmml.xsd", directory)
    return os.path.join(os.fspath(directory), "pmml.xsd")


def _split(model: Model, table: pa.Table) -> tuple[list, np.ndarray]:
    labels = table.column("prediction").to_pylist()
    proba = np.column_stack([table.column(f"proba_{c}").to_numpy(zero_copy_only=False).astype(np.float64)
                             for c in model.classes]) if table.num_rows and model.classes else \
        np.zeros((table.num_rows, len(model.classes)))
    return labels, proba


def reference(model: Model, table: pa.Table) -> tuple[list, np.ndarray]:
    """What dasktree predicts: labels and class probabilities."""
    return _split(model, predict_table(model, table))


def score_duckdb(model: Model, table: pa.Table, dialect: str = "duckdb", **options) -> tuple[list, np.ndarray]:
    import duckdb

    con = duckdb.connect()
    try:
        con.register("held_out", table)
        result = con.sql(model.export("sql", dialect=dialect, table="held_out", keep=(), **options)).to_arrow_table()
    finally:
        con.close()
    return _split(model, result)


def score_sqlite(model: Model, table: pa.Table, **options) -> tuple[list, np.ndarray]:
    """The rows in an SQLite table (numeric columns REAL, nominal TEXT as dasktree reads them; NaN
    is NULL there), scored by the sqlite dialect's SELECT."""
    import sqlite3

    from ..export.sql import quote_identifier

    con = sqlite3.connect(":memory:")
    try:
        names = [f.name for f in model.spec.features]
        kinds = ["REAL" if f.kind == NUMERIC else "TEXT" for f in model.spec.features]
        con.execute(f"CREATE TABLE held_out ({', '.join(f'{quote_identifier(n)} {k}' for n, k in zip(names, kinds))})")
        columns = [_column_values(table, f) for f in model.spec.features]
        con.executemany(f"INSERT INTO held_out VALUES ({', '.join('?' * len(names))})", list(zip(*columns)))
        cursor = con.execute(model.export("sql", dialect="sqlite", table="held_out", keep=(), **options))
        rows = cursor.fetchall()
    finally:
        con.close()
    labels = [float(r[0]) if not model.task.predicts_classes else r[0] for r in rows]
    if model.classes and all(isinstance(c, (bool, np.bool_)) for c in model.classes):
        labels = [bool(v) for v in labels]  # SQLite's TRUE is 1
    proba = np.asarray([r[1:] for r in rows], dtype=np.float64).reshape(len(rows), len(model.classes))
    return labels, proba


def _column_values(table: pa.Table, bins: FeatureBins) -> list:
    if bins.kind == NUMERIC:
        return [None if math.isnan(v) else float(v) for v in numeric_values(table.column(bins.name), bins.name)]
    return nominal_values(table.column(bins.name)).to_pylist()


def score_onnx(model: Model, table: pa.Table) -> tuple[list, np.ndarray]:
    import onnxruntime

    from ..export.onnx_model import onnx_input

    scorer = onnxruntime.InferenceSession(model.export("onnx"), providers=["CPUExecutionProvider"])
    if not model.task.predicts_classes:
        (values,) = scorer.run(["prediction"], {"X": onnx_input(model, table)})
        return values.tolist(), np.zeros((len(values), 0))
    label, proba = scorer.run(["label", "probabilities"], {"X": onnx_input(model, table)})
    return [v.item() if isinstance(v, np.generic) else v for v in label.tolist()], proba


def score_pmml(model: Model, table: pa.Table) -> tuple[list, np.ndarray]:
    """The PMML export scored by JPMML-Evaluator (``jpmml_evaluator`` through JPype): numeric
    columns as doubles (NaN for missing), nominal ones as the strings dasktree reads."""
    from jpmml_evaluator import make_evaluator

    frame = pd.DataFrame({f.name: (_column_values(table, f) if f.kind == NOMINAL else
                                   [np.nan if v is None else v for v in _column_values(table, f)])
                          for f in model.spec.features})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.pmml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(model.export("pmml"))
        evaluator = make_evaluator(path, backend="jpype").verify()
        result = evaluator.evaluateAll(frame)
    labels = [_pmml_label(v, model.classes) for v in result["prediction"].tolist()]
    if not model.task.predicts_classes:
        labels = [float(v) for v in labels]
    proba = result[[f"proba_{c}" for c in model.classes]].to_numpy(dtype=np.float64)
    return labels, proba


def _pmml_label(value, classes):
    for c in classes:
        if value == c or str(value).lower() == str(c).lower():
            return c
    return value


def edge_rows(model: Model, frame: pd.DataFrame | pa.Table, per_edge: int = 2, seed: int = 0) -> pa.Table:
    """Rows of ``frame`` and copies of them at every threshold the tree tests (the threshold itself and
    the doubles either side), with missing values (null, and NaN in float columns), and with
    categories the model never saw and ``__other__`` in string columns. Numeric feature columns
    that are not floats (integers, decimals, dates, timestamps) become float64 as dasktree reads
    them (a threshold such as 30.5 is not an integer)."""
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    for bins in model.spec.features:  # numbers as dasktree reads them: a threshold such as 30.5 is no integer or date
        k = table.schema.get_field_index(bins.name)
        if bins.kind == NUMERIC and not pa.types.is_floating(table.schema.field(k).type):
            values = numeric_values(table.column(k), bins.name)
            table = table.set_column(k, bins.name, pa.array(values, mask=np.isnan(values), type=pa.float64()))
    schema = table.schema
    records = table.to_pylist()
    rng = np.random.default_rng(seed)
    out = list(records)

    def copies(name: str, values: list) -> None:
        for v in values:
            for r in rng.integers(0, len(records), size=per_edge):
                out.append({**records[r], name: v})

    for test in model.tree.tests:
        if test is not None and test.kind == NUMERIC:
            for t in test.thresholds:
                copies(model.spec.features[test.attribute].name, [t, math.nextafter(t, math.inf), math.nextafter(t, -math.inf)])
    for bins in model.spec.features:
        type_ = schema.field(bins.name).type
        copies(bins.name, [None, math.nan] if pa.types.is_floating(type_) else [None])
        if pa.types.is_string(type_) or pa.types.is_large_string(type_):
            copies(bins.name, [UNSEEN, OTHER])
    return pa.Table.from_pylist(out, schema=schema)


# ---------------------------------------------------------------- random models
def random_model(seed: int, *, max_nodes: int = 40) -> Model:
    """A model of random tests on random features (numeric edges of every size and sign; nominal
    categories with or without ``__other__``; multi-way, subsets, empty groups, every default
    child), random class counts (some nodes without rows)."""
    rng = np.random.default_rng(seed)
    features = []
    for j in range(int(rng.integers(1, 5))):
        if rng.random() < 0.5:
            x = rng.normal(size=int(rng.integers(1, 9)))
            if rng.random() < 0.2:  # far ends of the doubles: SQLite's reader is off by an ulp there
                upper = np.unique(x * 10.0 ** int(rng.integers(-300, 300)))
            else:  # round numbers, values a data set holds
                upper = np.unique(np.round(x * 10.0 ** int(rng.integers(-3, 4)), int(rng.integers(0, 17))))
            values = np.append(upper, upper[-1])
            features.append(FeatureBins(f"n{j}", NUMERIC, upper, values, True))
        else:
            n = int(rng.integers(1, 7))
            cats = sorted({f"c{int(k)}" for k in rng.integers(0, 20, size=n)} | {"it's \"quoted\""} if rng.random() < 0.2
                          else {f"c{int(k)}" for k in rng.integers(0, 20, size=n)})
            features.append(FeatureBins(f"s {j}", NOMINAL, categories=(*cats, OTHER) if rng.random() < 0.4 else tuple(cats)))
    classes = tuple(f"k{i}" for i in range(int(rng.integers(2, 5))))
    spec = BinSpec(tuple(features), classes)
    tests, children, depth = [None], [[]], [0]
    i = 0
    while i < len(tests) and len(tests) < max_nodes:
        if depth[i] < 6 and rng.random() < 0.7:
            a = int(rng.integers(0, len(features)))
            tests[i] = _random_test(rng, a, features[a])
            kids = list(range(len(tests), len(tests) + tests[i].arity))
            children[i] = kids
            tests += [None] * len(kids)
            children += [[] for _ in kids]
            depth += [depth[i] + 1] * len(kids)
        i += 1
    counts = rng.integers(0, 6, size=(len(tests), len(classes))) * (rng.random((len(tests), 1)) < 0.9)
    counts[0, 0] += 1  # a fitted tree's root has rows
    tree = TreeModel(tests, children, counts.astype(np.int64), np.asarray(depth, dtype=np.int64))
    return Model(spec=spec, target="y", tree=tree)


def random_regression_model(seed: int, *, max_nodes: int = 40) -> Model:
    """:func:`random_model`'s tree as a regression tree: each node ``n`` rows (some none) and a random
    fixed-point sum ``s <= n * 2**30``, on a random target scale (any sign and size, or a constant
    target's)."""
    import dataclasses

    from ..binning.target import SCALE, TargetScale
    from ..regress.task import REGRESSION

    base = random_model(seed, max_nodes=max_nodes)
    rng = np.random.default_rng(seed + 7)
    n = base.tree.counts.sum(axis=1)
    s = np.array([int(rng.integers(0, k * SCALE + 1)) if k else 0 for k in n.tolist()], dtype=np.int64)
    lo = float(rng.normal() * 10.0 ** int(rng.integers(-5, 8)))
    step = 1.0 if rng.random() < 0.1 else float(abs(rng.normal()) * 10.0 ** int(rng.integers(-12, 3)) + 1e-300)
    spec = dataclasses.replace(base.spec, classes=(), target=TargetScale(lo, step))
    tree = dataclasses.replace(base.tree, counts=np.column_stack([n, s]).astype(np.int64))
    return Model(spec=spec, target="y", tree=tree, task=REGRESSION)


def _random_test(rng, a: int, bins: FeatureBins):
    n_bins = bins.n_bins
    if bins.kind == NUMERIC:
        k = int(rng.integers(2, min(4, n_bins) + 1)) if n_bins >= 2 else 2
        cuts = np.sort(rng.choice(np.arange(1, n_bins), size=k - 1, replace=False))
        return numeric_test(a, cuts, bins.upper, int(rng.integers(0, k)))
    k = int(rng.integers(2, max(2, min(4, n_bins)) + 1))
    owner = rng.integers(-1, k, size=n_bins)  # -1: in no group (goes to the default child)
    groups = [np.flatnonzero(owner == c) + 1 for c in range(k)]
    return nominal_test(a, groups, n_bins + 1, int(rng.integers(0, k)))


def random_rows(model: Model, n: int, seed: int) -> pa.Table:
    """Rows for ``model``'s features: edges, their neighbours, far values, NaN; categories, unseen
    ones, ``__other__`` and null."""
    rng = np.random.default_rng(seed)
    columns = {}
    for bins in model.spec.features:
        if bins.kind == NUMERIC:
            edges = bins.upper.astype(np.float64)
            pool = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                                   [np.nan, -1e308, 1e308, 0.0, -0.0]])
            columns[bins.name] = pa.array(rng.choice(pool, size=n), type=pa.float64())
        else:
            pool = [*bins.categories, UNSEEN, OTHER, None]
            columns[bins.name] = pa.array([pool[k] for k in rng.integers(0, len(pool), size=n)], type=pa.string())
    return pa.table(columns)


def full_binary_model(depth: int, *, task: str = "classification", n_features: int = 4, seed: int = 0,
                      bins: int = 64, pruned_at: int | None = None) -> Model:
    """A complete binary tree of ``depth`` levels (``2**depth`` leaves) of threshold tests on random
    numeric features of ``bins`` bins, random counts: a large model built without a fit (``show``'s and
    ``plot``'s scale). ``task="regression"``: the same tree as a regression model (rows and fixed-point
    sums). ``pruned_at``: the model's tree is the grown tree's top ``pruned_at`` levels and the grown tree
    its ``full_tree``, as a pruned model's file holds both."""
    import dataclasses

    rng = np.random.default_rng(seed)
    upper = np.arange(1.0, bins + 1.0) / 4.0
    features = tuple(FeatureBins(f"x{j}", NUMERIC, upper, np.append(upper, upper[-1]), True)
                     for j in range(n_features))
    n_nodes = 2 ** (depth + 1) - 1
    n_tests = 2 ** depth - 1
    pool = [numeric_test(a, np.array([cut]), upper, int(default)) for a in range(n_features)
            for cut in (bins // 8, bins // 2, 7 * bins // 8) for default in (0, 1)]
    tests: list = [pool[k] for k in rng.integers(0, len(pool), size=n_tests)] + [None] * (n_nodes - n_tests)
    children = [[2 * i + 1, 2 * i + 2] for i in range(n_tests)] + [[] for _ in range(n_nodes - n_tests)]
    node_depth = np.floor(np.log2(np.arange(1, n_nodes + 1))).astype(np.int64)
    leaf_counts = rng.integers(0, 20, size=(n_nodes - n_tests, 3)).astype(np.int64)
    counts = np.zeros((n_nodes, 3), dtype=np.int64)
    counts[n_tests:] = leaf_counts
    for i in range(n_tests - 1, -1, -1):  # a node's rows are its children's
        counts[i] = counts[2 * i + 1] + counts[2 * i + 2]
    tree = TreeModel(tests, children, counts, node_depth, leaf_reason=["" if t else "max_depth" for t in tests])
    model = Model(spec=BinSpec(features, ("a", "b", "c")), target="y", tree=tree)
    if task != "classification":
        from ..binning.target import SCALE, TargetScale
        from ..regress.task import REGRESSION

        n = counts.sum(axis=1)
        s = np.zeros(n_nodes, dtype=np.int64)
        s[n_tests:] = [int(rng.integers(0, k * SCALE + 1)) if k else 0 for k in n[n_tests:].tolist()]
        for i in range(n_tests - 1, -1, -1):
            s[i] = s[2 * i + 1] + s[2 * i + 2]
        spec = dataclasses.replace(model.spec, classes=(), target=TargetScale(-3.0, 1e-6))
        model = Model(spec=spec, target="y", tree=dataclasses.replace(tree, counts=np.column_stack([n, s])),
                      task=REGRESSION)
    if pruned_at is None or pruned_at >= depth:
        return model
    grown = model.tree
    kept, inner = 2 ** (pruned_at + 1) - 1, 2 ** pruned_at - 1
    top = TreeModel(list(grown.tests[:inner]) + [None] * (kept - inner),
                    grown.children[:inner] + [[] for _ in range(kept - inner)], grown.counts[:kept],
                    grown.depth[:kept], leaf_reason=[""] * inner + ["pruned"] * (kept - inner))
    return dataclasses.replace(model, tree=top, full_tree=grown)
