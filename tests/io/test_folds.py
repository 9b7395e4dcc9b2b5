"""Fold parts: the compiled hash of row offsets equals the vectorised splitmix64 formula."""

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.io.folds import _GOLDEN, FoldSpec, mix64
from dasktree.io.sources import Part


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 50), repeats=st.integers(1, 6), seed=st.integers(0, 2**40), offset=st.one_of(st.integers(0, 2**40), st.integers(2**60, 2**63)),
       n=st.integers(0, 500), key=st.text(min_size=1, max_size=20))
def test_offset_folds_equal_the_numpy_formula(k, repeats, seed, offset, n, key):
    spec = FoldSpec(k, repeats, seed)
    table = pa.table({"x": np.zeros(n)})
    folds = spec.parts_of(table, Part(0, key, offset, n))
    hashes = spec.row_hashes(table, key, offset)  # mix64(offset ^ mix64(hash of the file key))
    expected = np.empty((repeats, n), dtype=np.int16)
    for j in range(repeats):
        with np.errstate(over="ignore"):
            salt = mix64(np.array([seed], dtype=np.uint64) * _GOLDEN + np.uint64(j + 1))[0]
        expected[j] = (mix64(hashes ^ salt) % np.uint64(k)).astype(np.int16)
    assert folds.dtype == np.int16
    np.testing.assert_array_equal(folds, expected)
    assert n == 0 or (folds.min() >= 0 and folds.max() < k)
