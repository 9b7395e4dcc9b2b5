"""The grown regression trees as models (:func:`dasktree.levels.to_model.tree_model`): the shape they keep
for pruning is their children lists' own, the tests they share across trees are the tests, and the level
loop grows the same trees whatever its node groups."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.levels.attach import binary_test
from dasktree.levels.small import small_node_rows
from dasktree.model.prune import shape_of, tree_shape
from dasktree.testing.data import regression_frame


def test_kept_shapes_and_shared_tests_are_the_trees_own():
    frame = regression_frame(1500)
    with small_node_rows(60):  # blocks grown in memory below a few level passes
        model = dasktree.DaskTreeRegressor(cv=3, keep_fold_trees=True, prune="none").fit(
            frame.drop(columns="y"), frame["y"]).model_
    trees = [model.grown_tree, *model.fold_trees]
    assert min(t.n_nodes for t in trees) > 100
    for tree in trees:
        kept, made = tree_shape(tree), shape_of(tree.children)
        assert kept is not made
        for name in ("parent", "start", "flat"):
            np.testing.assert_array_equal(getattr(kept, name), getattr(made, name))
        for test in tree.tests:
            if test is not None and test.kind == "numeric":
                again = binary_test(model.spec, test.attribute, test.cut, test.default)
                np.testing.assert_array_equal(again.bin_children, test.bin_children)
                assert again.thresholds == test.thresholds


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), cv=st.sampled_from([None, 3]), gathered=st.booleans(),
       monotonic=st.booleans())
def test_the_trees_are_the_same_whatever_the_node_groups(seed, cv, gathered, monotonic):
    """One node per histogram group (a pass each, the level's decisions made after its passes, held-out
    leaves counted in its first) grows the trees one group per level does."""
    frame = regression_frame(800, seed=seed).drop(columns="colour")
    kw = dict(cv=cv, keep_fold_trees=True, prune="none", min_samples_leaf=3, max_depth=None if gathered else 7,
              monotonic_cst=[1, 0] if monotonic else None)

    def trees(budget_mb: float) -> list:
        with small_node_rows(200 if gathered else 0):
            model = dasktree.DaskTreeRegressor(max_histogram_mb=budget_mb, **kw).fit(
                frame.drop(columns="y"), frame["y"]).model_
        return [model.grown_tree.to_json(), *(t.to_json() for t in model.fold_trees)]

    assert trees(1e-4) == trees(256.0)
