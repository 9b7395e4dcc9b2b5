"""What every discretization method shares: input checks and entropy numerics.

The methods (:mod:`.methods`) take one attribute's histogram, ``counts`` of
shape ``(n_bins, n_classes)``; this module checks it and computes the bit
counts and cumulative class counts they compare.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ..errors import InputError

# Floating-point slack for comparisons that are exact in real arithmetic: two
# candidate costs that agree to this (relative) precision are a tie, broken to
# the left, and a strict inequality of the MDL criteria must hold by more than
# it. The scale is that of ``N log2 N``, the size of the bit counts compared.
RTOL = 1e-9
# Absolute slack for ties of the normalized distance, which lies in [0, 1].
DIST_TOL = 1e-12
# Kerber's replacement of a zero expected count (if R_i or C_j is 0).
KERBER_ZERO_EXPECTED = 0.1


def check_counts(counts) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise InputError(
            "counts must be a 2-D array of shape (n_bins, n_classes); "
            f"got an array of shape {arr.shape}"
        )
    if arr.shape[1] < 1:
        raise InputError(
            "counts must have at least 1 class column (n_classes >= 1); "
            f"got shape {arr.shape}"
        )
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise InputError(
            f"counts must hold integer or float class counts; got dtype {arr.dtype}"
        )
    given = arr
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError("counts must be finite; got NaN or infinite entries")
    if np.any(arr < 0):
        i, j = np.argwhere(arr < 0)[0]
        raise InputError(
            f"counts must be non-negative; got counts[{i}, {j}] = {given[i, j].item()!r}"
        )
    return arr


def check_values(values, n_bins: int, *, required: bool) -> np.ndarray | None:
    if values is None:
        if required:
            raise InputError(
                f"values must be an array of shape ({n_bins},) with the bins' "
                "representative values; got None"
            )
        return None
    arr = np.asarray(values)
    if arr.shape != (n_bins,):
        raise InputError(
            f"values must have shape ({n_bins},), one per bin of counts; "
            f"got shape {arr.shape}"
        )
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise InputError(f"values must be numeric; got dtype {arr.dtype}")
    given = arr
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError("values must be finite; got NaN or infinite entries")
    if arr.size > 1 and np.any(np.diff(arr) < 0):
        i = int(np.flatnonzero(np.diff(arr) < 0)[0])
        raise InputError(
            "values must be in non-decreasing order; got "
            f"values[{i}] = {given[i].item()!r} > values[{i + 1}] = {given[i + 1].item()!r}"
        )
    return arr


def check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise InputError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def no_cuts() -> np.ndarray:
    return np.zeros(0, dtype=np.intp)


def tie_slack(n):
    """Absolute slack for bit counts of a set of ``n`` examples."""
    n = np.asarray(n, dtype=np.float64)
    return RTOL * (1.0 + n * np.log2(n + 1.0))


def xlog2x(x) -> np.ndarray:
    """``x log2 x`` elementwise, 0 at 0 (``x >= 0``)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape)
    np.log2(x, out=out, where=x > 0)
    out *= x
    return out


def bits(counts: np.ndarray) -> np.ndarray:
    """``|S| Ent(S)`` in bits for each row of class counts (last axis).

    ``|S| Ent(S) = F(|S|) - sum_c F(n_c)`` with ``F(x) = x log2 x``: the
    same value as ``|S| * criteria.entropy(S)`` with fewer passes over the
    candidates.
    """
    return xlog2x(counts.sum(axis=-1)) - xlog2x(counts).sum(axis=-1)


def class_entropy(counts: np.ndarray) -> np.ndarray:
    """``Ent(S)`` in bits for each row of class counts; 0 for an empty row."""
    n = counts.sum(axis=-1)
    return bits(counts) / np.where(n > 0, n, 1.0)


def log2_3k_minus_2(k: np.ndarray) -> np.ndarray:
    """``log2(3**k - 2)``, exact for k <= 30 and overflow-free beyond."""
    k = np.asarray(k, dtype=np.float64)
    small = np.minimum(k, 30.0)
    return np.where(k <= 30, np.log2(3.0**small - 2.0), k * np.log2(3.0))


def cumulative(block_counts: np.ndarray) -> np.ndarray:
    """Prefix sums with a leading zero row: rows ``[a, b)`` sum to ``cum[b] - cum[a]``."""
    cum = np.zeros((block_counts.shape[0] + 1, block_counts.shape[1]))
    np.cumsum(block_counts, axis=0, out=cum[1:])
    return cum


def n_classes_present(counts: np.ndarray) -> np.ndarray:
    return np.count_nonzero(counts > 0, axis=-1)
