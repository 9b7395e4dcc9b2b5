"""The grown subtrees as the forest keeps them (:class:`dasktree.levels.attach.GrownBlock`)."""

from __future__ import annotations

import numpy as np
import pytest

import dasktree
from dasktree.levels import attach as attaching
from dasktree.levels.small import small_node_rows
from dasktree.testing.data import regression_frame


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_grown_block_owns_its_columns_in_narrow_types(monkeypatch, task):
    """A block keeps copies, not views: a view of the grower's output kept its whole room (twice the rows,
    a regression's ten statistics a node) for every grown node of a deep fit."""
    blocks = []

    def kept(store, *args):
        made = real(store, *args)
        blocks.append(store.grown[-1])
        return made

    real = attaching.attach
    monkeypatch.setattr(attaching, "attach", kept)
    frame = regression_frame(3000, seed=2)
    y = frame.pop("y")
    if task == "classification":
        dasktree.DaskTreeClassifier(cv=3).fit(frame, (y > y.median()).astype(int), nominal=["colour"])
    else:
        dasktree.DaskTreeRegressor(cv=3).fit(frame, y, nominal=["colour"])
    assert blocks
    for block in blocks:
        for name, column in vars(block).items():
            assert column.base is None, name
        assert (block.job.dtype, block.parent.dtype, block.child.dtype, block.depth.dtype, block.reasons.dtype) == (
            np.int32, np.int32, np.int8, np.int16, np.int8)


def _same_model(a, b) -> None:
    assert a.n_nodes == b.n_nodes
    assert np.array_equal(a.counts, b.counts) and np.array_equal(a.depth, b.depth)
    assert (a.validation is None) == (b.validation is None)
    if a.validation is not None:
        assert np.array_equal(a.validation, b.validation)
    assert [list(k) for k in a.children] == [list(k) for k in b.children]
    assert list(a.leaf_reason) == list(b.leaf_reason)
    assert [None if t is None else t.identity for t in a.tests] == [None if t is None else t.identity for t in b.tests]


def test_blocks_cut_by_tree_give_each_tree_the_same_model_and_let_go_of_its_own(monkeypatch):
    """A regression cv fit's finish cuts the grown blocks by tree and lets each tree's go once its model is
    made: every tree's model from the cut blocks is the one from the blocks as grown (chunks of several
    trees' jobs among them), and letting a tree go drops its blocks only."""
    from dasktree.levels.to_model import tree_model
    from dasktree.regress import fitting

    seen = {}

    def finish(runner, given, settings, spec, summary, started, pass0, run, grown_nodes, *rest):
        forest = grown_nodes[0]
        seen["mixed"] = any(np.unique(b.job_tree).size > 1 for b in forest.grown)
        before = [tree_model(forest, t) for t in range(forest.n_trees)]
        blocks = list(forest.grown)
        attaching.by_tree(forest)
        assert all(np.unique(b.job_tree).size == 1 for b in forest.grown)
        assert sum(b.parent.size for b in forest.grown) == sum(b.parent.size for b in blocks)
        for t in range(forest.n_trees):
            _same_model(before[t], tree_model(forest, t))
        for t in range(forest.n_trees):
            others = [b for b in forest.grown if b.job_tree[0] != t]
            attaching.let_go(forest, t)
            assert forest.grown == others
        forest.grown = blocks  # the fit goes on from the blocks as grown
        seen["checked"] = True
        return real(runner, given, settings, spec, summary, started, pass0, run, grown_nodes, *rest)

    real = fitting._finish
    monkeypatch.setattr(fitting, "_finish", finish)
    frame = regression_frame(4000, seed=5)
    y = frame.pop("y")
    with small_node_rows(400):  # nodes gathered below the roots: a chunk holds several trees' jobs
        dasktree.DaskTreeRegressor(cv=4).fit(frame, y, nominal=["colour"])
    assert seen == {"mixed": True, "checked": True}


def test_in_process_a_chunk_is_attached_before_the_pass_has_grown_them_all(monkeypatch):
    """In process a small pass gives each grown chunk to the attach as soon as it and those before it are
    grown (one more outstanding than threads), so a pass's grower outputs are not all held at once: with two
    threads, at most three chunks are grown and not yet attached at any attach, where a pass cuts eight."""
    import threading

    from dasktree.engine import place
    from dasktree.levels import small

    counts = {"grown": 0, "attached": 0}
    waiting = []  # at each attach: chunks grown and not attached yet, this one included
    lock = threading.Lock()

    def counting(chunk, **kwargs):
        out = real_grow(chunk, **kwargs)
        with lock:
            counts["grown"] += 1
        return out

    def attaching_now(store, *args):
        with lock:
            waiting.append(counts["grown"] - counts["attached"])
            counts["attached"] += 1
        return real_attach(store, *args)

    real_grow, real_attach = small.grow_chunk, attaching.attach
    monkeypatch.setattr(small, "grow_chunk", counting)
    monkeypatch.setattr(attaching, "attach", attaching_now)
    monkeypatch.setattr(place, "cores", lambda: 2)
    frame = regression_frame(4000, seed=3)
    y = frame.pop("y")
    with small_node_rows(300):  # many small nodes a pass: a pass cuts 4 x 2 chunks
        dasktree.DaskTreeRegressor(cv=3).fit(frame, y)
    assert counts["attached"] == counts["grown"] >= 8
    assert max(waiting) <= 3, waiting
