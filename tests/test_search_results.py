"""Search results packed for the trip to the client come back equal, field for field."""

import pickle

import numpy as np
import pandas as pd
import pytest

from dasktree.binning import bin_spec
from dasktree.dataset import open_source
from dasktree.folds import FoldSpec
from dasktree.grow import GrowParams, grow
from dasktree.runners import LocalRunner
from dasktree.schema import resolve_roles
from dasktree.search_results import pack, unpack
from dasktree.split.search import SplitParams


def _same(a, b):
    assert a.node == b.node
    np.testing.assert_array_equal(a.counts, b.counts)
    assert list(a.decisions) == list(b.decisions)  # same trees, same order
    for tree, x in a.decisions.items():
        y = b.decisions[tree]
        assert x.reason == y.reason
        if x.candidate is None:
            assert y.candidate is None and y.child_counts is None
            continue
        tx, ty = x.candidate.test, y.candidate.test
        assert (tx.attribute, tx.kind, tx.default, tx.thresholds, tx.groups) == \
               (ty.attribute, ty.kind, ty.default, ty.thresholds, ty.groups)
        assert tx.bin_children.dtype == ty.bin_children.dtype and tx == ty
        assert (x.candidate.gain, x.candidate.score) == (y.candidate.gain, y.candidate.score)
        np.testing.assert_array_equal(x.candidate.child_counts, y.candidate.child_counts)
        np.testing.assert_array_equal(x.child_counts, y.child_counts)


class _PackingRunner(LocalRunner):
    """Each level's real results go through pack, pickle and unpack before the forest sees them."""

    decisions = 0

    def level_pass(self, plan, requests, context, label):
        results = super().level_pass(plan, requests, context, label)
        n_parts = context.n_folds * context.n_repeats
        back = unpack(pickle.loads(pickle.dumps(pack(results, n_parts, context.n_classes), protocol=5)))
        assert len(back) == len(results)
        for a, b in zip(results, back):
            _same(a, b)
        self.decisions += sum(len(r.decisions) for r in results)
        return back


def _frame(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rng.integers(0, 40, size=n).astype(float)
    z[rng.random(n) < 0.05] = np.nan
    colour = rng.choice(["red", "green", "blue", "grey"], size=n)
    label = ((x > 0.3) ^ (colour == "red") ^ (z > 25)) | (rng.random(n) < 0.1)
    return pd.DataFrame({"x": x, "z": z, "colour": colour, "label": np.where(label, "yes", "no")})


@pytest.mark.parametrize("max_arity, nominal_split", [(2, "binary"), (3, "multiway")])
def test_packed_results_of_a_real_forest_unpack_equal(max_arity, nominal_split):
    source, target = open_source(_frame(), target="label")
    folds = FoldSpec(5, repeats=2, seed=3)
    roles = resolve_roles(source.schema, target, extra=folds.columns, where="frame")
    runner = _PackingRunner(source, roles, folds=folds)
    spec = bin_spec(runner.summary(64), roles, max_bins=64, max_categories=10)
    runner.prepare(spec, folds.k)
    params = GrowParams(max_depth=5, min_samples_leaf=3,
                        split=SplitParams(max_arity=max_arity, nominal_split=nominal_split, min_samples_leaf=3))
    forest, _ = grow(runner, spec, params, n_trees=11, holdout=np.arange(-1, 10), n_folds=5, n_repeats=2)
    assert runner.decisions > 100
    kinds = {b.test.kind for node in forest.nodes for b in node.branches}
    assert kinds == {"numeric", "nominal"}
    assert any(b.test.arity > 2 for node in forest.nodes for b in node.branches) == (max_arity > 2)
    assert any(node.leaf_trees for node in forest.nodes)


def test_an_empty_chunk_packs():
    assert unpack(pickle.loads(pickle.dumps(pack([], 10, 3)))) == []
