"""A grid of settings grown in the same passes, and the gain-ratio search against gini's.

Grid: ``fit(cv=10, param_grid=...)`` (3 criteria x 3 smallest leaves x 2 prunings: 9 growths,
18 settings, 99 trees in one forest) against the same 9 growths fitted one by one
(``fit(cv=10, **growth)``; their second pruning is a re-prune, no pass) and scikit-learn's
``GridSearchCV(DecisionTreeClassifier(), {criterion: gini, entropy; min_samples_leaf: 1, 5, 20},
cv=10)`` (6 settings, 66 fits; scikit-learn has no gain ratio). In this process, kernels warm,
alternated, the median of each. Data: Agrawal F2 (numeric and nominal columns), a continuous
table (``make_classification``: every value distinct, quantile bins) and a wide one (200 columns).

Whole process, 1M rows from 16 Parquet files (Agrawal F2, and a continuous table: 20 columns, every
value distinct, a 0/1 class): ``dasktree fit DATA --cv 10 --grid criterion=gini,entropy,gain_ratio``
(depth 10: 3 growths of 11 trees, one forest) beside the same command without the grid (gini alone)
and LightGBM's script (import, load, ``cv(nfold=10)``
of one tree of that depth, the final train: :func:`benchmarks.jobs.lightgbm_cv`), alternated; the
command's own breakdown (pass 0, level passes, their split search) from its ``--json`` report.

Gain ratio: the split search of a level pass (:func:`dasktree.levels.level_search.search_group`)
on the very histograms and requests of a gini fit's level passes (the same data, the same tree),
searched with gini, entropy and gain ratio, alternated; the ratio of their summed times.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time

import numpy as np

from benchmarks import harness

CLAIM = "A cross-validated grid in the same passes: one forest for all settings; gain ratio searched near gini's speed"
NAME = "grid"
GRID = {"criterion": ["gini", "entropy", "gain_ratio"], "min_samples_leaf": [1, 5, 20],
        "prune": ["cv-min", "pessimistic"]}
SKLEARN_GRID = {"criterion": ["gini", "entropy"], "min_samples_leaf": [1, 5, 20]}
CRITERIA = "criterion=gini,entropy,gain_ratio"  # the whole-process grid, as the CLI takes it
DEPTH = 10
FOLDS = 10
WHOLE_ROWS = 1_000_000  # the whole-process rows: the claim's size at --quick too


def _datasets(quick: bool):
    import pandas as pd
    from sklearn.datasets import make_classification

    from dasktree.datasets import agrawal

    frame = agrawal.generate(5_000 if quick else 50_000, function=2, perturbation=0.05, seed=2)
    y = frame.pop(agrawal.TARGET).to_numpy()
    out = [("agrawal F2", frame, y, ["car", "zipcode"])]
    for name, rows, cols in (("continuous", 3_000 if quick else 20_000, 20), ("wide", 1_000 if quick else 5_000, 200)):
        X, y = make_classification(rows, cols, n_informative=10, n_redundant=5, n_classes=3, flip_y=0.05,
                                   random_state=0)
        out.append((f"{name} ({cols} columns)", pd.DataFrame(X, columns=[f"x{i}" for i in range(cols)]), y, []))
    return out


def _grid_times(X, y, nominal, repeat: int) -> dict:
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.tree import DecisionTreeClassifier

    from dasktree.fit import fit
    from dasktree.levels.settings import GROWTH, expand_grid
    from dasktree.model.pruning import prune_model

    growths = [s for s in expand_grid(GRID) if s["prune"] == "cv-min"]
    ordinal = X.copy()
    for column in nominal:
        ordinal[column] = ordinal[column].astype("category").cat.codes

    def grid():
        return fit(X, y, nominal=nominal, cv=10, param_grid=GRID)

    def separate():
        for setting in growths:
            model = fit(X, y, nominal=nominal, cv=10, keep_fold_trees=True, **setting)
            prune_model(model, mode="pessimistic")

    def sklearn():
        GridSearchCV(DecisionTreeClassifier(random_state=0), SKLEARN_GRID,
                     cv=KFold(10, shuffle=True, random_state=0)).fit(ordinal, y)

    grid()  # compile every criterion's kernels
    times: dict[str, list[float]] = {"grid": [], "separate": [], "sklearn": []}
    for _ in range(repeat):
        for name, job in (("grid", grid), ("separate", separate), ("sklearn", sklearn)):
            started = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - started)
    model = grid()
    alone = [fit(X, y, nominal=nominal, cv=10, **s).report["forest_nodes"] for s in growths]
    return {"seconds": times, "forest_nodes": model.report["forest_nodes"], "separate_nodes": int(sum(alone)),
            "passes": model.report["passes"], "best_params": model.report["grid"]["best_params"],
            "best_score": model.report["grid"]["best_score"], "growths": len(growths),
            "settings": len(expand_grid(GRID)), "growth_keys": [k for k in GRID if k in GROWTH]}


def _search_times(X, y, nominal, repeat: int) -> dict:
    """Each criterion's split search on the histograms of a gini fit's level passes.

    Each pass's histogram is searched with every criterion (alternated, ``repeat`` times) while
    the fit holds it, then let go: holding every pass's histogram would take gigabytes on the
    wide table."""
    from dasktree.engine import local_runner
    from dasktree.fit import fit

    search_group = local_runner.search_group
    seconds: dict[str, list[float]] = {"gini": [0.0] * repeat, "entropy": [0.0] * repeat,
                                       "gain_ratio": [0.0] * repeat}
    passes = []

    def record(hist, requests, context):
        contexts = {c: dataclasses.replace(context, split=dataclasses.replace(context.split, criterion=c))
                    for c in seconds}
        if not passes:  # compile
            for c in seconds:
                search_group(hist, requests, contexts[c])
        passes.append(len(requests))
        for i in range(repeat):
            for criterion in seconds:
                started = time.perf_counter()
                search_group(hist, requests, contexts[criterion])
                seconds[criterion][i] += time.perf_counter() - started
        return search_group(hist, requests, context)

    local_runner.search_group = record  # instrumentation: the runner's search, timed as it runs
    try:
        fit(X, y, nominal=nominal, cv=10, max_depth=12)
    finally:
        local_runner.search_group = search_group
    return {"seconds": seconds, "passes": len(passes),
            "gain_ratio_over_gini": harness.median(seconds["gain_ratio"]) / harness.median(seconds["gini"])}


def continuous_parquet(rows: int, columns: int = 20) -> str:
    """A continuous table as 16 Parquet files under ``benchmarks/data/``: ``make_classification``
    (one draw: 10 informative columns, 5 redundant, 2 classes, 5% of labels flipped), float64
    ``x0..`` (every value distinct) and the 0/1 ``class``; returns its directory."""
    import pyarrow as pa
    from sklearn.datasets import make_classification

    from benchmarks.regression import FILES, write_files

    def tables():
        X, y = make_classification(rows, columns, n_informative=10, n_redundant=5, n_classes=2, flip_y=0.05,
                                   random_state=0)
        for part in np.array_split(np.arange(rows), FILES):
            yield pa.table({**{f"x{j}": X[part, j] for j in range(columns)}, "class": y[part]})

    return write_files(os.path.join(harness.DATA, f"classification-{columns}-{rows}-{FILES}"), tables())


def _whole_process(path: str, repeat: int) -> dict:
    """``dasktree fit --cv 10 --grid criterion=...`` beside LightGBM's cv + train script, whole processes."""
    out = os.path.join(tempfile.mkdtemp(prefix="dasktree-bench-"), "model.json")
    fit = harness.dasktree_command("fit", path, "--target", "class", "--out", out, "--overwrite", "--max-depth",
                                   str(DEPTH), "--cv", str(FOLDS), "--grid", CRITERIA, "--quiet", "--json")
    first = os.path.join(path, sorted(f for f in os.listdir(path) if f.endswith(".parquet"))[0])
    warm = [first if a == path else a for a in fit]
    harness.run_process(warm)  # not kept: numba's cache of compiled kernels (one file's fit compiles them all)
    alone = [a for a in fit if a not in ("--grid", CRITERIA)]  # the default criterion (gini) alone
    runs = harness.alternate({"grid": fit, "alone": alone,
                              "LightGBM": harness.job("lightgbm-cv", path, DEPTH, FOLDS, "class")}, repeat)
    reports = [harness.last_json(r) for r in runs["grid"]]
    alone_reports = [harness.last_json(r) for r in runs["alone"]]
    m = harness.median
    return {"seconds": {name: [r["seconds"] for r in rs] for name, rs in runs.items()},
            "pass0": m([r["run"]["seconds"]["pass0"] for r in reports]),
            "levels": m([sum(lv["seconds"] for lv in r["run"]["levels"]) for r in reports]),
            "search": m([r["run"]["seconds"]["search"] for r in reports]),
            "fit_total": m([r["run"]["seconds"]["total"] for r in reports]),
            "alone_levels": m([sum(lv["seconds"] for lv in r["run"]["levels"]) for r in alone_reports]),
            "alone_forest_nodes": alone_reports[0]["report"]["forest_nodes"],
            "passes": reports[0]["report"]["passes"], "forest_nodes": reports[0]["report"]["forest_nodes"],
            "best_params": reports[0]["report"]["grid"]["best_params"],
            "cv_accuracy": {"dasktree": reports[0]["report"]["grid"]["best_score"],
                            "LightGBM": harness.last_json(runs["LightGBM"][0])["cv_accuracy"]}}


def run(quick: bool) -> harness.Result:
    repeat = 1 if quick else 3
    whole = {}
    for name, path in (("Agrawal F2", harness.agrawal(WHOLE_ROWS)), ("continuous (20 columns)",
                                                                       continuous_parquet(WHOLE_ROWS))):
        print(f"  whole process: {name}", flush=True)
        whole[name] = _whole_process(path, 3)  # a median of 3: one slow run on a shared machine is common
    rows = []
    for name, X, y, nominal in _datasets(quick):
        print(f"  {name}", flush=True)
        rows.append({"dataset": name, "rows": len(X), "columns": X.shape[1],
                     "grid": _grid_times(X, y, nominal, repeat), "search": _search_times(X, y, nominal, repeat)})
    m = harness.median
    table = ["| dataset | rows x columns | grid (18 settings) s | 9 growths one by one s | grid / one by one | "
             "scikit-learn GridSearchCV (6 settings) s | grid / GridSearchCV | forest nodes / separate nodes | "
             "best setting (CV accuracy) |", "|" + "---|" * 9]
    search = ["| dataset | level passes | gini s | entropy s | gain ratio s | gain ratio / gini |", "|" + "---|" * 6]
    for r in rows:
        g, s = r["grid"], r["search"]
        t = {k: m(v) for k, v in g["seconds"].items()}
        table.append(f"| {r['dataset']} | {r['rows']} x {r['columns']} | {t['grid']:.2f} | {t['separate']:.2f} | "
                     f"{t['grid'] / t['separate']:.2f} | {t['sklearn']:.2f} | {t['grid'] / t['sklearn']:.2f} | "
                     f"{g['forest_nodes']} / {g['separate_nodes']} | {g['best_params']} ({g['best_score']:.4f}) |")
        st = {k: m(v) for k, v in s["seconds"].items()}
        search.append(f"| {r['dataset']} | {s['passes']} | {st['gini']:.3f} | {st['entropy']:.3f} | "
                      f"{st['gain_ratio']:.3f} | {s['gain_ratio_over_gini']:.2f} |")
    ratios = [m(r["grid"]["seconds"]["grid"]) / m(r["grid"]["seconds"]["separate"]) for r in rows]
    whole_table = ["| data | `dasktree fit --cv 10 --grid criterion=...` s | LightGBM cv + train script s | "
                   "grid / LightGBM | `--cv 10` gini alone s | grid / alone | pass 0 s | level passes s (their "
                   "split search s), grid / alone | passes | forest nodes, grid / alone | best setting | "
                   "CV accuracy ours (best setting) / LightGBM |", "|" + "---|" * 12]
    for name, w in whole.items():
        t = {k: m(v) for k, v in w["seconds"].items()}
        whole_table.append(f"| {name} | {t['grid']:.2f} | {t['LightGBM']:.2f} | {harness.ratio(t['grid'], t['LightGBM'])} "
                           f"| {t['alone']:.2f} | {harness.ratio(t['grid'], t['alone'])} | {w['pass0']:.2f} | "
                           f"{w['levels']:.2f} ({w['search']:.2f}) / {w['alone_levels']:.2f} | {w['passes']} | "
                           f"{w['forest_nodes']} / {w['alone_forest_nodes']} | {w['best_params']} | "
                           f"{w['cv_accuracy']['dasktree']:.4f} / {w['cv_accuracy']['LightGBM']:.4f} |")
    summary = [
        ("`dasktree fit --cv 10 --grid criterion=gini,entropy,gain_ratio`, 1M rows from Parquet, whole process / "
         "LightGBM's cv(nfold=10) + train script (target at most 1x)",
         " / ".join(f"{name.split(' (')[0]} {harness.ratio(m(w['seconds']['grid']), m(w['seconds']['LightGBM']))}"
                    for name, w in whole.items())),
        ("grid of 18 settings (cv=10) / its 9 growths fitted one by one, time",
         " / ".join(f"{r['dataset'].split(' (')[0]} {x:.2f}" for r, x in zip(rows, ratios))),
        ("grid of 18 settings / scikit-learn GridSearchCV of 6, time",
         " / ".join(f"{r['dataset'].split(' (')[0]} {m(r['grid']['seconds']['grid']) / m(r['grid']['seconds']['sklearn']):.2f}"
                    for r in rows)),
        ("gain ratio / gini split search, same histograms",
         " / ".join(f"{r['dataset'].split(' (')[0]} {r['search']['gain_ratio_over_gini']:.2f}" for r in rows)),
    ]
    w_repeat = len(next(iter(whole.values()))["seconds"]["grid"])
    markdown = "\n".join([
        f"Whole process, {WHOLE_ROWS:,} rows in 16 Parquet files, depth {DEPTH}, {FOLDS}-fold CV, a grid of the 3 "
        "criteria (3 growths of 11 trees as one forest), beside LightGBM's script (import, load, cv(nfold=10) of one "
        f"tree of depth {DEPTH}, the final train); wall seconds, median of {w_repeat} alternated runs (the kernels "
        "compiled beforehand by a fit of one file). Pass 0, the level passes and their split search are the "
        "command's own figures (its --json report). The continuous table: make_classification, 20 float64 columns "
        "(every value distinct), 2 classes, 5% of labels flipped. Alone: the same command without --grid (gini), "
        "for what the grid adds. The machine was shared with other work while this ran.", "",
        *whole_table, "",
        "In this process, compiled kernels warm, alternated; medians of "
        f"{repeat} run(s). The machine was shared with other work while this ran: seconds are inflated and noisy, "
        "ratios within a row are what to read.", "",
        "Grid: dasktree grows the 9 growths (criterion x min_samples_leaf) of 18 settings (x prune cv-min, "
        "pessimistic) with 10 fold trees each as one forest of 99 trees, in one pass per level; one by one is 9 fits "
        "with cv=10, each re-pruned for the second pruning (no pass). scikit-learn fits 6 settings x 10 folds "
        "+ the refit (nominal columns as category codes).", "",
        *table, "",
        "Split search on the histograms of a gini fit's level passes (max_depth 12, cv=10: the same data, the "
        "same tree), searched with each criterion:", "",
        *search,
    ])
    return harness.Result(summary, markdown, {"whole_process": whole, "datasets": rows, "repeat": repeat})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
