"""Supervised discretization: exact MDLP on every column at the defaults, its cost, and trees on the intervals.

(a) Cost of exactness. ``Discretizer("mdlp").fit`` of every numeric column at the defaults
    (``max_bins`` 1024), against the same fit without the refinement (the cuts chosen among the
    quantile bins' edges, as before the refinement existed): on Agrawal F2 (5% perturbation, 16
    Parquet files; salary, commission, age, elevel, hvalue, hyears, loan; car and zipcode nominal)
    and on a continuous table (8 float64 columns of normal noise, every value distinct, a class of
    x0 + x1 x2 + noise). In process, as the Discretizer places a dataset that fits; runs
    alternate, medians after a warm-up of each.
(b) Agreement with Weka. The cut points of ``Discretizer("mdlp")`` at the defaults against Weka's
    (``weka.filters.supervised.attribute.Discretize``, Fayyad & Irani's MDL, its defaults;
    :mod:`benchmarks.weka_mdlp`) on every numeric attribute of the public classification sets of
    :mod:`benchmarks.public_data` and of Agrawal F1..F10 (20,000 rows: their continuous attributes
    have more distinct values than ``max_bins``); with and without the refinement. An attribute
    agrees when it has the same number of cut points and each equals Weka's to 1e-9 (relative).
(c) Accuracy. 10-fold cross-validated accuracy of a depth-limited tree
    (``DaskTreeClassifier(cv=10, max_depth=D, binning=METHOD)``: the tree grown on
    the method's intervals as its bins) for each method, against
    ``binning="quantile"`` (the undiscretized tree), on Agrawal F1..F10 (5%
    perturbation) in memory. A supervised discretization computed from all rows has
    seen each fold's held-out classes: a small optimistic bias quantile bins do not
    have.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from benchmarks import harness

NAME = "discretize"
CLAIM = "Exact MDLP discretization of every numeric column (Weka's cut points), its cost, and trees on the intervals"
NUMERIC = ["salary", "commission", "age", "elevel", "hvalue", "hyears", "loan"]
NOMINAL = ["car", "zipcode"]
TARGET = "class"
METHODS = ["mdlp", "distance", "chimerge", "equal_width", "equal_frequency", "optimal"]
CONTINUOUS_COLUMNS = 8


# ---------------------------------------------------------------- (a) the refinement's cost
def continuous(rows: int, files: int = 16) -> str:
    """8 float64 columns of normal noise (every value distinct) and a class, under ``benchmarks/data/``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(harness.DATA, f"continuous-{CONTINUOUS_COLUMNS}-{rows}-{files}")
    if os.path.isdir(path) and len(os.listdir(path)) == files:
        return path
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(files):
        n = rows // files + (i < rows % files)
        x = rng.standard_normal((n, CONTINUOUS_COLUMNS))
        y = (x[:, 0] + x[:, 1] * x[:, 2] + 0.5 * rng.standard_normal(n) > 0).astype(np.int64)
        pq.write_table(pa.table({**{f"x{j}": x[:, j] for j in range(CONTINUOUS_COLUMNS)}, "y": y}),
                       os.path.join(path, f"part-{i:05d}.parquet"))
    return path


def discretize_fit(path: str, target: str, refine: bool, **columns):
    from dasktree import Discretizer

    d = Discretizer("mdlp")
    d._refine = refine
    started = time.perf_counter()
    d.fit(path, target=target, **columns)
    return time.perf_counter() - started, d


def part_a(datasets: dict, repeat: int) -> dict:
    out = {}
    for name, (path, target, columns) in datasets.items():
        discretize_fit(path, target, False, **columns)  # warm-up: page cache, numba cache
        discretize_fit(path, target, True, **columns)
        before, after = [], []
        for _ in range(repeat):
            seconds, old = discretize_fit(path, target, False, **columns)
            before.append(seconds)
            seconds, new = discretize_fit(path, target, True, **columns)
            after.append(seconds)
        out[name] = {"rows": new.report_["rows"], "before_seconds": [round(x, 3) for x in before],
                     "after_seconds": [round(x, 3) for x in after], "breakdown": new.run_["seconds"],
                     "passes": [old.report_["passes"], new.report_["passes"]], "refined": new.report_["refined"],
                     "cuts_before": {k: len(v) for k, v in old.cut_points_.items()},
                     "cuts_after": {k: len(v) for k, v in new.cut_points_.items()},
                     "ratio": statistics.median(after) / statistics.median(before)}
    return out


# ---------------------------------------------------------------- (b) agreement with Weka
def part_b(public: list[str] | None, agrawal_rows: int, functions: list[int]) -> dict:
    from benchmarks import public_data, weka_mdlp
    from dasktree import Discretizer
    from dasktree.datasets import agrawal

    why = weka_mdlp.missing()
    if why:
        return {"skipped": why}
    sets = [d for d in public_data.CLASSIFICATION if public is None or d.name in public]
    skipped = [w for d in sets if (w := public_data.missing(d))]
    sets = [d for d in sets if public_data.missing(d) is None]
    public_data.prepare(sets)
    frames = {}
    for d in sets:
        loaded = public_data.load(d)
        X = loaded.X.drop(columns=loaded.nominal)
        X = X[[c for c in X.columns if X[c].nunique() > 1]]  # constant columns: nothing to cut, Weka neither
        if X.shape[1]:
            frames[d.name] = (X, loaded.y)
    for f in functions:
        frame = agrawal.generate(agrawal_rows, function=f, perturbation=0.05, seed=f)
        frames[f"agrawal-F{f}"] = (frame[NUMERIC], frame[TARGET].astype(str).to_numpy())
    table = {}
    for name, (X, y) in frames.items():
        reference = weka_mdlp.weka_cuts(X, y)
        row = {}
        for refine in (True, False):
            d = Discretizer("mdlp")
            d._refine = refine
            d.fit(X.assign(_class=y), target="_class")
            row["exact" if refine else "quantile"] = {c: weka_mdlp.agree(d.cut_points_.get(c, []), reference[c])
                                                    for c in X.columns}
        wide = [c for c in X.columns if X[c].nunique() > 1024]
        disagree = {c: {"ours": Discretizer("mdlp").fit(X[[c]].assign(_class=y), target="_class").cut_points_[c],
                        "weka": reference[c]} for c in X.columns if not row["exact"][c]}
        table[name] = {"attributes": X.shape[1], "wide": wide, "rows": len(y), "agree": row, "disagree": disagree}
    n = sum(t["attributes"] for t in table.values())
    exact = sum(sum(t["agree"]["exact"].values()) for t in table.values())
    quantile = sum(sum(t["agree"]["quantile"].values()) for t in table.values())
    wide_n = sum(len(t["wide"]) for t in table.values())
    wide_exact = sum(sum(t["agree"]["exact"][c] for c in t["wide"]) for t in table.values())
    wide_quantile = sum(sum(t["agree"]["quantile"][c] for c in t["wide"]) for t in table.values())
    return {"datasets": table, "attributes": n, "agree_exact": exact, "agree_quantile": quantile,
            "wide": wide_n, "wide_agree_exact": wide_exact, "wide_agree_quantile": wide_quantile,
            "skipped": skipped}


# ---------------------------------------------------------------- (c) cross-validated accuracy
def part_c(rows: int, functions: list[int], max_depth: int) -> dict:
    from dasktree import DaskTreeClassifier
    from dasktree.datasets import agrawal

    table = {}
    for f in functions:
        frame = agrawal.generate(rows, function=f, perturbation=0.05, seed=f)
        row = {}
        for binning in ["quantile", *METHODS]:
            started = time.perf_counter()
            clf = DaskTreeClassifier(cv=10, max_depth=max_depth, binning=binning).fit(
                frame, target=TARGET, nominal=NOMINAL)
            cv = clf.cv_report_
            bins = {b["name"]: b["bins"] for b in clf.report_["features"] if b["name"] in NUMERIC}
            row[binning] = {"accuracy_mean": round(cv["accuracy_mean"], 4), "accuracy_std": round(cv["accuracy_std"], 4),
                            "numeric_bins": bins, "seconds": round(time.perf_counter() - started, 2)}
        table[f"F{f}"] = row
    return {"rows": rows, "max_depth": max_depth, "folds": 10, "perturbation": 0.05, "table": table}


def run(quick: bool) -> harness.Result:
    rows, cv_rows, functions, repeat, depth = ((200_000, 5_000, [1, 2, 7], 1, 6) if quick
                                               else (1_000_000, 50_000, list(range(1, 11)), 3, 8))
    datasets = {"Agrawal F2": (harness.agrawal(rows), TARGET, {"features": NUMERIC + NOMINAL, "nominal": NOMINAL}),
                "continuous": (continuous(rows), "y", {})}
    a = part_a(datasets, repeat)
    b = part_b(["iris", "wine", "glass", "pima-diabetes", "segment"] if quick else None,
               5_000 if quick else 20_000, [2, 7] if quick else list(range(1, 11)))
    c = part_c(cv_rows, functions, depth)
    names = ["quantile", *METHODS]
    md = ["## (a) mdlp fit with the refinement against without it", "",
          f"{rows:,} rows, 16 Parquet files, max_bins 1024, in process (the machine shared with other work); "
          f"median of {repeat} alternated runs. Without the refinement the cuts are chosen among the quantile "
          "bins' edges (the fit before exact cuts existed).", "",
          "| data | columns refined | rows read by the refinement | distinct values kept | without (s) | with (s) "
          "| ratio |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in a.items():
        md.append(f"| {name} | {', '.join(r['refined']['columns']) or '-'} | {r['refined']['rows']:,} | "
                  f"{r['refined']['values']:,} | {statistics.median(r['before_seconds']):.2f} | "
                  f"{statistics.median(r['after_seconds']):.2f} | **{r['ratio']:.2f}x** |")
    md += ["", "Cut points per column, without / with the refinement: " + "; ".join(
        f"{name}: {r['cuts_before']} / {r['cuts_after']}" for name, r in a.items()), ""]
    md += ["## (b) Cut points against Weka's MDLP (defaults)", ""]
    if "datasets" in b:
        md += [f"{b['attributes']} numeric attributes of {len(b['datasets'])} datasets; "
               f"{b['wide']} of them have more distinct values than max_bins (1024).", "",
               "| cut points | attributes agreeing with Weka | of the wide ones |", "| --- | --- | --- |",
               f"| exact (the refinement, the default) | **{b['agree_exact']} of {b['attributes']} "
               f"({b['agree_exact'] / b['attributes']:.1%})** | {b['wide_agree_exact']} of {b['wide']} |",
               f"| among the quantile bins' edges | {b['agree_quantile']} of {b['attributes']} "
               f"({b['agree_quantile'] / b['attributes']:.1%}) | {b['wide_agree_quantile']} of {b['wide']} |", ""]
        diff = {n: t["disagree"] for n, t in b["datasets"].items() if t["disagree"]}
        if diff:
            md += ["Attributes whose exact cut points differ from Weka's:", ""]
            md += [f"- {n}: " + "; ".join(f"{c}: ours {v['ours']}, Weka {v['weka']}" for c, v in d.items())
                   for n, d in diff.items()]
            md.append("")
        if b["skipped"]:
            md += ["Skipped: " + "; ".join(b["skipped"]), ""]
    else:
        md += [f"Skipped: {b['skipped']}", ""]
    md += ["## (c) 10-fold cross-validated accuracy (binning=)", "",
           f"Agrawal, {c['rows']:,} rows, 5% perturbation, depth <= {c['max_depth']}; mean over folds (std in the "
           "JSON). `quantile` is the undiscretized tree.", "",
           "| function | " + " | ".join(names) + " |", "|" + " --- |" * (len(names) + 1)]
    for f, row in c["table"].items():
        md.append(f"| {f} | " + " | ".join(f"{row[n]['accuracy_mean']:.4f}" for n in names) + " |")
    means = {n: statistics.mean(row[n]["accuracy_mean"] for row in c["table"].values()) for n in names}
    md.append("| mean | " + " | ".join(f"{means[n]:.4f}" for n in names) + " |")
    md += ["", "Numeric bins the tree grew on (sum over the 7 numeric attributes):", "",
           "| function | " + " | ".join(names) + " |", "|" + " --- |" * (len(names) + 1)]
    for f, row in c["table"].items():
        md.append(f"| {f} | " + " | ".join(str(sum(row[n]["numeric_bins"].values())) for n in names) + " |")
    best = max(METHODS, key=lambda n: means[n])
    summary = [(f"`Discretizer('mdlp').fit` with the refinement / without, {rows:,} rows: Agrawal F2; continuous",
                f"{a['Agrawal F2']['ratio']:.2f}x; {a['continuous']['ratio']:.2f}x")]
    if "datasets" in b:
        summary.append(("Numeric attributes whose MDLP cut points equal Weka's at the defaults: exact (quantile "
                        "bins' edges)", f"{b['agree_exact'] / b['attributes']:.1%} "
                        f"({b['agree_quantile'] / b['attributes']:.1%}) of {b['attributes']}"))
    summary.append((f"10-fold CV accuracy on F{functions[0]}..F{functions[-1]} (mean): quantile bins / mdlp "
                    f"intervals (best method: {best})",
                    f"{means['quantile']:.4f} / {means['mdlp']:.4f} ({means[best]:.4f})"))
    return harness.Result(summary, "\n".join(md), {"a": a, "b": b, "c": c})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
