"""The mixed histogram layout: uint16 counts at nodes of fewer than 65,536 rows, int32 at the others.

Whatever the layout, every count is the same: the kernel's, the derived slots', the search's.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.levels.search_chunks import SearchChunk, search_cells
from dasktree.levels.forest import Forest
from dasktree.levels.level_search import search_group
from dasktree.kernels.histogram import level_histogram
from dasktree.kernels.plans import NARROW_ROWS
from dasktree.kernels.subtraction import (
    fill_derived,
    fill_derived_numpy,
    fills_of,
    slot_cells,
)
from dasktree.testing import mixed_frame
from dasktree.testing.forests import random_forest, random_test, set_tests
from dasktree.testing.levels import assert_same_results, captured_levels


def _widened(plan, hist):
    """A histogram as int64 cells in the uniform layout, slot after slot, whatever its layout."""
    return np.concatenate([np.zeros(0, np.int64)] + [plan.view(hist, s).ravel().astype(np.int64)
                                                     for s in range(plan.n_slots)])


def _rows(rng, n):
    """Rows of each slot's node as the client knows them: some past the uint16 limit."""
    return rng.choice([1, 500, NARROW_ROWS - 1, NARROW_ROWS, 2**31 - 1], size=n)


def test_narrowed_slots_are_even_apart_and_wide_past_the_limit():
    rng = np.random.default_rng(0)
    widths = np.array([3, 5, 4])
    forest = random_forest(rng, widths, 4, 2)
    frontier = [n for n in forest.nodes if not n.branches]
    plan = forest.pass_plan(frontier, widths, 2)
    rows = _rows(rng, plan.n_slots)
    mixed = plan.narrowed(rows)
    np.testing.assert_array_equal(mixed.slot_wide, rows >= NARROW_ROWS)
    assert (mixed.slot_base % 2 == 0).all()
    units = plan.slot_slices * plan.cells * np.where(mixed.slot_wide, 2, 1)
    assert (np.diff(np.append(mixed.slot_base, mixed.size)) >= units).all()  # no slot overlaps the next
    assert mixed.size <= plan.size * 2 + plan.n_slots and mixed.hist_bytes == mixed.size * 2
    assert mixed.zeros().dtype == np.uint16 and mixed.narrowed(rows) is mixed
    # rows not known (the root's first pass), or too many for int32: the uniform layout stays
    for unknown in (np.zeros_like(rows), np.full_like(rows, 2**31)):
        assert plan.narrowed(unknown) is plan


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 300), n_folds=st.integers(1, 3),
       depth=st.integers(0, 3))
def test_mixed_counts_equal_uniform_counts(seed, n_rows, n_folds, depth):
    rng = np.random.default_rng(seed)
    widths = rng.integers(2, 7, size=3)
    forest = random_forest(rng, widths, 1 + (n_folds if n_folds > 1 else 0), depth)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, forest.n_folds, size=(1, n_rows)).astype(np.int16)
    plan = forest.pass_plan([n for n in forest.nodes if not n.branches], widths, 2)
    mixed = plan.narrowed(_rows(rng, plan.n_slots))
    kw = dict(n_folds=forest.n_folds, offsets=np.concatenate([[0], np.cumsum(widths)[:-1]]),
              total_bins=int(widths.sum()), n_classes=2)
    uniform = level_histogram(codes, y, part, plan, **kw)
    got = level_histogram(codes, y, part, mixed, **kw)
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(_widened(mixed, got), uniform)
    for slot in range(plan.n_slots):
        np.testing.assert_array_equal(mixed.view(got, slot), plan.view(uniform, slot))


@pytest.mark.parametrize("seed", range(5))
def test_the_numpy_twin_counts_a_mixed_plan_like_the_kernel(monkeypatch, seed):
    """Without numba, level_histogram counts on the uniform layout and adds each slot into the plan's."""
    import dasktree.kernels.histogram

    rng = np.random.default_rng(seed)
    widths = rng.integers(2, 7, size=3)
    forest = random_forest(rng, widths, 3, 2)
    codes = np.stack([rng.integers(0, w, size=200) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=200).astype(np.int32)
    part = rng.integers(0, forest.n_folds, size=(1, 200)).astype(np.int16)
    plan = forest.pass_plan([n for n in forest.nodes if not n.branches], widths, 2)
    mixed = plan.narrowed(_rows(rng, plan.n_slots))
    kw = dict(n_folds=forest.n_folds, offsets=np.concatenate([[0], np.cumsum(widths)[:-1]]),
              total_bins=int(widths.sum()), n_classes=2)
    compiled = [level_histogram(codes, y, part, p, **kw) for p in (mixed, plan)]
    monkeypatch.setattr(dasktree.kernels.histogram, "numba", None)
    twin = [level_histogram(codes, y, part, p, **kw) for p in (mixed, plan)]
    assert twin[0].dtype == np.uint16 and twin[1].dtype == np.int32
    for a, b in zip(twin, compiled):
        np.testing.assert_array_equal(a, b)


def test_a_wide_slot_counts_past_the_uint16_limit():
    widths = np.array([2, 3])
    forest = Forest(1, np.array([-1]), 1, 2)
    n = NARROW_ROWS + 1000
    codes = np.ones((2, n), dtype=np.uint8)
    y = np.zeros(n, dtype=np.int32)
    plan = forest.pass_plan([forest.nodes[0]], widths, 2).narrowed([n])
    assert plan.slot_wide.tolist() == [True]
    hist = level_histogram(codes, y, np.zeros((1, n), dtype=np.int16), plan, n_folds=1, offsets=np.array([0, 2]),
                           total_bins=5, n_classes=2)
    assert plan.view(hist, 0)[0, 1, 0] == n and plan.view(hist, 0)[0, 3, 0] == n


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(0, 300), n_folds=st.integers(1, 4), depth=st.integers(1, 4))
def test_derived_slots_fill_across_layouts(seed, n_rows, n_folds, depth):
    """Each level narrowed its own way (or not): derived children still equal counted ones."""
    rng = np.random.default_rng(seed)
    widths = rng.integers(3, 7, size=3)
    n_trees = 1 + (n_folds if n_folds > 1 else 0)
    forest = Forest(n_trees, np.arange(-1, n_trees - 1), n_folds, 2)
    codes = np.stack([rng.integers(0, w, size=n_rows) for w in widths]).astype(np.uint8)
    y = rng.integers(0, 2, size=n_rows).astype(np.int32)
    part = rng.integers(0, n_folds, size=(1, n_rows)).astype(np.int16)
    kw = dict(n_folds=n_folds, offsets=np.concatenate([[0], np.cumsum(widths)[:-1]]),
              total_bins=int(widths.sum()), n_classes=2)
    frontier = [forest.nodes[0]]
    plan = forest.pass_plan(frontier, widths, 2)
    last, last_plan = level_histogram(codes, y, part, plan, **kw), plan
    for _ in range(depth):
        branches, children = [], []
        for node in frontier:
            tests = {t: random_test(rng, widths) for t in node.trees if rng.random() > 0.15}
            if tests:
                children += set_tests(forest, node, tests, {t: np.zeros((x.arity, forest.n_parts + 1, 2))
                                                           for t, x in tests.items()})
                branches += [(node.id, b.children) for b in node.branches]
        frontier = [c for c in children if rng.random() < 0.9]
        open_ids = {c.id for c in frontier}
        derive = {kids[0]: (parent, tuple(kids[1:])) for parent, kids in branches if all(k in open_ids for k in kids)}
        if not frontier:
            return
        plan = forest.pass_plan(frontier, widths, 2, frontier, derive)
        if rng.random() < 0.8:
            plan = plan.narrowed(_rows(rng, plan.n_slots))
        counting = dataclasses.replace(plan, fills=fills_of(plan, last_plan.counting_all().node_slot,
                                                            last_plan.slot_base, last_plan.slot_wide))
        hist = level_histogram(codes, y, part, counting, **kw)
        reference = hist.copy()
        fill_derived_numpy(reference, [last], counting.fills, plan.cells)
        fill_derived(hist, [last], counting.fills, plan.cells)  # the compiled loop
        np.testing.assert_array_equal(hist, reference)
        np.testing.assert_array_equal(_widened(plan, hist),
                                      _widened(plan, level_histogram(codes, y, part, plan.counting_all(), **kw)))
        last, last_plan = hist, plan


@pytest.mark.parametrize("params", [dict(max_depth=5, cv=3, seed=2), dict(max_depth=4, cv=4, max_arity=4)])
def test_a_search_task_reads_mixed_slots_like_uniform_ones(monkeypatch, params):
    levels = captured_levels(monkeypatch, mixed_frame(3000, seed=7), "label", max_bins=32, **params)
    rng = np.random.default_rng(1)
    for hist, requests, context in levels:
        expected = search_group(hist, requests, context)
        cells = int(context.layout.widths.sum()) * context.n_classes
        wide = rng.random(len(requests)) < 0.3
        units = np.array([r.n_slices * cells for r in requests]) * np.where(wide, 2, 1)
        units += units % 2 + 2 * (rng.random(len(requests)) < 0.2)  # some slots apart: runs break there
        unit_base = np.concatenate([[0], np.cumsum(units)[:-1]])
        workers = []
        for share in ((hist // 2), hist - hist // 2):  # two workers' counts, each in the mixed layout
            mixed = np.zeros(int(units.sum()), dtype=np.uint16)
            for r, at, w in zip(requests, unit_base.tolist(), wide.tolist()):
                n = r.n_slices * cells
                slot_cells(mixed, at, n, w)[:] = share[r.base:r.base + n]
            workers.append(mixed)
        chunk = SearchChunk(0, hist.size, requests, units=(0, int(units.sum())), unit_base=unit_base, wide=wide)
        for block_cells in (1, 3 * cells, hist.size):
            got = search_cells(*workers, lo=0, hi=int(units.sum()), chunk=chunk, context=context,
                               block_cells=block_cells)
            assert_same_results(got, expected)


@pytest.mark.cluster
def test_a_cluster_fit_with_wide_and_narrow_nodes_equals_the_in_process_fit(tmp_path, cluster_client):
    """260,000 rows: level 1's nodes count in int32, levels 2-4 have int32 and uint16 slots side by
    side (8/8, 8/24, 4/60 when written), and derived slots fill across both; the in-process runner
    counts every node in int64."""
    import dasktree
    from dasktree.datasets import agrawal
    from dasktree.testing import write_dataset

    frame = agrawal.generate(260_000, function=7, perturbation=0.05, seed=3)
    frame = frame.assign(row_id=np.arange(len(frame)))
    path = write_dataset(frame, tmp_path / "agrawal", n_files=3)
    params = dict(target="class", key="row_id", max_depth=5, cv=3, seed=4)
    on_cluster = dasktree.fit(path, client=cluster_client, **params)
    assert sum(level["derived"] for level in on_cluster.run["levels"]) > 0
    assert on_cluster.dumps() == dasktree.fit(frame, **params).dumps()
