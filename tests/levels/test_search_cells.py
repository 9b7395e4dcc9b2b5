"""A search task sums and searches its chunk a block of nodes at a time: the same results."""


import numpy as np
import pytest

from dasktree.levels.search_chunks import SearchChunk, search_cells
from dasktree.levels.level_search import search_group
from dasktree.testing import mixed_frame
from dasktree.testing.levels import assert_same_results, captured_levels


@pytest.mark.parametrize("params", [
    dict(max_depth=5, cv=3, repeats=2, seed=2),
    dict(max_depth=4, cv=4, max_arity=4, criterion="entropy"),
])
def test_blocks_of_nodes_search_like_the_whole_chunk(monkeypatch, params):
    frame = mixed_frame(3000, seed=7)  # numeric and nominal columns, with nulls
    levels = captured_levels(monkeypatch, frame, "label", max_bins=32, **params)
    assert len(levels) >= 3
    for hist, requests, context in levels:
        expected = search_group(hist, requests, context)
        # two workers' int32 shares of the counts, summed by the task
        first = (hist // 2).astype(np.int32)
        second = (hist - first).astype(np.int32)
        chunk = SearchChunk(0, hist.size, requests)
        cells = int(context.layout.widths.sum()) * context.n_classes
        for block_cells in (1, 3 * cells, hist.size):  # a node per block, a few, all at once
            got = search_cells(first, second, lo=0, hi=hist.size, chunk=chunk, context=context,
                               block_cells=block_cells)
            assert_same_results(got, expected)


def test_a_chunk_without_nodes_searches_to_nothing(monkeypatch):
    frame = mixed_frame(500, seed=3)
    [(hist, _, context), *_] = captured_levels(monkeypatch, frame, "label", max_bins=16, max_depth=2, cv=2)
    got = search_cells(hist.astype(np.int32), lo=0, hi=0, chunk=SearchChunk(0, 0, []), context=context)
    assert got.nodes.size == 0 and got.pair_tree.size == 0
