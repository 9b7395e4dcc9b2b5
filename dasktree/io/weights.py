"""Sample weights as exact integer multiplicities.

The histograms count rows in integers (int32 / uint16 cells per part, int64
sums), so the model is the same bit for bit whatever the partitioning. Weights
keep that property by becoming whole numbers of rows before any counting:

* **Integer weights** (every weight a whole number, their sum at most
  :data:`MAX_ROWS`) are multiplicities: a row of weight 3 counts as 3 rows, a
  row of weight 0 is left out.
* **Other weights** are converted to fixed point: ``m = round(w * 2**k)``
  (round half to even), with ``k`` the largest integer (it may be negative)
  such that the heaviest row counts at most :data:`MAX_MULTIPLICITY` times and
  the rows count at most ``max(MAX_ROWS_PER_ROW * n, 2**16)`` in all. Scaling
  every weight by the same ``2**k`` changes no impurity and so no split; the
  rounding to whole rows is the only approximation, a relative ``2**-8`` for the
  heaviest row.

The counts of the model (``tree_.counts``, the report's rows and class counts)
and the stopping rules ``min_samples_split`` / ``min_samples_leaf`` are then in
these multiplicities. The rows are repeated in memory, so weights are for
in-memory fits (pandas, numpy); a dataset names no weight column yet.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ParameterError

__all__ = ["multiplicities", "class_weights", "MAX_MULTIPLICITY", "MAX_ROWS_PER_ROW", "row_weights", "as_weights"]

MAX_MULTIPLICITY = 256
"""The most times one row counts after a non-integer weight's fixed-point conversion."""

MAX_ROWS_PER_ROW = 16
"""Rows counted per input row, on average, at most (non-integer weights)."""

MAX_ROWS = 2**31 - 1
"""Integer weights summing above this are scaled as non-integer weights are."""


def multiplicities(sample_weight, n_rows: int) -> np.ndarray:
    """Whole-row multiplicities of ``sample_weight`` (see the module docstring for the rule).

    Parameters
    ----------
    sample_weight : array-like of shape (n_rows,)
        Finite, non-negative weights, not all zero.
    n_rows : int
        Rows of the data they weigh.

    Returns
    -------
    ndarray of int64, shape (n_rows,)
    """
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
    total = float(w.sum())
    if total <= 0:
        raise InputError("sample_weight sums to zero: no row left to learn from")
    if np.all(w == np.floor(w)) and total <= MAX_ROWS:
        return w.astype(np.int64)
    budget = max(MAX_ROWS_PER_ROW * n_rows, 2**16)
    k = int(np.floor(min(np.log2(MAX_MULTIPLICITY / w.max()), np.log2(budget / total))))
    return np.rint(np.ldexp(w, k)).astype(np.int64)


def class_weights(class_weight, y: np.ndarray) -> np.ndarray | None:
    """Per-row weights from ``class_weight`` (a dict ``{label: weight}``, "balanced", or None).

    "balanced" weighs class ``c`` by ``n_rows / (n_classes * count(c))``, as
    scikit-learn's :func:`~sklearn.utils.class_weight.compute_sample_weight`.
    """
    if class_weight is None:
        return None
    from sklearn.utils.class_weight import compute_sample_weight

    if not (class_weight == "balanced" or isinstance(class_weight, dict)):
        raise ParameterError(f"class_weight must be a dict, 'balanced' or None, got {class_weight!r}")
    try:
        return compute_sample_weight(class_weight, y)
    except ValueError as exc:
        raise ParameterError(f"class_weight: {exc}") from None


def row_weights(sample_weight, class_weight, y) -> np.ndarray | None:
    """``sample_weight`` times the weights of ``class_weight`` per row (None: unweighted)."""
    if class_weight is None:
        return None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if y is None:
        raise InputError("class_weight is for in-memory X, y (a dataset's rows are not weighted yet)")
    weights = class_weights(class_weight, np.asarray(y))
    if sample_weight is not None:
        weights = weights * as_weights(sample_weight, len(weights))
    return weights


def as_weights(sample_weight, n_rows: int) -> np.ndarray:
    """``sample_weight`` as a float array of ``n_rows`` (a scalar is every row's weight)."""
    w = np.asarray(sample_weight, dtype=np.float64)
    return np.full(n_rows, float(w)) if w.ndim == 0 else w
