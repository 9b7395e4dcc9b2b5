"""A bagged forest's level pass: each member's slice counts every row its multiplicity in the
member's bag, by the compiled kernel, its numpy twin and a brute-force count alike."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.levels.forest import Forest
from dasktree.kernels.histogram import level_histogram, level_histogram_numpy, route_numpy
from dasktree.testing.forests import random_test, routing_plan, set_tests


def _bagged_forest(rng, widths, n_members, depth):
    forest = Forest(n_members, np.arange(n_members), n_members, 2, bagged=True)
    frontier = [forest.nodes[0]]
    for _ in range(depth):
        nxt = []
        for node in frontier:
            tests = {t: random_test(rng, widths) for t in node.trees if rng.random() < 0.9}
            if not tests:
                continue
            counts = {t: np.zeros((tests[t].arity, forest.n_parts + 1, 2), dtype=np.int64) for t in tests}
            nxt += set_tests(forest, node, tests, counts)
        frontier = nxt
    return forest


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 200), members=st.integers(1, 5), depth=st.integers(0, 3),
       weighted=st.booleans())
def test_bagged_kernel_equals_twin_and_brute_force(seed, n_rows, members, depth, weighted):
    rng = np.random.default_rng(seed)
    widths = rng.integers(3, 7, size=3)
    forest = _bagged_forest(rng, widths, members, depth)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    bags = rng.poisson(1.0, size=(members, n_rows)).astype(np.int16)
    weight = rng.integers(1, 4, size=n_rows).astype(np.int32) if weighted else None
    frontier = [n for n in forest.nodes if not n.branches]
    plan = forest.pass_plan(frontier, widths, 2)
    assert plan.bagged and not any(plan.slot_rest)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    kw = dict(n_folds=forest.n_folds, offsets=offsets, total_bins=int(widths.sum()), n_classes=2, weight=weight)
    fast = level_histogram(codes, y, bags, plan, out=plan.zeros(np.int64), **kw)
    slow = level_histogram_numpy(codes, y, bags, plan, **kw)
    np.testing.assert_array_equal(fast, slow)
    entries = route_numpy(codes, routing_plan(forest, {n.id: s for s, n in enumerate(frontier)}, widths))
    slot_of = routing_plan(forest, {n.id: s for s, n in enumerate(frontier)}, widths).slot_of_entry[entries]
    times = bags.astype(np.int64) * (1 if weight is None else weight[None, :])
    for s, node in enumerate(frontier):
        view = plan.view(fast, s)
        for j, member in enumerate(plan.slot_parts[s]):
            rows = np.flatnonzero(slot_of[member] == s)  # member's rows reaching the node
            brute = np.zeros((int(widths.sum()), 2), dtype=np.int64)
            for a in range(3):
                np.add.at(brute, (offsets[a] + codes[a, rows], y[rows]), times[member, rows])
            np.testing.assert_array_equal(view[j], brute)
