"""A grid of settings grown in the same passes, and the gain-ratio search against gini's.

Grid: ``fit(cv=10, param_grid=...)`` (3 criteria x 3 smallest leaves x 2 prunings: 9 growths,
18 settings, 99 trees in one forest) against the same 9 growths fitted one by one
(``fit(cv=10, **growth)``; their second pruning is a re-prune, no pass) and scikit-learn's
``GridSearchCV(DecisionTreeClassifier(), {criterion: gini, entropy; min_samples_leaf: 1, 5, 20},
cv=10)`` (6 settings, 66 fits; scikit-learn has no gain ratio). In this process, kernels warm,
alternated, the median of each. Data: Agrawal F2 (numeric and nominal columns), a continuous
table (``make_classification``: every value distinct, quantile bins) and a wide one (200 columns).

Gain ratio: the split search of a level pass (:func:`dasktree.forest.level_search.search_group`)
on the very histograms and requests of a gini fit's level passes (the same data, the same tree),
searched with gini, entropy and gain ratio, alternated; the ratio of their summed times.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from benchmarks import harness

CLAIM = "A cross-validated grid in the same passes: one forest for all settings; gain ratio searched near gini's speed"
NAME = "grid"
GRID = {"criterion": ["gini", "entropy", "gain_ratio"], "min_samples_leaf": [1, 5, 20],
        "prune": ["cv-min", "pessimistic"]}
SKLEARN_GRID = {"criterion": ["gini", "entropy"], "min_samples_leaf": [1, 5, 20]}


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
    from dasktree.forest.settings import GROWTH, expand_grid
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
    """Each criterion's split search on the histograms of a gini fit's level passes."""
    from dasktree.engine import local_runner
    from dasktree.fit import fit

    captured = []
    search_group = local_runner.search_group

    def record(hist, requests, context):
        captured.append((hist.copy(), requests, context))
        return search_group(hist, requests, context)

    local_runner.search_group = record  # instrumentation: the runner's search, recorded as it runs
    try:
        fit(X, y, nominal=nominal, cv=10, max_depth=12)
    finally:
        local_runner.search_group = search_group
    seconds: dict[str, list[float]] = {"gini": [], "entropy": [], "gain_ratio": []}
    contexts = {c: [dataclasses.replace(ctx, split=dataclasses.replace(ctx.split, criterion=c)) for _, _, ctx in captured]
                for c in seconds}
    for criterion in seconds:  # compile
        for (hist, requests, _), context in zip(captured, contexts[criterion]):
            search_group(hist, requests, context)
    for _ in range(repeat):
        for criterion in seconds:
            started = time.perf_counter()
            for (hist, requests, _), context in zip(captured, contexts[criterion]):
                search_group(hist, requests, context)
            seconds[criterion].append(time.perf_counter() - started)
    return {"seconds": seconds, "passes": len(captured),
            "gain_ratio_over_gini": harness.median(seconds["gain_ratio"]) / harness.median(seconds["gini"])}


def run(quick: bool) -> harness.Result:
    repeat = 1 if quick else 3
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
    summary = [
        ("grid of 18 settings (cv=10) / its 9 growths fitted one by one, time",
         " / ".join(f"{r['dataset'].split(' (')[0]} {x:.2f}" for r, x in zip(rows, ratios))),
        ("grid of 18 settings / scikit-learn GridSearchCV of 6, time",
         " / ".join(f"{r['dataset'].split(' (')[0]} {m(r['grid']['seconds']['grid']) / m(r['grid']['seconds']['sklearn']):.2f}"
                    for r in rows)),
        ("gain ratio / gini split search, same histograms",
         " / ".join(f"{r['dataset'].split(' (')[0]} {r['search']['gain_ratio_over_gini']:.2f}" for r in rows)),
    ]
    markdown = "\n".join([
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
    return harness.Result(summary, markdown, {"datasets": rows, "repeat": repeat})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
