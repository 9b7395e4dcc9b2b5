"""The postgres dialect's export of regression trees in a real PostgreSQL postgres_root: the same doubles
``predict_values`` gives, on random trees and rows and on a fitted tree at every threshold, NaN,
null and unseen categories."""

import numpy as np
import pytest

from dasktree import fit_regression
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import edge_rows, random_regression_model, random_rows
from dasktree.testing.postgres import score_postgres


def test_random_regression_trees_in_postgres(postgres_root):
    for seed in range(20):
        model = random_regression_model(seed)
        table = random_rows(model, 60, seed + 1)
        values, _ = score_postgres(postgres_root, model, table)
        np.testing.assert_array_equal(values, model.predict_values(table), err_msg=f"seed {seed}")


def test_a_fitted_regression_tree_in_postgres(postgres_root):
    frame = mixed_frame(3000).drop(columns=["label"])
    frame["y"] = 1e3 * frame["x"].fillna(0.5) + (frame["colour"] == "red") * 17.25 + frame["k"]
    model = fit_regression(frame, target="y", scheduler="inprocess", max_depth=7, nominal=["flag"])
    table = edge_rows(model, mixed_frame(1000, seed=1).drop(columns=["label"]))
    values, _ = score_postgres(postgres_root, model, table)
    np.testing.assert_array_equal(values, model.predict_values(table))
