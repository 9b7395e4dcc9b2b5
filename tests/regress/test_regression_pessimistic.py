"""M5's pessimistic pruning of regression trees against a naive twin.

The twin knows nothing of the fit's sums of squares: it routes every training row to its leaf,
sums the rows' fixed-point targets and their squares per node (exact Python integers), and prunes
bottom up with exact fractions, M5's estimate ``SSE (n + v) / (n - v)`` for the node as a leaf
(``v = 1``) and for its subtree as pruned below it (``v`` its leaves). The clever path reads each
node's ``Q`` kept by the passes, infers what a leaf made before its level's pass lacks, and
compares in floats: the two must cut the same nodes.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dasktree import DaskTreeRegressor
from dasktree.model.prune import pruned_tree
from dasktree.regress import prune as pruning
from dasktree.regress.trees import UNCOUNTED


def _node_sums(model, X, y):
    """Per node of the grown tree: rows, sum of q and sum of q^2, from the rows themselves."""
    tree = model.full_tree or model.tree
    table = pa.Table.from_pandas(X, preserve_index=False)
    leaf = model.leaves(table, tree)
    q = np.asarray(model.spec.target.encode(pa.array(np.asarray(y, dtype=float))), dtype=np.int64)
    n_nodes = len(tree.children)
    sums = [[0, 0, 0] for _ in range(n_nodes)]
    for li, qi in zip(leaf.tolist(), q.tolist()):
        sums[li][0] += 1
        sums[li][1] += qi
        sums[li][2] += qi * qi
    for i in range(n_nodes - 1, -1, -1):  # parents after children: add up
        for c in tree.children[i]:
            for k in range(3):
                sums[i][k] += sums[c][k]
    return tree, sums


def _naive_leaves(tree, sums):
    n_nodes = len(tree.children)
    is_leaf = [len(k) == 0 for k in tree.children]

    def sse(i):
        n, s, q = sums[i]
        return Fraction(q) - Fraction(s * s, n) if n else Fraction(0)

    def inflated(e, n, v):
        if n <= v:
            return Fraction(0) if e <= 0 and v <= 1 else None  # None: unbounded
        return e * (n + v) / (n - v)

    below, leaves = [sse(i) for i in range(n_nodes)], [1] * n_nodes
    for i in range(n_nodes - 1, -1, -1):
        if is_leaf[i]:
            continue
        sub = sum(below[c] for c in tree.children[i])
        count = sum(leaves[c] for c in tree.children[i])
        own, whole = inflated(sse(i), sums[i][0], 1), inflated(sub, sums[i][0], count)
        tie = own is not None and whole is not None and own <= whole * (1 + Fraction(1, 10**9))
        if whole is None or tie:
            is_leaf[i], below[i], leaves[i] = True, sse(i), 1
        else:
            below[i], leaves[i] = sub, count
    return np.array(is_leaf)


def _check(X, y, **params):
    model = DaskTreeRegressor(prune="none", **params).fit(X, y).model_
    tree, sums = _node_sums(model, X, y)
    assert [s[0] for s in sums] == tree.counts[:, 0].tolist() and [s[1] for s in sums] == tree.counts[:, 1].tolist()
    squares = [None if (not tree.children[i] and tree.leaf_reason[i] in UNCOUNTED) else sums[i][2]
               for i in range(len(sums))]
    got = pruning.pessimistic_leaves(tree, squares)
    np.testing.assert_array_equal(got, _naive_leaves(tree, sums))
    # the fit's own pessimistic pruning, from the sums of squares its passes kept: the same tree
    fitted = DaskTreeRegressor(prune="pessimistic", **params).fit(X, y).model_
    expected = pruned_tree(tree, got)
    assert fitted.tree.children == expected.children and fitted.tree.counts.tolist() == expected.counts.tolist()
    assert fitted.report["prune"]["mode"] == "pessimistic" and fitted.full_tree is not None
    return model, fitted


def test_pessimistic_pruning_is_the_naive_twins_and_prunes():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 600), "b": rng.normal(size=600)})
    y = np.where(X["a"] > 0.5, 3.0, 0.0) + rng.normal(size=600)
    grown, fitted = _check(X, y)
    assert fitted.tree.n_leaves < grown.tree.n_leaves * 0.8  # splits on noise go; the step stays
    assert fitted.tree.tests[0] is not None and fitted.tree.tests[0].attribute == 0


def test_leaves_no_pass_counted_are_inferred_from_their_parents():
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 300), "b": rng.integers(0, 5, 300).astype(float)})
    y = X["a"] * 2 + X["b"] + rng.normal(scale=0.3, size=300)
    grown, _ = _check(X, y, max_depth=4, min_samples_split=10)
    assert any(r in UNCOUNTED for r in grown.tree.leaf_reason)  # the case this test is for


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(8, 120), depth=st.integers(1, 6), leaf=st.integers(1, 6), levels=st.integers(2, 50),
       seed=st.integers(0, 2**16))
def test_pessimistic_pruning_matches_the_naive_twin_on_any_data(n, depth, leaf, levels, seed):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.integers(0, 10, n).astype(float), "b": rng.normal(size=n)})
    y = rng.integers(0, levels, n).astype(float) + X["a"]  # ties in the target: exact equalities
    _check(X, y, max_depth=depth, min_samples_leaf=leaf)


def test_pessimistic_is_a_regression_prune_mode_and_cv_reports_it():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 400)})
    y = np.sin(6 * X["a"]) + rng.normal(scale=0.2, size=400)
    reg = DaskTreeRegressor(prune="pessimistic", cv=5).fit(X, y)
    assert reg.model_.report["prune"]["mode"] == "pessimistic"
    assert reg.model_.report["cv"]["r2"] > 0.5
    with pytest.raises(Exception, match="prune"):
        DaskTreeRegressor(prune="pessimistic-ish").fit(X, y)
