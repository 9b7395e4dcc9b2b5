"""``min_weight_fraction_leaf``: a child of a split holds at least that fraction of its tree's (weighted)
training rows, scikit-learn's rule (``n >= fraction * total`` in float64). Its naive twin is
``min_samples_leaf`` set to the rows the fraction makes: the same tree, node for node (the leaves'
reasons aside: a node too small to split is found so before its pass under ``min_samples_leaf``, by the
search under the fraction), for both tasks, with and without weights; a fold tree's total is its own
training rows."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.cli import main
from dasktree.errors import ParameterError
from dasktree.model import load as load_model
from dasktree.fit import fit_regression
from dasktree.split.api import fraction_rows
from dasktree.testing import mixed_frame
from dasktree.testing.data import regression_frame


@settings(max_examples=300, deadline=None, derandomize=True)
@given(fraction=st.floats(0, 0.5), rows=st.integers(0, 2**40))
def test_the_rows_a_fraction_makes_are_the_least_allowed(fraction, rows):
    n = int(fraction_rows(fraction, np.array([rows]))[0])
    product = fraction * float(rows)  # scikit-learn's min_weight_leaf
    assert n >= product and (n == 0 or n - 1 < product)


def test_a_round_fraction_allows_its_round_rows():
    assert fraction_rows(0.01, np.array([900, 901])).tolist() == [9, 10]  # 0.01 * 900 is 9.0 in float64


def _grown(model):
    """The grown tree's nodes, without the leaves' reasons."""
    return [{k: v for k, v in node.items() if k != "leaf"} for node in model.grown_tree.to_json()["nodes"]]


FRACTIONS = [0.01, 0.05, 0.1, 0.2, 1 / 3 / 2]


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_a_classification_tree_is_the_one_of_its_smallest_leaf(fraction):
    frame = mixed_frame(900, seed=11)
    least = math.ceil(fraction * len(frame))
    by_fraction = dasktree.fit(frame, target="label", prune="none", min_weight_fraction_leaf=fraction)
    by_rows = dasktree.fit(frame, target="label", prune="none", min_samples_leaf=least)
    assert _grown(by_fraction) == _grown(by_rows)
    assert by_fraction.params["min_weight_fraction_leaf"] == fraction
    if least > 1:  # the fraction did something: smaller than min_samples_leaf=1's tree
        assert by_fraction.tree.n_leaves < dasktree.fit(frame, target="label", prune="none").tree.n_leaves


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_a_regression_tree_is_the_one_of_its_smallest_leaf(fraction):
    frame = regression_frame(900, seed=12)
    least = math.ceil(fraction * len(frame))
    by_fraction = fit_regression(frame, target="y", prune="none", min_weight_fraction_leaf=fraction)
    by_rows = fit_regression(frame, target="y", prune="none", min_samples_leaf=least)
    assert _grown(by_fraction) == _grown(by_rows)


@pytest.mark.parametrize("regression", [False, True])
def test_weights_make_the_total_the_weights_sum(regression):
    frame = (regression_frame if regression else mixed_frame)(700, seed=13)
    weight = np.random.default_rng(3).integers(1, 4, size=len(frame))
    fit = fit_regression if regression else dasktree.fit
    target = "y" if regression else "label"
    least = math.ceil(0.05 * int(weight.sum()))
    by_fraction = fit(frame, target=target, prune="none", sample_weight=weight, min_weight_fraction_leaf=0.05)
    by_rows = fit(frame, target=target, prune="none", sample_weight=weight, min_samples_leaf=least)
    assert _grown(by_fraction) == _grown(by_rows)


@pytest.mark.parametrize("regression", [False, True])
def test_a_fold_trees_total_is_its_own_training_rows(regression):
    frame = (regression_frame if regression else mixed_frame)(900, seed=14)
    fit = fit_regression if regression else dasktree.fit
    target = "y" if regression else "label"
    model = fit(frame, target=target, prune="none", cv=3, keep_fold_trees=True, min_weight_fraction_leaf=0.04)
    plain = fit(frame, target=target, prune="none", min_weight_fraction_leaf=0.04)
    assert _grown(model) == _grown(plain)  # the main tree is the tree of every row
    for tree in [model.grown_tree, *model.fold_trees]:
        rows = tree.counts[:, 0] if regression else tree.counts.sum(axis=1)  # training rows at each node
        least = math.ceil(0.04 * int(rows[0]))
        inner = [i for i, t in enumerate(tree.tests) if t is not None]
        assert inner, "the fraction left no split to check"
        assert min(int(rows[c]) for i in inner for c in tree.children[i]) >= least


def test_out_of_range_is_refused_in_one_line(capsys, tmp_path):
    frame = mixed_frame(50, seed=1)
    with pytest.raises(ParameterError, match=r"min_weight_fraction_leaf must be .*0.5.*got 0.6"):
        dasktree.fit(frame, target="label", min_weight_fraction_leaf=0.6)
    data = tmp_path / "d.parquet"
    frame.to_parquet(data)
    assert main(["fit", str(data), "--target", "label", "--min-weight-fraction-leaf", "0.6",
                 "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "min_weight_fraction_leaf" in err[0]


def test_the_command_takes_it(tmp_path, capsys):
    frame = mixed_frame(600, seed=2)
    data = tmp_path / "d.parquet"
    frame.to_parquet(data)
    out = tmp_path / "m.json"
    assert main(["fit", str(data), "--target", "label", "--prune", "none", "--min-weight-fraction-leaf", "0.1",
                 "--out", str(out), "--quiet"]) == 0
    model = load_model(out)
    want = dasktree.fit(frame, target="label", prune="none", min_samples_leaf=60)
    assert model.params["min_weight_fraction_leaf"] == 0.1 and _grown(model) == _grown(want)


def test_forests_refuse_it_in_one_line():
    frame = mixed_frame(100, seed=1)
    with pytest.raises(ParameterError, match="min_weight_fraction_leaf is not for forests yet"):
        dasktree.fit_forest(frame, target="label", n_estimators=2, min_weight_fraction_leaf=0.1)


def test_the_estimators_take_it():
    frame = mixed_frame(600, seed=4)
    X, y = frame.drop(columns=["label"]), frame["label"]
    clf = dasktree.DaskTreeClassifier(min_weight_fraction_leaf=0.1, prune="none").fit(X, y)
    assert clf.get_params()["min_weight_fraction_leaf"] == 0.1
    want = dasktree.DaskTreeClassifier(min_samples_leaf=60, prune="none").fit(X, y)
    assert _grown(clf.model_) == _grown(want.model_)
    frame = regression_frame(600, seed=4)
    reg = dasktree.DaskTreeRegressor(min_weight_fraction_leaf=0.1, prune="none").fit(frame.drop(columns=["y"]), frame["y"])
    want = dasktree.DaskTreeRegressor(min_samples_leaf=60, prune="none").fit(frame.drop(columns=["y"]), frame["y"])
    assert _grown(reg.model_) == _grown(want.model_)
