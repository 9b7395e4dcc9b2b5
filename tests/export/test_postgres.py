"""The postgres dialect of the SQL export in a real PostgreSQL postgres_root (a throwaway cluster on a
Unix socket, run as the ``postgres`` user): random trees and rows, and a fitted tree on rows at
every threshold, NaN, null and unseen categories, predict as dasktree does."""

import numpy as np
import pytest

import dasktree
from dasktree.testing.data import mixed_frame
from dasktree.testing.exports import edge_rows, random_model, random_rows, reference
from dasktree.testing.postgres import score_postgres


def test_random_trees_in_postgres(postgres_root):
    for seed in range(25):
        model = random_model(seed)
        table = random_rows(model, 60, seed + 1)
        labels, proba = score_postgres(postgres_root, model, table)
        want_labels, want_proba = reference(model, table)
        assert labels == want_labels, seed
        np.testing.assert_array_equal(proba, want_proba)


def test_a_fitted_tree_in_postgres(postgres_root):
    model = dasktree.fit(mixed_frame(3000), target="label", scheduler="inprocess", max_depth=6,
                         nominal_split="multiway", max_arity=3)
    table = edge_rows(model, mixed_frame(1000, seed=1).drop(columns=["label"]))
    labels, proba = score_postgres(postgres_root, model, table)
    want_labels, want_proba = reference(model, table)
    assert labels == want_labels
    np.testing.assert_array_equal(proba, want_proba)
