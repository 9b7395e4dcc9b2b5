"""The level passes' large arrays live in Arrow's memory pool and behave as any numpy array."""

import pickle

import numpy as np
import pyarrow as pa

from dasktree import buffers


def test_arrays_come_from_arrows_pool_and_return_to_it():
    before = pa.total_allocated_bytes()
    a = buffers.zeros((1000, 300), np.int32)
    assert pa.total_allocated_bytes() - before >= a.nbytes
    assert not a.any() and a.flags.writeable and a.flags.c_contiguous and a.ctypes.data % 64 == 0
    a[3, 7] = 9
    b = pickle.loads(pickle.dumps(a))  # a copy with the same contents
    np.testing.assert_array_equal(b, a)
    del a
    assert pa.total_allocated_bytes() - before < 1000 * 300 * 4


def test_empty_shapes():
    assert buffers.empty(0, np.int64).shape == (0,)
    assert buffers.zeros((2, 0), np.uint16).shape == (2, 0)
    assert buffers.empty(np.int64(5), np.uint8).shape == (5,)
