"""Forests grown in the same passes, beside scikit-learn's forest and LightGBM's random forest mode.

Data: the Agrawal et al. (1993) generator, function 2, 5% perturbation (``harness.agrawal``), 16
Parquet files: files 0-13 train, files 14-15 are the held-out rows the accuracy is measured on.
Three learners, each in its own process, alternated, every one with the same forest:
``n_estimators`` trees of ``max_depth`` at most (ours gather the rows once and grow the members from
them in memory: :mod:`dasktree.levels.small`), a third of the 9 attributes per node (``max_features="sqrt"``), and
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

Accuracy beside scikit-learn's forests of 100 trees, on the accuracy claim's public sets and folds
(:mod:`benchmarks.accuracy`: the report suite, one stratified 10-fold assignment per set, seed 0;
the regression sets, 10-fold, seed 0): ``DaskForestClassifier(n_estimators=100)`` and
``RandomForestClassifier(100)`` (nominal columns one-hot, as the accuracy claim gives scikit-learn's
tree), both at their defaults (``max_features="sqrt"``, bootstraps, trees grown in full), seeds 0;
a set's accuracy its rows classified right over its rows, pooled over the folds; the suite's mean
over its sets. Regression: ``DaskForestRegressor(n_estimators=100)`` and
``RandomForestRegressor(100)`` (``max_features=1.0``), the pooled 10-fold R^2. ``--part accuracy``
runs this part alone and keeps the speed part's figures of the last saved run (said where they
came from); ``--part speed`` the speed part alone (keeping the saved accuracy figures);
``--sets A,B`` and ``--max-rows N`` run a subset of the sets (said in the results). The sets run
smallest first, and the results are written after each set: a run stopped early leaves the sets it
measured, said so.
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
    """The measured process: read + fit seconds and the held-out accuracy, as JSON. ``path`` holds 16
    Parquet files with a ``class`` column (the first 14 trained on): the speed part's Agrawal data, or
    another such table (e.g. :func:`benchmarks.grid.continuous_parquet`'s continuous columns)."""
    train, test = _files(path)
    X_test, y_test = _frame(test)
    if learner == "dasktree":
        import pyarrow.parquet as pq

        import dasktree

        warm = pq.read_table(train[0]).slice(0, 2000).to_pandas()
        dasktree.fit_forest(warm, target=TARGET, n_estimators=4, max_depth=depth)  # the grower's kernels loaded too
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


ACCURACY_TREES = 100
QUICK_ROWS = 5000  # --quick leaves out the sets with more rows


def add_arguments(parser) -> None:
    parser.add_argument("--part", choices=("speed", "accuracy", "both"), default="both",
                        help="the speed part (Agrawal beside scikit-learn and LightGBM), the accuracy part (public "
                             "sets beside scikit-learn's forests), or both (default); a part alone keeps the other's "
                             "figures from the saved results/forests.json")
    parser.add_argument("--sets", default=None, help="accuracy: comma-separated set names (default: the report "
                                                     "suite and the regression sets)")
    parser.add_argument("--max-rows", type=int, default=None, metavar="N",
                        help="accuracy: leave out the sets of more than N rows (said in the results)")


def partial(options) -> bool:
    return False  # a part alone still writes results/forests.*: the other part's saved figures are kept


def _saved() -> dict:
    path = os.path.join(harness.RESULTS, f"{NAME}.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        record = json.load(f)
    return {"figures": record.get("figures", {}), "stamp": record.get("stamp", {}), "quick": record.get("quick")}


def _classifier_fold(X, y, nominal, fold, learner: str) -> dict:
    from benchmarks import accuracy_peers as peers

    if learner == "dasktree":
        from dasktree import DaskForestClassifier

        return peers._each_fold(X, y, fold, lambda Xtr, ytr: DaskForestClassifier(
            n_estimators=ACCURACY_TREES, random_state=0).fit(Xtr, ytr, nominal=nominal),
            lambda m: m.model_.report["leaves"])
    from sklearn.ensemble import RandomForestClassifier

    return peers._each_fold(X, y, fold, lambda Xtr, ytr: _one_hot(nominal, RandomForestClassifier(
        ACCURACY_TREES, random_state=0, n_jobs=1)).fit(Xtr, ytr), lambda m: sum(t.get_n_leaves()
                                                                                for t in m[-1].estimators_))


def _regressor_fold(X, y, nominal, fold, learner: str) -> dict:
    from benchmarks import accuracy_peers as peers

    if learner == "dasktree":
        from dasktree import DaskForestRegressor

        return peers._each_fold(X, y, fold, lambda Xtr, ytr: DaskForestRegressor(
            n_estimators=ACCURACY_TREES, random_state=0).fit(Xtr, ytr, nominal=nominal),
            lambda m: m.model_.report["leaves"], peers._sse)
    from sklearn.ensemble import RandomForestRegressor

    return peers._each_fold(X, y, fold, lambda Xtr, ytr: _one_hot(nominal, RandomForestRegressor(
        ACCURACY_TREES, random_state=0, n_jobs=1)).fit(Xtr, ytr), lambda m: sum(t.get_n_leaves()
                                                                                for t in m[-1].estimators_), peers._sse)


def _one_hot(nominal, forest):
    """scikit-learn's forest after the accuracy claim's encoding: nominal columns one-hot, missing a category."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    encode = ColumnTransformer([("nominal", OneHotEncoder(handle_unknown="ignore", sparse_output=False), nominal)],
                               remainder="passthrough")
    return make_pipeline(encode, forest)


def accuracy_part(quick: bool, options=None, so_far=None) -> dict:
    """Each set's pooled 10-fold accuracy (R^2) of both learners on the accuracy claim's folds, the
    smallest sets first; ``so_far(figures)`` after each set."""
    from benchmarks import accuracy, accuracy_peers as peers, public_data

    sets = {n.strip() for n in options.sets.split(",")} if options is not None and options.sets else None
    most = QUICK_ROWS if quick else getattr(options, "max_rows", None)
    chosen = [d for d in public_data.CLASSIFICATION if d.suite == "report"] + list(public_data.REGRESSION)
    chosen = [d for d in chosen if sets is None or d.name in sets]
    skipped = [f"set skipped: {why}" for d in chosen if (why := public_data.missing(d))]
    chosen = [d for d in chosen if not public_data.missing(d)]
    public_data.prepare(chosen)
    from dasktree import DaskForestClassifier

    from sklearn.datasets import load_iris

    DaskForestClassifier(n_estimators=4).fit(*load_iris(return_X_y=True))  # compiled kernels loaded, untimed
    rows, left_out = [], []
    loaded_sets = sorted(((d, public_data.load(d)) for d in chosen), key=lambda pair: len(pair[1].y))
    for dataset, loaded in loaded_sets:
        if most is not None and len(loaded.y) > most:
            left_out.append(f"{dataset.name} ({len(loaded.y):,} rows)")
            continue
        regression = dataset.suite == "regression"
        fold = (peers.regression_folds(len(loaded.y), accuracy.FOLDS, accuracy.SEED) if regression
                else peers.folds(loaded.y, accuracy.FOLDS, accuracy.SEED))
        row = {"dataset": dataset.name, "task": "regression" if regression else "classification",
               "rows": len(loaded.y), "attributes": loaded.X.shape[1], "nominal": len(loaded.nominal),
               "learners": {}}
        squares = float(np.sum((loaded.y - loaded.y.mean()) ** 2)) if regression else None
        for learner in ("dasktree", "scikit-learn"):
            started = time.perf_counter()
            r = (_regressor_fold if regression else _classifier_fold)(loaded.X, loaded.y, loaded.nominal, fold,
                                                                      learner)
            r["wall"] = time.perf_counter() - started
            r["score"] = 1 - sum(r["sse"]) / squares if regression else sum(r["correct"]) / sum(r["rows"])
            row["learners"][learner] = r
        print(f"{dataset.name}: " + ", ".join(f"{n} {r['score']:.4f} ({sum(r['seconds']):.1f} s of fits)"
                                                 for n, r in row["learners"].items()), flush=True)
        rows.append(row)
        if so_far is not None:
            so_far(_accuracy_figures(rows, skipped, left_out))
    return _accuracy_figures(rows, skipped, left_out)


def _accuracy_figures(rows: list, skipped: list, left_out: list) -> dict:
    from benchmarks import accuracy

    return {"rows": list(rows), "skipped": skipped, "left_out": list(left_out), "trees": ACCURACY_TREES,
            "folds": accuracy.FOLDS, "seed": accuracy.SEED}


def _accuracy_lines(part: dict, when: str) -> tuple[list[str], list[tuple[str, str]]]:
    lines, summary = [f"## Accuracy beside scikit-learn's forests of {part['trees']} trees ({when})", "",
                      f"The accuracy claim's folds ({part['folds']}-fold, seed {part['seed']}; stratified for "
                      "classification), both learners at their defaults (`n_estimators=100`, seeds 0; scikit-learn's "
                      "nominal columns one-hot). Classification: rows classified right / rows, pooled over the folds; "
                      "regression: pooled R^2 (1 - the folds' squared errors / the squares about the mean). Times: "
                      "the fits alone, summed over the folds, on a shared machine (scikit-learn with n_jobs=1)."], []
    if part["left_out"] or part["skipped"]:
        lines += ["", "Not run: " + "; ".join(part["skipped"] + [f"{s}, over the row limit of this run"
                                                                 for s in part["left_out"]]) + "."]
    for task, measure in (("classification", "accuracy"), ("regression", "R^2")):
        rows = [r for r in part["rows"] if r["task"] == task]
        if not rows:
            continue
        lines += ["", f"| {task} set | rows | attributes (nominal) | dasktree {measure} | scikit-learn {measure} | "
                      "dasktree - scikit-learn | dasktree fits | scikit-learn fits |", "|" + " --- |" * 8]
        for r in rows:
            ours, theirs = r["learners"]["dasktree"], r["learners"]["scikit-learn"]
            lines.append(f"| {r['dataset']} | {r['rows']:,} | {r['attributes']} ({r['nominal']}) | "
                         f"{ours['score']:.4f} | {theirs['score']:.4f} | {ours['score'] - theirs['score']:+.4f} | "
                         f"{sum(ours['seconds']):.1f} s | {sum(theirs['seconds']):.1f} s |")
        mean = {n: float(np.mean([r["learners"][n]["score"] for r in rows])) for n in ("dasktree", "scikit-learn")}
        wins = [r["learners"]["dasktree"]["score"] - r["learners"]["scikit-learn"]["score"] for r in rows]
        record = f"{sum(d > 1e-9 for d in wins)}/{sum(abs(d) <= 1e-9 for d in wins)}/{sum(d < -1e-9 for d in wins)}"
        lines.append(f"| mean ({len(rows)} sets) | | | {mean['dasktree']:.4f} | {mean['scikit-learn']:.4f} | "
                     f"{mean['dasktree'] - mean['scikit-learn']:+.4f} | | |")
        target = "RandomForestClassifier(100)" if task == "classification" else "RandomForestRegressor(100)"
        summary.append((f"forest / {target}, mean {measure} over {len(rows)} {task} sets, same folds "
                        "(wins/ties/losses)", f"{mean['dasktree']:.4f} vs {mean['scikit-learn']:.4f} ({record})"))
    return lines, summary


def speed_part(quick: bool) -> dict:
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
    return {"label": label, "measured": measured, "repeat": repeat}


def _speed_lines(part: dict, when: str) -> tuple[list[str], list[tuple[str, str]]]:
    label, measured, repeat = part["label"], part["measured"], part.get("repeat", 1)
    ours = measured["dasktree"]
    lines = [f"## Speed beside scikit-learn's forest and LightGBM's rf mode ({when})", "",
             f"{label}. Median of {repeat} alternated runs, each learner in its own process; read + fit "
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
    return lines, summary


def _result(figures: dict, whens: dict) -> harness.Result:
    """The claim's text and summary; a part kept from an earlier run says so in its summary too (the
    results index dates a claim by the run that wrote it), and the record keeps where each kept part
    came from (``figures["kept"]``), so that a later run keeping it still says so."""
    lines, summary = [], []
    kept = {part: when for part, when in whens.items() if not when.startswith("this run")}
    for part, make in (("speed", _speed_lines), ("accuracy", _accuracy_lines)):
        if part in figures:
            more, rows = make(figures[part], whens[part])
            lines += ["", *more] if lines else more
            summary += [(what, f"{measured} ({kept[part]})") for what, measured in rows] if part in kept else rows
    return harness.Result(summary, "\n".join(lines) + "\n", {**figures, "kept": kept})


def run(quick: bool, options=None) -> harness.Result:
    part = getattr(options, "part", "both")
    saved = _saved() if part != "both" else {}
    kept = saved.get("figures", {})
    stamp = saved.get("stamp", {})
    kept_when = (f"kept from the saved run of {stamp.get('date', '?')}, commit {stamp.get('commit', '?')}"
                 + (", quick sizes" if saved.get("quick") else ""))
    earlier = kept.get("kept", {})  # the saved record's own kept parts: from the run that measured them
    this_run = "this run" + (", quick sizes" if quick else "")
    figures, whens = {}, {}
    if part in ("speed", "both"):
        figures["speed"], whens["speed"] = speed_part(quick), this_run
    elif "speed" in kept or "measured" in kept:  # the saved figures: this file's or the speed-only layout's
        figures["speed"] = kept.get("speed") or {k: kept[k] for k in ("label", "measured")}
        whens["speed"] = earlier.get("speed", kept_when)
    if part in ("accuracy", "both"):
        def so_far(part_figures: dict) -> None:  # a run cut short leaves the sets measured so far, said so
            whens["accuracy"] = f"{this_run}; still running: {len(part_figures['rows'])} sets done so far"
            harness.write(NAME, CLAIM, _result({**figures, "accuracy": part_figures}, whens), quick=quick)
            harness.gather()

        figures["accuracy"], whens["accuracy"] = accuracy_part(quick, options, so_far), this_run
    elif "accuracy" in kept:
        figures["accuracy"], whens["accuracy"] = kept["accuracy"], earlier.get("accuracy", kept_when)
    return _result(figures, whens)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        learner, path, trees, depth = sys.argv[2:6]
        print(json.dumps(one(learner, path, int(trees), int(depth))))
    else:
        harness.main(sys.modules[__name__])
