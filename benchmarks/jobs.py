"""The whole-process jobs the claims time: ``python benchmarks/jobs.py KIND PATH [ARGS]``.

Each job is what a user of that tool would run, from ``import`` to the result,
and prints one JSON line last (its own inner timings, accuracies). The claims run
them through :func:`benchmarks.harness.run_process`, which times the whole process
and samples the peak memory of its process tree.

- ``scan PATH``: the pyarrow scan floor, reading the feature columns and the class
  once (best of 3 after a read that warms the page cache).
- ``sklearn PATH DEPTH``: scikit-learn, load the Parquet files and
  ``DecisionTreeClassifier(max_depth=DEPTH).fit``.
- ``lightgbm PATH DEPTH``: LightGBM, load and train one tree of that depth
  (255 bins, ``num_boost_round=1``, learning rate 1).
- ``lightgbm-cv PATH DEPTH FOLDS [TARGET]``: LightGBM's ``cv(nfold=FOLDS)`` of that one tree,
  then the final train (with TARGET, a 0/1 class column, every other column a feature).
- ``sklearn-reg PATH DEPTH TARGET``, ``lightgbm-reg PATH DEPTH TARGET`` and
  ``lightgbm-reg-cv PATH DEPTH FOLDS TARGET``: the same three for a regression tree of the
  number TARGET on every other column (``DecisionTreeRegressor``; LightGBM's
  ``objective="regression"``, ``cv`` unstratified); each gives its training R^2.
- ``levels PATH DEPTH REPEAT``: dasktree's warm level passes: a 2-process cluster as
  dasktree starts one, warmed by small fits (every kernel loaded on every worker,
  as on a long-running cluster), then REPEAT fits; each level's median seconds.
- ``cv PATH DEPTH FOLDS REPEAT``: on such a warm cluster, the plain fit and the fit
  with FOLDS-fold CV in one forest alternated REPEAT times, then serial CV once
  (the main tree and each fold tree in a fit of its own).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

FEATURES = ["salary", "commission", "age", "elevel", "car", "zipcode", "hvalue", "hyears", "loan"]
TARGET = "class"


def load(path: str, features: list[str] = FEATURES, target: str = TARGET):
    """The ``features`` as float32 columns and the ``target`` (the Agrawal columns and the class unless
    told), as the peers' scripts load them."""
    import numpy as np
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=features + [target])
    X = np.column_stack([table.column(c).to_numpy().astype(np.float32) for c in features])
    return X, table.column(target).to_numpy()


def load_regression(path: str, target: str):
    """Every column but ``target`` as float32 features, and the ``target`` as float64 numbers."""
    X, y = load(path, _features_but(path, target), target)
    return X, y.astype("float64")


def _features_but(path: str, target: str) -> list[str]:
    import pyarrow.parquet as pq

    return [name for name in pq.read_schema(_first_file(path)).names if name != target]


def _first_file(path: str) -> str:
    if not os.path.isdir(path):
        return path
    return os.path.join(path, sorted(f for f in os.listdir(path) if f.endswith(".parquet"))[0])


def _r2(predicted, y) -> float:
    return float(1.0 - ((y - predicted) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def scan(path: str) -> dict:
    import pyarrow.parquet as pq

    pq.read_table(path, columns=FEATURES + [TARGET])
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        pq.read_table(path, columns=FEATURES + [TARGET])
        best = min(best, time.perf_counter() - t)
    return {"scan_floor": best}


def sklearn(path: str, depth: str) -> dict:
    from sklearn.tree import DecisionTreeClassifier

    t = time.perf_counter()
    X, y = load(path)
    loaded = time.perf_counter()
    tree = DecisionTreeClassifier(max_depth=int(depth), random_state=0).fit(X, y)
    fitted = time.perf_counter()
    return {"load": loaded - t, "fit": fitted - loaded, "training_accuracy": float(tree.score(X, y))}


def _lightgbm_params(depth: int) -> dict:
    return {"objective": "binary", "max_depth": depth, "num_leaves": 2**depth, "max_bin": 255,
            "learning_rate": 1.0, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "metric": "binary_error",
            "num_threads": os.cpu_count(), "seed": 0, "verbose": -1}


def lightgbm(path: str, depth: str) -> dict:
    import lightgbm as lgb

    t = time.perf_counter()
    X, y = load(path)
    loaded = time.perf_counter()
    booster = lgb.train(_lightgbm_params(int(depth)), lgb.Dataset(X, y), num_boost_round=1)
    trained = time.perf_counter()
    accuracy = float(((booster.predict(X) > 0.5) == y).mean())
    return {"load": loaded - t, "train": trained - loaded, "training_accuracy": accuracy}


def lightgbm_cv(path: str, depth: str, folds: str, target: str | None = None) -> dict:
    import lightgbm as lgb

    t = time.perf_counter()
    X, y = load(path) if target is None else load(path, _features_but(path, target), target)
    loaded = time.perf_counter()
    params = _lightgbm_params(int(depth))
    scores = lgb.cv(params, lgb.Dataset(X, y), num_boost_round=1, nfold=int(folds), stratified=True, seed=0)
    lgb.train(params, lgb.Dataset(X, y), num_boost_round=1)
    done = time.perf_counter()
    return {"load": loaded - t, "cv_and_train": done - loaded,
            "cv_accuracy": 1.0 - float(scores["valid binary_error-mean"][-1])}


def sklearn_reg(path: str, depth: str, target: str) -> dict:
    from sklearn.tree import DecisionTreeRegressor

    t = time.perf_counter()
    X, y = load_regression(path, target)
    loaded = time.perf_counter()
    tree = DecisionTreeRegressor(max_depth=int(depth), random_state=0).fit(X, y)
    fitted = time.perf_counter()
    return {"load": loaded - t, "fit": fitted - loaded, "training_r2": _r2(tree.predict(X), y)}


def _lightgbm_reg_params(depth: int) -> dict:
    return {**_lightgbm_params(depth), "objective": "regression", "metric": "l2"}


def lightgbm_reg(path: str, depth: str, target: str) -> dict:
    import lightgbm as lgb

    t = time.perf_counter()
    X, y = load_regression(path, target)
    loaded = time.perf_counter()
    booster = lgb.train(_lightgbm_reg_params(int(depth)), lgb.Dataset(X, y), num_boost_round=1)
    trained = time.perf_counter()
    return {"load": loaded - t, "train": trained - loaded, "training_r2": _r2(booster.predict(X), y)}


def lightgbm_reg_cv(path: str, depth: str, folds: str, target: str) -> dict:
    import lightgbm as lgb

    t = time.perf_counter()
    X, y = load_regression(path, target)
    loaded = time.perf_counter()
    params = _lightgbm_reg_params(int(depth))
    scores = lgb.cv(params, lgb.Dataset(X, y), num_boost_round=1, nfold=int(folds), stratified=False, seed=0)
    booster = lgb.train(params, lgb.Dataset(X, y), num_boost_round=1)
    done = time.perf_counter()
    mse = float(scores["valid l2-mean"][-1])
    return {"load": loaded - t, "cv_and_train": done - loaded, "cv_mse": mse, "cv_r2": 1.0 - mse / float(y.var()),
            "training_r2": _r2(booster.predict(X), y)}


def warm_cluster():
    """A 2-process cluster as dasktree starts one, its workers warmed by small fits: imports and
    every compiled kernel a 1M-row plain or forest fit uses loaded on every worker (a 50,000-row
    unstable F7 10-fold forest and plain tree reach the kernels two tiny fits leave unloaded)."""
    from distributed import Client

    from dasktree import fit
    from dasktree.engine.cluster import local_cluster

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from benchmarks.harness import agrawal

    cluster = local_cluster(n_workers=2)
    client = Client(cluster, direct_to_workers=True)  # as dasktree's own client of its LocalCluster
    tiny, unstable = agrawal(2000, files=2), agrawal(50_000, function=7, files=2)
    fit(tiny, target=TARGET, max_depth=4, client=client)
    fit(tiny, target=TARGET, max_depth=4, cv=2, client=client)
    fit(unstable, target=TARGET, max_depth=10, cv=10, client=client)
    fit(unstable, target=TARGET, max_depth=10, client=client)
    return cluster, client


def levels(path: str, depth: str, repeat: str) -> dict:
    from dasktree import fit

    cluster, client = warm_cluster()
    try:
        runs = [fit(path, target=TARGET, max_depth=int(depth), client=client).run for _ in range(int(repeat))]
    finally:
        client.close()
        cluster.close()
    return {"pass0": statistics.median(r["seconds"]["pass0"] for r in runs),
            "fit": statistics.median(r["seconds"]["total"] for r in runs),
            "levels": [{"level": lv["level"], "nodes": lv["frontier"],
                        "seconds": statistics.median(r["levels"][i]["seconds"] for r in runs)}
                       for i, lv in enumerate(runs[0]["levels"])]}


def cv(path: str, depth: str, folds: str, repeat: str) -> dict:
    from dasktree import fit
    from dasktree.testing import hooks

    depth_, folds_ = int(depth), int(folds)
    times: dict[str, list[float]] = {"plain": [], "forest": []}
    cluster, client = warm_cluster()
    try:
        for _ in range(int(repeat)):
            for kind in times:
                t = time.perf_counter()
                model = fit(path, target=TARGET, max_depth=depth_, cv=folds_ if kind == "forest" else None,
                            client=client)
                times[kind].append(time.perf_counter() - t)
        t = time.perf_counter()
        fit(path, target=TARGET, max_depth=depth_, client=client)
        for fold in range(folds_):
            with hooks.grow_only_fold(fold):  # the serial baseline: one fold tree per fit
                fit(path, target=TARGET, max_depth=depth_, cv=folds_, client=client)
        serial = time.perf_counter() - t
    finally:
        client.close()
        cluster.close()
    report = model.report["cv"]
    return {"plain": statistics.median(times["plain"]), "forest": statistics.median(times["forest"]),
            "serial": serial, "runs": times, "cv_accuracy": report["accuracy_mean"],
            "distinct_tests_per_level": report["distinct_tests_per_level"]}


JOBS = {"scan": scan, "sklearn": sklearn, "lightgbm": lightgbm, "lightgbm-cv": lightgbm_cv, "levels": levels,
        "cv": cv, "sklearn-reg": sklearn_reg, "lightgbm-reg": lightgbm_reg, "lightgbm-reg-cv": lightgbm_reg_cv}

if __name__ == "__main__":
    print(json.dumps(JOBS[sys.argv[1]](*sys.argv[2:])))
