"""Supervised discretization from one histogram pass: its cost, and the accuracy of trees on its intervals.

(a) Cost. On Agrawal F2 (5% perturbation, 16 Parquet files),
    ``Discretizer("mdlp").fit`` of every numeric attribute (salary, commission, age,
    elevel, hvalue, hyears, loan; car and zipcode are codes, nominal) against the
    histogram pass alone: pass 0 and one histogram pass with the same fine bins
    through the same runner, on the same 2-process cluster, with a no-op instead of
    the per-attribute MDLP tasks. Runs alternate, medians after a warm-up of each.
(c) Accuracy. 10-fold cross-validated accuracy of a depth-limited tree
    (``DaskTreeClassifier(cv=10, max_depth=D, binning=METHOD)``: the tree grown on
    the method's intervals as its bins) for each method, against
    ``binning="quantile"`` (the undiscretized tree), on Agrawal F1..F10 (5%
    perturbation) in memory. A supervised discretization computed from all rows has
    seen each fold's held-out classes: a small optimistic bias quantile bins do not
    have.
"""

from __future__ import annotations

import statistics
import sys
import time

from benchmarks import harness

NAME = "discretize"
CLAIM = "MDLP discretization of every numeric column in one histogram pass, and trees on the intervals"
NUMERIC = ["salary", "commission", "age", "elevel", "hvalue", "hyears", "loan"]
NOMINAL = ["car", "zipcode"]
TARGET = "class"
METHODS = ["mdlp", "distance", "chimerge", "equal_width", "equal_frequency", "optimal"]


# ---------------------------------------------------------------- (a) histogram pass alone
def _noop(hist, chunk):
    return None


def histogram_pass_alone(client, path: str, max_bins: int) -> float:
    """Pass 0 and one histogram pass over the same fine bins, through the same runner, no discretization."""
    from dasktree.discretize.jobs import fine_spec
    from dasktree.engine.runners import DaskRunner
    from dasktree.io.schema import Roles, resolve_roles
    from dasktree.io.sources import open_source
    from dasktree.kernels.plans import PassPlan

    started = time.perf_counter()
    source, target = open_source(path, target=TARGET)
    roles = resolve_roles(source.schema, target, features=NUMERIC + NOMINAL, nominal=NOMINAL)
    numeric = Roles(target, tuple(NUMERIC), tuple("numeric" for _ in NUMERIC))
    runner = DaskRunner(client, source, numeric, cache=False)
    try:
        summary = runner.summary(max_bins)
        spec, _ = fine_spec(summary, numeric, max_bins=max_bins)
        runner.prepare(spec, 1, level_passes=False)
        plan = PassPlan.root(spec.widths, spec.n_classes)
        runner.apply_pass(plan, _noop, [None], "histogram")
        assert runner.passes == 2 and roles.features
    finally:
        runner.close()
    return time.perf_counter() - started


def discretize_fit(client, path: str, max_bins: int, method: str = "mdlp"):
    from dasktree import Discretizer

    started = time.perf_counter()
    d = Discretizer(method, max_bins=max_bins, client=client).fit(path, target=TARGET, features=NUMERIC + NOMINAL,
                                                                  nominal=NOMINAL)
    return time.perf_counter() - started, d


def part_a(client, path: str, repeat: int, max_bins: int) -> dict:
    histogram_pass_alone(client, path, max_bins)  # warm-up: page cache, numba cache, worker imports
    discretize_fit(client, path, max_bins)
    base, ours = [], []
    for _ in range(repeat):
        base.append(histogram_pass_alone(client, path, max_bins))
        seconds, d = discretize_fit(client, path, max_bins)
        ours.append(seconds)
    b, o = statistics.median(base), statistics.median(ours)
    return {
        "rows": d.report_["rows"], "attributes": list(d.cut_points_), "max_bins": max_bins,
        "histogram_pass_alone_seconds": [round(x, 3) for x in base],
        "mdlp_fit_seconds": [round(x, 3) for x in ours],
        "mdlp_fit_breakdown": d.run_["seconds"],
        "cuts": {k: len(v) for k, v in d.cut_points_.items()},
        "ratio": o / b,
    }


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
    from benchmarks.jobs import warm_cluster

    rows, cv_rows, functions, repeat, max_bins, depth = (
        (200_000, 5_000, [1, 2, 7], 1, 1024, 6) if quick else (1_000_000, 50_000, list(range(1, 11)), 3, 1024, 8))
    cluster, client = warm_cluster()
    try:
        a = part_a(client, harness.agrawal(rows), repeat, max_bins)
    finally:
        client.close()
        cluster.close()
    c = part_c(cv_rows, functions, depth)
    names = ["quantile", *METHODS]
    md = ["## (a) mdlp fit against the histogram pass alone", "",
          f"{a['rows']:,} Agrawal rows, 16 Parquet files, {len(a['attributes'])} numeric attributes, max_bins "
          f"{max_bins}, a 2-process cluster (the machine shared with other work); median of {repeat} alternated runs.",
          "", "| what | seconds (runs) | median |", "| --- | --- | --- |",
          f"| pass 0 + one histogram pass, no discretization | {a['histogram_pass_alone_seconds']} | "
          f"{statistics.median(a['histogram_pass_alone_seconds']):.2f} |",
          f"| Discretizer('mdlp').fit (pass 0 + histogram pass + a task per attribute) | {a['mdlp_fit_seconds']} | "
          f"{statistics.median(a['mdlp_fit_seconds']):.2f} |", "",
          f"Ratio **{a['ratio']:.2f}x**. Cut points found: {a['cuts']}.", "",
          "## (c) 10-fold cross-validated accuracy (binning=)", "",
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
    summary = [(f"`Discretizer('mdlp').fit` of every numeric column / the histogram pass alone, {rows:,} rows",
                f"{a['ratio']:.2f}x"),
               (f"10-fold CV accuracy on F{functions[0]}..F{functions[-1]} (mean): quantile bins / mdlp intervals "
                f"(best method: {best})", f"{means['quantile']:.4f} / {means['mdlp']:.4f} ({means[best]:.4f})")]
    return harness.Result(summary, "\n".join(md), {"a": a, "c": c})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
