"""Exports predict exactly as dasktree does, and the SQL export scores a 1M-row Parquet table in
DuckDB beside ``dasktree predict``.

Equality: trees grown in process on several datasets (scikit-learn's iris, wine, breast_cancer
and digits, whose values are continuous; a wide ``make_classification`` table of 100 columns;
Agrawal F1, F5 and F7 with nominal ``elevel`` and ``car``; a frame of numeric, integer, nominal and
boolean columns with nulls grown with multi-way tests; 10 classes), each exported to SQL, ONNX
and PMML and scored on its held-out 30% plus rows at every threshold the tree tests (and the
doubles either side), null / NaN and unseen categories (:func:`dasktree.testing.exports.edge_rows`):
in DuckDB and SQLite, onnxruntime, and JPMML-Evaluator. A row counts as equal when the class and
every probability equal ``predict`` / ``predict_proba`` to the bit. Regression trees alike
(scikit-learn's diabetes, Friedman #1, a wide ``make_regression`` table, numeric, nominal and
missing columns with an integer target): a row is equal when the value is the double
``predict`` gives.

Scoring: a depth-10 tree of Agrawal F2 (1M rows, 16 Parquet files) exported to SQL; whole
processes, alternated round after round: ``dasktree predict MODEL DATA --out DIR`` (the
in-process default) and a Python script running the export's ``SELECT`` in DuckDB over
``read_parquet`` and writing the same columns to a Parquet file (``COPY ... TO``); also an
onnxruntime script (pyarrow read, :func:`~dasktree.export.onnx_model.onnx_input`, run, Parquet
write). The outputs are compared row by row.
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks import harness

NAME = "export"
CLAIM = ("SQL, ONNX and PMML exports predict the class and probabilities (a regression tree: the value) of 100% "
         "of held-out rows as dasktree does; the SQL export scores a 1M-row Parquet table in DuckDB beside "
         "`dasktree predict`")

DUCKDB = """
import sys, duckdb
sql = open(sys.argv[1]).read()
duckdb.connect().execute(f"COPY ({sql}) TO '{sys.argv[2]}' (FORMAT PARQUET)")
"""

ONNX = """
import glob, sys
import onnxruntime, pyarrow as pa, pyarrow.parquet as pq
from dasktree.model.model import load
from dasktree.export.onnx_model import onnx_input
model = load(sys.argv[1])
table = pq.read_table(sorted(glob.glob(sys.argv[2] + "/*.parquet")), columns=model.features)
scorer = onnxruntime.InferenceSession(sys.argv[3], providers=["CPUExecutionProvider"])
label, proba = scorer.run(["label", "probabilities"], {"X": onnx_input(model, table)})
columns = {"prediction": pa.array(label)}
columns.update({f"proba_{c}": pa.array(proba[:, i]) for i, c in enumerate(model.classes)})
pq.write_table(pa.table(columns), sys.argv[4])
"""


def _datasets(quick: bool) -> dict:
    from sklearn import datasets

    from dasktree.datasets import agrawal
    from dasktree.testing.data import mixed_frame

    out = {}
    for name in ("iris", "wine", "breast_cancer", "digits"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        out[name] = (pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])]).assign(label=y), {})
    X, y = datasets.make_classification(5_000 if quick else 20_000, 100, n_informative=20, random_state=0)
    out["wide (100 columns)"] = (pd.DataFrame(X, columns=[f"x{i}" for i in range(100)]).assign(label=y), {})
    for f in (1, 5, 7):
        frame = agrawal.generate(5_000 if quick else 20_000, function=f, perturbation=0.05, seed=0)
        out[f"agrawal F{f}"] = (frame.rename(columns={"class": "label"}), {"nominal": ["elevel", "car"]})
    out["mixed, multi-way"] = (mixed_frame(5_000 if quick else 20_000),
                               {"nominal_split": "multiway", "max_arity": 4})
    rng = np.random.default_rng(0)
    n = 5_000 if quick else 20_000
    a, b = rng.integers(0, 60, size=n).astype(float), rng.normal(size=n)
    out["10 classes"] = (pd.DataFrame({"a": a, "b": b, "label": ((a // 6).astype(int) + (b > 0) * 3) % 10}), {})
    return out


def _regression_datasets(quick: bool) -> dict:
    from sklearn import datasets

    from dasktree.testing.data import regression_frame

    n = 5_000 if quick else 20_000
    def frame(X, y):
        return pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])]).assign(label=y), {}

    out = {"diabetes (regression)": frame(*datasets.load_diabetes(return_X_y=True)),
           "Friedman #1 (regression)": frame(*datasets.make_friedman1(n, random_state=0)),
           "wide (100 columns, regression)": frame(*datasets.make_regression(n, 100, n_informative=20, noise=5.0,
                                                                             random_state=0))}
    frame = regression_frame(n).rename(columns={"y": "label"})
    out["mixed, integer target (regression)"] = (frame.assign(label=np.round(frame["label"] * 100)), {})
    return out


def equality(quick: bool) -> tuple[list[dict], dict]:
    import dasktree
    from dasktree.testing import exports

    scorers = {"DuckDB SQL": exports.score_duckdb, "SQLite SQL": exports.score_sqlite,
               "onnxruntime": exports.score_onnx, "JPMML PMML": exports.score_pmml}
    rows, totals = [], {name: [0, 0] for name in scorers}
    from dasktree import fit_regression

    tasks = {**{k: (v, dasktree.fit) for k, v in _datasets(quick).items()},
             **{k: (v, fit_regression) for k, v in _regression_datasets(quick).items()}}
    for name, ((frame, params), fit) in tasks.items():
        order = np.random.default_rng(0).permutation(len(frame))
        cut = int(len(frame) * 0.7)
        train, test = frame.iloc[order[:cut]], frame.iloc[order[cut:]].drop(columns=["label"])
        model = fit(train, target="label", scheduler="inprocess", max_depth=12, **params)
        table = exports.edge_rows(model, test, per_edge=1)
        want_labels, want_proba = exports.reference(model, table)
        row = {"dataset": name, "rows": table.num_rows, "leaves": model.tree.n_leaves, "depth": model.tree.max_depth}
        for fmt, score in scorers.items():
            labels, proba = score(model, table)
            same = (np.asarray([a == b for a, b in zip(labels, want_labels)])  # a regression tree's values, bit for bit
                    & np.all(proba == want_proba, axis=1))
            row[fmt] = int(same.sum())
            totals[fmt][0] += int(same.sum())
            totals[fmt][1] += table.num_rows
        rows.append(row)
        print(f"  {name}: " + ", ".join(f"{fmt} {row[fmt]}/{row['rows']}" for fmt in scorers), flush=True)
    return rows, totals


def scoring(quick: bool, tmp: str) -> dict:
    rows, repeat = (100_000, 1) if quick else (1_000_000, 3)
    data = harness.agrawal(rows, function=2)
    model_path = os.path.join(tmp, "model.json")
    r = harness.run_process(harness.dasktree_command("fit", data, "--target", "class", "--max-depth", "10",
                                                     "--quiet", "--out", model_path))
    if r["returncode"]:
        raise RuntimeError(r["stderr"])
    from dasktree.model.model import load

    model = load(model_path)
    sql_path, onnx_path = os.path.join(tmp, "model.sql"), os.path.join(tmp, "model.onnx")
    model.export("sql", sql_path, dialect="duckdb", keep=(), table=f"read_parquet('{data}/*.parquet')")
    model.export("onnx", onnx_path)
    scripts = {}
    for name, text in (("duckdb", DUCKDB), ("onnx", ONNX)):
        scripts[name] = os.path.join(tmp, f"score_{name}.py")
        with open(scripts[name], "w") as f:
            f.write(text)
    outs = {k: os.path.join(tmp, f"{k}.parquet") for k in ("duckdb", "onnx")}
    predict_out = os.path.join(tmp, "predicted")
    commands = {
        "dasktree predict": harness.dasktree_command("predict", model_path, data, "--out", predict_out, "--quiet",
                                                     "--overwrite"),
        "DuckDB, the SQL export": [sys.executable, scripts["duckdb"], sql_path, outs["duckdb"]],
        "onnxruntime, the ONNX export": [sys.executable, scripts["onnx"], model_path, data, onnx_path, outs["onnx"]],
    }
    runs = harness.alternate(commands, repeat, warmup=1)
    seconds = {name: harness.median(r["seconds"] for r in rs) for name, rs in runs.items()}
    ours = pq.read_table(predict_out)
    same = {}
    for k, label in (("duckdb", "DuckDB, the SQL export"), ("onnx", "onnxruntime, the ONNX export")):
        theirs = pq.read_table(outs[k])
        equal = np.asarray(ours.column("prediction").to_pylist()) == np.asarray(theirs.column("prediction").to_pylist())
        for c in model.classes:
            equal &= ours.column(f"proba_{c}").to_numpy() == theirs.column(f"proba_{c}").to_numpy()
        same[label] = (int(equal.sum()), ours.num_rows)
    return {"rows": rows, "repeat": repeat, "seconds": seconds, "same": same, "leaves": model.tree.n_leaves,
            "sql_bytes": os.path.getsize(sql_path), "runs": {k: [r["seconds"] for r in v] for k, v in runs.items()}}


def run(quick: bool) -> harness.Result:
    table, totals = equality(quick)
    with tempfile.TemporaryDirectory(prefix="dasktree-export-") as tmp:
        timing = scoring(quick, tmp)
    fmts = list(totals)
    lines = ["Held-out 30% of each dataset plus rows at every threshold, null / NaN and unseen categories; "
             "a row is equal when the class and every probability (a regression tree: the value) are "
             "bit-identical to dasktree's.", "",
             "| dataset | rows | leaves | depth | " + " | ".join(fmts) + " |",
             "| --- | --- | --- | --- | " + " | ".join("---" for _ in fmts) + " |"]
    lines += [f"| {r['dataset']} | {r['rows']} | {r['leaves']} | {r['depth']} | "
              + " | ".join(f"{100 * r[f] / r['rows']:.2f}%" for f in fmts) + " |" for r in table]
    lines += ["| all | " + str(next(iter(totals.values()))[1]) + " | | | "
              + " | ".join(f"{100 * a / b:.2f}%" for a, b in totals.values()) + " |"]
    s = timing["seconds"]
    base = s["dasktree predict"]
    lines += ["", f"Scoring {timing['rows']:,} Agrawal F2 rows (16 Parquet files) with a depth-10 tree of "
              f"{timing['leaves']} leaves (SQL: {timing['sql_bytes'] / 1e3:.0f} kB); whole processes, median of "
              f"{timing['repeat']} alternated rounds after a warm-up, on a shared 2-core machine (ratios, not seconds).", "",
              "| command | seconds (median) | / dasktree predict | rows equal to dasktree predict |", "| --- | --- | --- | --- |"]
    for name, sec in s.items():
        eq = timing["same"].get(name)
        lines.append(f"| {name} | {sec:.2f} | {sec / base:.2f}x | {'' if eq is None else f'{eq[0]:,} / {eq[1]:,}'} |")
    total_rows = sum(b for _, b in totals.values())
    summary = [(f"exports equal to predict / predict_proba, held-out and edge rows of {len(table)} datasets "
                "(DuckDB, SQLite, onnxruntime, JPMML)",
                f"{100 * sum(a for a, _ in totals.values()) / total_rows:.2f}% of {total_rows:,} row scorings"),
               (f"{timing['rows']:,}-row Parquet scored by the SQL export in DuckDB / `dasktree predict`, whole process",
                f"{s['DuckDB, the SQL export'] / base:.2f}x (onnxruntime {s['onnxruntime, the ONNX export'] / base:.2f}x); "
                f"{timing['same']['DuckDB, the SQL export'][0]:,} rows equal")]
    return harness.Result(summary, "\n".join(lines) + "\n", {"equality": table, "totals": totals, "scoring": timing})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
