"""Row weights as exact integer multiplicities.

The histograms count rows in integers (int32 / uint16 cells per part, int64
sums), so the model is the same bit for bit whatever the partitioning. Weights
keep that property by becoming a whole number of rows, each row's
*multiplicity*, before any counting; the level passes add a row's multiplicity
where they would add 1. A row's weight is its ``sample_weight`` (a column of
the data, or an array beside in-memory data) times its class's factor from
``class_weight``. The rule needs only pass 0's exact statistics of the weights
(:class:`WeightStats`: per class, the largest weight and, while every weight is
a whole number, their sum), so every part converts its rows alike:

* **Integer weights** (every ``sample_weight`` and class factor a whole number,
  the rows' weights summing to at most :data:`MAX_ROWS`) are multiplicities: a
  row of weight 3 counts as 3 rows.
* **Other weights** are converted to fixed point: ``m = round(w * 2**k)``
  (round half to even), with ``k`` the largest integer (it may be negative)
  such that the heaviest row counts at most :data:`MAX_MULTIPLICITY` times.
  Scaling every weight by the same ``2**k`` changes no impurity and so no split;
  the rounding to whole rows is the only approximation, at most half a row in
  the 128 to 256 rows of the heaviest. A row lighter than ``2**-(k+1)`` counts
  as no row.

Rows whose ``sample_weight`` is 0 are left out from pass 0 on: they place no
bin edge and count nowhere. The bins are placed by the values of the other
rows, each counted once whatever its weight. The counts of the model
(``tree_.counts``, the CV report's held-out counts) and the stopping rules
``min_samples_split`` / ``min_samples_leaf`` are in multiplicities; the report's
``weights`` entry says which rule applied (``shift`` is ``k``, 0 for integer
weights) and the rows as counted. ``class_weight="balanced"`` weighs class ``c`` by
``n / (n_classes * n_c)``, with ``n_c`` its rows with a target, as scikit-learn's
:func:`~sklearn.utils.class_weight.compute_sample_weight` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataError, InputError, ParameterError

__all__ = ["MAX_MULTIPLICITY", "MAX_ROWS", "WeightStats", "Weighting", "weight_stats", "merge_weight_stats",
           "weighting", "class_factors", "check_class_weight", "check_sample_weight", "multiplicities",
           "weight_values"]

MAX_MULTIPLICITY = 256
"""The most times one row counts after a non-integer weight's fixed-point conversion."""

MAX_ROWS = 2**31 - 1
"""Integer weights summing above this are scaled as non-integer weights are (a part's cells are int32)."""


@dataclass(frozen=True)
class WeightStats:
    """Pass 0's exact statistics of the weights of some rows, per class label.

    ``max[label]`` is the largest weight of a row of that class; ``sums[label]`` the
    sum of the class's weights while every weight is a whole number (``sums`` is None
    once one is not, or once a sum passes :data:`MAX_ROWS`). ``n_zero``: rows of
    weight 0. Maxima, integer sums and counts merge exactly, in any order."""

    max: dict
    sums: dict | None
    n_zero: int = 0


def weight_values(column, name: str, where: str) -> np.ndarray:
    """A weight column's float64 values, checked: a number, finite and >= 0 in every row."""
    from .schema import numeric_values

    values = numeric_values(column, name)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = "null" if np.isnan(values[row]) else f"{float(values[row]):.6g}"
        raise DataError(f"weight column {name!r} is {value} at row {row}{' of ' + where if where else ''}: "
                        "weights must be finite numbers >= 0")
    return values


def weight_stats(weights: np.ndarray, labels, n_zero: int = 0) -> WeightStats:
    """:class:`WeightStats` of rows of positive ``weights`` whose class labels are ``labels``
    (an Arrow array; null labels are skipped: those rows are not learned from)."""
    import pyarrow.compute as pc

    if hasattr(labels, "combine_chunks"):
        labels = labels.combine_chunks()
    encoded = pc.dictionary_encode(labels)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    valid = encoded.indices.is_valid().to_numpy(zero_copy_only=False)
    names = encoded.dictionary.to_pylist()
    codes, weights = codes[valid].astype(np.int64), weights[valid]
    maxima = np.zeros(len(names))
    np.maximum.at(maxima, codes, weights)
    sums: dict | None = None
    if np.all(weights == np.floor(weights)) and weights.sum() <= MAX_ROWS:  # sums of whole numbers < 2**53: exact
        sums = {name: int(s) for name, s in zip(names, np.bincount(codes, weights, minlength=len(names)))}
    return WeightStats({name: float(m) for name, m in zip(names, maxima)}, sums, n_zero)


def merge_weight_stats(stats: list[WeightStats | None]) -> WeightStats | None:
    """Stats of the union of the rows (exact: maxima, integer sums and counts)."""
    if not stats or stats[0] is None:
        return None
    maxima: dict = {}
    sums: dict | None = {}
    for s in stats:
        for label, m in s.max.items():
            maxima[label] = max(maxima.get(label, 0.0), m)
        if s.sums is None or sums is None:
            sums = None
        else:
            for label, v in s.sums.items():
                sums[label] = sums.get(label, 0) + v
    if sums is not None and sum(sums.values()) > MAX_ROWS:
        sums = None
    return WeightStats(maxima, sums, sum(s.n_zero for s in stats))


def check_class_weight(class_weight) -> None:
    """``class_weight`` is None, "balanced" or a dict of finite weights >= 0 (ParameterError)."""
    if class_weight is None or (isinstance(class_weight, str) and class_weight == "balanced"):
        return
    if not isinstance(class_weight, dict):
        raise ParameterError(f"class_weight must be a dict, 'balanced' or None, got {class_weight!r}")
    for label, w in class_weight.items():
        if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) \
                or not math.isfinite(w) or w < 0:
            raise ParameterError(f"class_weight[{label!r}] must be a finite number >= 0, got {w!r}")


def class_factors(class_weight, classes: tuple, counts: dict) -> np.ndarray:
    """Each class's weight factor (float64, in ``classes`` order) from ``class_weight``.

    A dict's missing classes weigh 1; a key that names no class is refused, as
    scikit-learn refuses it. "balanced": ``n / (n_classes * n_c)`` over the rows with a
    target (``counts``), computed as :func:`sklearn.utils.class_weight.compute_class_weight`."""
    check_class_weight(class_weight)
    if class_weight is None:
        return np.ones(len(classes))
    if isinstance(class_weight, str):
        n_c = np.array([counts[c] for c in classes], dtype=np.int64)
        return int(n_c.sum()) / (len(classes) * n_c).astype(np.float64)
    unknown = [k for k in class_weight if not any(_same_label(k, c) for c in classes)]
    if unknown:
        raise ParameterError(f"class_weight names {unknown[0]!r}, which is not a class; the classes are "
                             f"{list(classes)}")
    return np.array([float(next((w for k, w in class_weight.items() if _same_label(k, c)), 1.0))
                     for c in classes])


def _same_label(key, label) -> bool:
    """A class_weight key names a label: equal, or equal as text (a JSON or CLI key is a string)."""
    return key == label or str(key) == str(label)


@dataclass(frozen=True)
class Weighting:
    """How each row counts: ``column``'s weight (None: 1) times its class's ``factors[y]``, times
    ``2**shift`` (0 for integer weights), rounded to whole rows."""

    column: str | None
    factors: tuple[float, ...]
    shift: int
    integer: bool

    def multiplicities(self, weights: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whole-row multiplicities (int32) of rows of ``weights`` and class codes ``y`` (>= 0)."""
        w = weights * np.asarray(self.factors)[y]
        return np.rint(np.ldexp(w, self.shift)).astype(np.int32)  # exact; integer weights: rint changes nothing

    def to_json(self) -> dict[str, Any]:
        return {"column": self.column, "rule": "integer" if self.integer else "fixed point", "shift": self.shift}


def weighting(column: str | None, stats: WeightStats, classes: tuple, counts: dict, class_weight=None) -> Weighting:
    """The rule of the module docstring for the rows pass 0 described (``stats``, ``counts``)."""
    factors = class_factors(class_weight, classes, counts)
    heaviest = [float(f) * stats.max.get(c, 0.0) for f, c in zip(factors, classes)]  # per class
    if max(heaviest, default=0.0) <= 0:
        raise InputError("the row weights sum to zero: no row left to learn from")
    rule = None
    if stats.sums is not None and all(float(f).is_integer() for f in factors):
        total = sum(int(f) * stats.sums.get(c, 0) for f, c in zip(factors, classes))
        if total <= MAX_ROWS:
            rule = Weighting(column, tuple(float(f) for f in factors), 0, True)
    if rule is None:
        mantissa, exponent = math.frexp(max(heaviest))  # = mantissa * 2**exponent, mantissa in [0.5, 1)
        k = int(math.log2(MAX_MULTIPLICITY)) - exponent + (1 if mantissa == 0.5 else 0)
        rule = Weighting(column, tuple(float(f) for f in factors), k, False)
    return rule


def check_sample_weight(sample_weight, n_rows: int) -> np.ndarray:
    """An in-memory ``sample_weight`` as float64 of ``n_rows`` (a scalar: every row's), checked."""
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("sample_weight must be numbers") from None
    if w.ndim == 0:
        w = np.full(n_rows, float(w))
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise InputError(f"sample_weight must have shape ({n_rows},), got {w.shape}")
    if not np.isfinite(w).all():
        raise InputError("sample_weight must be finite, got NaN or infinity")
    if (w < 0).any():
        raise InputError(f"sample_weight must be >= 0, got {float(w[w < 0][0])!r} at row {int(np.flatnonzero(w < 0)[0])}")
    if float(w.sum()) <= 0:
        raise InputError("sample_weight sums to zero: no row left to learn from")
    return w


def multiplicities(sample_weight, y=None, class_weight=None) -> np.ndarray:
    """The module's rule on arrays in memory: each row's whole-row multiplicity (int64).

    The plain statement of what a fit computes from pass 0's statistics and part by
    part (:func:`weighting`, :meth:`Weighting.multiplicities`); tests compare the two.
    ``y``: class labels (needed with ``class_weight``)."""
    w = check_sample_weight(sample_weight, len(sample_weight) if y is None else len(y))
    labels = np.zeros(len(w), dtype=np.int64) if y is None else np.asarray(y)
    classes, codes = np.unique(labels, return_inverse=True)
    if class_weight is None:
        factors = np.ones(len(classes))
    elif isinstance(class_weight, str):
        from sklearn.utils.class_weight import compute_class_weight

        factors = compute_class_weight(class_weight, classes=classes, y=labels)
    else:
        factors = np.array([float(class_weight.get(c, 1.0)) for c in classes])
    row = w * factors[codes]
    if row.max() <= 0:
        raise InputError("the row weights sum to zero: no row left to learn from")
    if np.all(w == np.floor(w)) and np.all(factors == np.floor(factors)) and w.sum() <= MAX_ROWS \
            and row.sum() <= MAX_ROWS:
        return row.astype(np.int64)
    k = 0  # the largest k with the heaviest row * 2**k <= MAX_MULTIPLICITY
    while np.ldexp(row.max(), k) > MAX_MULTIPLICITY:
        k -= 1
    while np.ldexp(row.max(), k + 1) <= MAX_MULTIPLICITY:
        k += 1
    return np.rint(np.ldexp(row, k)).astype(np.int64)
