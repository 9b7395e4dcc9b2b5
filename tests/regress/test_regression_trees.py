"""The grown regression trees as models (:func:`dasktree.regress.trees.tree_models`): the shape they keep
for pruning is their children lists' own, and the tests they share across trees are the tests."""

from __future__ import annotations

import numpy as np

import dasktree
from dasktree.levels.small import binary_test, small_node_rows
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
