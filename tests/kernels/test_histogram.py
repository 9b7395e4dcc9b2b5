"""The level-pass kernel against its numpy twin, and the histogram's invariants."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.levels.forest import Forest
from dasktree.kernels.histogram import (
    level_histogram,
    level_histogram_numpy,
    route,
    route_numpy,
)
from dasktree.kernels.plans import expand_slices
from dasktree.split.node_tests import nominal_test, numeric_test
from dasktree.testing.forests import random_forest, routing_plan, set_tests


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 300), n_folds=st.integers(1, 3),
       depth=st.integers(0, 3), repeats=st.integers(1, 2))
def test_numba_kernel_equals_numpy_twin_and_per_tree_routing(seed, n_rows, n_folds, depth, repeats):
    rng = np.random.default_rng(seed)
    widths = rng.integers(2, 7, size=3)
    n_trees = 1 + (n_folds * repeats if n_folds > 1 else 0)
    forest = random_forest(rng, widths, n_trees, depth, repeats if n_folds > 1 else 1)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, forest.n_folds, size=(repeats if n_folds > 1 else 1, n_rows)).astype(np.int16)
    frontier = [n for n in forest.nodes if not n.branches]
    chosen = [n for n in frontier if rng.random() < 0.8]
    plan = forest.pass_plan(chosen, widths, 2)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    kw = dict(n_folds=forest.n_folds, offsets=offsets, total_bins=int(widths.sum()), n_classes=2)
    fast = level_histogram(codes, y, part, plan, **kw)
    slow = level_histogram_numpy(codes, y, part, plan, **kw)
    assert fast.dtype == slow.dtype == np.int32
    np.testing.assert_array_equal(fast, slow)
    # the distinct-node walk agrees with walking every tree on its own and counting each node once
    entries = route_numpy(codes, routing_plan(forest, {n.id: s for s, n in enumerate(chosen)}, widths))
    np.testing.assert_array_equal(route(codes, routing_plan(forest, {n.id: s for s, n in enumerate(chosen)}, widths)),
                                  entries)
    per_tree = routing_plan(forest, {n.id: s for s, n in enumerate(chosen)}, widths).slot_of_entry[entries]
    for s, node in enumerate(chosen):
        rows = np.flatnonzero((per_tree == s).any(axis=0))
        counted = plan.view(fast, s)
        expanded = expand_slices(counted[:, 0:widths[0]].sum(axis=1), plan.slot_parts[s], plan.slot_rest[s],
                                 forest.n_parts, forest.n_folds)
        assert expanded[-1].sum() == rows.size  # every row reaching the node once, in the total
        np.testing.assert_array_equal(expanded[-1], np.bincount(y[rows], minlength=2))
        for p in plan.slot_parts[s]:
            r, f = divmod(p, forest.n_folds)
            np.testing.assert_array_equal(expanded[p], np.bincount(y[rows[part[r, rows] == f]], minlength=2))


def _reached_open(forest, plan, codes, i):
    """The open frontier nodes row ``i`` reaches, walking from the root."""
    found, stack = set(), [0]
    while stack:
        node = stack.pop()
        if plan.node_open[node]:
            found.add(node)
        for b in range(plan.branch_start[node], plan.branch_start[node + 1]):
            stack.append(int(plan.child(b, int(codes[plan.branch_attribute[b], i]))))
    return found


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 200), n_folds=st.integers(1, 4),
       depth=st.integers(1, 4), width=st.integers(1, 3), dtype=st.sampled_from([np.uint16, np.int32]))
def test_start_nodes_change_the_time_never_the_counts(seed, n_rows, n_folds, depth, width, dtype):
    """Starts kept across the passes of a growing forest give the counts of a walk from the root;
    with at most ``width`` open frontier nodes reached they are exactly those nodes."""
    rng = np.random.default_rng(seed)
    widths = rng.integers(3, 7, size=3)
    n_trees = 1 + (n_folds if n_folds > 1 else 0)
    holdout = np.array([-1] + list(range(n_trees - 1)))
    forest = Forest(n_trees, holdout, max(1, n_trees - 1), 2)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, forest.n_folds, size=(1, n_rows)).astype(np.int16)
    kw = dict(n_folds=forest.n_folds, offsets=np.concatenate([[0], np.cumsum(widths)[:-1]]),
              total_bins=int(widths.sum()), n_classes=2)
    starts = np.zeros((width, n_rows), dtype=dtype)
    starts[0] = 1  # the root, as node + 1
    frontier = [forest.nodes[0]]
    for _ in range(depth):
        if not frontier:
            break
        group = [n for n in frontier if rng.random() < 0.7] or frontier[:1]  # a node group of the level
        plan = forest.pass_plan(group, widths, 2, frontier)
        from_root = level_histogram(codes, y, part, plan, **kw)
        stale = starts.copy()
        np.testing.assert_array_equal(level_histogram(codes, y, part, plan, starts=starts, **kw), from_root)
        np.testing.assert_array_equal(level_histogram_numpy(codes, y, part, plan, starts=stale, **kw), from_root)
        for i in range(n_rows):
            reached = _reached_open(forest, plan, codes, i)
            held = starts[:, i] > 0
            assert np.all(held[:held.sum()]), "a row's starts come first in its column, zeros after"
            kept = set((starts[:, i][held] - 1).tolist())
            if len(reached) <= width:
                assert kept == reached
            else:  # too many to keep: the old starts; each reached node descends from exactly one
                parent = {c: n.id for n in forest.nodes for br in n.branches for c in br.children}

                def ancestors(node):
                    out = {node}
                    while node in parent:
                        node = parent[node]
                        out.add(node)
                    return out

                assert all(len(ancestors(node) & kept) == 1 for node in reached)
        frontier = _grow_one_level(forest, rng, widths, frontier)


def _grow_one_level(forest, rng, widths, frontier):
    """Random tests for the trees at each frontier node (some end there); the new frontier."""
    nxt = []
    for node in frontier:
        tests, counts = {}, {}
        for t in node.trees:
            a = int(rng.integers(len(widths)))
            n_codes = int(widths[a])
            if rng.random() < 0.2:
                continue
            cut = int(rng.integers(1, n_codes - 1))
            tests[t] = numeric_test(a, np.array([cut]), np.arange(n_codes - 2, dtype=float), int(rng.integers(2)))
            counts[t] = np.zeros((2, forest.n_parts + 1, 2), dtype=np.int64)
        if tests:
            nxt += set_tests(forest, node, tests, counts)
    return nxt


def _single_tree_case(seed=0, n=500):
    rng = np.random.default_rng(seed)
    widths = np.array([5, 4, 6])
    forest = Forest(1, np.array([-1]), 1, 3)
    root = forest.nodes[0]
    set_tests(forest, root, {0: numeric_test(0, np.array([2]), np.arange(3.0), 0)},
                     {0: np.zeros((2, 2, 3), dtype=np.int64)})
    codes = np.stack([rng.integers(0, w, size=n) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 3, size=n).astype(np.int32)
    part = np.zeros((1, n), dtype=np.int16)
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return forest, widths, codes, y, part, dict(n_folds=1, offsets=offsets, total_bins=int(widths.sum()), n_classes=3)


def test_row_order_and_chunking_do_not_matter():
    forest, widths, codes, y, part, kw = _single_tree_case()
    plan = forest.pass_plan(forest.nodes[1:3], widths, 3)
    whole = level_histogram(codes, y, part, plan, **kw)
    perm = np.random.default_rng(1).permutation(codes.shape[1])
    shuffled = level_histogram(codes[:, perm], y[perm], part[:, perm], plan, **kw)
    halves = sum(level_histogram(codes[:, s], y[s], part[:, s], plan, **kw)
                 for s in (slice(0, 123), slice(123, None)))
    np.testing.assert_array_equal(whole, shuffled)
    np.testing.assert_array_equal(whole, halves)


def test_parent_minus_sibling_is_the_other_child():
    forest, widths, codes, y, part, kw = _single_tree_case(seed=3)
    unsplit = Forest(1, np.array([-1]), 1, 3)
    parent = level_histogram(codes, y, part, unsplit.pass_plan(unsplit.nodes, widths, 3), **kw)
    plan = forest.pass_plan(forest.nodes[1:3], widths, 3)
    children = level_histogram(codes, y, part, plan, **kw)
    np.testing.assert_array_equal(parent - plan.view(children, 0).ravel(), plan.view(children, 1).ravel())


def test_every_attribute_counts_every_row_once():
    forest, widths, codes, y, part, kw = _single_tree_case(seed=5, n=321)
    unsplit = Forest(1, np.array([-1]), 1, 3)
    plan = unsplit.pass_plan(unsplit.nodes, widths, 3)
    hist = plan.view(level_histogram(codes, y, part, plan, **kw), 0)[0]
    offsets = kw["offsets"]
    for a, w in enumerate(widths):
        block = hist[offsets[a]:offsets[a] + w]
        np.testing.assert_array_equal(block.sum(axis=0), np.bincount(y, minlength=3))


def test_shared_node_counts_each_row_once():
    """Two trees that share every node: the histogram equals a single tree's."""
    forest, widths, codes, y, part, kw = _single_tree_case(seed=7)
    twin = Forest(2, np.array([-1, -1]), 1, 3)
    test = forest.nodes[0].branches[0].test
    set_tests(twin, twin.nodes[0], {0: test, 1: test}, {0: np.zeros((2, 2, 3), np.int64), 1: np.zeros((2, 2, 3), np.int64)})
    assert len(twin.nodes) == 3  # one branch, shared children
    one = level_histogram(codes, y, part, forest.pass_plan(forest.nodes[1:3], widths, 3), **kw)
    two = level_histogram(codes, y, part, twin.pass_plan(twin.nodes[1:3], widths, 3), **kw)
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_code_dtypes(dtype):
    forest, widths, codes, y, part, kw = _single_tree_case()
    plan = forest.pass_plan(forest.nodes[1:3], widths, 3)
    np.testing.assert_array_equal(level_histogram(codes.astype(dtype), y, part, plan, **kw),
                                  level_histogram_numpy(codes, y, part, plan, **kw))


def test_a_node_of_one_fold_tree_costs_two_slices_not_one_per_fold():
    forest = Forest(4, np.array([-1, 0, 1, 2]), 3, 2)
    forest.nodes[0].trees = (2,)  # reached by the tree holding out part 1 only
    parts, rest = forest.slices(forest.nodes[0])
    assert parts == (1,) and rest
    plan = forest.pass_plan(forest.nodes, np.array([3, 3]), 2)
    assert plan.slot_slices.tolist() == [2]
    assert plan.part_slice.tolist() == [[0, 1, 0]]


def test_start_nodes_are_kept_per_forest():
    """An encoded part's start nodes belong to one forest: another forest's pass starts at the root."""
    from dasktree.binning.encode import Encoded

    e = Encoded(np.ones((2, 5), np.uint8), np.zeros(5, np.int32), np.zeros((1, 5), np.int16))
    first = e.start_nodes("forest-a", 2)
    first[:] = 7
    assert e.start_nodes("forest-a", 2) is first
    np.testing.assert_array_equal(e.start_nodes("forest-b", 2), [[1] * 5, [0] * 5])  # the root (node + 1)


def test_start_nodes_widen_when_the_forest_outgrows_uint16():
    from dasktree.binning.encode import Encoded

    e = Encoded(np.ones((2, 4), np.uint8), np.zeros(4, np.int32), np.zeros((1, 4), np.int16))
    small = e.start_nodes("f", 3, n_nodes=65_535)
    assert small.dtype == np.uint16
    small[0], small[1] = [65_535, 2, 3, 4], [9, 0, 9, 0]
    wide = e.start_nodes("f", 3, n_nodes=65_536)
    assert wide.dtype == np.int32 and e.start_nodes("f", 3, n_nodes=70_000) is wide
    np.testing.assert_array_equal(wide, [[65_535, 2, 3, 4], [9, 0, 9, 0], [0, 0, 0, 0]])
    assert e.start_nodes("g", 3).dtype == np.int32  # the forest's size not given: int32


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 300), n_folds=st.integers(1, 3), depth=st.integers(0, 4))
def test_rows_grouped_by_node_give_the_same_counts(seed, n_rows, n_folds, depth):
    """Reordering a part's rows by start node keeps every array aligned and every count."""
    from dasktree.binning.encode import Encoded
    from dasktree.engine.part_tasks import PassShape, group_rows, histogram_of

    rng = np.random.default_rng(seed)
    widths = rng.integers(3, 7, size=3)
    forest = random_forest(rng, widths, 1 + (n_folds if n_folds > 1 else 0), depth)
    plan = forest.pass_plan([n for n in forest.nodes if not n.branches], widths, 2)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, forest.n_folds, size=(1, n_rows)).astype(np.int16)
    shape = PassShape(forest.n_folds, np.concatenate([[0], np.cumsum(widths)[:-1]]), int(widths.sum()), 2)
    before = histogram_of(Encoded(codes, y, part), plan=plan, shape=shape)
    encoded = Encoded(codes.copy(), y.copy(), part.copy())
    histogram_of(encoded, plan=plan, shape=shape)  # the rows' starts move to the nodes they reach

    def rows(e):
        return sorted(map(tuple, np.column_stack([e.codes.T, e.y, e.part.T, e.start.T]).tolist()))

    unordered = rows(encoded)
    group_rows(encoded, plan)
    assert np.all(np.diff(encoded.start[0]) >= 0)
    assert rows(encoded) == unordered  # every array moved alike, start nodes too
    np.testing.assert_array_equal(histogram_of(encoded, plan=plan, shape=shape), before)


def test_rows_are_grouped_again_only_once_the_counted_nodes_grew():
    """Rows grouped by node stay grouped by subtree: a part is reordered again only when a pass of
    its forest counts REGROUP_GROWTH times the slots it counted then, and at once in a new forest."""
    from dasktree.binning.encode import Encoded
    from dasktree.engine.part_tasks import REGROUP_GROWTH, group_rows

    rng = np.random.default_rng(5)
    widths = np.array([4, 5, 6])
    forest = random_forest(rng, widths, 1, 4)
    leaves = [n for n in forest.nodes if not n.branches]
    assert len(leaves) >= REGROUP_GROWTH
    few, grown = (forest.pass_plan(leaves[:k], widths, 2) for k in (1, REGROUP_GROWTH))
    n = 60
    encoded = Encoded(rng.integers(0, 4, size=(3, n)).astype(np.uint8), np.arange(n, dtype=np.int32),
                      np.zeros((1, n), dtype=np.int16))

    def shuffled_starts(plan) -> np.ndarray:
        start = encoded.start_nodes(plan.forest_id, plan.start_width, plan.node_slot.size)
        start[0] = rng.permutation(np.arange(n) % plan.node_slot.size + 1)  # node + 1
        return start[0].copy()

    shuffled_starts(few)
    group_rows(encoded, few)
    assert np.all(np.diff(encoded.start[0]) >= 0) and encoded.grouped == (forest.id, 1)
    kept = shuffled_starts(few)
    group_rows(encoded, few)  # as many slots as when grouped: the rows stay where they are
    np.testing.assert_array_equal(encoded.start[0], kept)
    start_of_row = dict(zip(encoded.y.tolist(), kept.tolist()))  # y names each row here
    group_rows(encoded, grown)
    assert np.all(np.diff(encoded.start[0]) >= 0) and encoded.grouped == (forest.id, REGROUP_GROWTH)
    assert encoded.start[0].tolist() == [start_of_row[row] for row in encoded.y.tolist()]  # moved alike
    other = random_forest(rng, widths, 1, 1)
    plan = other.pass_plan([n for n in other.nodes if not n.branches], widths, 2)
    shuffled_starts(plan)
    group_rows(encoded, plan)  # another forest: grouped at once
    assert encoded.grouped == (other.id, plan.n_slots) and np.all(np.diff(encoded.start[0]) >= 0)


def test_plan_tables_widen_to_uint16_past_256_children():
    """Branch tables hold child indices: one byte while tests have at most 256 children, two after,
    and the tables already built keep routing to the same children."""
    n_codes = 400
    forest = Forest(1, np.array([-1]), 1, 2)
    small = nominal_test(0, [np.arange(1, 3), np.arange(3, n_codes)], n_codes, 0)
    left, right = set_tests(forest, forest.nodes[0], {0: small}, {0: np.zeros((2, 2, 2), dtype=np.int64)})
    widths = np.array([n_codes])
    assert forest.pass_plan([left, right], widths, 2).table.dtype == np.uint8
    wide = nominal_test(0, [np.array([c]) for c in range(1, n_codes)], n_codes, 0)  # 399 children
    kids = set_tests(forest, right, {0: wide}, {0: np.zeros((wide.arity, 2, 2), dtype=np.int64)})
    plan = forest.pass_plan(kids, widths, 2)
    assert plan.table.dtype == np.uint16
    codes = np.arange(n_codes)
    np.testing.assert_array_equal(plan.child(np.zeros(n_codes, dtype=np.int64), codes),
                                  np.where(small.bin_children == 0, left.id, right.id))
    np.testing.assert_array_equal(plan.child(np.ones(n_codes, dtype=np.int64), codes),
                                  np.asarray([k.id for k in kids])[wide.bin_children])


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n_codes=st.integers(2, 300))
def test_threshold_branches_route_by_compare_as_their_tables_would(seed, n_codes):
    """A threshold branch (missing to a default, codes up to a cut left, the others right) is routed by
    a compare and stores no table; every branch sends every code to the child its ``bin_children`` names."""
    rng = np.random.default_rng(seed)
    forest = Forest(1, np.array([-1]), 1, 2)
    frontier, tests = [forest.nodes[0]], []
    for _ in range(6):
        kind = rng.integers(4)
        if kind == 0 and n_codes >= 3:  # binary numeric: a threshold
            cut = int(rng.integers(1, n_codes - 1))
            test = numeric_test(0, np.array([cut]), np.arange(n_codes - 2, dtype=float), int(rng.integers(2)))
        elif kind == 1 and n_codes >= 4:  # three-way numeric: a table
            cuts = np.sort(rng.choice(np.arange(1, n_codes - 1), size=2, replace=False))
            test = numeric_test(0, cuts, np.arange(n_codes - 2, dtype=float), int(rng.integers(3)))
        else:  # nominal: a threshold only when its categories happen to fall that way
            codes = np.arange(1, n_codes)
            left = codes[rng.random(codes.size) < 0.5] if kind == 2 else codes[: int(rng.integers(0, codes.size + 1))]
            test = nominal_test(0, [left, np.setdiff1d(codes, left)], n_codes, int(rng.integers(2)))
        node = frontier.pop(0)
        frontier += set_tests(forest, node, {0: test}, {0: np.zeros((test.arity, 2, 2), dtype=np.int64)})
        tests.append((node.id, test))
    plan = forest.pass_plan(frontier, np.array([n_codes]), 2)
    codes = np.arange(n_codes)
    tabled = 0
    for b, (node_id, test) in enumerate(tests):
        assert plan.branch_start[node_id] == b
        body = test.bin_children[1:]
        cut = int(np.sum(body == 0)) if body.max() <= 1 and np.all(np.diff(body) >= 0) else None
        assert plan.branch_cut[b] == (-1 if cut is None else cut)
        tabled += test.bin_children.size if cut is None else 0
        expected = np.asarray(forest.nodes[node_id].branches[0].children)[test.bin_children]
        np.testing.assert_array_equal(plan.child(np.full(n_codes, b), codes), expected)
        if cut is not None:
            np.testing.assert_array_equal(test.bin_children[1:], (codes[1:] > cut).astype(int))
    assert plan.table.size == tabled


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.lists(st.integers(0, 80), min_size=1, max_size=6),
       depth=st.integers(0, 3))
def test_a_group_of_blocks_counts_the_same_as_one_block(seed, sizes, depth):
    """histogram_of_many over a group's blocks (more than one past 2**31 rows: encode_blocks) counts
    what one block of all their rows counts, derived slots aside."""
    from dasktree.binning.encode import Encoded
    from dasktree.engine.part_tasks import PassShape, histogram_of_many

    rng = np.random.default_rng(seed)
    widths = rng.integers(3, 7, size=3)
    forest = random_forest(rng, widths, 3, depth)
    plan = forest.pass_plan([n for n in forest.nodes if not n.branches], widths, 2)
    shape = PassShape(forest.n_folds, np.concatenate([[0], np.cumsum(widths)[:-1]]), int(widths.sum()), 2)
    blocks = [Encoded(np.stack([rng.integers(0, w, size=n) for w in widths]).astype(np.uint8),
                      rng.integers(0, 2, size=n).astype(np.int32),
                      rng.integers(0, forest.n_folds, size=(1, n)).astype(np.int16)) for n in sizes]
    whole = Encoded(np.concatenate([b.codes for b in blocks], axis=1), np.concatenate([b.y for b in blocks]),
                    np.concatenate([b.part for b in blocks], axis=1))
    np.testing.assert_array_equal(histogram_of_many(blocks, plan=plan, shape=shape),
                                  histogram_of_many([whole], plan=plan, shape=shape))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 200), n_folds=st.integers(1, 3),
       depth=st.integers(0, 3), mixed=st.booleans())
def test_a_row_of_multiplicity_m_counts_as_m_copies_of_it(seed, n_rows, n_folds, depth, mixed):
    """Weighted counting (:mod:`dasktree.io.weights`) against its definition: the rows repeated."""
    rng = np.random.default_rng(seed)
    widths = rng.integers(2, 7, size=3)
    n_trees = 1 + (n_folds if n_folds > 1 else 0)
    forest = random_forest(rng, widths, n_trees, depth)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, forest.n_folds, size=(1, n_rows)).astype(np.int16)
    weight = rng.integers(1, 300, size=n_rows).astype(np.int32)
    frontier = [n for n in forest.nodes if not n.branches]
    plan = forest.pass_plan(frontier, widths, 2)
    if mixed and plan.n_slots:  # uint16 slots where the node's weighted rows allow, as the Dask runner narrows
        plan = plan.narrowed(np.full(plan.n_slots, int(weight.sum()) + 1))
    offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
    kw = dict(n_folds=forest.n_folds, offsets=offsets, total_bins=int(widths.sum()), n_classes=2)
    weighted = level_histogram(codes, y, part, plan, weight=weight, **kw)
    repeat = np.repeat(np.arange(n_rows), weight)
    repeated = level_histogram(codes[:, repeat], y[repeat], part[:, repeat], plan, **kw)
    np.testing.assert_array_equal(weighted, repeated)
    uniform = forest.pass_plan(frontier, widths, 2)
    np.testing.assert_array_equal(level_histogram_numpy(codes, y, part, uniform, weight=weight, **kw),
                                  level_histogram(codes, y, part, uniform, weight=weight, **kw))
