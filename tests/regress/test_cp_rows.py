"""``prune="cp"`` (the default without ``cv``) asks a split for ``CP_ROWS`` rows' worth of the root's mean
squared error, whatever the rows: rpart's fixed ``cp = 0.01`` asked for 1% of the root's error, which on
large data stops a tree at a handful of leaves (:data:`dasktree.regress.fitting.CP_ROWS`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import dasktree
from dasktree.regress.fitting import CP_ROWS, cp_of
from dasktree.regress.reprune import reprune


def _smooth_step(rows: int, seed: int):
    """``3 sin(a) + step(b) + 0.7 c + noise``: a smooth part and a linear one a tree approximates with
    many leaves (benchmarks.regression.smooth_step's shape)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.uniform(-3, 3, rows), "b": rng.uniform(0, 1, rows), "c": rng.normal(size=rows)})
    y = 3 * np.sin(X["a"]) + np.where(X["b"] > 0.5, 2.0, 0.0) + 0.7 * X["c"] + rng.normal(size=rows)
    return X, y.to_numpy()


def _r2(model, X, y) -> float:
    return float(1 - np.sum((model.predict(X) - y) ** 2) / np.sum((y - y.mean()) ** 2))


def test_cp_is_rows_worth_of_the_roots_error():
    assert cp_of(500) == CP_ROWS / 500 and cp_of(500_000) == CP_ROWS / 500_000
    assert cp_of(0) == CP_ROWS  # no rows: no division by zero (the root is the tree)


def test_the_default_grows_with_the_rows_where_a_fixed_cp_stops():
    X, y = _smooth_step(20_000, 0)
    Xt, yt = _smooth_step(20_000, 1)
    reg = dasktree.DaskTreeRegressor().fit(X, y)
    prune = reg.model_.report["prune"]
    assert prune["mode"] == "cp" and prune["cp"] == CP_ROWS / 20_000 and prune["cp_rows"] == CP_ROWS
    # rpart's fixed cp = 0.01, read off the same grown tree: alpha 0.01 times the root's MSE
    root_mse = prune["alpha"] / prune["cp"]
    fixed = reprune(reg.model_, 0.01 * root_mse)
    assert fixed.tree.n_leaves <= 10 < 5 * fixed.tree.n_leaves < reg.model_.tree.n_leaves
    assert _r2(reg, Xt, yt) > _r2(dasktree.DaskTreeRegressor.from_model(fixed), Xt, yt) + 0.05
