"""A row's hash from its content: one uint64 per row, the same whatever holds the row.

The cross-validation folds draw from it (:mod:`dasktree.io.folds`), and so can anything
else that must follow a row rather than its place (a forest's bootstrap weights: a draw
from ``mix64(row_hash ^ salt(tree))``). It depends on the row's values and its columns'
names, and on nothing else: not the file or the offset the row was read from, not the
partitioning, not the order of the rows or of the columns, not the physical type.

Definition (exact, to the bit):

- Each value has a 64-bit *image*:

  * a number: the bits of its float64 value, ``-0.0`` as ``0.0``. Integers of any width,
    signed or unsigned, booleans (0, 1), decimals (as float64), dates (days or
    milliseconds, as the type counts them), timestamps and durations (in their unit)
    are numbers; so the same numbers stored as int32 or int64 or float64 agree. An
    integer beyond 2^53 in magnitude (which float64 cannot hold exactly) keeps its
    exact value: its image is its 64 bits as an integer (two's complement).
  * a string (or binary): a hash of its UTF-8 bytes: ``h = mix64(len ^ S)``, then for
    each 8-byte little-endian word ``w`` (the last padded with zeros) ``h = mix64(h ^ w)``,
    with ``S = 0x9E3779B97F4A7C15``. A dictionary (a pandas category) is hashed by its
    values, never by its codes.
  * missing (null, or a float NaN): the bits of the canonical NaN, ``0x7FF8000000000000``.

- Each column's name gives it a salt ``c = mix64(blake2b-64(name's UTF-8))``; the row's hash is
  ``mix64(sum over its columns of mix64(image ^ c))`` (sums modulo 2^64), so the order of the
  columns does not matter and their names do (the model names them too).

``mix64`` is splitmix64's finaliser, a bijection on uint64. The compiled kernels each have a
numpy (or plain Python) twin here, which the tests hold them to.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from ..kernels.jit import jit, numba

__all__ = ["MISSING", "mix64", "row_hash", "combine", "column_images", "column_salt", "string_image"]

MISSING = np.uint64(0x7FF8000000000000)
"""The image of a missing value: the canonical NaN's bits."""

_STRING_SEED = np.uint64(0x9E3779B97F4A7C15)
_EXACT = 1 << 53  # integers up to this magnitude are exact in float64
_MASK = (1 << 64) - 1


def _finalise(x):
    """The splitmix64 finaliser's steps, in place on a uint64 array or on a numba uint64 scalar."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a bijection on uint64 that scatters nearby inputs (a new array)."""
    with np.errstate(over="ignore"):
        return _finalise(np.asarray(x, dtype=np.uint64).copy())


def _mix_int(x: int) -> int:
    """:func:`mix64` of one Python int (the twins' scalar arithmetic)."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def column_salt(name: str) -> np.uint64:
    """The salt of a column: ``mix64`` of the first 8 bytes (little-endian) of blake2b of its name."""
    digest = hashlib.blake2b(str(name).encode(), digest_size=8).digest()
    return np.uint64(_mix_int(int.from_bytes(digest, "little")))


def string_image(data: bytes) -> int:
    """The image of one string's bytes (plain Python: the definition the compiled kernel follows)."""
    h = _mix_int(len(data) ^ int(_STRING_SEED))
    for start in range(0, len(data), 8):
        h = _mix_int(h ^ int.from_bytes(data[start:start + 8].ljust(8, b"\0"), "little"))
    return h


# --- the numpy twins (images only: ``add`` is the kernels' sum, twinned by _accumulate_numpy) ---

def _float_images_numpy(values: np.ndarray, out: np.ndarray) -> None:
    values = np.ascontiguousarray(values, dtype=np.float64)
    out[:] = values.view(np.uint64)
    out[values == 0.0] = 0
    out[np.isnan(values)] = MISSING


def _int_images_numpy(values: np.ndarray, out: np.ndarray) -> None:
    if values.dtype.kind == "u":
        values = values.astype(np.uint64)
        exact = values <= _EXACT
    else:
        values = values.astype(np.int64)
        exact = (values <= _EXACT) & (values >= -_EXACT)
    out[:] = values.astype(np.float64).view(np.uint64)
    out[values == 0] = 0
    out[~exact] = values[~exact].view(np.uint64)


def _string_images_python(offsets: np.ndarray, data: np.ndarray, out: np.ndarray) -> None:
    raw = data.tobytes()
    for i in range(out.size):
        out[i] = string_image(raw[int(offsets[i]):int(offsets[i + 1])])


def _accumulate_numpy(images: np.ndarray, salt: np.uint64, acc: np.ndarray) -> None:
    with np.errstate(over="ignore"):
        acc += mix64(images ^ salt)


def _finish_numpy(acc: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return _finalise(acc)


# The kernels: each writes a value's image to ``out[i]`` or, with ``add``, adds ``mix64(image ^ salt)``
# to it (a row hash's sum, with no array of images made); ``nulls`` (uint8, empty when none) marks
# the missing values.

if numba is not None:
    _mix = jit(inline="always")(_finalise)

    @jit(inline="always")
    def _put(out, i, image, nulls, salt, add):
        if nulls.size and nulls[i]:
            image = MISSING
        if add:
            out[i] += _mix(image ^ salt)
        else:
            out[i] = image

    @jit
    def _float_kernel(values, nulls, salt, out, add):
        as_float = np.empty(1, dtype=np.float64)
        bits = as_float.view(np.uint64)
        for i in range(values.size):
            x = np.float64(values[i])
            if x != x:
                image = MISSING
            elif x == 0.0:
                image = np.uint64(0)
            else:
                as_float[0] = x
                image = bits[0]
            _put(out, i, image, nulls, salt, add)

    @jit
    def _signed_kernel(values, nulls, salt, out, add):
        as_float = np.empty(1, dtype=np.float64)
        bits = as_float.view(np.uint64)
        for i in range(values.size):
            v = np.int64(values[i])
            if v == 0:
                image = np.uint64(0)
            elif -_EXACT <= v <= _EXACT:
                as_float[0] = np.float64(v)
                image = bits[0]
            else:
                image = np.uint64(v)  # two's complement
            _put(out, i, image, nulls, salt, add)

    @jit
    def _unsigned_kernel(values, nulls, salt, out, add):
        as_float = np.empty(1, dtype=np.float64)
        bits = as_float.view(np.uint64)
        for i in range(values.size):
            v = np.uint64(values[i])
            if v == np.uint64(0):
                image = np.uint64(0)
            elif v <= np.uint64(_EXACT):
                as_float[0] = np.float64(v)
                image = bits[0]
            else:
                image = v
            _put(out, i, image, nulls, salt, add)

    @jit
    def _string_kernel(offsets, data, nulls, salt, out, add):
        for i in range(out.size):
            p, stop = np.int64(offsets[i]), np.int64(offsets[i + 1])
            h = _mix(np.uint64(stop - p) ^ _STRING_SEED)
            while p + 8 <= stop:  # whole words, little-endian
                w = (np.uint64(data[p]) | np.uint64(data[p + 1]) << np.uint64(8)
                     | np.uint64(data[p + 2]) << np.uint64(16) | np.uint64(data[p + 3]) << np.uint64(24)
                     | np.uint64(data[p + 4]) << np.uint64(32) | np.uint64(data[p + 5]) << np.uint64(40)
                     | np.uint64(data[p + 6]) << np.uint64(48) | np.uint64(data[p + 7]) << np.uint64(56))
                h = _mix(h ^ w)
                p += 8
            if p < stop:  # the last word, padded with zeros
                w = np.uint64(0)
                shift = np.uint64(0)
                while p < stop:
                    w |= np.uint64(data[p]) << shift
                    shift += np.uint64(8)
                    p += 1
                h = _mix(h ^ w)
            _put(out, i, h, nulls, salt, add)

    @jit
    def _taken_kernel(images, codes, nulls, salt, out, add):
        for i in range(codes.size):
            image = MISSING if nulls.size and nulls[i] else images[codes[i]]
            _put(out, i, image, nulls, salt, add)

    @jit
    def _accumulate(images, salt, acc):
        for i in range(images.size):
            acc[i] += _mix(images[i] ^ salt)

    @jit
    def _finish(acc):
        for i in range(acc.size):
            acc[i] = _mix(acc[i])
        return acc
else:  # pragma: no cover
    def _twin(images_of):
        def kernel(*args):
            *inputs, nulls, salt, out, add = args
            images = np.empty(out.size, dtype=np.uint64)
            images_of(*inputs, images)
            if nulls.size:
                images[nulls.astype(bool)] = MISSING
            if add:
                _accumulate_numpy(images, salt, out)
            else:
                out[:] = images
        return kernel

    _float_kernel = _twin(_float_images_numpy)
    _signed_kernel = _unsigned_kernel = _twin(_int_images_numpy)
    _string_kernel = _twin(_string_images_python)
    _taken_kernel = _twin(lambda images, codes, out: out.__setitem__(slice(None), images[codes]))
    _accumulate = _accumulate_numpy
    _finish = _finish_numpy


# --- Arrow columns ------------------------------------------------------------------------------

_NO_NULLS = np.zeros(0, dtype=np.uint8)


def _nulls(array: pa.Array) -> np.ndarray:
    if not array.null_count:
        return _NO_NULLS
    return array.is_null().to_numpy(zero_copy_only=False).view(np.uint8)


def _values(array: pa.Array, dtype) -> np.ndarray:
    """The fixed-width values buffer of ``array`` as numpy ``dtype``, zero copy (null slots hold anything)."""
    return np.frombuffer(array.buffers()[1], dtype=dtype)[array.offset:array.offset + len(array)]


_FIXED = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
          pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
          pa.float32(): np.float32, pa.float64(): np.float64}


def _into(array: pa.Array, name: str, salt: np.uint64, out: np.ndarray, add: bool) -> None:
    """Each value's image of one chunk written to ``out`` (or, with ``add``, its term added)."""
    if len(array) == 0:
        return
    type_ = array.type
    nulls = _nulls(array)
    if pa.types.is_dictionary(type_):  # the values' images, taken by code
        images = column_images(array.dictionary, name)
        codes = array.indices
        if codes.null_count:
            codes = pc.fill_null(codes, 0)
        codes = codes.to_numpy(zero_copy_only=False)
        _taken_kernel(images if images.size else np.full(1, MISSING), codes, nulls, salt, out, add)
        return
    if pa.types.is_boolean(type_):
        array, type_ = array.cast(pa.int8()), pa.int8()
    elif pa.types.is_date32(type_) or pa.types.is_time32(type_):
        array, type_ = array.view(pa.int32()), pa.int32()
    elif pa.types.is_date64(type_) or pa.types.is_timestamp(type_) or pa.types.is_duration(type_) \
            or pa.types.is_time64(type_):
        array, type_ = array.view(pa.int64()), pa.int64()
    elif pa.types.is_floating(type_) or pa.types.is_decimal(type_):
        if not (pa.types.is_float64(type_) or pa.types.is_float32(type_)):
            array, type_ = array.cast(pa.float64(), safe=False), pa.float64()
    if type_ in _FIXED:
        values = _values(array, _FIXED[type_])
        kernel = _float_kernel if pa.types.is_floating(type_) else \
            (_unsigned_kernel if pa.types.is_unsigned_integer(type_) else _signed_kernel)
        kernel(values, nulls, salt, out, add)
    elif pa.types.is_string(type_) or pa.types.is_large_string(type_) or pa.types.is_binary(type_) \
            or pa.types.is_large_binary(type_) or str(type_) in ("string_view", "binary_view"):
        if str(type_) in ("string_view", "binary_view"):
            array = array.cast(pa.large_binary())
        wide = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
        buffers = array.buffers()
        offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)[
            array.offset:array.offset + len(array) + 1]
        data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
        _string_kernel(offsets, data, nulls, salt, out, add)
    elif pa.types.is_null(type_):
        _taken_kernel(np.full(1, MISSING), np.zeros(len(array), np.int8), _NO_NULLS, salt, out, add)
    else:
        raise DataError(f"column {name!r} has type {type_}: a row's hash takes numbers and strings only")


def _chunks(column: pa.ChunkedArray | pa.Array) -> list:
    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def column_images(column: pa.ChunkedArray | pa.Array, name: str = "column") -> np.ndarray:
    """The image of each value of ``column`` (uint64, one per row; see the module's definition)."""
    out = np.empty(len(column), dtype=np.uint64)
    start = 0
    for chunk in _chunks(column):
        _into(chunk, name, np.uint64(0), out[start:start + len(chunk)], False)
        start += len(chunk)
    return out


def row_hash(table: pa.Table, columns: Sequence[str] | None = None) -> np.ndarray:
    """The hash of each row of ``table`` over ``columns`` (default: all), uint64, one per row.

    The same rows give the same hashes whatever the table's partitioning, row order, column
    order or physical types (see the module's definition); identical rows share a hash.
    """
    acc = np.zeros(table.num_rows, dtype=np.uint64)
    for name in (table.column_names if columns is None else columns):
        salt, start = column_salt(name), 0
        for chunk in _chunks(table.column(name)):
            _into(chunk, name, salt, acc[start:start + len(chunk)], True)
            start += len(chunk)
    return _finish(acc)


def combine(images: Iterable[tuple[str, np.ndarray]], n_rows: int) -> np.ndarray:
    """The row hashes of columns given as their images ``(name, images)``: ``mix64(sum of mix64(image ^
    salt(name)))``, as :func:`row_hash` makes them."""
    acc = np.zeros(n_rows, dtype=np.uint64)
    for name, values in images:
        _accumulate(values, column_salt(name), acc)
    return _finish(acc)
