"""Pruning from the forest: accuracy and size of every prune mode, and what CV pruning costs a fit.

Accuracy: an outer 10-fold CV (scikit-learn's ``KFold``, shuffled, seed 0) over
in-memory frames. In each outer fold dasktree grows ONE tree with ``cv=10``
(its ten fold trees in the same passes) and ``prune=None``; every mode is then
that model re-pruned without a pass (``Model.prune``): the grown tree ("none",
what dasktree gave before pruning existed), C4.5's "pessimistic" (the default
without ``cv``), "cv" (1-SE rule; the default with ``cv``) and "cv-min". The
main tree does not depend on ``cv``, so this is what each setting would fit.
scikit-learn's default ``DecisionTreeClassifier`` (unpruned) is fitted on the
same outer folds. Datasets: scikit-learn's iris, wine, breast_cancer, digits;
Agrawal F1-F10 with 5% and 15% perturbation; ``make_classification`` with
``flip_y`` 0.1 and 0.2.

Cost: ``fit(cv=10, prune="cv")`` against ``fit(cv=10, prune=None)`` on Agrawal
F7 (5%), in this process, alternated, the median of each.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from benchmarks import harness
from dasktree.model.pruning import prune_model

CLAIM = "Pruning chosen by the forest's fold trees: more accurate, far smaller trees, no extra pass"
NAME = "prune"
MODES = ("none", "pessimistic", "cv", "cv-min")


def _datasets(quick: bool) -> list[tuple[str, str, pd.DataFrame, np.ndarray, list[str]]]:
    from sklearn import datasets

    from dasktree.datasets import agrawal

    out = []
    for name in ("iris", "wine", "breast_cancer", "digits"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True, as_frame=True)
        out.append((name, "bundled", X, y.to_numpy(), []))
    rows = 2000 if quick else 5000
    functions = (1, 7) if quick else range(1, 11)
    for p in (0.05, 0.15):
        for f in functions:
            frame = agrawal.generate(rows, function=f, perturbation=p, seed=f)
            y = frame.pop(agrawal.TARGET).to_numpy()
            out.append((f"agrawal F{f} {int(p * 100)}%", "agrawal", frame, y, ["car", "zipcode"]))
    for flip in (0.1, 0.2):
        X, y = datasets.make_classification(2000 if quick else 5000, 20, n_informative=8, n_redundant=4,
                                            n_classes=3, flip_y=flip, random_state=0)
        out.append((f"make_classification flip_y={flip}", "noisy",
                    pd.DataFrame(X, columns=[f"x{i}" for i in range(20)]), y, []))
    return out


def _accuracy(name, X, y, nominal, folds: int) -> dict:
    from sklearn.model_selection import KFold
    from sklearn.tree import DecisionTreeClassifier

    from dasktree.fit import fit

    scores = {m: [] for m in (*MODES, "sklearn")}
    leaves = {m: [] for m in (*MODES, "sklearn")}
    for train, test in KFold(folds, shuffle=True, random_state=0).split(X):
        Xtr, Xte = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
        model = fit(Xtr, y[train], nominal=nominal, cv=10, prune=None)
        table = __import__("pyarrow").Table.from_pandas(Xte, preserve_index=False)
        for mode in MODES:
            pruned = prune_model(model, mode=mode)
            predicted = np.asarray(pruned.classes)[pruned.predict_codes(table)]
            scores[mode].append(float(np.mean(predicted == y[test])))
            leaves[mode].append(pruned.tree.n_leaves)
        sk = DecisionTreeClassifier(random_state=0).fit(Xtr, y[train])
        scores["sklearn"].append(float(sk.score(Xte, y[test])))
        leaves["sklearn"].append(int(sk.get_n_leaves()))
    return {"accuracy": {m: float(np.mean(v)) for m, v in scores.items()},
            "leaves": {m: float(np.mean(v)) for m, v in leaves.items()}}


def _cost(quick: bool) -> dict:
    from dasktree.datasets import agrawal
    from dasktree.fit import fit

    frame = agrawal.generate(5000 if quick else 20000, function=7, perturbation=0.05, seed=7)
    y = frame.pop(agrawal.TARGET).to_numpy()
    times: dict[str, list[float]] = {"cv": [], "none": [], "plain": []}
    fit(frame, y, nominal=["car", "zipcode"], cv=10, prune="cv")  # warm the compiled kernels
    kwargs = {"none": dict(cv=10, prune=None), "cv": dict(cv=10, prune="cv"), "plain": dict(prune="pessimistic")}
    for _ in range(2 if quick else 4):
        for mode in ("none", "cv", "plain"):
            started = time.perf_counter()
            fitted = fit(frame, y, nominal=["car", "zipcode"], **kwargs[mode])
            times[mode].append(time.perf_counter() - started)
            if mode == "cv":
                model = fitted
    return {"rows": len(frame), "seconds": times, "prune_seconds": model.run["seconds"]["prune"],
            "ratio": float(np.median(times["cv"]) / np.median(times["none"])),
            "forest_over_plain": float(np.median(times["cv"]) / np.median(times["plain"])),
            "leaves": {"grown": model.report["prune"]["leaves_grown"], "pruned": model.report["leaves"]}}


def run(quick: bool) -> harness.Result:
    folds = 3 if quick else 10
    rows = []
    for name, group, X, y, nominal in _datasets(quick):
        r = _accuracy(name, X, y, nominal, folds)
        rows.append({"dataset": name, "group": group, "rows": len(X), **r})
    cost = _cost(quick)
    table = ["| dataset | rows | " + " | ".join(f"{m} acc" for m in (*MODES, "sklearn")) + " | "
             + " | ".join(f"{m} leaves" for m in (*MODES, "sklearn")) + " |",
             "|" + "---|" * (2 + 2 * (len(MODES) + 1))]
    for r in rows:
        table.append(f"| {r['dataset']} | {r['rows']} | "
                     + " | ".join(f"{100 * r['accuracy'][m]:.2f}" for m in (*MODES, "sklearn")) + " | "
                     + " | ".join(f"{r['leaves'][m]:.0f}" for m in (*MODES, "sklearn")) + " |")

    def mean(group, what, mode):
        values = [r[what][mode] for r in rows if group is None or r["group"] == group]
        return float(np.mean(values))

    groups = [("all", None), ("bundled", "bundled"), ("agrawal", "agrawal"), ("noisy (flip_y)", "noisy")]
    means = ["| mean over | " + " | ".join(f"{m} acc" for m in (*MODES, "sklearn")) + " | leaves none / cv |",
             "|" + "---|" * (len(MODES) + 3)]
    for label, g in groups:
        means.append(f"| {label} | " + " | ".join(f"{100 * mean(g, 'accuracy', m):.2f}" for m in (*MODES, "sklearn"))
                     + f" | {mean(g, 'leaves', 'none') / mean(g, 'leaves', 'cv'):.1f}x |")
    noisy = [r for r in rows if r["group"] == "noisy"]

    def against_grown(mode):
        gain = min(100 * (r["accuracy"][mode] - r["accuracy"]["none"]) for r in noisy)
        shrink = min(r["leaves"]["none"] / r["leaves"][mode] for r in noisy)
        return f"+{gain:.2f} pp, {shrink:.1f}x fewer leaves (the least over the noisy sets)"

    summary = [
        ("mean accuracy, all sets: none / pessimistic / cv / cv-min / sklearn",
         " / ".join(f"{100 * mean(None, 'accuracy', m):.2f}" for m in (*MODES, "sklearn"))),
        ("default without cv (pessimistic) vs the grown tree, noisy sets", against_grown("pessimistic")),
        ("default with cv=10 (cv-min) vs the grown tree, noisy sets", against_grown("cv-min")),
        ("cv (1-SE rule) vs the grown tree, noisy sets", against_grown("cv")),
        ("fit(cv=10, prune='cv') / fit(cv=10, prune=None) time", f"{cost['ratio']:.3f}"),
        ("fit(cv=10, prune='cv') / fit() (pessimistic, no forest) time", f"{cost['forest_over_plain']:.2f}"),
    ]
    markdown = "\n".join([
        f"Outer {folds}-fold CV; dasktree grows one tree per outer fold with cv=10 and every mode re-prunes it "
        "(no pass); scikit-learn's default tree is unpruned. dasktree's defaults: pessimistic without cv, "
        "cv-min with cv; none is the grown tree (dasktree before pruning). Accuracy in percent, leaves the mean over outer "
        "folds. The machine was shared with other work while this ran.", "",
        *means, "", *table, "",
        f"Cost on Agrawal F7 (5%), {cost['rows']} rows, in process: fit(cv=10, prune='cv') / fit(cv=10, "
        f"prune=None) = {cost['ratio']:.3f} (medians of {len(cost['seconds']['cv'])} alternated fits each; "
        f"pruning itself {cost['prune_seconds']:.3f} s of a {np.median(cost['seconds']['cv']):.2f} s fit; "
        f"{cost['leaves']['grown']} -> {cost['leaves']['pruned']} leaves). What CV pruning by default would "
        f"cost a fit without cv: fit(cv=10, prune='cv') / fit() (pessimistic, main tree only) = "
        f"{cost['forest_over_plain']:.2f}.",
    ])
    return harness.Result(summary, markdown, {"datasets": rows, "cost": cost, "outer_folds": folds})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
