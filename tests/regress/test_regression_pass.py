"""The regression level pass against its numpy twin, and the sums it keeps."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.binning.target import square_pieces, square_sum
from dasktree.kernels.regression_pass import (HELD_N, HELD_S, RegressionPlan, regression_histogram,
                                              regression_histogram_numpy)


def _plan(n_attributes: int, widths: list[int], n_trees: int, rng, held_only: bool = False) -> RegressionPlan:
    """Trees of depth 1 on random attributes: every tree's root tested, its children counted (with
    ``held_only``, the last slots held-out rows only)."""
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    attribute, offset, tables, slot = [], [], [], []
    size = 0
    roots = list(range(n_trees))
    attribute += [-1] * n_trees
    offset += [0] * n_trees
    slot += [-1] * n_trees
    for t in roots:
        a = int(rng.integers(n_attributes))
        kids = [len(attribute), len(attribute) + 1]
        attribute += [-1, -1]
        offset += [0, 0]
        slot += [-1, -1]
        attribute[t], offset[t] = a, size
        tables.append(np.asarray(kids, np.int32)[rng.integers(0, 2, size=widths[a])])
        size += widths[a]
    counted = [e for e in range(len(attribute)) if attribute[e] < 0]
    slots = np.full(len(attribute), -1, np.int32)
    slots[counted] = np.arange(len(counted))
    holdout = np.arange(-1, n_trees - 1)
    binned = int(rng.integers(0, len(counted) + 1)) if held_only else len(counted)
    return RegressionPlan(root=np.arange(n_trees, dtype=np.int64), attribute=np.asarray(attribute, np.int32),
                          offset=np.asarray(offset, np.int64), table=np.concatenate(tables).astype(np.int32),
                          slot=slots, holdout=holdout, n_slots=len(counted), total_bins=int(sum(widths)),
                          offsets=offsets, n_bin_slots=binned)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 200), st.integers(1, 4), st.booleans())
def test_kernel_equals_the_numpy_twin(seed, n_rows, n_trees, weighted):
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(2, 9, size=3)]
    plan = _plan(3, widths, n_trees, rng)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    q = rng.integers(0, 2**30 + 1, size=n_rows).astype(np.int32)
    part = rng.integers(0, max(1, n_trees - 1), size=(1, n_rows)).astype(np.int16)
    weight = rng.integers(1, 5, size=n_rows).astype(np.int32) if weighted else None
    fast = regression_histogram(codes, q, part, plan, weight=weight)
    slow = regression_histogram_numpy(codes, q, part, plan, weight)
    np.testing.assert_array_equal(fast, slow)
    # each tree's slots hold every row once: in an attribute's bins when trained on, else held out
    bins, node = plan.bins(fast), plan.node_cells(fast)
    w = np.ones(n_rows, np.int64) if weight is None else weight.astype(np.int64)
    assert bins[:, :widths[0], 0].sum() + node[:, HELD_N].sum() == n_trees * w.sum()
    assert bins[:, :widths[0], 1].sum() + node[:, HELD_S].sum() == n_trees * (w * q).sum()


def test_parts_add_to_the_whole_in_any_order():
    rng = np.random.default_rng(3)
    widths = [5, 4]
    plan = _plan(2, widths, 3, rng)
    codes = np.stack([rng.integers(0, w, size=500) for w in widths]).astype(np.uint8)
    q = rng.integers(0, 2**30, size=500).astype(np.int32)
    part = rng.integers(0, 2, size=(1, 500)).astype(np.int16)
    whole = regression_histogram(codes, q, part, plan)
    pieces = [regression_histogram(codes[:, s], q[s], part[:, s], plan) for s in np.array_split(rng.permutation(500), 7)]
    np.testing.assert_array_equal(sum(pieces[::-1]), whole)


@given(st.lists(st.integers(0, 2**30), min_size=1, max_size=50))
def test_square_pieces_sum_to_the_exact_sum_of_squares(values):
    q = np.asarray(values, dtype=np.int64)
    hh, hl, ll = (p.sum() for p in square_pieces(q))
    assert square_sum(hh, hl, ll) == sum(v * v for v in values)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 100))
def test_held_out_only_slots_equal_the_twin(seed, n_rows):
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(2, 6, size=2)]
    plan = _plan(2, widths, 3, rng, held_only=True)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    q = rng.integers(0, 2**30 + 1, size=n_rows).astype(np.int32)
    part = rng.integers(0, 2, size=(1, n_rows)).astype(np.int16)
    np.testing.assert_array_equal(regression_histogram(codes, q, part, plan),
                                  regression_histogram_numpy(codes, q, part, plan))


def test_rows_in_node_order_give_the_same_sums():
    """A deep level's rows are counted in order of their main-tree node (node_order); the sums are the
    same as in the rows' own order, and so is the model of a whole fit with every level ordered."""
    from dasktree.kernels import regression_pass

    rng = np.random.default_rng(11)
    widths = [6, 5, 4]
    plan = _plan(3, widths, 3, rng)
    codes = np.stack([rng.integers(0, w, size=400) for w in widths]).astype(np.uint8)
    q = rng.integers(0, 2**30, size=400).astype(np.int32)
    part = rng.integers(0, 2, size=(1, 400)).astype(np.int16)
    saved = regression_pass.ORDER_BYTES
    try:
        regression_pass.ORDER_BYTES = 0
        order = regression_pass.node_order(codes, plan)
    finally:
        regression_pass.ORDER_BYTES = saved
    assert order is not None and sorted(order.tolist()) == list(range(400))
    np.testing.assert_array_equal(regression_histogram(codes, q, part, plan, order=order),
                                  regression_histogram(codes, q, part, plan))


def test_a_fit_with_every_level_ordered_is_the_same_model(monkeypatch):
    from dasktree import DaskTreeRegressor
    from dasktree.kernels import regression_pass
    from dasktree.testing.data import regression_frame

    frame = regression_frame(3000, seed=4)
    reference = DaskTreeRegressor(max_depth=6, cv=3).fit(frame, target="y").model_.dumps()
    monkeypatch.setattr(regression_pass, "ORDER_BYTES", 0)  # every pass reorders the rows of its parts
    assert DaskTreeRegressor(max_depth=6, cv=3).fit(frame, target="y").model_.dumps() == reference


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 200), st.integers(1, 4), st.booleans())
def test_bagged_pass_counts_each_member_its_bag(seed, n_rows, n_trees, weighted):
    """A bagged pass (part = each row's multiplicity per member): the kernel equals its twin, and
    member t's slots equal a plain pass of tree t alone with weight = w * multiplicity."""
    import dataclasses

    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(2, 9, size=3)]
    plan = dataclasses.replace(_plan(3, widths, n_trees, rng), holdout=np.full(n_trees, -1, np.int64), bagged=True)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    q = rng.integers(0, 2**30 + 1, size=n_rows).astype(np.int32)
    part = rng.poisson(1.0, size=(n_trees, n_rows)).astype(np.int16)
    weight = rng.integers(1, 5, size=n_rows).astype(np.int32) if weighted else None
    fast = regression_histogram(codes, q, part, plan, weight=weight)
    np.testing.assert_array_equal(fast, regression_histogram_numpy(codes, q, part, plan, weight))
    w = np.ones(n_rows, np.int64) if weight is None else weight.astype(np.int64)
    bins, node = plan.bins(fast), plan.node_cells(fast)
    assert not node[:, HELD_N].any()
    for t in range(n_trees):
        own = (w * part[t]).astype(np.int32)
        alone = dataclasses.replace(plan, root=plan.root[t:t + 1], holdout=np.asarray([-1]), bagged=False)
        single = regression_histogram(codes, q, part[:1] * 0, alone, weight=own)
        mine = plan.slot[2 * np.arange(n_trees) + n_trees][t], plan.slot[2 * np.arange(n_trees) + n_trees + 1][t]
        for s in mine:
            np.testing.assert_array_equal(bins[s], alone.bins(single)[s])
            np.testing.assert_array_equal(node[s], alone.node_cells(single)[s])


@pytest.mark.parametrize("params", [
    dict(max_depth=6, cv=3, min_impurity_decrease=1e-9),
    dict(max_depth=5, cv=2, min_weight_fraction_leaf=0.01, max_features=2, random_state=3, monotonic_cst=[1, 0, 0]),
])
def test_a_pass_searched_in_chunks_is_the_pass_searched_whole(monkeypatch, params):
    """On a cluster a regression pass's binned slots are cut in runs, each summed from the workers' shares
    and searched apart (the last with every slot's node cells): merged, the same sums, cells and tests as
    the whole histogram searched at once, whatever the runs."""
    from dasktree import DaskTreeRegressor
    from dasktree.regress.grow import RegressionSearch
    from dasktree.testing.data import regression_frame

    seen = []
    whole = RegressionSearch.search

    def capture(self, hist, plan):
        seen.append((hist.copy(), plan, self))
        return whole(self, hist, plan)

    monkeypatch.setattr(RegressionSearch, "search", capture)
    DaskTreeRegressor(scheduler="inprocess", max_bins=32, **params).fit(regression_frame(3000, seed=4), target="y")
    monkeypatch.undo()
    cut = 0
    for hist, plan, search in seen:
        expected = search.search(hist, plan)
        first = hist // 2  # two workers' shares of the sums
        for least in (1, 2, 5):
            _, chunks = search.pass_chunks(plan, plan, 4, least=least)
            cut += len(chunks) > 1
            got = search.merge([search.search_cells(first, hist - first, lo=c.lo, hi=c.hi, chunk=c) for c in chunks])
            for a, b in zip(got[:2], expected[:2]):
                np.testing.assert_array_equal(a, b)
            for name in ("gain", "attribute", "cut", "default", "children"):
                np.testing.assert_array_equal(getattr(got[2], name), getattr(expected[2], name), err_msg=name)
            assert [None if t is None else t.tolist() for t in got[2].tables] == \
                   [None if t is None else t.tolist() for t in expected[2].tables]
    assert len(seen) >= 4 and cut >= 3
