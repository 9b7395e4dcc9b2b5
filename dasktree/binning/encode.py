"""Encoding: a part's rows as attribute codes, class codes and fold parts.

The encoded part is what every level pass reads (SLIQ's class list, in
columns): ``codes`` of shape (n_attributes, n_rows) in uint8 or uint16, where
code 0 is *missing* and codes 1..n_bins are the attribute's bins; ``y`` the
class code of each row; ``part`` the fold part of each row per repetition
(all zeros without cross-validation); with row weights, ``weight``, each row's
whole-row multiplicity (:mod:`dasktree.io.weights`). Rows whose target is null,
and rows of multiplicity 0, are dropped here and counted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from ..io.schema import NUMERIC, combined, nominal_values, numeric_values
from ..io.weights import weight_values
from .codes import integer_codes, numeric_codes
from .spec import BinSpec, FeatureBins

__all__ = ["Encoded", "encode_features", "encode_blocks", "class_codes", "class_codes_arrow"]

MAX_ROWS = 2**31 - 1  # rows of one encoded block: a level pass counts a block in int32


@dataclass
class Encoded:
    """One encoded part, or a block of consecutive parts (:func:`encode_blocks`).

    codes : (n_attributes, n_rows) uint8/uint16, 0 = missing.
    y : (n_rows,) int32 class codes.
    part : (n_repeats, n_rows) int16 fold part of each row in each repetition.
    n_dropped : rows dropped for a null target or a multiplicity of 0.
    weight : (n_rows,) int32 multiplicity of each row (>= 1), or None: each row counts once.
    start : (K, n_rows) uint16 or int32 nodes each row's walk starts from, as node + 1 (0: none), in
        the forest named ``start_forest`` (see :mod:`dasktree.kernels.histogram`); kept between passes.
        Made with :func:`numpy.zeros`: rows of it no pass has written take no memory.
    grouped : (forest id, slots counted) of the pass that last put the rows in order of their
        nodes (:func:`dasktree.engine.part_tasks.group_rows`), or None.
    reorders : how many times the rows were put in another order (:meth:`reorder`): what a copy of
        them on disk (:mod:`dasktree.engine.spill`) compares to know it must write them again.
    """

    codes: np.ndarray
    y: np.ndarray
    part: np.ndarray
    n_dropped: int = 0
    start: np.ndarray | None = None
    start_forest: str = ""
    grouped: tuple[str, int] | None = None
    weight: np.ndarray | None = None
    reorders: int = 0

    @property
    def total(self) -> int:
        """Rows as the histograms count them: the sum of the multiplicities (else the rows)."""
        return self.n_rows if self.weight is None else int(self.weight.sum(dtype=np.int64))

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
            widened = np.zeros(self.start.shape, dtype=dtype)
            for k, line in _start_lines(self.start):
                widened[k] = line
            self.start = widened
        return self.start

    def reorder(self, order: np.ndarray) -> None:
        """Put the rows in ``order`` (a permutation, int64), every array alike, in place.

        Each line of each array is gathered into one scratch line and copied back, so a
        reorder takes one line of new memory, not a copy of the part: a copy of a large
        forest's parts mid-fit is fresh memory to fault in, page by page. Lines of the start array that hold no start stay
        untouched zeros."""
        scratch = np.empty(self.n_rows * 4, dtype=np.uint8)  # the widest line: int32
        starts = () if self.start is None else (line for _, line in _start_lines(self.start))
        weight = () if self.weight is None else (self.weight,)
        for line in itertools.chain(self.codes, (self.y,), self.part, weight, starts):  # a start line just read: from the cache
            gathered = scratch[:line.nbytes].view(line.dtype)
            np.take(line, order, out=gathered, mode="clip")  # "clip": not buffered; ``order`` is in range
            line[...] = gathered
        self.reorders += 1

    @property
    def n_rows(self) -> int:
        return int(self.y.size)

    @property
    def nbytes(self) -> int:
        start = 0 if self.start is None else self.start.nbytes
        weight = 0 if self.weight is None else self.weight.nbytes
        return self.codes.nbytes + self.y.nbytes + self.part.nbytes + start + weight


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
    _encode_into(out, table, spec)
    return out


def _encode_into(out: np.ndarray, table: pa.Table, spec: BinSpec, keep: np.ndarray | None = None) -> None:
    """The codes of the rows ``keep`` (None: all) of ``table`` written into ``out`` (n_attributes, rows kept)."""
    names, dtype = set(table.column_names), spec.code_dtype  # once, not per attribute
    for j, bins in enumerate(spec.features):
        if bins.name not in names:
            raise DataError(f"column {bins.name!r} that the model uses is missing from the data")
        codes = encode_feature(table.column(bins.name), bins, dtype)
        out[j] = codes if keep is None else codes[keep]


INT64_EXACT = {pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32()}
"""Integer types whose values int64 holds exactly (uint64's may not)."""


def class_codes(column, classes: tuple) -> np.ndarray:
    """Class code of each row, -1 for a null target or a label outside ``classes``."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    codes = _integer_class_codes(array, classes)
    if codes is not None:
        return codes
    return class_codes_arrow(array, classes)


def _integer_class_codes(array: pa.Array, classes: tuple) -> np.ndarray | None:
    """:func:`class_codes` of integer labels without nulls and integer classes, by a search in the
    sorted classes (Arrow's lookup has a fixed cost per call that small data notices); None for others."""
    if array.null_count or array.type not in INT64_EXACT or not classes \
            or not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in classes):
        return None
    try:
        known = np.array(classes, dtype=np.int64)
    except OverflowError:
        return None
    order = np.argsort(known, kind="stable")
    ranked = known[order]
    values = array.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    at = np.minimum(np.searchsorted(ranked, values), ranked.size - 1)
    return np.where(ranked[at] == values, order[at], -1).astype(np.int32)


def class_codes_arrow(array: pa.Array, classes: tuple) -> np.ndarray:
    """The twin of :func:`class_codes` for any labels: Arrow's ``index_in`` of each in ``classes``."""
    value_set = pa.array(list(classes))
    if value_set.type != array.type:
        try:
            value_set = value_set.cast(array.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            array = array.cast(value_set.type)
    index = pc.index_in(array, value_set=value_set)
    return index.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)


Load = Callable[[], tuple[pa.Table, "np.ndarray | None"]]  # a part's table and fold parts (or None)


def encode_blocks(loads: list[tuple[int, Load]], spec: BinSpec, target: str, max_rows: int = MAX_ROWS) -> list[Encoded]:
    """Consecutive parts (a worker thread's group) encoded as blocks of rows, in order; null-target
    rows dropped. ``loads[i]`` is (part i's rows as counted, a function returning its table and
    fold parts, or None for one repetition with every row in part 0). A block holds the parts of
    at most ``max_rows`` rows together (a larger part alone is one).

    A block's arrays are allocated once and each part encoded into them, one part loaded at a
    time. A group is counted as one block: at deep levels a pass orders its rows by node, and
    ordered part by part the rows would sweep the whole histogram once for every part. Joining
    parts encoded one by one meant a fresh copy of them all in the middle of a fit."""
    return [_encode_block([loads[i] for i in run], spec, target) for run in _runs([n for n, _ in loads], max_rows)]


def _runs(sizes: list[int], max_rows: int) -> list[list[int]]:
    """Consecutive indices of ``sizes``, in runs of at most ``max_rows`` in all (a larger size alone)."""
    runs: list[list[int]] = []
    total = 0
    for i, n in enumerate(sizes):
        if not runs or total + n > max_rows:
            runs.append([])
            total = 0
        runs[-1].append(i)
        total += n
    return runs


def _encode_block(loads: list[tuple[int, Load]], spec: BinSpec, target: str) -> Encoded:
    capacity = sum(max(n, 0) for n, _ in loads)
    block = Encoded(np.empty((spec.n_features, capacity), dtype=spec.code_dtype), np.empty(capacity, dtype=np.int32),
                    np.zeros((1, capacity), dtype=np.int16))
    weighting = spec.weighting
    if weighting is not None:
        block.weight = np.empty(capacity, dtype=np.int32)
    lo = 0
    for i, (_, load) in enumerate(loads):
        table, fold_part = load()
        y = class_codes(table.column(target), spec.classes) if spec.target is None \
            else spec.target.encode(table.column(target), target)
        valid = y >= 0
        if weighting is not None:
            column = weighting.column
            weights = np.ones(y.size) if column is None else weight_values(table.column(column), column, "")
            weight = weighting.multiplicities(weights, np.maximum(y, 0) if spec.target is None else np.zeros_like(y))
            valid &= weight > 0
        keep = None if bool(valid.all()) else valid
        hi = lo + (y.size if keep is None else int(keep.sum()))
        if hi > block.n_rows:  # more rows than counted (metadata out of step): room for them and the rest
            _resize(block, hi + sum(max(n, 0) for n, _ in loads[i + 1:]))
        if fold_part is not None and fold_part.shape[0] != block.part.shape[0]:
            block.part = np.zeros((fold_part.shape[0], block.n_rows), dtype=np.int16)  # first part: nothing written yet
        _encode_into(block.codes[:, lo:hi], table, spec, keep)
        block.y[lo:hi] = y if keep is None else y[keep]
        if weighting is not None:
            block.weight[lo:hi] = weight if keep is None else weight[keep]
        if fold_part is not None:
            block.part[:, lo:hi] = fold_part if keep is None else fold_part[:, keep]
        block.n_dropped += y.size - (hi - lo)
        lo = hi
    if lo < block.n_rows:  # rows dropped for a null target: the arrays to their size
        _resize(block, lo)
    return block


def _resize(block: Encoded, n: int) -> None:
    """Resize a block's arrays to ``n`` rows, keeping the first ones (a copy)."""
    keep = min(n, block.n_rows)
    for name in ("codes", "y", "part", "weight"):
        old = getattr(block, name)
        if old is None:
            continue
        new = (np.zeros if name == "part" else np.empty)(old.shape[:-1] + (n,), dtype=old.dtype)
        new[..., :keep] = old[..., :keep]
        setattr(block, name, new)


def _start_lines(start: np.ndarray):
    """(k, line) for the lines of a start array (:class:`Encoded`) holding any start: a row's starts
    come first in its column, so the first line of zeros ends them; it and those after are not read."""
    for k, line in enumerate(start):
        if not line.any():
            return
        yield k, line
