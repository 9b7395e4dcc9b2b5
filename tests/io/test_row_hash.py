"""A row's content hash: the compiled kernels against a naive twin written from the definition, and the
same hash whatever holds the row (chunks, slices, row and column order, physical types, encodings)."""

import hashlib
import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.errors import DataError
from dasktree.io import row_hash as rh
from dasktree.io.row_hash import MISSING, column_images, row_hash

MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def _naive_string(data: bytes) -> int:
    """A byte at a time: the words as the definition says them."""
    h = _mix(len(data) ^ 0x9E3779B97F4A7C15)
    word, filled = 0, 0
    for byte in data:
        word |= byte << (8 * filled)
        filled += 1
        if filled == 8:
            h, word, filled = _mix(h ^ word), 0, 0
    return _mix(h ^ word) if filled else h


def _naive_image(value) -> int:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 0x7FF8000000000000
    if isinstance(value, str):
        return _naive_string(value.encode())
    if isinstance(value, bytes):
        return _naive_string(value)
    if isinstance(value, (bool, int)) and abs(int(value)) > 2**53:
        return int(value) & MASK
    value = float(value)
    return 0 if value == 0 else struct.unpack("<Q", struct.pack("<d", value))[0]


def _naive_row_hash(rows: list[dict]) -> np.ndarray:
    out = []
    for row in rows:
        total = 0
        for name, value in row.items():
            salt = _mix(int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little"))
            total = (total + _mix(_naive_image(value) ^ salt)) & MASK
        out.append(_mix(total))
    return np.array(out, dtype=np.uint64)


_floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 2.0**60]),
                    st.none())
_ints = st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-2**53 - 3, -2**53 + 3),
                  st.integers(2**53 - 3, 2**53 + 3), st.none())
_uints = st.one_of(st.integers(0, 2**64 - 1), st.integers(2**53 - 2, 2**53 + 2), st.none())
_texts = st.one_of(st.text(max_size=30), st.sampled_from(["", "a", "abcdefgh", "abcdefghi", "é" * 9]), st.none())


@st.composite
def _tables(draw):
    n = draw(st.integers(0, 40))
    columns = {
        "f": pa.array(draw(st.lists(_floats, min_size=n, max_size=n)), pa.float64()),
        "i": pa.array(draw(st.lists(_ints, min_size=n, max_size=n)), pa.int64()),
        "u": pa.array(draw(st.lists(_uints, min_size=n, max_size=n)), pa.uint64()),
        "s": pa.array(draw(st.lists(_texts, min_size=n, max_size=n)), pa.string()),
        "b": pa.array(draw(st.lists(st.one_of(st.booleans(), st.none()), min_size=n, max_size=n)), pa.bool_()),
        "small": pa.array(draw(st.lists(st.one_of(st.integers(-128, 127), st.none()), min_size=n, max_size=n)),
                          pa.int8()),
        "bin": pa.array(draw(st.lists(st.one_of(st.binary(max_size=20), st.none()), min_size=n, max_size=n)),
                        pa.binary()),
    }
    return pa.table(columns)


@settings(max_examples=80, deadline=None)
@given(table=_tables(), data=st.data())
def test_compiled_row_hash_equals_the_naive_twin(table, data):
    names = data.draw(st.lists(st.sampled_from(table.column_names), unique=True, min_size=1))
    expected = _naive_row_hash([{name: row[name] for name in names} for row in table.to_pylist()])
    np.testing.assert_array_equal(row_hash(table, names), expected)


@settings(max_examples=60, deadline=None)
@given(table=_tables(), salt=st.integers(0, 2**64 - 1))
def test_kernels_equal_their_numpy_twins(table, salt):
    """Each kernel's images against its twin's, and its sum of terms (``add``) against the twin's sum."""
    n, salt = table.num_rows, np.uint64(salt)
    none = np.zeros(0, np.uint8)
    strings = table.column("s").combine_chunks()
    offsets = np.frombuffer(strings.buffers()[1], np.int32)[:n + 1]
    data = np.frombuffer(strings.buffers()[2], np.uint8) if n else np.zeros(0, np.uint8)
    floats = table.column("f").to_numpy(zero_copy_only=False).astype(np.float64)
    with np.errstate(over="ignore"):
        singles = floats.astype(np.float32)  # beyond float32's range: inf
    cases = [(rh._float_kernel, rh._float_images_numpy, (floats,)),
             (rh._float_kernel, rh._float_images_numpy, (singles,)),
             (rh._signed_kernel, rh._int_images_numpy, (table.column("i").fill_null(0).to_numpy(),)),
             (rh._signed_kernel, rh._int_images_numpy, (table.column("small").fill_null(0).to_numpy(),)),
             (rh._unsigned_kernel, rh._int_images_numpy, (table.column("u").fill_null(0).to_numpy(),)),
             (rh._string_kernel, rh._string_images_python, (offsets, data))]
    for kernel, twin, inputs in cases:
        images, expected = np.empty(n, np.uint64), np.empty(n, np.uint64)
        kernel(*inputs, none, salt, images, False)
        twin(*[np.ascontiguousarray(a) for a in inputs], expected)
        np.testing.assert_array_equal(images, expected, kernel.__name__)
        acc, twin_acc = np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64)
        kernel(*inputs, none, salt, acc, True)
        rh._accumulate_numpy(expected, salt, twin_acc)
        np.testing.assert_array_equal(acc, twin_acc, kernel.__name__)
    compiled = np.arange(n, dtype=np.uint64)
    rh._accumulate(images, salt, compiled)
    np.testing.assert_array_equal(compiled, twin_acc)
    np.testing.assert_array_equal(rh._finish(compiled.copy()), rh._finish_numpy(compiled.copy()))


@settings(max_examples=50, deadline=None)
@given(table=_tables(), data=st.data())
def test_the_same_rows_hash_alike_whatever_the_chunks_order_and_columns_order(table, data):
    n = table.num_rows
    hashes = row_hash(table)
    order = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    pieces = [table.take(order).slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n])]
    rechunked = pa.Table.from_batches([b for p in pieces for b in p.to_batches()], schema=table.schema)
    columns = data.draw(st.permutations(table.column_names))
    np.testing.assert_array_equal(row_hash(rechunked.select(columns)), hashes[order])
    # and each piece alone (a part of a file, a partition of a frame)
    np.testing.assert_array_equal(np.concatenate([row_hash(p) for p in pieces] or [np.empty(0, np.uint64)]),
                                  hashes[order])


def test_the_same_values_in_other_physical_types_hash_alike():
    ints = [3, -7, 0, None, 2**20]
    as_float = pa.table({"x": pa.array([3.0, -7.0, -0.0, float("nan"), 2.0**20])})
    for type_ in (pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.decimal128(20, 2)):
        np.testing.assert_array_equal(row_hash(pa.table({"x": pa.array(ints, type_)})), row_hash(as_float), str(type_))
    np.testing.assert_array_equal(row_hash(pa.table({"x": pa.array([3, 0, None], pa.uint8())})),
                                  row_hash(pa.table({"x": pa.array([3.0, 0.0, None])})))
    words = ["red", None, "green", "", "red"]
    reference = row_hash(pa.table({"c": pa.array(words, pa.string())}))
    for array in (pa.array(words, pa.large_string()), pa.array(words).dictionary_encode(),
                  pa.array(words, pa.large_string()).dictionary_encode(),
                  pa.DictionaryArray.from_arrays(pa.array([2, None, 0, 1, 2], pa.int8()), ["green", "", "red"])):
        np.testing.assert_array_equal(row_hash(pa.table({"c": array})), reference, str(array.type))
    days = pa.array([0, 19000, None], pa.int32())
    np.testing.assert_array_equal(row_hash(pa.table({"d": days.cast(pa.date32())})), row_hash(pa.table({"d": days})))
    np.testing.assert_array_equal(row_hash(pa.table({"b": [True, False, None]})),
                                  row_hash(pa.table({"b": pa.array([1, 0, None], pa.int64())})))


def test_a_missing_value_is_null_or_nan_alike_and_differs_from_every_value():
    images = column_images(pa.array([None, float("nan"), 0.0], pa.float64()))
    assert images[0] == images[1] == MISSING and images[2] == 0
    assert column_images(pa.array([None, ""], pa.string()))[0] == MISSING != column_images(pa.array([""]))[0]


def test_integers_beyond_float64_keep_their_exact_value():
    big = pa.array([2**53 + 1, 2**53 + 2, 2**62 + 1, -(2**62) - 1], pa.int64())
    assert len(set(column_images(big).tolist())) == 4  # as float64, the first two and the last two would be one
    np.testing.assert_array_equal(column_images(big[:3]), column_images(big[:3].cast(pa.uint64())))


def test_names_matter_and_columns_not_hashed_do_not():
    table = pa.table({"a": [1, 2], "b": [2, 1], "extra": ["x", "y"]})
    assert row_hash(table, ["a", "b"])[0] != row_hash(table, ["a", "b"])[1]  # (1, 2) is not (2, 1)
    renamed = table.rename_columns(["a", "c", "extra"])
    assert (row_hash(renamed, ["a", "c"]) != row_hash(table, ["a", "b"])).all()
    np.testing.assert_array_equal(row_hash(table.drop(["extra"])), row_hash(table, ["b", "a"]))


def test_a_column_of_no_hashable_type_is_one_clear_error():
    table = pa.table({"l": pa.array([[1], [2]])})
    with pytest.raises(DataError, match="column 'l' has type list<item: int64>: a row's hash takes numbers and strings"):
        row_hash(table)


def test_sliced_string_and_dictionary_arrays_hash_their_own_rows():
    words = pa.array(["alpha", "beta", None, "gamma delta epsilon", "z"] * 3)
    whole = column_images(words)
    for start, length in ((1, 4), (3, 9), (14, 1), (5, 0)):
        np.testing.assert_array_equal(column_images(words.slice(start, length)), whole[start:start + length])
        np.testing.assert_array_equal(column_images(words.dictionary_encode().slice(start, length)),
                                      whole[start:start + length])
