"""Pass 0's summaries added one at a time into dense grid blocks give merge_all's summary of them
all, bit for bit, in any order (its naive twin), whether a column stays exact or turns to the grid."""

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.binning.summary import merge_all, summarize
from dasktree.binning.summary_stream import GridCounter, merge_streaming
from dasktree.io.schema import resolve_roles


def _parts(columns: dict, labels, n_parts: int, max_bins: int):
    table = pa.table({**columns, "c": pa.array(np.asarray(labels).astype(str))})
    roles = resolve_roles(table.schema, "c")
    bounds = np.linspace(0, table.num_rows, n_parts + 1).astype(int)
    return [summarize(table.slice(a, b - a), roles, max_bins=max_bins) for a, b in zip(bounds[:-1], bounds[1:])]


def _same(a, b) -> None:
    assert (a.n_rows, a.n_null_target, a.classes, a.nominal, a.parts) == (b.n_rows, b.n_null_target, b.classes,
                                                                         b.nominal, b.parts)
    assert np.array_equal(a.n_missing, b.n_missing)
    for x, y in zip(a.numeric, b.numeric):
        assert x.exact == y.exact and x.keys.dtype == y.keys.dtype and x.counts.dtype == y.counts.dtype
        assert np.array_equal(x.keys, y.keys) and np.array_equal(x.counts, y.counts)
        assert (x.maxes is None) == (y.maxes is None)
        if x.maxes is not None:
            assert np.array_equal(x.maxes, y.maxes)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_parts=st.integers(1, 9), distinct=st.integers(1, 3000),
       scale=st.sampled_from([1e-6, 1.0, 1e9]), max_bins=st.sampled_from([4, 32, 255]))
def test_streamed_merges_are_merge_all_in_any_order(seed, n_parts, distinct, scale, max_bins):
    rng = np.random.default_rng(seed)
    n = 900
    wide = rng.standard_normal(n) * scale  # every value distinct, many exponents: the grid
    few = rng.integers(0, distinct, n) * 0.25 - 3.0  # a few distinct values: exact while they fit
    few[rng.random(n) < 0.1] = np.nan
    order = np.argsort(rng.random(n))  # the few values first in some parts only: exact, then grid
    columns = {"wide": wide, "few": few[order] if seed % 2 else np.sort(few), "k": rng.integers(-5, 5, n)}
    parts = _parts(columns, rng.integers(0, 3, n), n_parts, max_bins)
    whole = merge_all(parts)
    _same(merge_streaming(parts), whole)
    _same(merge_streaming(parts[::-1]), whole)
    _same(merge_streaming(iter(parts[1::2] + parts[::2])), merge_all(parts[1::2] + parts[::2]))


def test_a_counter_holds_a_block_per_exponent_present_not_a_cell_per_row():
    rng = np.random.default_rng(0)
    counter = GridCounter(255)
    for _ in range(20):  # 20 parts of 50,000 distinct values: a million cells taken as sparse entries
        [summary] = _parts({"x": rng.uniform(1.0, 2.0, 50_000)}, np.zeros(50_000), 1, 255)
        counter.add(summary.numeric[0])
    assert counter.counts.shape == (1, 4096) and counter.sparse.size == 0  # one exponent: one block
    assert counter.sketch().counts.sum() == 1_000_000
