"""Encoding: a part's rows as attribute codes, class codes and fold parts.

The encoded part is what every level pass reads (SLIQ's class list, in
columns): ``codes`` of shape (n_attributes, n_rows) in uint8 or uint16, where
code 0 is *missing* and codes 1..n_bins are the attribute's bins; ``y`` the
class code of each row; ``part`` the fold part of each row per repetition
(all zeros without cross-validation). Rows whose target is null are dropped
here and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .bin_codes import integer_codes, numeric_codes
from .binning import BinSpec, FeatureBins
from .errors import DataError
from .schema import NUMERIC, combined, nominal_values, numeric_values

__all__ = ["Encoded", "encode_features", "encode_table", "class_codes", "concatenate", "streams_in_use"]

MAX_ROWS = 2**31 - 1  # rows of one encoded block: a level pass counts a block in int32


@dataclass
class Encoded:
    """One encoded part.

    codes : (n_attributes, n_rows) uint8/uint16, 0 = missing.
    y : (n_rows,) int32 class codes.
    part : (n_repeats, n_rows) int16 fold part of each row in each repetition.
    n_dropped : rows dropped for a null target.
    start : (K, n_rows) uint16 or int32 nodes each row's walk starts from, as node + 1 (0: none), in
        the forest named ``start_forest`` (see :mod:`dasktree.histogram`); kept between passes.
        Made with :func:`numpy.zeros`: rows of it no pass has written take no memory.
    grouped : (forest id, slots counted) of the pass that last put the rows in order of their
        nodes (:func:`dasktree.tasks.group_rows`), or None.
    """

    codes: np.ndarray
    y: np.ndarray
    part: np.ndarray
    n_dropped: int = 0
    start: np.ndarray | None = None
    start_forest: str = ""
    grouped: tuple[str, int] | None = None

    def start_nodes(self, forest_id: str, width: int = 1, n_nodes: int | None = None) -> np.ndarray:
        """The rows' ``width`` start nodes in forest ``forest_id`` (the root for a forest not seen
        before): uint16 while the forest's ``n_nodes`` fit one (node + 1 <= 65,535), then (or
        when not given) int32."""
        dtype = np.uint16 if n_nodes is not None and n_nodes <= np.iinfo(np.uint16).max else np.int32
        if self.start is None or self.start_forest != forest_id or self.start.shape[0] != width:
            self.start = np.zeros((width, self.n_rows), dtype=dtype)
            self.start[0] = 1  # the root
            self.start_forest = forest_id
        elif np.dtype(dtype).itemsize > self.start.itemsize:  # the forest outgrew uint16 node ids
            self.start = self.starts_reordered(None, dtype)
        return self.start

    def starts_reordered(self, order: np.ndarray | None, dtype=None) -> np.ndarray:
        """The start nodes with the rows in ``order`` (None: as they are), as ``dtype`` (None: the
        same); rows of the array that hold no start stay untouched zeros."""
        out = np.zeros(self.start.shape, dtype=dtype or self.start.dtype)
        for stream, reordered in zip(self.start, out):
            if not stream.any():  # no row has a start this far: nor further
                break
            if order is None:
                reordered[:] = stream
            else:
                np.take(stream, order, out=reordered)  # the stream just read, from the cache
        return out

    @property
    def n_rows(self) -> int:
        return int(self.y.size)

    @property
    def nbytes(self) -> int:
        start = 0 if self.start is None else self.start.nbytes
        return self.codes.nbytes + self.y.nbytes + self.part.nbytes + start


def encode_feature(column, bins: FeatureBins, dtype: np.dtype) -> np.ndarray:
    """Codes of one column: bin ``b`` holds ``upper[b-2] < x <= upper[b-1]``; 0 = missing.

    An integer column without nulls whose values span at most 65536 integers (ages, counts,
    years, coded categories) gets its codes from a lookup table (:func:`integer_codes`), the
    same codes in a quarter of the time; any other numeric column through float64."""
    if bins.kind == NUMERIC:
        if column.null_count == 0 and pa.types.is_integer(column.type):
            codes = integer_codes(combined(column).to_numpy(zero_copy_only=False), bins.upper, dtype)
            if codes is not None:
                return codes
        return numeric_codes(numeric_values(column, bins.name), bins.upper, dtype)
    values = nominal_values(column)
    index = pc.index_in(values, value_set=pa.array(bins.categories, type=pa.string()))
    found = index.is_valid().to_numpy(zero_copy_only=False)
    codes = index.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64) + 1
    unseen = ~found & values.is_valid().to_numpy(zero_copy_only=False)
    codes[~found] = 0
    if bins.has_other:
        codes[unseen] = len(bins.categories)
    return codes.astype(dtype, copy=False)


def encode_features(table: pa.Table, spec: BinSpec) -> np.ndarray:
    """``codes`` of shape (n_attributes, n_rows) for the spec's features."""
    out = np.empty((spec.n_features, table.num_rows), dtype=spec.code_dtype)
    for j, bins in enumerate(spec.features):
        if bins.name not in table.column_names:
            raise DataError(f"column {bins.name!r} that the model uses is missing from the data")
        out[j] = encode_feature(table.column(bins.name), bins, spec.code_dtype)
    return out


def class_codes(column, classes: tuple) -> np.ndarray:
    """Class code of each row, -1 for a null target or a label outside ``classes``."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    value_set = pa.array(list(classes))
    if value_set.type != array.type:
        try:
            value_set = value_set.cast(array.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            array = array.cast(value_set.type)
    index = pc.index_in(array, value_set=value_set)
    return index.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)


def encode_table(table: pa.Table, spec: BinSpec, target: str, part: np.ndarray | None = None) -> Encoded:
    """Encode one part's table for the level passes, dropping null-target rows.

    ``part`` (n_repeats, n_rows) gives each row's fold part; None means one
    repetition with every row in part 0.
    """
    y = class_codes(table.column(target), spec.classes)
    keep = y >= 0
    codes = encode_features(table, spec)
    if part is None:
        part = np.zeros((1, table.num_rows), dtype=np.int16)
    if keep.all():
        return Encoded(codes, y, part.astype(np.int16, copy=False), 0)
    return Encoded(
        np.ascontiguousarray(codes[:, keep]), y[keep], np.ascontiguousarray(part[:, keep]).astype(np.int16),
        int((~keep).sum()),
    )


def concatenate(encoded: list[Encoded], max_rows: int = MAX_ROWS) -> list[Encoded]:
    """Consecutive encoded parts joined into blocks of at most ``max_rows`` rows, rows in order.

    A worker thread's group of parts is counted as one block at deep levels: a
    pass then puts the rows in the order of their nodes (:func:`dasktree.tasks.group_rows`)
    to count into the histogram one node region at a time, and per part that
    sweeps the whole histogram once for every part. The rows' start nodes are
    carried when every part has them for the same forest; the counts never
    depend on row order or blocks.
    """
    blocks: list[list[Encoded]] = []
    rows = 0
    for e in encoded:
        if not blocks or rows + e.n_rows > max_rows:
            blocks.append([])
            rows = 0
        blocks[-1].append(e)
        rows += e.n_rows
    return [block[0] if len(block) == 1 else _joined(block) for block in blocks]


def streams_in_use(start: np.ndarray) -> int:
    """Rows of a start array (:class:`Encoded`) holding any start: a row's starts come first in its
    column, so the first row of zeros ends them. Reads only the rows in use and that one."""
    used = 0
    while used < start.shape[0] and start[used].any():
        used += 1
    return used


def _joined(block: list[Encoded]) -> Encoded:
    joined = Encoded(np.concatenate([e.codes for e in block], axis=1), np.concatenate([e.y for e in block]),
                     np.concatenate([e.part for e in block], axis=1), sum(e.n_dropped for e in block))
    first = block[0]
    if first.start is not None and all(e.start is not None and e.start_forest == first.start_forest
                                       and e.start.shape[0] == first.start.shape[0] for e in block):
        used = max(streams_in_use(e.start) for e in block)
        joined.start = np.zeros((first.start.shape[0], joined.n_rows),
                                dtype=np.result_type(*[e.start.dtype for e in block]))
        np.concatenate([e.start[:used] for e in block], axis=1, out=joined.start[:used])
        joined.start_forest = first.start_forest
    return joined
