"""Classification pruning under monotonic_cst counts the errors of what the tree predicts: a node's class
probability clipped to its bounds (``dasktree.split.monotonic``), whose class can differ from its counts'
majority. Pessimistic pruning, the cp table's training and CV errors, the CV report and the training accuracy
all count them so."""

import dataclasses

import numpy as np
import pytest

from dasktree.model import prune as cc
from dasktree.model.model import Model
from dasktree.model.pruning import apply_pruning
from dasktree.testing.exports import full_binary_model


def _flipping_model(monotonic: bool) -> Model:
    """A root split on x0 (increasing under the constraint) whose left child (split on x1, free) has more of
    class "b" than its right sibling: clipped to the middle value 0.3, every node of the left branch predicts
    "a", though its left leaf is mostly "b"."""
    base = full_binary_model(2, n_features=2)
    grown = cc.pruned_tree(base.tree, np.array([False, False, True] + [False] * 4))  # node 2 a leaf: 5 nodes
    grown = dataclasses.replace(grown, counts=np.array([[140, 60], [50, 50], [90, 10], [10, 40], [40, 10]]),
                                validation=np.array([[30, 20], [15, 10], [15, 10], [5, 10], [10, 0]]))
    tests = [grown.tests[0], grown.tests[1], None, None, None]
    tests[0] = dataclasses.replace(tests[0], attribute=0)
    tests[1] = dataclasses.replace(tests[1], attribute=1)
    grown = dataclasses.replace(grown, tests=tests)
    spec = dataclasses.replace(base.spec, classes=("a", "b"))
    params = {"criterion": "gini", "monotonic_cst": [1, 0]} if monotonic else {"criterion": "gini"}
    return Model(spec=spec, target="y", tree=grown, params=params,
                 report={"cv": {"folds": 1, "repeats": 1}}, fold_trees=[dataclasses.replace(grown)])


def test_clipping_flips_the_left_branch():
    model = _flipping_model(True)
    value = model.tree.value
    assert value[1, 1] == pytest.approx(0.3) and value[3, 1] == pytest.approx(0.3)  # clipped from 0.5 and 0.8
    assert np.argmax(value, axis=1).tolist() == [0, 0, 0, 0, 0]
    assert np.argmax(model.tree.counts, axis=1).tolist() == [0, 0, 0, 1, 0]


def test_leaf_errors_count_what_the_clipped_tree_predicts():
    tree = _flipping_model(True).tree
    raw = cc.leaf_errors(cc.tree_shape(tree), tree.counts)
    assert raw.tolist() == [60, 50, 10, 10, 10]
    assert cc.leaf_errors(cc.tree_shape(tree), tree.counts, value=tree.value).tolist() == [60, 50, 10, 40, 10]


def test_pessimistic_pruning_counts_the_clipped_errors():
    """Counted from the raw counts, the left split removes 30 errors and stays; counted as the tree
    predicts, both of its leaves predict "a" as the node does: the split removes none and is pruned."""
    free, constrained = apply_pruning(_flipping_model(False), mode="pessimistic"), \
        apply_pruning(_flipping_model(True), mode="pessimistic")
    assert free.tree.n_leaves == 3 and constrained.tree.n_leaves < 3
    assert constrained.report["training_accuracy"] == pytest.approx(140 / 200)  # every leaf predicts "a"
    assert free.report["training_accuracy"] == pytest.approx(170 / 200)


def test_the_cp_table_and_cv_report_count_the_clipped_errors():
    model = apply_pruning(_flipping_model(True), mode="none")
    table = model.report["prune"]["cp_table"]
    assert table[0]["leaves"] == 3 and table[0]["train_error"] == pytest.approx(60 / 200)  # not 10 / 200
    assert table[0]["cv_error"] == pytest.approx(20 / 50)  # the held-out "b" rows: the tree predicts "a" everywhere
    assert model.report["cv"]["accuracy_pooled"] == pytest.approx(30 / 50)
