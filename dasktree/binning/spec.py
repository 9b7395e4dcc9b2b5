"""The bin spec: every attribute's bins, made from pass 0's summary, and how codes map to values.

Numeric attribute: bin ``b`` (1-based; code 0 is *missing*) holds the values
``x`` with ``upper[b - 2] < x <= upper[b - 1]`` (the edges come from
:func:`dasktree.binning.summary.numeric_edges`: exact distinct values up to
``max_bins``, else quantile edges of the fixed grid). Nominal attribute: one
code per category, categories in sorted order. When a column has more than
``max_categories`` categories, the ``max_categories - 1`` most frequent are kept
(ties by value) and the rest share a last code, ``OTHER``; categories unseen in
training also fall there (or, with no ``OTHER`` code, count as missing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DataError
from ..io.kinds import NOMINAL, NUMERIC
from ..io.weights import Weighting
from ..kernels.ragged import firsts
from .target import MAX_TOTAL, TargetScale

if TYPE_CHECKING:  # a model file's spec is read without pyarrow (`dasktree show`); the fit's summary needs it
    from ..io.schema import Roles
    from .summary import Summary

__all__ = ["OTHER", "FeatureBins", "BinSpec", "bin_spec"]

OTHER = "__other__"


@dataclass(frozen=True)
class FeatureBins:
    """The bins of one attribute. Code 0 is *missing*; bins are codes 1..n_bins."""

    name: str
    kind: str
    upper: np.ndarray | None = None  # numeric: n_bins - 1 upper edges
    values: np.ndarray | None = None  # numeric: one value per bin (exact value or largest value)
    exact: bool = True
    categories: tuple[str, ...] = ()  # nominal: code c <-> categories[c - 1]

    @property
    def n_bins(self) -> int:
        if self.kind == NUMERIC:
            return int(self.values.size)
        return len(self.categories)

    @property
    def has_other(self) -> bool:
        return self.kind == NOMINAL and bool(self.categories) and self.categories[-1] == OTHER

    def to_json(self) -> dict:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == NUMERIC:
            out.update(exact=self.exact, upper=self.upper.tolist(), values=self.values.tolist())
        else:
            out["categories"] = list(self.categories)
        return out

    @classmethod
    def from_json(cls, d: dict) -> "FeatureBins":
        if d["kind"] == NUMERIC:
            return cls(d["name"], NUMERIC, np.asarray(d["upper"], dtype=np.float64),
                       np.asarray(d["values"], dtype=np.float64), bool(d["exact"]))
        return cls(d["name"], NOMINAL, categories=tuple(d["categories"]))


@dataclass(frozen=True)
class BinSpec:
    """Bins of every feature and the class labels: what pass 0 learns. With row weights, also
    how each row counts (``weighting``; fit-time only: not saved with a model, predictions need none)."""

    features: tuple[FeatureBins, ...]
    classes: tuple
    weighting: Weighting | None = field(default=None, compare=False)
    target: TargetScale | None = None  # a regression target's fixed point (:mod:`dasktree.binning.target`)

    @property
    def regression(self) -> bool:
        return self.target is not None

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_features(self) -> int:
        return len(self.features)

    @property
    def widths(self) -> np.ndarray:
        """Histogram rows per attribute: its bins plus the missing code."""
        return np.array([f.n_bins + 1 for f in self.features], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """Start of each attribute's rows in the concatenated histogram axis."""
        return firsts(self.widths)

    @property
    def total_bins(self) -> int:
        return int(self.widths.sum())

    @property
    def code_dtype(self) -> np.dtype:
        return np.dtype(np.uint8) if self.widths.max() <= 256 else np.dtype(np.uint16)

    def to_json(self) -> dict:
        out = {"classes": list(self.classes), "features": [f.to_json() for f in self.features]}
        if self.target is not None:
            out["target"] = self.target.to_json()
        return out

    @classmethod
    def from_json(cls, d: dict) -> "BinSpec":
        target = TargetScale.from_json(d["target"]) if d.get("target") is not None else None
        return cls(tuple(FeatureBins.from_json(f) for f in d["features"]), tuple(d["classes"]), target=target)


def _sorted_labels(labels) -> tuple:
    try:
        return tuple(sorted(labels))
    except TypeError:
        raise DataError(f"the target mixes label types: {sorted(map(repr, labels))[:5]}") from None


def bin_spec(summary: Summary, roles: Roles, *, max_bins: int, max_categories: int,
             where: str = "the data") -> BinSpec:
    """The bins of every attribute from the merged summary (aggregate)."""
    from .summary import numeric_edges

    rows = summary.n_rows - summary.n_null_target
    if summary.n_rows == 0:
        raise DataError(f"{where} has no rows")
    if rows == 0:
        raise DataError(f"every row of {where} has a null target {roles.target!r}")
    if summary.weights is not None and not any(summary.weights.max.values()):
        raise DataError(f"every row of {where} with a target has weight 0 in {roles.weight!r}: nothing to learn")
    target = None
    if roles.regression:
        target = TargetScale.of(summary.target_range, roles.target)
        if rows >= MAX_TOTAL:
            raise DataError(f"{where} has {rows} rows with a target: exact regression sums hold up to {MAX_TOTAL}")
        classes: tuple = ()
    else:
        classes = _sorted_labels(summary.classes)
    if len(classes) < 2 and target is None:
        raise DataError(
            f"target {roles.target!r} has a single class ({classes[0]!r}) in {where}: nothing to learn"
        )
    features = []
    for name, kind, sketch, counts, missing in zip(
        roles.features, roles.kinds, summary.numeric, summary.nominal, summary.n_missing
    ):
        if missing == summary.n_rows - summary.n_zero_weight:
            raise DataError(f"feature {name!r} is null in every row of {where}; leave it out with exclude")
        if kind == NUMERIC:
            upper, values, exact = numeric_edges(sketch, max_bins)
            features.append(FeatureBins(name, NUMERIC, upper, values, exact))
        else:
            features.append(FeatureBins(name, NOMINAL, categories=_categories(counts, max_categories)))
    return BinSpec(tuple(features), classes, target=target)


def _categories(counts: dict[str, int], max_categories: int) -> tuple[str, ...]:
    if len(counts) <= max_categories:
        return tuple(sorted(counts))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    kept = sorted(k for k, _ in ranked[: max_categories - 1])
    return (*kept, OTHER)
