"""Forests grown in the same passes, beside scikit-learn's forest and LightGBM's random forest mode.

Data: the Agrawal et al. (1993) generator, function 2, 5% perturbation (``harness.agrawal``), 16
Parquet files: files 0-13 train, files 14-15 are the held-out rows the accuracy is measured on.
Three learners, each in its own process, alternated, every one with the same forest:
``n_estimators`` trees of ``max_depth`` at most (our forests do not finish small nodes in memory
yet: every level is a pass), a third of the 9 attributes per node (``max_features="sqrt"``), and
bootstraps (Poisson(1) bags for dasktree; scikit-learn's bootstrap; LightGBM's ``boosting="rf"``
with ``bagging_fraction=0.632`` (the share of rows a Poisson(1) bag holds), ``bagging_freq=1`` and
``feature_fraction_bynode=1/3``, ``num_leaves = 2**max_depth``):

- ``dasktree``: ``dasktree.fit_forest`` on the training files themselves (the Parquet read is in
  the fit), then the held-out files predicted;
- ``scikit-learn``: the training files read with pandas, ``RandomForestClassifier(n_jobs=2)``;
- ``lightgbm``: the same read, ``LGBMClassifier(boosting_type="rf", n_jobs=2)``.

Each process times its read + fit alone (the imports and an untimed warm-up fit of 2,000 rows not
counted: numba's compiled kernels loaded) and prints it with its held-out accuracy; the harness
takes the peak memory of the whole process. Ratios in one run: the machine is shared.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from benchmarks import harness

NAME = "forests"
CLAIM = ("Forests grown in the same passes: 100 trees beside scikit-learn's forest (n_jobs=2) and "
         "LightGBM's rf mode with the same bagging and feature fraction")
TARGET = "class"


def _files(path: str) -> tuple[list[str], list[str]]:
    files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".parquet"))
    return files[:14], files[14:]


def _frame(files: list[str]):
    import pandas as pd

    frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return frame.drop(columns=[TARGET]).to_numpy(dtype=np.float64), frame[TARGET].to_numpy()


def one(learner: str, path: str, trees: int, depth: int) -> dict:
    """The measured process: read + fit seconds and the held-out accuracy, as JSON."""
    train, test = _files(path)
    X_test, y_test = _frame(test)
    if learner == "dasktree":
        import pyarrow.parquet as pq

        import dasktree

        warm = pq.read_table(train[0]).slice(0, 2000).to_pandas()
        dasktree.fit_forest(warm, target=TARGET, n_estimators=4, max_depth=3)
        started = time.perf_counter()
        model = dasktree.fit_forest(train, target=TARGET, n_estimators=trees, max_depth=depth, random_state=0)
        seconds = time.perf_counter() - started
        import pyarrow as pa

        table = pa.concat_tables([pq.read_table(f) for f in test])
        predicted = np.asarray(model.classes)[model.predict_codes(table)]
        return {"seconds": seconds, "accuracy": float(np.mean(predicted == y_test)), "passes": model.report["passes"],
                "leaves": model.report["leaves"]}
    if learner == "sklearn":
        from sklearn.ensemble import RandomForestClassifier

        make = lambda: RandomForestClassifier(trees, max_depth=depth, max_features="sqrt", n_jobs=2, random_state=0)  # noqa: E731
    else:
        from lightgbm import LGBMClassifier

        make = lambda: LGBMClassifier(boosting_type="rf", n_estimators=trees, max_depth=depth,  # noqa: E731
                                      num_leaves=2**depth, bagging_fraction=0.632, bagging_freq=1,
                                      feature_fraction_bynode=1 / 3, min_child_samples=1, n_jobs=2, verbose=-1,
                                      random_state=0)
    X0, y0 = _frame(train[:1])
    make().fit(X0[:2000], y0[:2000])
    started = time.perf_counter()
    X, y = _frame(train)
    model = make().fit(X, y)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "accuracy": float(np.mean(model.predict(X_test) == y_test))}


def run(quick: bool) -> harness.Result:
    rows, trees, depth, repeat = (50_000, 20, 10, 1) if quick else (1_000_000, 100, 12, 3)
    path = harness.agrawal(rows)
    learners = ["dasktree", "sklearn", "lightgbm"]
    commands = {name: [sys.executable, "-m", "benchmarks.forests", "--one", name, path, str(trees), str(depth)]
                for name in learners}
    label = f"Agrawal F2, {rows:,} rows ({rows * 14 // 16:,} trained), {trees} trees of depth <= {depth}"
    print(label, flush=True)
    runs = harness.alternate(commands, repeat)
    measured = {}
    for name, done in runs.items():
        outs = [harness.last_json(r) for r in done]
        measured[name] = {"seconds": harness.median([o["seconds"] for o in outs]),
                          "process_seconds": harness.median([r["seconds"] for r in done]),
                          "peak_mb": harness.median([r["peak_bytes"] for r in done]) / 2**20,
                          **{k: v for k, v in outs[-1].items() if k != "seconds"}}
    ours = measured["dasktree"]
    lines = [f"{label}. Median of {repeat} alternated runs, each learner in its own process; read + fit "
             "seconds by the process's own clock, peak of the whole process. Targets (issue #55): at most 1.0x "
             "LightGBM's rf mode and 0.5x scikit-learn's forest at 1M rows, 100 trees.", "",
             "| learner | read + fit | process | peak | held-out accuracy | dasktree / this |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, m in measured.items():
        lines.append(f"| {name} | {m['seconds']:.2f} s | {m['process_seconds']:.2f} s | {m['peak_mb']:.0f} MB | "
                     f"{m['accuracy']:.4f} | {harness.ratio(ours['seconds'], m['seconds'])} |")
    lines += ["", f"dasktree: {ours['passes']} passes, {ours['leaves']} leaves in all."]
    summary = [(f"forest / scikit-learn's forest (n_jobs=2), {label}",
                f"{harness.ratio(ours['seconds'], measured['sklearn']['seconds'])}, accuracy "
                f"{ours['accuracy']:.4f} vs {measured['sklearn']['accuracy']:.4f}"),
               (f"forest / LightGBM rf, {label}",
                f"{harness.ratio(ours['seconds'], measured['lightgbm']['seconds'])}, accuracy "
                f"{ours['accuracy']:.4f} vs {measured['lightgbm']['accuracy']:.4f}")]
    return harness.Result(summary, "\n".join(lines) + "\n", {"label": label, "measured": measured})


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        learner, path, trees, depth = sys.argv[2:6]
        print(json.dumps(one(learner, path, int(trees), int(depth))))
    else:
        harness.main(sys.modules[__name__])
