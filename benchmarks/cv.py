"""Cross-validation in one forest (Blockeel & Struyf 2001): fit + 10-fold CV in the passes of one fit.

On Agrawal data, 16 Parquet files, a stable function (F2 as generated) and an
unstable one (F7, 5% perturbation), depth 10:

- whole process, alternated, median of 3: ``dasktree fit``, ``dasktree fit --cv 10``
  and LightGBM's script (import, load, ``cv(nfold=10)`` of one tree of the same depth,
  then the final train);
- on a warm cluster (:func:`benchmarks.jobs.cv`): the plain fit, the forest (fit +
  10-fold CV, median of 3 alternated), and serial CV (the main tree and each fold
  tree in a fit of its own) once, the paper's comparison (overhead 27% and 81% on
  its Bongard data, serial about 1000%).
"""

from __future__ import annotations

import statistics
import sys
import tempfile

from benchmarks import harness

NAME = "cv"
CLAIM = "Fit + 10-fold cross-validation in one forest, against the plain fit, serial CV and LightGBM's cv"
DEPTH = 10
FOLDS = 10
DATA = {"F2 (stable)": (2, 0.0), "F7 (unstable, 5% perturbation)": (7, 0.05)}


def measure(rows: int, function: int, perturbation: float, repeat: int) -> dict:
    path = harness.agrawal(rows, function=function, perturbation=perturbation)
    out = f"{tempfile.mkdtemp(prefix='dasktree-bench-')}/model.json"
    fit = harness.dasktree_command("fit", path, "--target", "class", "--out", out, "--overwrite",
                                   "--max-depth", str(DEPTH),
                                   "--quiet", "--json")
    harness.run_process([*fit, "--cv", str(FOLDS)])  # not kept: numba's cache of compiled kernels, page cache
    runs = harness.alternate({"plain": fit, "forest": [*fit, "--cv", str(FOLDS)],
                              "LightGBM": harness.job("lightgbm-cv", path, DEPTH, FOLDS)}, repeat)
    warm = harness.last_json(harness.run_process(harness.job("cv", path, DEPTH, FOLDS, repeat)))
    forest_report = harness.last_json(runs["forest"][0])["report"]
    return {"rows": rows, "function": function, "perturbation": perturbation,
            "seconds": {name: [r["seconds"] for r in rs] for name, rs in runs.items()},
            "cv_accuracy": {"dasktree": forest_report["cv"]["accuracy_mean"],
                            "LightGBM": harness.last_json(runs["LightGBM"][0])["cv_accuracy"]},
            "warm": warm}


def run(quick: bool) -> harness.Result:
    rows, repeat = (200_000, 1) if quick else (1_000_000, 3)
    results = {label: measure(rows, f, p, repeat) for label, (f, p) in DATA.items()}
    md = [f"Agrawal data, {rows:,} rows in 16 Parquet files, depth {DEPTH}, {FOLDS}-fold CV, 2 cores (the machine "
          "shared with other work: read the ratios within this run). Whole-process wall seconds, median of "
          f"{repeat} alternated runs.", "",
          "| data | `dasktree fit` | `--cv 10` | LightGBM cv + train script | --cv 10 / plain | --cv 10 / LightGBM | "
          "CV accuracy ours / LightGBM |", "|---|---|---|---|---|---|---|"]
    summary = []
    for label, r in results.items():
        s = {name: statistics.median(v) for name, v in r["seconds"].items()}
        md.append(f"| {label} | {s['plain']:.2f} | {s['forest']:.2f} | {s['LightGBM']:.2f} | "
                  f"{harness.ratio(s['forest'], s['plain'])} | {harness.ratio(s['forest'], s['LightGBM'])} | "
                  f"{r['cv_accuracy']['dasktree']:.4f} / {r['cv_accuracy']['LightGBM']:.4f} |")
        short = label.split()[0]
        summary.append((f"`dasktree fit --cv 10` {short}, whole process / LightGBM cv(nfold=10) + train script "
                        "(/ plain `dasktree fit`)",
                        f"{harness.ratio(s['forest'], s['LightGBM'])} ({harness.ratio(s['forest'], s['plain'])})"))
    md += ["", "On a warm cluster (fits in one process, kernels loaded; plain and forest median of "
           f"{repeat} alternated, serial once):", "",
           "| data | plain s | forest s | serial s | forest / plain | serial / plain | serial / forest |",
           "|---|---|---|---|---|---|---|"]
    for label, r in results.items():
        w = r["warm"]
        md.append(f"| {label} | {w['plain']:.2f} | {w['forest']:.2f} | {w['serial']:.2f} | "
                  f"{harness.ratio(w['forest'], w['plain'])} | {harness.ratio(w['serial'], w['plain'])} | "
                  f"{harness.ratio(w['serial'], w['forest'])} |")
        summary.append((f"warm: fit + 10-fold CV in one forest / plain fit (serial CV / forest), {label.split()[0]}",
                        f"{harness.ratio(w['forest'], w['plain'])} ({harness.ratio(w['serial'], w['forest'])})"))
    md += ["", "Distinct tests per level among the trees sharing a node:", ""]
    md += [f"- {label}: " + ", ".join(f"{x:.2f}" for x in r["warm"]["distinct_tests_per_level"])
           for label, r in results.items()]
    return harness.Result(summary, "\n".join(md), {"rows": rows, "results": results})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
