"""Histogram subtraction: a derived child equals the child counted, cell for cell."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.levels.forest import Forest
from dasktree.kernels.histogram import level_histogram
from dasktree.kernels.subtraction import (
    fill_derived,
    fill_derived_numpy,
    fills_of,
    slice_map,
)
from dasktree.testing.forests import random_test, set_tests


def test_slice_map_part_slices_and_the_rest():
    # parent: rest + parts 1, 3 (of 5 folds); child of trees holding out part 3 only: rest + part 3
    assert slice_map((3,), True, (1, 3), True, 5) == ((0, 1), (2,))
    # parent tracks every first-repetition part (no rest) and part 7 of the second repetition
    assert slice_map((0, 7), True, (0, 1, 2, 7), False, 3) == ((1, 2), (0,), (3,))
    # a plain tree: one rest slice each
    assert slice_map((), True, (), True, 1) == ((0,),)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 300), n_folds=st.integers(1, 4),
       repeats=st.integers(1, 2), depth=st.integers(1, 4))
def test_derived_children_equal_counted_children(seed, n_rows, n_folds, repeats, depth):
    """Grow a random forest level by level (trees choosing the same or different tests); each
    level, derive one random child of every branch whose children are all open, and compare
    with counting every node. As on a cluster, the rows are in parts, counted each part alone
    at the root and then in groups of parts, each group filling its derived slots from its
    own counts of the last level."""
    rng = np.random.default_rng(seed)
    repeats = repeats if n_folds > 1 else 1
    widths = rng.integers(3, 7, size=3)
    n_trees = 1 + (n_folds * repeats if n_folds > 1 else 0)
    forest = Forest(n_trees, np.arange(-1, n_trees - 1), n_folds, 2, repeats)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, n_folds, size=(repeats, n_rows)).astype(np.int16)
    owner = rng.integers(0, 3, size=n_rows)  # the row's data part (file), not its fold
    kw = dict(n_folds=n_folds, offsets=np.concatenate([[0], np.cumsum(widths)[:-1]]),
              total_bins=int(widths.sum()), n_classes=2)

    def count(plan, parts):
        rows = np.isin(owner, parts)
        return level_histogram(codes[:, rows], y[rows], part[:, rows], plan, **kw)

    frontier = [forest.nodes[0]]
    plan = forest.pass_plan(frontier, widths, 2)
    last = {(p,): count(plan, [p]) for p in range(3)}
    last_slots = (plan.node_slot, plan.slot_base)
    groups = [(0, 2), (1,)]
    for _ in range(depth):
        branches, children = [], []
        for node in frontier:
            tests = {}
            for t in node.trees:
                if rng.random() < 0.15:
                    continue  # this tree ends here
                tests[t] = next(iter(tests.values())) if (tests and rng.random() < 0.6) else random_test(rng, widths)
            if tests:
                made = set_tests(forest, node, tests, {t: np.zeros((x.arity, forest.n_parts + 1, 2), dtype=np.int64)
                                                      for t, x in tests.items()})
                children += made
                branches += [(node.id, b.children) for b in node.branches]
        if not children:
            return
        frontier = [c for c in children if rng.random() < 0.9]  # some children closed: not counted
        open_ids = {c.id for c in frontier}
        derive = {}
        for parent, kids in branches:
            if all(k in open_ids for k in kids):
                pick = kids[int(rng.integers(len(kids)))]
                derive[pick] = (parent, tuple(k for k in kids if k != pick))
        if not frontier:
            return
        plan = forest.pass_plan(frontier, widths, 2, frontier, derive)
        counting = dataclasses.replace(plan, fills=fills_of(plan, *last_slots))
        assert len(counting.fills) == len(plan.derived) == len(derive)
        new = {}
        for group in groups:
            hist = count(counting, group)
            for d in plan.derived:  # not counted: the rows only move there
                assert not plan.view(hist, d.slot).any()
            held = [h for held, h in last.items() if set(held) <= set(group)]
            reference = hist.copy()
            fill_derived_numpy(reference, held, counting.fills, plan.cells)
            fill_derived(hist, held, counting.fills, plan.cells)  # the compiled loop
            np.testing.assert_array_equal(hist, reference)
            if len(held) > 1:  # int32 and int64 counts (a block past 2**31 rows): still the compiled loop, exact
                mixed = count(counting, group)
                fill_derived(mixed, [held[0].astype(np.int64)] + held[1:], counting.fills, plan.cells)
                np.testing.assert_array_equal(mixed, reference)
            np.testing.assert_array_equal(hist, count(plan.counting_all(), group))
            new[group] = hist
        last, last_slots = new, (plan.counting_all().node_slot, plan.slot_base)
