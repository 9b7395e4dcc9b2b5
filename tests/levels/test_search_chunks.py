"""Search chunks of a level pass: contiguous runs of slots with similar work."""

import numpy as np

from dasktree.levels.search_chunks import search_chunks
from dasktree.levels.forest import Forest
from dasktree.levels.level_search import SearchContext, SearchRequest
from dasktree.split.node_tests import numeric_test
from dasktree.split.search import AttributeLayout, SplitParams
from dasktree.testing.forests import set_tests


def _level(n_nodes: int):
    """A forest of one tree whose root has ``n_nodes`` children (a multi-way test), and their plan."""
    widths = np.array([40, 40, 40])
    forest = Forest(1, np.array([-1]), 1, 2)
    cuts = np.arange(1, n_nodes)
    test = numeric_test(0, cuts, np.arange(38, dtype=float), 0)
    children = set_tests(forest, forest.nodes[0], {0: test}, {0: np.zeros((n_nodes, 2, 2), dtype=np.int64)})
    plan = forest.pass_plan(children, widths, 2)
    return children, plan, widths


def _requests(children, plan, rows):
    return [SearchRequest(n.id, s, n.trees, int(plan.slot_base[s]), plan.slot_parts[s], plan.slot_rest[s], r)
            for s, (n, r) in enumerate(zip(children, rows))]


def _context(widths, max_arity):
    layout = AttributeLayout(np.concatenate([[0], np.cumsum(widths)[:-1]]), widths, ("numeric",) * 3,
                             (None,) * 3, (None,) * 3)
    return SearchContext(layout, SplitParams(max_arity=max_arity), np.array([-1]), 1, 1, 2, 2)


def test_chunks_are_contiguous_cover_every_node_and_shift_bases():
    children, plan, widths = _level(30)
    requests = _requests(children, plan, [100] * 30)
    chunks = search_chunks(requests, plan, 4, _context(widths, 2))
    seen = [r.node for c in chunks for r in c.requests]
    assert seen == [r.node for r in requests]
    for c in chunks:
        assert c.lo == int(plan.slot_base[c.requests[0].slot])
        for r in c.requests:
            assert r.base == int(plan.slot_base[r.slot]) - c.lo and r.base + plan.cells <= c.hi - c.lo


def test_a_huge_multiway_node_gets_a_chunk_of_its_own():
    """Block-Opt-P is quadratic in blocks: a node with many rows outweighs many small ones."""
    children, plan, widths = _level(30)
    rows = [1_000_000] + [5] * 29  # blocks <= min(bins, rows): 40 vs 5 per attribute
    chunks = search_chunks(_requests(children, plan, rows), plan, 4, _context(widths, 5))
    assert [r.node for r in chunks[0].requests] == [children[0].id]
    assert len(chunks) >= 2
    binary = search_chunks(_requests(children, plan, rows), plan, 4, _context(widths, 2))
    assert len(binary[0].requests) > 1  # binary searches cost the same per node
