"""Regression trees: CV R^2 on public sets beside scikit-learn and rpart; whole-process fits beside LightGBM.

Accuracy: on the regression sets of :data:`benchmarks.public_data.REGRESSION` (ten sets shipped by
Debian's R packages, weka and scikit-learn), one shuffled 10-fold assignment per set (``KFold``,
seed 0) given to every learner (:mod:`benchmarks.accuracy_peers`): scikit-learn's
``DecisionTreeRegressor(random_state=0)`` (nominal columns one-hot), rpart's ``method="anova"``
pruned by the 1-SE rule, ``DaskTreeRegressor()`` and ``DaskTreeRegressor(cv=10)`` (its 10 inner
folds split each outer training fold and choose the pruning there). A set's R^2 is pooled over the
outer folds: 1 - the folds' squared errors / the squares about the set's mean.

Speed: whole processes from Parquet (16 files), alternated, median of 3, on three families of
data written once under ``benchmarks/data/``:

- Friedman #1 (``sklearn.datasets.make_friedman1``, 10 continuous columns, every value distinct,
  noise 1.0; each file its own seed), at 1M and 10M rows;
- Agrawal's columns (:func:`benchmarks.harness.agrawal`, F2, 5% perturbation) with ``hvalue``, the
  house value, as the target and the eight other attributes as features (the class left out):
  ``hvalue`` is drawn uniformly in a range set by ``zipcode`` and perturbed, so about 72% of its
  variance is explainable and the rest is noise a deep tree can only overfit;
- a wide table: Friedman #1 with 100 columns (5 informative), at 100,000 rows.

``dasktree fit DATA --target T --max-depth 10`` (the target is a float: a regression tree) beside
LightGBM's one-tree script (import + load + ``lgb.train(objective="regression", max_depth=10,
num_leaves=1024, max_bin=255, learning_rate=1, min_data_in_leaf=1)``, one round) and scikit-learn's
(``DecisionTreeRegressor(max_depth=10).fit``; not at 10M rows, where one fit takes minutes); once
cold (an empty ``NUMBA_CACHE_DIR``) on Friedman at 1M. ``dasktree fit --cv 10`` beside LightGBM's
``cv(nfold=10, stratified=False)`` + final train script at 1M rows (Friedman and Agrawal). The
breakdown is the warm command's own report: pass 0 and each level pass (``run.levels``), beside the
peers' own clocks of their fit alone.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import numpy as np

from benchmarks import accuracy_peers as peers
from benchmarks import harness, public_data

NAME = "regression"
CLAIM = ("Regression trees: 10-fold CV R^2 beside scikit-learn and rpart; whole-process fits and --cv 10 beside "
         "LightGBM and scikit-learn")
DEPTH = 10
FOLDS = 10
SEED = 0
FILES = 16
SETTINGS = {"dasktree": {}, "dasktree cv=10": {"cv": FOLDS}}
#: The regression sets halved for choosing the default, by a rule fixed before the candidates were measured:
#: the ten sets sorted by rows (swiss 47, bodyfat 71, airquality 116, cats 144, servo 167, birthwt 189, cpu 209,
#: ozone 361, diabetes 442, boston-housing 506), every other one from the smallest. The tuning half
#: chooses among the candidates (``--candidates``), the other half confirms the choice.
TUNING_SETS = ("swiss", "airquality", "servo", "cpu", "diabetes")
CONFIRM_SETS = ("bodyfat", "cats", "birthwt", "ozone", "boston-housing")


# ---------------------------------------------------------------- data

def write_files(path: str, tables) -> str:
    """Write the pyarrow tables of ``tables`` as ``part-NN.parquet`` in ``path``, once (atomically:
    a half-written directory is never taken for the data)."""
    import shutil

    import pyarrow.parquet as pq

    if os.path.isdir(path) and len([f for f in os.listdir(path) if f.endswith(".parquet")]) == FILES:
        return path
    partial = f"{path}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    for i, table in enumerate(tables):
        pq.write_table(table, os.path.join(partial, f"part-{i:02d}.parquet"))
    shutil.rmtree(path, ignore_errors=True)
    os.replace(partial, path)
    return path


def friedman(rows: int, features: int = 10) -> str:
    """Friedman #1 (``make_friedman1``, noise 1.0) as 16 Parquet files: float64 ``x0..`` and ``y``,
    file ``i`` drawn with seed ``i``; returns its directory."""
    import pyarrow as pa
    from sklearn.datasets import make_friedman1

    def tables():
        for i, n in enumerate(np.diff(np.linspace(0, rows, FILES + 1).astype(np.int64))):
            X, y = make_friedman1(int(n), n_features=features, noise=1.0, random_state=i)
            yield pa.table({**{f"x{j}": X[:, j] for j in range(features)}, "y": y})

    return write_files(os.path.join(harness.DATA, f"friedman1-{features}-{rows}-{FILES}"), tables())


def agrawal_hvalue(rows: int) -> str:
    """Agrawal's nine attributes (F2's rows, 5% perturbation), ``hvalue`` the target: the class left out."""
    import pyarrow.parquet as pq

    source = harness.agrawal(rows)
    files = sorted(f for f in os.listdir(source) if f.endswith(".parquet"))
    tables = (pq.read_table(os.path.join(source, f)).drop_columns(["class"]) for f in files)
    return write_files(os.path.join(harness.DATA, f"agrawal-hvalue-{rows}-{FILES}"), tables)


# ---------------------------------------------------------------- accuracy

def _warm(settings: dict | None = None) -> None:
    """One untimed fit of each setting: the compiled kernels loaded before any timing."""
    from sklearn.datasets import load_diabetes

    from dasktree import DaskTreeRegressor

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    for setting in (SETTINGS if settings is None else settings).values():
        DaskTreeRegressor(**setting).fit(X, y)


def accuracy(skipped: list[str], settings: dict | None = None, names=None, reused=None, candidates=None,
             sets=None) -> list[dict]:
    """Each regression set's pooled 10-fold CV R^2, leaves and fit seconds, per learner (``names``: a
    subset of them; ``reused``: rows already measured on the same folds, by (set, learner);
    ``candidates``: the ``min_samples_leaf`` values of the pruning candidates instead; ``sets``: these
    sets alone)."""
    learners = dict(peers.regression_peers(skipped))
    for name, setting in (SETTINGS if settings is None else settings).items():
        learners[name] = lambda X, y, nominal, fold, s=setting: peers.dasktree_regression(X, y, nominal, fold, s)
    if names is not None:
        learners = {n: f for n, f in learners.items() if n in names}
    if candidates:  # one function measures many rows: the candidates' names are known after it ran
        learners = {"candidates": lambda X, y, nominal, fold: peers.dasktree_regression_candidates(
            X, y, nominal, fold, candidates, FOLDS)}
    datasets = []
    for dataset in public_data.REGRESSION:
        if sets is not None and dataset.name not in sets:
            continue
        why = public_data.missing(dataset)
        (skipped.append(f"set skipped: {why}") if why else datasets.append(dataset))
    public_data.prepare(datasets)
    if candidates:
        _warm({"cv": {"cv": FOLDS}})
    elif any(n.startswith("dasktree") for n in learners):
        _warm(settings)
    out = []
    for dataset in datasets:
        loaded = public_data.load(dataset)
        fold = peers.regression_folds(len(loaded.y), FOLDS, SEED)
        squares = float(np.sum((loaded.y - loaded.y.mean()) ** 2))
        row = {"dataset": dataset.name, "source": loaded.version, "rows": len(loaded.y),
               "attributes": loaded.X.shape[1], "nominal": len(loaded.nominal),
               "missing": int(loaded.X.isna().sum().sum()), "learners": {}}
        for name, func in learners.items():
            if reused and (dataset.name, name) in reused:
                row["learners"][name] = {**reused[(dataset.name, name)], "reused": True}
                continue
            got = func(loaded.X, loaded.y, loaded.nominal, fold)
            for n, r in (got.items() if name == "candidates" else [(name, got)]):
                r["r2"] = 1 - sum(r["sse"]) / squares
                row["learners"][n] = r
        print(f"  {dataset.name}: " + ", ".join(f"{n} {r['r2']:.3f}" for n, r in row["learners"].items()), flush=True)
        out.append(row)
    return out


def _accuracy_tables(rows: list[dict]) -> tuple[list[str], dict]:
    names = list(rows[0]["learners"])
    means = {n: float(np.mean([g["learners"][n]["r2"] for g in rows])) for n in names}
    leaves = {n: float(np.mean([np.mean(g["learners"][n]["leaves"]) for g in rows])) for n in names}
    seconds = {n: float(sum(sum(g["learners"][n]["seconds"]) for g in rows)) for n in names}
    lines = ["| regression set | rows | attributes (nominal) | missing values | "
             + " | ".join(f"{n} R^2 (leaves)" for n in names) + " |", "|" + " --- |" * (4 + len(names))]
    for g in rows:
        best = max(g["learners"][n]["r2"] for n in names)
        cells = [f"{g['learners'][n]['r2']:.3f} ({np.mean(g['learners'][n]['leaves']):.1f})" for n in names]
        cells = [f"**{c}**" if g["learners"][n]["r2"] >= best - 1e-9 else c for c, n in zip(cells, names)]
        lines.append(f"| {g['dataset']} | {g['rows']} | {g['attributes']} ({g['nominal']}) | {g['missing']} | "
                     + " | ".join(cells) + " |")
    lines.append("| mean | | | | " + " | ".join(f"{means[n]:.3f} ({leaves[n]:.1f})" for n in names) + " |")
    peer_names = [n for n in names if not n.startswith("dasktree")]
    if peer_names:
        best = float(np.mean([max(g["learners"][n]["r2"] for n in peer_names) for g in rows]))
        means["best of the peers, per set"] = best
        lines.append(f"| best of the peers, per set | | | | {best:.3f} |" + " |" * (len(names) - 1))
    lines.append(f"| time of the {FOLDS * len(rows)} fits | | | | " + " | ".join(f"{seconds[n]:.1f} s" for n in names)
                 + " |")
    return lines, means


# ---------------------------------------------------------------- the default's leaves at scale

SCALE_ROWS = 500_000
CALLS = {"default": "", "prune=none": 'prune="none"'}


def smooth_step(rows: int, seed: int):
    """``3 sin(a) + step(b) + 0.7 c + noise`` (``d`` irrelevant), four float columns: a smooth part, a
    step and a linear part a tree approximates with many leaves, and noise a grown tree fits one row
    at a time."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.uniform(-3, 3, rows), "b": rng.uniform(0, 1, rows), "c": rng.normal(size=rows),
                      "d": rng.normal(size=rows)})
    y = 3 * np.sin(X["a"]) + np.where(X["b"] > 0.5, 2.0, 0.0) + 0.7 * X["c"] + rng.normal(size=rows)
    return X, y.to_numpy()


def _scale(quick: bool, options) -> dict:
    """:func:`at_scale`, or its figures from an earlier run (``--scale-json``: its own process's JSON)."""
    import json

    if options is not None and options.scale_json:
        with open(options.scale_json) as f:
            return {**json.load(f), "from": os.path.basename(options.scale_json)}
    return at_scale(quick)


def at_scale(quick: bool) -> dict:
    """``DaskTreeRegressor()`` against the grown tree (``prune="none"``, the old default) on
    :func:`smooth_step`'s rows: leaves, model bytes and R^2 on 100,000 new rows."""
    from dasktree import DaskTreeRegressor

    rows = SCALE_ROWS // 10 if quick else SCALE_ROWS
    X, y = smooth_step(rows, 0)
    Xt, yt = smooth_step(100_000, 1)
    out = {"rows": rows}
    for name, setting in (("default", {}), ("prune=none", {"prune": "none"})):
        started = time.perf_counter()
        reg = DaskTreeRegressor(**setting).fit(X, y)
        seconds = time.perf_counter() - started
        pred = reg.predict(Xt)
        out[name] = {"leaves": int(reg.model_.tree.n_leaves), "seconds": seconds,
                     "model_bytes": len(reg.model_.dumps().encode()),
                     "r2": float(1 - np.sum((pred - yt) ** 2) / np.sum((yt - yt.mean()) ** 2))}
        print(f"  {rows:,} rows, {name}: {out[name]['leaves']:,} leaves, held-out R^2 {out[name]['r2']:.4f}",
              flush=True)
    return out


def scale_candidates(rows: int) -> dict:
    """The cp rules of :data:`benchmarks.accuracy_peers.CP_RULES` (and rpart's 0.01) at scale: one grown
    tree (``prune="none"``) on :func:`smooth_step`'s ``rows``, read at each rule's alpha (``prune_model``,
    no pass): leaves and R^2 on 100,000 new rows. The rules' own fits (``prune="cp"`` stops growing where
    its pruning must cut) are :func:`at_scale`'s."""
    from dasktree import DaskTreeRegressor

    X, y = smooth_step(rows, 0)
    Xt, yt = smooth_step(100_000, 1)
    started = time.perf_counter()
    reg = DaskTreeRegressor(prune="none").fit(X, y)
    out = {"rows": rows, "grown": {"leaves": int(reg.model_.tree.n_leaves),
                                   "seconds": time.perf_counter() - started}}
    root_mse = float(np.mean((y - y.mean()) ** 2))
    squares = float(np.sum((yt - yt.mean()) ** 2))
    rules = {"cp 0.01": lambda n: 0.01, **peers.CP_RULES}
    for name, rule in rules.items():
        cp = float(rule(rows))
        began = time.perf_counter()
        reg.prune_model(cp * root_mse)
        pred = reg.predict(Xt)
        out[name] = {"cp": cp, "leaves": int(reg.model_.tree.n_leaves), "prune_seconds": time.perf_counter() - began,
                     "r2": float(1 - np.sum((pred - yt) ** 2) / squares)}
        print(f"  {rows:,} rows, {name} (cp {cp:.3g}): {out[name]['leaves']:,} leaves, held-out R^2 "
              f"{out[name]['r2']:.4f}", flush=True)
    return out


# ---------------------------------------------------------------- speed

def _fit_command(path: str, target: str, *extra: str) -> list[str]:
    out = os.path.join(tempfile.mkdtemp(prefix="dasktree-bench-"), "model.json")
    return harness.dasktree_command("fit", path, "--target", target, "--out", out, "--overwrite",
                                    "--max-depth", str(DEPTH), *extra, "--quiet", "--json")


def plain(path: str, target: str, repeat: int, with_sklearn: bool, cold: bool) -> dict:
    """``dasktree fit`` beside LightGBM's (and scikit-learn's) one-tree script, alternated."""
    fit = _fit_command(path, target)
    cold_run = None
    if cold:
        with tempfile.TemporaryDirectory(prefix="dasktree-numba-") as empty:
            cold_run = harness.run_process(fit, env={"NUMBA_CACHE_DIR": empty})
            print(f"  cold: {cold_run['seconds']:.2f} s", flush=True)
    harness.run_process(fit)  # not kept: numba's cache of compiled kernels and the page cache
    commands = {"dasktree": fit, "LightGBM": harness.job("lightgbm-reg", path, DEPTH, target)}
    if with_sklearn:
        commands["scikit-learn"] = harness.job("sklearn-reg", path, DEPTH, target)
    runs = harness.alternate(commands, repeat)
    reports = [harness.last_json(r) for r in runs["dasktree"]]
    peers_ = {name: [harness.last_json(r) for r in runs[name]] for name in commands if name != "dasktree"}
    return {"seconds": {name: [r["seconds"] for r in rs] for name, rs in runs.items()},
            "peak_bytes": {name: max(r["peak_bytes"] for r in rs) for name, rs in runs.items()},
            "cold_seconds": cold_run["seconds"] if cold_run else None,
            "training_r2": {"dasktree": reports[0]["report"]["training"]["r2"],
                            **{name: p[0]["training_r2"] for name, p in peers_.items()}},
            "peer_fit_seconds": {name: statistics.median(j.get("fit", j.get("train")) for j in p)
                                 for name, p in peers_.items()},
            "pass0": statistics.median(r["run"]["seconds"]["pass0"] for r in reports),
            "levels": [statistics.median(r["run"]["levels"][i]["seconds"] for r in reports)
                       for i in range(len(reports[0]["run"]["levels"]))],
            "leaves": reports[0]["report"]["leaves"]}


def forest(path: str, target: str, repeat: int) -> dict:
    """``dasktree fit --cv 10`` beside LightGBM's ``cv(nfold=10)`` + final train script, alternated."""
    fit = _fit_command(path, target, "--cv", str(FOLDS))
    harness.run_process(fit)  # not kept
    runs = harness.alternate({"dasktree --cv 10": fit,
                              "LightGBM cv": harness.job("lightgbm-reg-cv", path, DEPTH, FOLDS, target)}, repeat)
    report = harness.last_json(runs["dasktree --cv 10"][0])["report"]
    lgb = harness.last_json(runs["LightGBM cv"][0])
    return {"seconds": {name: [r["seconds"] for r in rs] for name, rs in runs.items()},
            "peak_bytes": {name: max(r["peak_bytes"] for r in rs) for name, rs in runs.items()},
            "cv_r2": {"dasktree": report["cv"]["r2"], "LightGBM": lgb["cv_r2"]},
            "training_r2": {"dasktree": report["training"]["r2"], "LightGBM": lgb["training_r2"]},
            "leaves": report["prune"]["leaves"] if report.get("prune") else report["leaves"]}


def _sizes(quick: bool) -> tuple[list[tuple], int]:
    """(label, data, target, rows, scikit-learn too, cold once, --cv 10 too) per measurement, and the repeat."""
    big, huge, wide = (100_000, 400_000, 20_000) if quick else (1_000_000, 10_000_000, 100_000)
    return [(f"Friedman #1, {big:,} x 10", lambda: friedman(big), "y", big, True, True, True),
            (f"Friedman #1, {huge:,} x 10", lambda: friedman(huge), "y", huge, False, False, False),
            (f"Agrawal hvalue, {big:,} x 8", lambda: agrawal_hvalue(big), "hvalue", big, True, False, True),
            (f"Friedman #1 wide, {wide:,} x 100", lambda: friedman(wide, 100), "y", wide, True, False, False)], \
        1 if quick else 3


def speed(quick: bool) -> list[dict]:
    sizes, repeat = _sizes(quick)
    out = []
    for label, data, target, rows, with_sklearn, cold, with_cv in sizes:
        path = data()
        print(f"{label}: plain fit", flush=True)
        started = time.perf_counter()
        r = {"label": label, "rows": rows, "target": target, "plain": plain(path, target, repeat, with_sklearn, cold)}
        if with_cv:
            print(f"{label}: --cv {FOLDS}", flush=True)
            r["cv"] = forest(path, target, repeat)
        r["wall"] = time.perf_counter() - started
        out.append(r)
    return out


# ---------------------------------------------------------------- the results

def _mb(r: dict, name: str) -> str:
    return f"{r['peak_bytes'][name] / 2**20:.0f}" if name in r["peak_bytes"] else "-"


def _speed_tables(results: list[dict]) -> list[str]:
    md = ["| data | rows | `dasktree fit` s | LightGBM script s | scikit-learn script s | dasktree / LightGBM | "
          "dasktree / scikit-learn | peak MB dasktree / LightGBM / scikit-learn | training R^2 dasktree / LightGBM / "
          "scikit-learn |", "|" + " --- |" * 9]
    for r in results:
        p = r["plain"]
        s = {n: statistics.median(v) for n, v in p["seconds"].items()}
        sk = "scikit-learn" in s
        r2 = " / ".join(f"{p['training_r2'][n]:.4f}" if n in p["training_r2"] else "-"
                        for n in ("dasktree", "LightGBM", "scikit-learn"))
        sk_seconds = f"{s['scikit-learn']:.2f}" if sk else "not run"
        md.append(f"| {r['label']} | {r['rows']:,} | {s['dasktree']:.2f} | {s['LightGBM']:.2f} | {sk_seconds} | "
                  f"{harness.ratio(s['dasktree'], s['LightGBM'])} | "
                  f"{harness.ratio(s['dasktree'], s['scikit-learn']) if sk else '-'} | "
                  + " / ".join(_mb(p, n) for n in ("dasktree", "LightGBM", "scikit-learn")) + f" | {r2} |")
    cold = [r for r in results if r["plain"]["cold_seconds"]]
    for r in cold:
        warm = statistics.median(r["plain"]["seconds"]["dasktree"])
        md += ["", f"Cold (an empty numba cache, once), {r['label']}: {r['plain']['cold_seconds']:.1f} s, "
               f"{harness.ratio(r['plain']['cold_seconds'], warm)} the warm command."]
    fits = "; ".join(f"{r['label']}: " + ", ".join(f"{n} {v:.2f} s" for n, v in r["plain"]["peer_fit_seconds"].items())
                     for r in results)
    md += ["", f"The peers' fit alone (their own clocks, without import and load, medians): {fits}."]
    md += ["", f"`dasktree fit --cv {FOLDS}` (fit + {FOLDS}-fold CV in one forest, pruned by the folds: cv-min) beside "
           f"LightGBM's script (import, load, `cv(nfold={FOLDS}, stratified=False)` of the one tree, then the final "
           "train). Target: 0.5x. CV R^2: dasktree's pooled over its folds; LightGBM's 1 - its CV MSE / the "
           "target's variance.", "",
           "| data | `--cv 10` s | LightGBM cv + train s | --cv 10 / LightGBM | --cv 10 / plain fit | peak MB dasktree "
           "/ LightGBM | CV R^2 dasktree / LightGBM | leaves after pruning |", "|" + " --- |" * 8]
    for r in results:
        if "cv" not in r:
            continue
        c = r["cv"]
        s = {n: statistics.median(v) for n, v in c["seconds"].items()}
        plain_ = statistics.median(r["plain"]["seconds"]["dasktree"])
        md.append(f"| {r['label']} | {s['dasktree --cv 10']:.2f} | {s['LightGBM cv']:.2f} | "
                  f"{harness.ratio(s['dasktree --cv 10'], s['LightGBM cv'])} | "
                  f"{harness.ratio(s['dasktree --cv 10'], plain_)} | {_mb(c, 'dasktree --cv 10')} / "
                  f"{_mb(c, 'LightGBM cv')} | {c['cv_r2']['dasktree']:.4f} / {c['cv_r2']['LightGBM']:.4f} | "
                  f"{c['leaves']} |")
    passes = max(len(r["plain"]["levels"]) for r in results)
    md += ["", "Breakdown of the warm `dasktree fit` (medians of the command's own report, `run.levels`), seconds: "
           "pass 0, each level pass (level 0 also loads the compiled kernels from numba's cache; the entry of level "
           f"{DEPTH} has an empty frontier: the depth limit), and the rest of the whole process (interpreter, "
           "imports, metadata, the model's write).", "",
           "| data | whole | pass 0 | " + " | ".join(f"L{i}" for i in range(passes)) + " | rest |",
           "|" + " --- |" * (passes + 4)]
    for r in results:
        p = r["plain"]
        whole = statistics.median(p["seconds"]["dasktree"])
        levels = p["levels"] + [0.0] * (passes - len(p["levels"]))
        md.append(f"| {r['label']} | {whole:.2f} | {p['pass0']:.2f} | " + " | ".join(f"{x:.2f}" for x in levels)
                  + f" | {whole - p['pass0'] - sum(p['levels']):.2f} |")
    return md


def _no_sklearn(results: list[dict]) -> str:
    """Why scikit-learn's script is left out at the largest size: its fit alone at the largest size it ran."""
    ran = [r for r in results if "scikit-learn" in r["plain"]["seconds"] and r["label"].startswith("Friedman #1,")]
    left = [r for r in results if "scikit-learn" not in r["plain"]["seconds"]]
    if not ran or not left:
        return ""
    fit = ran[-1]["plain"]["peer_fit_seconds"]["scikit-learn"]
    return (f"scikit-learn's script is not run at {left[0]['rows']:,} rows: its fit alone takes {fit:.0f} s at "
            f"{ran[-1]['rows']:,} rows, and sorts every column at every node (more than linear in the rows), so "
            "three runs there would not fit the claim's time budget.")


def _summary(means: dict, results: list[dict]) -> list[tuple[str, str]]:
    summary = [(f"{len(public_data.REGRESSION)} public regression sets, mean 10-fold CV R^2: "
                + " / ".join(means), " / ".join(f"{v:.3f}" for v in means.values()))]
    plain_, sk, cv_ = [], [], []
    for r in results:
        s = {n: statistics.median(v) for n, v in r["plain"]["seconds"].items()}
        plain_.append(f"{r['label']} {harness.ratio(s['dasktree'], s['LightGBM'])}")
        if "scikit-learn" in s:
            sk.append(f"{r['label']} {harness.ratio(s['dasktree'], s['scikit-learn'])}")
        if "cv" in r:
            c = {n: statistics.median(v) for n, v in r["cv"]["seconds"].items()}
            cv_.append(f"{r['label']} {harness.ratio(c['dasktree --cv 10'], c['LightGBM cv'])}")
    summary += [("`dasktree fit` depth 10 (regression), whole process / LightGBM's one-tree script (target 1x)",
                 "; ".join(plain_)),
                ("`dasktree fit` depth 10 (regression), whole process / scikit-learn's script", "; ".join(sk)),
                ("`dasktree fit --cv 10` (regression) / LightGBM's cv(nfold=10) + train script (target 0.5x)",
                 "; ".join(cv_))]
    return summary


def add_arguments(parser) -> None:
    """The accuracy part alone (``--keep-speed``), or a partial run of some learners or settings."""
    parser.add_argument("--keep-speed", action="store_true",
                        help="measure the accuracy part only; the speed tables are the last results/regression.json's "
                             "(their date and commit are said)")
    parser.add_argument("--learners", default=None, help="comma-separated learner names (a partial run)")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=JSON",
                        help="a DaskTreeRegressor setting to measure, as JSON (a partial run); repeatable")
    parser.add_argument("--reuse", action="append", default=[], metavar="JSON",
                        help="rows of a partial run's --out (or an accuracy / regression JSON) taken, not measured "
                             "again; repeatable")
    parser.add_argument("--out", default=None, help="where a partial run writes its rows (JSON)")
    parser.add_argument("--candidates", default=None, metavar="LEAVES",
                        help="comma-separated min_samples_leaf values: per outer fold one cv=10 fit of each, read at "
                             "every pruning (accuracy_peers.dasktree_regression_candidates); a partial run")
    parser.add_argument("--half", choices=("tuning", "confirm", "both"), default="both",
                        help="with --candidates: the sets of TUNING_SETS, of CONFIRM_SETS, or all (default both)")
    parser.add_argument("--scale-candidates", type=int, default=None, metavar="ROWS",
                        help="the cp rules at scale alone (scale_candidates: one grown tree of ROWS rows read at each "
                             "rule), written to --out; a partial run")
    parser.add_argument("--scale-json", default=None, metavar="JSON",
                        help="the default's leaves at scale from this JSON (at_scale's figures, measured in a "
                             "process of their own) instead of measuring them here")


def partial(options) -> bool:
    return bool(options is not None and (options.learners or options.setting or options.candidates
                                         or options.scale_candidates))


def _reused(paths: list[str]) -> tuple[dict, list[str]]:
    import json

    rows, notes = {}, []
    for path in paths:
        with open(path) as f:
            record = json.load(f)
        figures = record.get("figures", record)
        for g in figures.get("accuracy", []) + figures.get("regression", []):
            for name, got in g["learners"].items():
                rows[(g["dataset"], name)] = got
        stamp = record.get("stamp", {})
        notes.append(f"{os.path.basename(path)} (measured {stamp.get('date', '?')}, commit {stamp.get('commit', '?')})")
    return rows, notes


def _kept_speed() -> tuple[list[dict], str]:
    import json

    with open(os.path.join(harness.RESULTS, f"{NAME}.json")) as f:
        record = json.load(f)
    # when the tables were measured: a run that kept them says so (speed_measured), else its own stamp
    when = record["figures"].get("speed_measured") or f"{record['stamp']['date']}, commit {record['stamp']['commit']}"
    return record["figures"]["speed"], when


def run(quick: bool, options=None) -> harness.Result:
    import json

    skipped: list[str] = []
    if options is not None and options.scale_candidates:
        figures = {"scale_candidates": scale_candidates(options.scale_candidates)}
        out = options.out or os.path.join(harness.RESULTS, "partial", "regression-scale-candidates.json")
        with open(out, "w") as f:
            json.dump({"claim": CLAIM, "stamp": harness.stamp(), "partial": True, "figures": figures}, f, indent=1)
        return harness.Result([(n, f"{r['leaves']} leaves, R^2 {r['r2']:.4f}") for n, r in
                               figures["scale_candidates"].items() if isinstance(r, dict) and "r2" in r], "", figures)
    print("accuracy: 10-fold CV R^2 on the public regression sets", flush=True)
    settings = None
    if options is not None and options.setting:
        settings = {}
        for text in options.setting:
            name, _, setting = text.partition("={")  # a name may hold "=" ("dasktree cv=10")
            settings[name.strip()] = json.loads("{" + setting)
    names = None if options is None or not options.learners else [n.strip() for n in options.learners.split(",")]
    if settings is not None:
        names = (names or []) + list(settings)
    reused, reused_notes = _reused(options.reuse if options else [])
    candidates = None if options is None or not options.candidates else [
        int(m) for m in options.candidates.split(",")]
    sets = None if not candidates or options.half == "both" else (
        TUNING_SETS if options.half == "tuning" else CONFIRM_SETS)
    rows = accuracy(skipped, settings, names, reused, candidates, sets)
    accuracy_md, means = _accuracy_tables(rows)
    if partial(options):
        out = options.out or os.path.join(harness.RESULTS, "partial", "regression.json")
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        figures = {"folds": FOLDS, "seed": SEED, "accuracy": rows, "accuracy_means": means, "reused": reused_notes}
        with open(out, "w") as f:
            json.dump({"claim": CLAIM, "stamp": harness.stamp(), "partial": True, "figures": figures}, f, indent=1,
                      default=str)
        print("\n".join(accuracy_md), flush=True)
        return harness.Result([(f"mean R^2: {n}", f"{v:.3f}") for n, v in means.items()], "", figures)
    speed_note = ""
    if options is not None and options.keep_speed:
        results, when = _kept_speed()
        speed_note = f" The speed tables below were measured {when} (`--keep-speed`)."
    else:
        results = speed(quick)
        when = None
    repeat = _sizes(quick)[1]
    scale = _scale(quick, options)
    md = [f"Accuracy: {FOLDS}-fold CV R^2 (KFold, shuffled, seed {SEED}; one fold assignment per set given to every "
          "learner; pooled: 1 - the squared errors / the squares about the mean) of scikit-learn's "
          "`DecisionTreeRegressor(random_state=0)` (nominal columns one-hot) at its defaults and with `ccp_alpha` "
          "chosen as `GridSearchCV` chooses it (10-fold on each outer training fold, over the geometric midpoints "
          "of its pruning path: `benchmarks/accuracy_peers.py`), rpart (`method=\"anova\"`, its own 10-fold xval) "
          "pruned by the 1-SE rule and at the least xerror, `DaskTreeRegressor()` (its default pruning, "
          "`prune=\"cp\"`: rpart's complexity at cp = 5 / n for n rows) and `DaskTreeRegressor(cv=10)` (inner "
          "folds on each outer training fold; cv-min pruning). Bold: the best on the set. \"best of the peers\": per set, the best of the four "
          "peers. Times: the fits alone (rpart by R's clock), summed over the folds.",
          *(["", "Not run here: " + "; ".join(skipped) + "."] if skipped else []),
          *(["", "Rows reused from saved results on the same folds (`--reuse`): " + "; ".join(reused_notes) + "."]
            if reused_notes else []), "", *accuracy_md, "",
          f"The default's leaves at scale: {scale['rows']:,} rows of `3 sin(a) + step(b) + 0.7 c + noise` "
          "(four float columns, `d` irrelevant; `benchmarks.regression.smooth_step`), R^2 on 100,000 new rows"
          + (f" (taken from `{scale['from']}`, measured in a process of its own before this run: `--scale-json`)"
             if scale.get("from") else "") + ":", "",
          "| setting | leaves | model JSON bytes | held-out R^2 | fit s |", "| --- | --- | --- | --- | --- |",
          *[f"| `DaskTreeRegressor({CALLS[n]})` | {scale[n]['leaves']:,} | "
            f"{scale[n]['model_bytes']:,} | {scale[n]['r2']:.4f} | {scale[n]['seconds']:.1f} |"
            for n in ("default", "prune=none")], "",
          f"Speed: whole processes from {FILES} Parquet files, depth {DEPTH}, 2 cores (the machine shared with other "
          f"work: read the ratios within this run), median of {repeat} alternated runs after one untimed dasktree "
          "run. Friedman #1: `make_friedman1` (noise 1.0, every value distinct); Agrawal hvalue: F2's attributes, "
          "5% perturbation, the house value predicted from the eight others (about 72% of its variance explainable); "
          f"wide: `make_friedman1(n_features=100)`. {_no_sklearn(results)}{speed_note}",
          "", *_speed_tables(results)]
    figures = {"folds": FOLDS, "seed": SEED, "depth": DEPTH, "skipped": skipped, "accuracy": rows,
               "accuracy_means": means, "speed": results, "reused": reused_notes, "at_scale": scale,
               "speed_measured": when}
    summary = _summary(means, results)
    summary.insert(1, (f"DaskTreeRegressor() leaves on {scale['rows']:,} rows / the grown tree's (target <= 0.1); "
                       "held-out R^2 default / grown",
                       f"{scale['default']['leaves']:,} / {scale['prune=none']['leaves']:,} = "
                       f"{scale['default']['leaves'] / scale['prune=none']['leaves']:.4f}; "
                       f"{scale['default']['r2']:.4f} / {scale['prune=none']['r2']:.4f}"))
    return harness.Result(summary, "\n".join(md), figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
