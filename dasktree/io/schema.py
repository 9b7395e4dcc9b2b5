"""Column roles and kinds, and Arrow columns as the arrays the kernels take.

Kinds are inferred from Arrow types: string, dictionary, bool (and pandas
category) are *nominal*; integers, floats, decimals, dates, timestamps and
durations are *numeric*. ``nominal=[...]`` turns numeric columns nominal.

A numeric column becomes float64 with NaN for null (dates as days, timestamps
and durations in their unit since the epoch); a nominal column becomes an Arrow
string array (null for missing), whatever its physical type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError, InputError
from .kinds import NOMINAL, NUMERIC  # kept apart, for what must not import pyarrow

__all__ = ["Roles", "arrow_kind", "resolve_roles", "numeric_values", "nominal_values", "class_labels"]


def arrow_kind(type_: pa.DataType) -> str | None:
    """``"numeric"``, ``"nominal"`` or None (a type dasktree cannot use)."""
    if pa.types.is_dictionary(type_):
        return NOMINAL
    if pa.types.is_string(type_) or pa.types.is_large_string(type_) or pa.types.is_boolean(type_):
        return NOMINAL
    if (
        pa.types.is_integer(type_) or pa.types.is_floating(type_) or pa.types.is_decimal(type_)
        or pa.types.is_date(type_) or pa.types.is_timestamp(type_) or pa.types.is_duration(type_)
    ):
        return NUMERIC
    return None


@dataclass(frozen=True)
class Roles:
    """Which column is the target and which are features, with each feature's kind."""

    target: str
    features: tuple[str, ...]
    kinds: tuple[str, ...]
    extra: tuple[str, ...] = ()  # read but not learned from: a row-key or folds column
    weight: str | None = None  # the rows' weights (:mod:`dasktree.io.weights`), read but not learned from
    regression: bool = False  # the target is a number to predict (:mod:`dasktree.regress`), not a class label

    @property
    def columns(self) -> list[str]:
        cols = [*self.features, self.target]
        more = [*self.extra, *([self.weight] if self.weight else [])]
        return cols + [c for c in dict.fromkeys(more) if c not in cols]


def resolve_roles(
    schema: pa.Schema,
    target: str,
    *,
    features: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    nominal: Sequence[str] = (),
    extra: Sequence[str] = (),
    weight: str | None = None,
    where: str = "the data",
) -> Roles:
    """Check the named columns against the schema and infer each feature's kind."""
    names = list(schema.names)
    if target not in names:
        raise InputError(f"target column {target!r} not found in {where}; columns are {_show(names)}")
    for label, cols in (("features", features or ()), ("exclude", exclude), ("nominal", nominal)):
        unknown = [c for c in cols if c not in names]
        if unknown:
            raise InputError(f"{label}: column {unknown[0]!r} not found in {where}; columns are {_show(names)}")
    for name in extra:
        if name not in names:
            raise InputError(f"column {name!r} (key or folds) not found in {where}; columns are {_show(names)}")
        if name == target:
            raise InputError(f"the target {target!r} cannot also be the key or folds column")
    if weight is not None:
        if weight not in names:
            raise InputError(f"weight column {weight!r} not found in {where}; columns are {_show(names)}")
        if weight == target:
            raise InputError(f"the target {target!r} cannot also be the weight column")
        if arrow_kind(schema.field(weight).type) != NUMERIC:
            raise DataError(f"weight column {weight!r} has type {schema.field(weight).type}: weights are numbers")
        extra = [*extra, weight]
    if features is None:
        features = [c for c in names if c != target and c not in exclude and c not in extra]
    else:
        if weight in features:
            raise InputError(f"the weight column {weight!r} cannot also be a feature")
        features = [c for c in features if c not in exclude and c not in extra]
        if target in features:
            raise InputError(f"the target {target!r} cannot also be a feature")
    if not features:
        raise InputError(f"no feature columns left in {where} besides the target {target!r}")
    kinds = []
    for name in features:
        kind = arrow_kind(schema.field(name).type)
        if name in nominal:
            kind = NOMINAL
        if kind is None:
            raise DataError(
                f"column {name!r} has type {schema.field(name).type}, which dasktree cannot use; "
                "leave it out with exclude"
            )
        kinds.append(kind)
    target_type = schema.field(target).type
    if arrow_kind(target_type) is None:
        raise DataError(f"target {target!r} has type {target_type}, which cannot be a class label")
    return Roles(target, tuple(features), tuple(kinds), tuple(c for c in extra if c != weight), weight)


def _show(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}]"


def combined(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


def numeric_values(column: pa.ChunkedArray | pa.Array, name: str) -> np.ndarray:
    """float64 values of a numeric column, NaN for null."""
    array = combined(column)
    type_ = array.type
    if pa.types.is_dictionary(type_):
        array = array.dictionary_decode()
        type_ = array.type
    if pa.types.is_date(type_):
        array = array.cast(pa.int32() if pa.types.is_date32(type_) else pa.int64())
    elif pa.types.is_timestamp(type_) or pa.types.is_duration(type_):
        array = array.cast(pa.int64())
    elif pa.types.is_boolean(type_):
        array = array.cast(pa.int8())
    elif pa.types.is_string(type_) or pa.types.is_large_string(type_):
        raise DataError(f"column {name!r} holds strings and cannot be numeric")
    try:
        array = array.cast(pa.float64(), safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise DataError(f"column {name!r}: cannot read as numbers: {exc}") from None
    return array.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


def nominal_values(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A nominal column as an Arrow string array (null for missing)."""
    array = combined(column)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = pc.cast(array, pa.string())
    return array


def class_labels(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A class column's labels, null where a row has none: a null, or NaN in a float column (NaN is
    no class: its rows are skipped as a null target's are, counted in ``rows_skipped_null_target``)."""
    array = combined(column)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_floating(array.type) and len(array) and pc.any(pc.is_nan(array)).as_py():
        array = pc.if_else(pc.is_nan(array), pa.scalar(None, array.type), array)
    return array
