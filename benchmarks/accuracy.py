"""Accuracy on public datasets beside scikit-learn's tree, Weka's J48 and R's rpart, on the same folds.

Datasets: :data:`benchmarks.public_data.CLASSIFICATION`, UCI and other public classification sets
that ship inside installable packages (Debian's weka, r-cran-mlbench, r-cran-mass, r-cran-kernlab,
r-cran-th.data, r-cran-rpart; scikit-learn; palmerpenguins), in two fixed suites: "tuning" (for
choosing defaults) and "report" (the figures; defaults must not be chosen on it).

Each set gets one stratified 10-fold assignment (``StratifiedKFold``, shuffled, seed 0), and every
learner is scored on exactly those folds (:mod:`benchmarks.accuracy_peers`): scikit-learn's
``DecisionTreeClassifier()`` (nominal columns one-hot) at its defaults and with ``ccp_alpha`` chosen
as ``GridSearchCV`` chooses it (10-fold on the training fold over its pruning path), Weka's J48, and
R's rpart pruned by the 1-SE rule and at the least xerror, and four dasktree settings
(:data:`SETTINGS`: the defaults, ``cv=10``, ``cv=10`` choosing the criterion by the 1-SE rule, and the
criteria the default was chosen among). A set's
accuracy is its
rows classified right over its rows (pooled over the folds); a learner's figure is the mean over the
sets of a suite. "Best of the peers" takes, per set, the best of the five peers; "best of dasktree"
the best of its settings. Times are each learner's fits alone, summed over every fold of the
suite: in this process for scikit-learn and dasktree (after one untimed fit per setting, so compiled
kernels are loaded), the JVM's and R's own clocks for J48 and rpart. A missing Debian package skips
its peer or sets with one line saying what to install.

Regression sets (:data:`benchmarks.public_data.REGRESSION`): the 10-fold CV R^2 of scikit-learn's
``DecisionTreeRegressor()`` (also with ``ccp_alpha`` by CV) and rpart's ``method="anova"`` (1-SE rule
and least xerror) on the same folds; dasktree's regression trees are measured beside them by the
regression claim (:mod:`benchmarks.regression`).

A subset runs alone, as a partial run whose rows go to ``--out`` (JSON and markdown), not to
``results/``: ``--suite tuning|report``, ``--learners A,B``, ``--sets S,T``, ``--setting NAME=JSON``
(a dasktree setting to measure), ``--no-regression``; ``--reuse JSON`` takes rows measured before on
the same folds instead of fitting again (how the defaults are chosen on the tuning suite without
rerunning everything).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from benchmarks import accuracy_peers as peers
from benchmarks import harness, public_data
from dasktree.model.grid import TowardsFirst

NAME = "accuracy"
CLAIM = "Accuracy on public classification datasets beside scikit-learn, J48 (C4.5) and rpart, on the same folds"
FOLDS = 10
SEED = 0
#: dasktree's settings: the defaults (gain ratio), with ``cv=10``, ``cv=10`` choosing the criterion (the three
#: grown in the same passes, each pruned pessimistically, kept by the 1-SE rule towards gain ratio: measured,
#: not adopted), and the other criteria the default was chosen among (gini, the old default, and entropy;
#: their ``cv=10`` is among the rules of ``--choices``).
#: The grid ``cv=10`` would grow to choose (:func:`choice_time`; kept by the 1-SE rule towards its first criterion).
CHOICE_GRID = {"criterion": ["gain_ratio", "gini", "entropy"], "prune": ["pessimistic"]}
SETTINGS = {"dasktree": {}, "dasktree cv=10": {"cv": 10},
            "dasktree cv=10 criteria 1-SE": {"cv": 10, "param_grid": CHOICE_GRID,
                                             "refit": TowardsFirst("criterion='gain_ratio'")},
            "dasktree gini": {"criterion": "gini"}, "dasktree entropy": {"criterion": "entropy"}}
PEERS = ("scikit-learn", "scikit-learn ccp_alpha by CV", "J48", "rpart", "rpart min-xerror")
QUICK_ROWS = 5000  # --quick leaves out the sets with more rows

#: The classification default a choice by ``cv=k`` starts from: ``DaskTreeClassifier()``'s criterion and pruning.
DEFAULT = ("gain_ratio", "pessimistic")
_GRID6 = [(c, p) for c in ("gini", "entropy", "gain_ratio") for p in ("cv-min", "pessimistic")]  # ParameterGrid's order
#: Ways ``cv=k`` could choose a setting (``--choices``), each from the grid tables alone (the inner folds'
#: held-out accuracies of each setting, :func:`benchmarks.accuracy_peers.dasktree_choices`): the
#: candidates in order and the rule, "best" (the best mean, the first on a tie: ``GridSearchCV``'s) or
#: "1se" (the default unless the best mean beats the default's by more than the best's standard error,
#: its inner scores' sample deviation / sqrt(k): the 1-SE rule leaning towards the default).
CHOICE_RULES = {
    "choose: grid6 best": (_GRID6, "best"),
    "choose: grid6 1-SE to default": (_GRID6, "1se"),
    "choose: default or cv-min, best": ([DEFAULT, ("gain_ratio", "cv-min")], "best"),
    "choose: default or cv-min, 1-SE": ([DEFAULT, ("gain_ratio", "cv-min")], "1se"),
    "choose: default, cv-min or cv, best": ([DEFAULT, ("gain_ratio", "cv-min"), ("gain_ratio", "cv")], "best"),
    "choose: criteria x pessimistic, best": ([DEFAULT, ("gini", "pessimistic"), ("entropy", "pessimistic")], "best"),
    "choose: criteria x pessimistic, 1-SE": ([DEFAULT, ("gini", "pessimistic"), ("entropy", "pessimistic")], "1se"),
    "choose: grid9 1-SE to default": ([DEFAULT] + [(c, p) for c in ("gain_ratio", "gini", "entropy")
                                                   for p in ("pessimistic", "cv-min", "cv")
                                                   if (c, p) != DEFAULT], "1se"),
}


def _learners(settings: dict | None = None) -> tuple[dict, list[str]]:
    """The learners that can run here, and one line for each that cannot."""
    learners, skipped = {"scikit-learn": peers.sklearn_tree,
                         "scikit-learn ccp_alpha by CV": lambda X, y, nominal, fold: peers.sklearn_tree(
                             X, y, nominal, fold, tuned=True)}, []
    for name, missing, func in (("J48", peers.j48_missing(), peers.j48), ("rpart", peers.rpart_missing(), peers.rpart),
                                ("rpart min-xerror", peers.rpart_missing(),
                                 lambda X, y, nominal, fold: peers.rpart(X, y, nominal, fold, rule="min"))):
        if missing:
            skipped.append(missing)
        else:
            learners[name] = func
    for name, setting in (SETTINGS if settings is None else settings).items():
        learners[name] = lambda X, y, nominal, fold, setting=setting: peers.dasktree(X, y, nominal, fold, setting)
    return learners, skipped


def add_arguments(parser) -> None:
    """A subset of the claim, to choose defaults without running everything (a partial run: its rows go
    to ``--out``, not to ``results/``); ``--reuse`` takes learners already measured on the same folds."""
    parser.add_argument("--suite", choices=("tuning", "report", "both"), default="both",
                        help="the classification suite(s) to run (default both)")
    parser.add_argument("--learners", default=None, help="comma-separated learner names (default: all)")
    parser.add_argument("--sets", default=None, help="comma-separated set names (default: the suite's)")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=JSON",
                        help="a dasktree setting to measure (DaskTreeClassifier's keyword arguments as JSON), "
                             "instead of the claim's own settings; repeatable")
    parser.add_argument("--no-regression", action="store_true", help="leave the regression sets out")
    parser.add_argument("--reuse", action="append", default=[], metavar="JSON",
                        help="a partial run's --out (or results/accuracy.json): its learners' rows are taken, "
                             "not measured again; repeatable")
    parser.add_argument("--rename", action="append", default=[], metavar="FILE:OLD=NEW",
                        help="take the rows of learner OLD in the reused file FILE (its base name) as learner NEW "
                             "(a setting measured under another name, e.g. 'accuracy.json:dasktree=dasktree gini' "
                             "for rows of the old default; FILE:OLD=>NEW when a name holds '=', e.g. "
                             "'accuracy.json:dasktree cv=10=>dasktree gini cv=10'); repeatable")
    parser.add_argument("--out", default=None, help="where a partial run writes its rows (JSON)")
    parser.add_argument("--choices", default=None, metavar="CRITERIA",
                        help="comma-separated criteria: per outer fold one cv=10 fit of each, read at every pruning "
                             "(accuracy_peers.dasktree_choices), and the ways cv=k could choose among them "
                             "(CHOICE_RULES); a partial run")


def partial(options) -> bool:
    return bool(options is not None and (options.suite != "both" or options.learners or options.sets
                                         or options.setting or options.no_regression or options.choices))


def _reused(paths: list[str], renames: list[str] = ()) -> tuple[dict, dict, list[str]]:
    """Per (set, learner) a row measured before, per (regression set, learner) too, and one line per file
    (``renames``: "FILE:OLD=NEW", or "FILE:OLD=>NEW" when a name holds "=", a learner's rows in one file
    taken under another name; a learner renamed away is not taken under its own)."""
    import json

    renamed: dict[str, dict[str, str]] = {}
    for text in renames:
        file, _, pair = text.partition(":")
        old, _, new = pair.partition("=>") if "=>" in pair else pair.partition("=")
        renamed.setdefault(file, {})[old] = new
    rows, regression, notes = {}, {}, []
    for path in paths:
        with open(path) as f:
            record = json.load(f)
        figures = record.get("figures", record)
        rename = renamed.get(os.path.basename(path), {})
        for r in figures.get("datasets", []):
            for name, got in r["learners"].items():
                rows[(r["dataset"], rename.get(name, name))] = {**got, "from": got.get("from", os.path.basename(path))}
        for g in figures.get("regression", []):
            for name, got in g["learners"].items():
                regression[(g["dataset"], name)] = {**got, "from": got.get("from", os.path.basename(path))}
        stamp = record.get("stamp", {})
        as_ = "".join(f", its {old!r} as {new!r}" for old, new in rename.items())
        notes.append(f"{os.path.basename(path)} (measured {stamp.get('date', '?')}, commit {stamp.get('commit', '?')}"
                     f"{as_})")
    return rows, regression, notes


def _warm() -> None:
    """One untimed fit of every setting: dasktree's compiled kernels loaded before any timing."""
    from sklearn.datasets import load_iris

    from dasktree import DaskTreeClassifier

    X, y = load_iris(return_X_y=True, as_frame=True)
    for setting in SETTINGS.values():
        DaskTreeClassifier(**setting).fit(X, y)


def _score(dataset, loaded, learners, reused=None) -> dict:
    fold = peers.folds(loaded.y, FOLDS, SEED)
    X, y = loaded.X, loaded.y
    row = {"dataset": dataset.name, "suite": dataset.suite, "source": loaded.version, "rows": len(y),
           "attributes": X.shape[1], "nominal": len(loaded.nominal), "classes": int(len(np.unique(y))),
           "missing": int(X.isna().sum().sum()), "learners": {}}
    for name, func in learners.items():
        if reused and (dataset.name, name) in reused:
            row["learners"][name] = {**reused[(dataset.name, name)], "reused": True}
            continue
        started = time.perf_counter()
        r = func(X, y, loaded.nominal, fold)
        r["accuracy"] = sum(r["correct"]) / sum(r["rows"])
        r["wall"] = time.perf_counter() - started
        row["learners"][name] = r
        print(f"  {dataset.name}: {name} {r['accuracy']:.4f} ({sum(r['seconds']):.2f} s of fits)", flush=True)
    accuracy = {n: r["accuracy"] for n, r in row["learners"].items()}
    present = [p for p in PEERS if p in accuracy]
    row["best_peer"] = max(accuracy[p] for p in present) if present else float("nan")
    mine = [n for n in accuracy if n not in PEERS]
    row["best_dasktree"] = max(accuracy[s] for s in mine) if mine else float("nan")
    return row


def _mean(rows, key) -> float:
    return float(np.mean([r["learners"][key]["accuracy"] if key in r["learners"] else r[key] for r in rows]))


def _seconds(rows, learner) -> float:
    return float(sum(sum(r["learners"][learner]["seconds"]) for r in rows))


def _record(rows, a, b) -> str:
    """wins / ties / losses of learner (or column) ``a`` against ``b`` over ``rows``, to 1e-9."""
    def acc(r, k):
        return r["learners"][k]["accuracy"] if k in r["learners"] else r[k]

    diff = [acc(r, a) - acc(r, b) for r in rows]
    return f"{sum(d > 1e-9 for d in diff)}/{sum(abs(d) <= 1e-9 for d in diff)}/{sum(d < -1e-9 for d in diff)}"


def _sources(rows, learner) -> list[str]:
    """Where a learner's rows were measured: this run, or the saved files they were reused from."""
    return sorted({r["learners"][learner].get("from", "this run") for r in rows})


def _same_run(rows, *learners) -> bool:
    """Whether the learners' rows were all measured in one run (their times comparable)."""
    return len({s for name in learners for s in _sources(rows, name)}) == 1


def _suite_table(suites: dict, names: list[str]) -> list[str]:
    lines = ["| learner | " + " | ".join(f"{s} suite: mean accuracy ({len(rows)} sets)" for s, rows in suites.items())
             + " | " + " | ".join(f"{s} suite: time of the {FOLDS * len(rows)} fits" for s, rows in suites.items())
             + " | report suite: wins/ties/losses against the best peer | rows measured in |",
             "|" + " --- |" * (3 + 2 * len(suites))]
    for name in names:
        every = [r for rows in suites.values() for r in rows]
        lines.append(f"| {name} | " + " | ".join(f"{_mean(rows, name):.4f}" for rows in suites.values()) + " | "
                     + " | ".join(f"{_seconds(rows, name):.1f} s" for rows in suites.values())
                     + f" | {_record(suites['report'], name, 'best_peer') if name in SETTINGS else ''} | "
                     + ", ".join(_sources(every, name)) + " |")
    for label, key in (("best of the peers, per set", "best_peer"), ("best of the dasktree settings, per set",
                                                                      "best_dasktree")):
        lines.append(f"| {label} | " + " | ".join(f"{_mean(rows, key):.4f}" for rows in suites.values())
                     + " |" * (len(suites) + 2) + " |")
    return lines


def _records_table(rows, names: list[str]) -> list[str]:
    present = [p for p in PEERS if p in names] + ["best_peer"]
    lines = ["| report suite, wins/ties/losses | " + " | ".join(p.replace("best_peer", "best peer") for p in present)
             + " |", "|" + " --- |" * (1 + len(present))]
    lines += [f"| {s} | " + " | ".join(_record(rows, s, p) for p in present) + " |" for s in SETTINGS]
    return lines


def _dataset_table(rows, names: list[str]) -> list[str]:
    lines = ["| set | suite | rows | attributes (nominal) | classes | missing values | " + " | ".join(names)
             + " | best peer | best dasktree |", "|" + " --- |" * (8 + len(names))]
    for r in rows:
        best = max(r["learners"][n]["accuracy"] for n in names)
        cells = [f"**{r['learners'][n]['accuracy']:.4f}**" if r["learners"][n]["accuracy"] >= best - 1e-9
                 else f"{r['learners'][n]['accuracy']:.4f}" for n in names]
        lines.append(f"| {r['dataset']} | {r['suite']} | {r['rows']:,} | {r['attributes']} ({r['nominal']}) | "
                     f"{r['classes']} | {r['missing']} | " + " | ".join(cells)
                     + f" | {r['best_peer']:.4f} | {r['best_dasktree']:.4f} |")
    return lines


def _sources_table(rows, regression) -> list[str]:
    lines = ["| set | task | suite | package (version) |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['dataset']} | classification | {r['suite']} | {r['source']} |" for r in rows]
    lines += [f"| {g['dataset']} | regression | - | {g['source']} |" for g in regression]
    return lines


def _regression(skipped: list[str], names=None, reused=None) -> list[dict]:
    """10-fold CV R^2 (pooled: 1 - the folds' squared errors / the squares about the mean) of the
    regression peers on the regression sets: the baseline regression trees are to meet."""
    learners = {n: f for n, f in peers.regression_peers().items() if names is None or n in names}
    out = []
    for dataset in public_data.REGRESSION:
        why = public_data.missing(dataset)
        if why:
            skipped.append(f"set skipped: {why}")
            print(skipped[-1], flush=True)
            continue
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
            r = func(loaded.X, loaded.y, loaded.nominal, fold)
            r["r2"] = 1 - sum(r["sse"]) / squares
            row["learners"][name] = r
        scores = ", ".join(f"{n} R^2 {r['r2']:.3f}" for n, r in row["learners"].items())
        print(f"{dataset.name} (regression): {scores}", flush=True)
        out.append(row)
    return out


def _regression_means(regression) -> dict:
    names = list(regression[0]["learners"]) if regression else []
    return {n: float(np.mean([g["learners"][n]["r2"] for g in regression])) for n in names}


def _regression_table(regression) -> list[str]:
    if not regression:
        return []
    names = list(regression[0]["learners"])
    lines = ["| regression set | rows | attributes (nominal) | missing values | "
             + " | ".join(f"{n} R^2 | {n} leaves" for n in names) + " |", "|" + " --- |" * (4 + 2 * len(names))]
    lines += [f"| {g['dataset']} | {g['rows']} | {g['attributes']} ({g['nominal']}) | {g['missing']} | "
              + " | ".join(f"{g['learners'][n]['r2']:.3f} | {np.mean(g['learners'][n]['leaves']):.1f}" for n in names)
              + " |" for g in regression]
    lines.append("| mean | | | | " + " | ".join(f"{r2:.3f} | " for r2 in _regression_means(regression).values())
                 + " |")
    return lines


def choose(scores: dict, candidates, rule: str, k: int) -> tuple[str, str]:
    """The (criterion, prune) of ``candidates`` that ``rule`` chooses from one training fold's inner
    scores (``scores[(criterion, prune)]``: its ``k`` held-out accuracies, None for a fold of no rows)."""
    def mean(key):
        values = [v for v in scores[key] if v is not None]
        return float(np.mean(values)) if values else float("-inf")

    means = [mean(key) for key in candidates]
    best = candidates[int(np.argmax(means))]  # the first of the best, as GridSearchCV's least rank
    if rule == "best":
        return best
    values = [v for v in scores[best] if v is not None]
    se = float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0
    return best if mean(best) > mean(DEFAULT) + se else DEFAULT


def choice_rows(learners: dict, k: int = FOLDS) -> dict:
    """Per rule of :data:`CHOICE_RULES` whose candidates were all measured, its row: each outer fold's
    choice's correct count and leaves, the time of the fits of every criterion it needs, and how
    often it chose each setting (``chosen``)."""
    out = {}
    for name, (candidates, rule) in CHOICE_RULES.items():
        keys = {key: f"dasktree {key[0]} {key[1]}" for key in candidates}
        if not all(n in learners and "split_scores" in learners[n] for n in keys.values()):
            continue
        folds = len(learners[keys[DEFAULT]]["rows"])
        row = {"correct": [], "rows": [], "seconds": [], "leaves": [], "chosen": {}}
        criteria = {key[0] for key in candidates}
        for f in range(folds):
            key = choose({key: learners[n]["split_scores"][f] for key, n in keys.items()}, candidates, rule, k)
            chosen = learners[keys[key]]
            row["correct"].append(chosen["correct"][f])
            row["rows"].append(chosen["rows"][f])
            row["leaves"].append(chosen["leaves"][f])
            row["seconds"].append(sum(learners[f"dasktree {c} {DEFAULT[1]}"]["seconds"][f] for c in criteria))
            row["chosen"][f"{key[0]} {key[1]}"] = row["chosen"].get(f"{key[0]} {key[1]}", 0) + 1
        row["accuracy"] = sum(row["correct"]) / sum(row["rows"])
        out[name] = row
    return out


def rule_as_learner(paths: list[str], rule: str, name: str, out: str) -> None:
    """The rows of ``--choices`` runs' ``rule`` (``paths``: their JSON) as learner ``name``'s, a file
    ``--reuse`` takes: what ``cv=k`` does once it chooses by that rule (its models are the rule's,
    the grid's settings being the trees their plain fits grow). Its seconds are the three criteria's
    separate fits, at each run's load."""
    rows, notes = [], []
    for path in paths:
        with open(path) as f:
            record = json.load(f)
        notes.append(f"{os.path.basename(path)} (measured {record['stamp']['date']}, commit {record['stamp']['commit']})")
        for r in record["figures"]["datasets"]:
            got = r["learners"][rule]
            rows.append({**{k: v for k, v in r.items() if k != "learners"},
                         "learners": {name: {k: got[k] for k in ("correct", "rows", "seconds", "leaves", "accuracy")}}})
    with open(out, "w") as f:
        json.dump({"claim": CLAIM, "stamp": harness.stamp(), "partial": True,
                   "figures": {"folds": FOLDS, "seed": SEED, "datasets": rows, "regression": [],
                               "reused": notes, "rule": rule}}, f, indent=1)


def choice_time(names: list[str], rounds: int, out: str) -> dict:
    """What ``cv=10`` choosing would cost against plain ``cv=10``, alternated in one run (one load): per
    set of ``names``, its outer fold 0's training rows fitted by ``DaskTreeClassifier(cv=10)`` and by the
    choice as ``cv=10`` would grow it (:data:`CHOICE_GRID` in the same passes, ``refit=TowardsFirst``) in
    turn, ``rounds`` times, after an untimed warm-up of each; the ratio of the summed seconds, each fit's
    passes and the load average (1 min) after each round. Written to ``out`` (JSON)."""
    from dasktree import DaskTreeClassifier
    from dasktree.model.grid import TowardsFirst

    choice = {"param_grid": CHOICE_GRID, "refit": TowardsFirst(CHOICE_GRID["criterion"][0])}
    result = {}
    for name in names:
        dataset = next(d for d in public_data.CLASSIFICATION if d.name == name)
        loaded = public_data.load(dataset)
        train = peers.folds(loaded.y, FOLDS, SEED) != 0
        X, y = loaded.X[train].reset_index(drop=True), loaded.y[train]
        for setting in ({}, choice):
            DaskTreeClassifier(cv=10, **setting).fit(X.iloc[:500], y[:500], nominal=loaded.nominal)
        t = {"plain": [], "choose": [], "passes": {}, "load": []}
        for _ in range(rounds):
            for key, setting in (("plain", {}), ("choose", choice)):
                started = time.perf_counter()
                fitted = DaskTreeClassifier(cv=10, **setting).fit(X, y, nominal=loaded.nominal)
                t[key].append(time.perf_counter() - started)
                t["passes"][key] = fitted.model_.report["passes"]
            t["load"].append(os.getloadavg()[0])
        t["ratio"] = sum(t["choose"]) / sum(t["plain"])
        result[name] = t
        print(name, t, flush=True)
    with open(out, "w") as f:
        json.dump({"stamp": harness.stamp(), "figures": result}, f, indent=1)
    return result


def _choices_run(datasets, criteria: list[str], reused: dict, reused_notes, options) -> harness.Result:
    """``--choices``: each set's criteria fitted once per outer fold with ``cv=10`` (or taken from
    ``--reuse``), read at every pruning, and the rules' choices; a partial run's output."""
    rows = []
    for dataset in datasets:
        loaded = public_data.load(dataset)
        fold = peers.folds(loaded.y, FOLDS, SEED)
        X, y = loaded.X, loaded.y
        print(f"{dataset.name} ({dataset.suite}, {len(y)} rows)", flush=True)
        row = {"dataset": dataset.name, "suite": dataset.suite, "source": loaded.version, "rows": len(y),
               "attributes": X.shape[1], "nominal": len(loaded.nominal), "classes": int(len(np.unique(y))),
               "missing": int(X.isna().sum().sum()), "learners": {}}
        for c in criteria:
            names = [f"dasktree {c} {p}" for p in peers.CHOICE_PRUNES]
            if all((dataset.name, n) in reused and "split_scores" in reused[(dataset.name, n)] for n in names):
                row["learners"].update({n: {**reused[(dataset.name, n)], "reused": True} for n in names})
                continue
            for n, r in peers.dasktree_choices(X, y, loaded.nominal, fold, [c], FOLDS).items():
                r["accuracy"] = sum(r["correct"]) / sum(r["rows"])
                row["learners"][n] = r
                print(f"  {dataset.name}: {n} {r['accuracy']:.4f} ({sum(r['seconds']):.2f} s of fits)", flush=True)
        for n, r in choice_rows(row["learners"]).items():
            row["learners"][n] = r
            print(f"  {dataset.name}: {n} {r['accuracy']:.4f} (chose {r['chosen']})", flush=True)
        accuracy = {n: r["accuracy"] for n, r in row["learners"].items()}
        row["best_peer"] = float("nan")
        row["best_dasktree"] = max(accuracy.values())
        rows.append(row)
    names = {n: None for r in rows for n in r["learners"]}
    return _partial_result(rows, [], names, reused_notes, options)


def _parse_settings(given: list[str]) -> dict | None:
    if not given:
        return None
    out = {}
    for text in given:
        name, _, setting = text.partition("={")  # a name may hold "=" ("dasktree cv=10")
        out[name.strip()] = json.loads("{" + setting)
    return out


def _partial_result(rows, regression, learners, reused_notes, options) -> harness.Result:
    """A partial run: its suite means printed and its rows written to ``--out`` (not to results/)."""
    suites = {s: [r for r in rows if r["suite"] == s] for s in ("tuning", "report")}
    suites = {s: v for s, v in suites.items() if v}
    summary = []
    for suite, srows in suites.items():
        for name in list(learners) + ["best_peer", "best_dasktree"]:
            values = [r["learners"][name]["accuracy"] if name in r["learners"] else r[name] for r in srows
                      if name in r["learners"] or name in r]
            if values and not np.isnan(values).any():
                seconds = _seconds(srows, name) if name in learners else float("nan")
                summary.append((f"{suite} suite ({len(srows)} sets): {name}",
                                f"{np.mean(values):.4f} ({seconds:.1f} s of fits)"))
    for name, r2 in _regression_means(regression).items():
        summary.append((f"regression sets ({len(regression)}): {name}", f"R^2 {r2:.3f}"))
    figures = {"folds": FOLDS, "seed": SEED, "datasets": rows, "regression": regression, "reused": reused_notes}
    out = options.out or os.path.join(harness.RESULTS, "partial", "accuracy.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"claim": CLAIM, "stamp": harness.stamp(), "partial": True, "figures": figures}, f, indent=1,
                  default=str)
    md = [f"# {CLAIM}: a partial run", "", harness.stamp_text(harness.stamp()),
          "Learners and sets: " + ", ".join(learners) + ". Reused rows: " + ("; ".join(reused_notes) or "none") + ".",
          "", "| suite: learner | mean (seconds of fits) |", "| --- | --- |",
          *[f"| {what} | {measured} |" for what, measured in summary]]
    if rows:
        present = [n for n in learners if all(n in r["learners"] for r in rows)]
        md += ["", *_dataset_table(rows, present)]
    if regression:
        md += ["", *_regression_table(regression)]
    with open(os.path.splitext(out)[0] + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"rows written to {out}", flush=True)
    return harness.Result(summary, "", figures)


def run(quick: bool, options=None) -> harness.Result:
    settings = _parse_settings(options.setting) if options else None
    learners, skipped = _learners(settings)
    if options is not None and (options.learners or settings):
        wanted = [n.strip() for n in (options.learners or "").split(",") if n.strip()] + list(settings or {})
        unknown = [n for n in wanted if n not in learners and n not in peers.regression_peers()]
        if unknown:
            raise SystemExit(f"unknown learner(s) {unknown}; known: {sorted(learners)}")
        learners = {n: f for n, f in learners.items() if n in wanted}
    reused, reused_regression, reused_notes = _reused(options.reuse if options else [],
                                                      options.rename if options else [])
    sets = {n.strip() for n in options.sets.split(",")} if options is not None and options.sets else None
    datasets = []
    for dataset in public_data.CLASSIFICATION:
        if options is not None and options.suite != "both" and dataset.suite != options.suite:
            continue
        if sets is not None and dataset.name not in sets:
            continue
        why = public_data.missing(dataset)
        (skipped.append(f"set skipped: {why}") if why else datasets.append(dataset))
    for line in skipped:
        print(line, flush=True)
    if options is not None and options.choices:
        public_data.prepare(datasets)
        _warm()
        return _choices_run(datasets, [c.strip() for c in options.choices.split(",") if c.strip()], reused,
                            reused_notes, options)
    with_regression = not (options is not None and options.no_regression)
    public_data.prepare(datasets + (public_data.REGRESSION if with_regression else []))
    if any(n not in PEERS for n in learners):
        _warm()
    rows = []
    for dataset in datasets:
        loaded = public_data.load(dataset)
        if quick and len(loaded.y) > QUICK_ROWS:
            continue
        print(f"{dataset.name} ({dataset.suite}, {len(loaded.y)} rows)", flush=True)
        rows.append(_score(dataset, loaded, learners, reused))
    names_wanted = None if options is None or not options.learners else set(options.learners.split(","))
    regression = _regression(skipped, names_wanted, reused_regression) if with_regression else []
    if partial(options):
        return _partial_result(rows, regression, learners, reused_notes, options)
    suites = {s: [r for r in rows if r["suite"] == s] for s in ("report", "tuning")}
    names = list(learners)
    report = suites["report"]
    gini, gain = _seconds(report, "dasktree gini"), _seconds(report, "dasktree")

    def means(keys):
        return " / ".join(f"{_mean(report, k):.3f}" for k in keys)

    peer_names = [p for p in PEERS if p in learners]
    summary = [
        (f"report suite ({len(report)} sets), mean 10-fold CV accuracy: " + " / ".join(peer_names)
         + " / best of the peers per set", means([*peer_names, "best_peer"])),
        ("report suite, dasktree: default (gain_ratio) / cv=10 / cv=10 criteria 1-SE / gini / entropy / best "
         "setting per set", means([*SETTINGS, "best_dasktree"])),
        ("tuning suite, dasktree: default (gain_ratio) / cv=10 / cv=10 criteria 1-SE / gini / entropy",
         " / ".join(f"{_mean(suites['tuning'], k):.3f}" for k in SETTINGS)),
        ("report suite, wins/ties/losses against the best peer per set: default / cv=10",
         f"{_record(report, 'dasktree', 'best_peer')} / {_record(report, 'dasktree cv=10', 'best_peer')}"),
        (f"regression sets ({len(regression)}), mean 10-fold CV R^2: " + " / ".join(_regression_means(regression)),
         " / ".join(f"{r2:.3f}" for r2 in _regression_means(regression).values())),
        (f"report suite, time of the {FOLDS * len(report)} fits / scikit-learn's: " + " / ".join(names[1:]),
         " / ".join(f"{_seconds(report, n) / _seconds(report, 'scikit-learn'):.1f}x"
                    if _same_run(report, n, "scikit-learn") else "(other runs)" for n in names[1:])),
        ("time of the fits, report suite: the default (gain_ratio) / gini",
         f"{gain / gini:.2f}x" if _same_run(report, "dasktree", "dasktree gini") else "(other runs)"),
    ]
    others = [p for p in ("J48", "rpart") if p in learners]
    if others:
        summary.insert(3, (f"report suite, dasktree default wins/ties/losses against {' / '.join(others)}",
                           " / ".join(_record(report, "dasktree", p) for p in others)))
    notes = [f"Stratified {FOLDS}-fold CV (scikit-learn's StratifiedKFold, shuffled, seed {SEED}), one fold "
             "assignment per set given to every learner. Accuracy: rows classified right / rows, pooled over the "
             "folds; means over the sets of a suite. The tuning suite is for choosing defaults; the report suite "
             "is held out from that choice. Times: the fits alone, summed over every fold (scikit-learn and "
             "dasktree in this process; J48 and rpart by their own clocks in a JVM and an R process, JIT warm-up "
             "included). The machine was shared with other work while this ran: compare times within a column "
             "of one run, not across runs.",
             "", "Peers: scikit-learn `DecisionTreeClassifier(random_state=0)` with nominal columns one-hot "
             "(`OneHotEncoder`, missing as its own category; numeric missing values by the tree's own support), "
             "at its defaults and with `ccp_alpha` chosen as `GridSearchCV` chooses it (10-fold on each training "
             "fold, over the geometric midpoints of its pruning path: `benchmarks/accuracy_peers.py`); Weka's J48 "
             "(C4.5, `-C 0.25 -M 2`), nominal attributes nominal, missing as `?`; rpart (`method=\"class\"`, "
             "defaults, its own 10-fold xval with seed 0) pruned by the 1-SE rule and at the least xerror. "
             "dasktree: `DaskTreeClassifier(**setting).fit(X, y, nominal=...)` in memory; `dasktree` is the "
             "defaults (`criterion=\"gain_ratio\"`, chosen on the tuning suite), `dasktree cv=10` the same with "
             "`cv=10` (CV pruning, cv-min), `dasktree cv=10 criteria 1-SE` the way `cv=10` could choose that led "
             "the tuning suite: gini, entropy and gain ratio grown in the same passes (`param_grid`), each pruned "
             "pessimistically, kept by the 1-SE rule towards gain ratio (`refit=TowardsFirst`); its rows are the "
             "`--choices` runs' (`partial/cv-choice.json`), its seconds the three criteria's separate fits. It "
             "leads the default and `cv=10` on the report suite but was not adopted as what `cv=10` does: grown "
             "as one forest it takes about 3x plain `cv=10`'s time on letter, measured alternately, at the 3x bound "
             "written before measuring (`partial/README.md`). `dasktree gini` is the old default.",
             *(["", "Not run here: " + "; ".join(skipped) + "."] if skipped else []),
             *(["", "Rows reused from saved results on the same folds, not fitted again (`--reuse`; the peers do not "
                "depend on dasktree's code; accuracy is deterministic, so a reused row of dasktree is the current code's "
                "where its code has not changed: the summary's table names the run of each learner's rows): "
                + "; ".join(reused_notes) + ". Times are comparable only between learners measured in the same "
                "run, each at the load of its own run; a time ratio across runs is not given."]
               if reused_notes else []),
             "", *_suite_table(suites, names), "", *_records_table(report, names), "",
             "Per set (bold: the best learner on the set):", "", *_dataset_table(rows, names), "",
             f"Regression sets (dasktree's `DaskTreeRegressor` on them: the [regression](regression.md) claim): "
             f"{FOLDS}-fold CV R^2 "
             f"(KFold, shuffled, seed {SEED}; pooled: 1 - the squared errors / the squares about the mean) of "
             "scikit-learn's `DecisionTreeRegressor(random_state=0)` (nominal columns one-hot; also with "
             "`ccp_alpha` by CV) and rpart (`method=\"anova\"`, 1-SE rule and least xerror), on the same folds:", "",
             *_regression_table(regression), "",
             "Sources (nothing is downloaded at run time; R's sets are written to CSV once under "
             "`benchmarks/data/public/`):", "", *_sources_table(rows, regression)]
    settings_text = {n: {k: v if isinstance(v, (int, float, str, dict, list)) else repr(v) for k, v in s.items()}
                     for n, s in SETTINGS.items()}
    figures = {"folds": FOLDS, "seed": SEED, "settings": settings_text, "skipped": skipped, "datasets": rows,
               "regression": regression, "reused": reused_notes,
               "time_ratio_gain_ratio_over_gini": gain / gini if _same_run(report, "dasktree", "dasktree gini")
               else None}
    return harness.Result(summary, "\n".join(notes) + "\n", figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
