"""Numeric bin codes: float64 values to the codes of sorted bin upper edges.

This module owns one kernel, :func:`numeric_codes`, and its numpy twin
:func:`numeric_codes_numpy`. Given the strictly increasing upper edges
``upper`` (length ``n_bins - 1``), the code of a value ``x`` is the bin ``b``
(1-based) with ``upper[b - 2] < x <= upper[b - 1]``, that is
``np.searchsorted(upper, x, side="left") + 1``, and 0 when ``x`` is NaN. The
kernel returns exactly that, including for infinities, -0.0 (equal to 0.0) and
values equal to an edge.

Method of the kernel. A value is clamped to ``w`` in ``[lo, hi] = [upper[0],
upper[-1]]`` (a value above ``hi`` then gets one more code). A bucket map cuts
``[lo, hi]`` into ``NB`` buckets (a few per edge); ``start[k]`` is the number of
edges whose bucket is below ``k``, and the code is ``start[k] + 1`` plus the
number of edges of bucket ``k`` that are ``< w``. That number comes from a
branch-free binary search of fixed depth over the next ``2**steps - 1`` edges
(infinities past the last edge), ``steps`` being set by the fullest bucket, so
every value does the same work and no branch depends on the data; with one
edge per bucket it is a single comparison with ``first[k] = upper[start[k]]``.

Edges and values get their bucket from the same function (:func:`_bucket`),
which is non-decreasing in ``w``, so every edge in a lower bucket is ``< w`` and
every edge in a higher one is ``> w``: the table only narrows the search, it
never decides it. Two maps are tried and the one with the shorter search kept:

* linear: ``floor((w / 2 - lo / 2) * NB / (hi / 2 - lo / 2))``, halved so that
  the width of edges at +/-1.8e308 does not overflow; one bucket when an edge
  is infinite or the scale is not finite (a subnormal width);
* order: the difference of the order-preserving int64 images of ``w`` and
  ``lo``, shifted right (log-like: suits skewed edges, such as the quantiles
  of a lognormal column). ``w + 0.0`` first, so -0.0 and 0.0 share an image.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..kernels.jit import jit, numba

__all__ = ["numeric_codes", "numeric_codes_numpy", "integer_codes", "kernel_backend"]


LINEAR, ORDER = 0, 1  # bucket maps
BUCKETS_PER_EDGE = np.array([4, 16], dtype=np.int64)  # tried in order; more buckets only when they shorten the search
MAX_BUCKETS = 1 << 16  # tables of at most 768 KiB (int32 starts + float64 first edges)
MAX_STEPS = 16  # the kernel searches at most 65535 edges of a bucket; uint16 codes have 65534 edges
LOOKUP_SPAN = 1 << 16  # integer columns whose values span at most this many get their codes from a lookup table
EXACT_INTEGERS = 1 << 53  # float64 holds every integer up to this in magnitude


def kernel_backend() -> str:
    """``"numba"`` when the compiled kernel is in use, else ``"numpy"``."""
    return "numpy" if numba is None else "numba"


# ----------------------------------------------------------------- numpy twin
def numeric_codes_numpy(x: np.ndarray, upper: np.ndarray, dtype=np.uint16) -> np.ndarray:
    """Reference for :func:`numeric_codes`: ``searchsorted(upper, x, "left") + 1``, 0 for NaN."""
    x = np.asarray(x, dtype=np.float64)
    codes = np.searchsorted(np.asarray(upper, dtype=np.float64), x, side="left") + 1
    codes[np.isnan(x)] = 0
    return codes.astype(dtype, copy=False)


# ----------------------------------------------------------------- numba kernel
if numba is not None:

    @jit(inline="always")
    def _key(w):
        """Order-preserving int64 image of ``w`` (not NaN), as uint64: differences are exact mod 2**64."""
        bits = np.float64(w + 0.0).view(np.int64)  # + 0.0 turns -0.0 into 0.0
        return np.uint64(bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF))

    @jit(inline="always")
    def _bucket(w, kind, lo_half, scale, key_lo, shift, top):
        """Bucket of ``lo <= w <= hi``: non-decreasing in ``w``, in ``0 .. top``."""
        if kind == LINEAR:
            t = (w * 0.5 - lo_half) * scale  # >= 0 (or -0.0) as w >= lo; NaN only when scale is 0
            t = t if t < top else np.float64(top)  # NaN -> top: the conversion is always defined
            return np.uint64(t)
        b = (_key(w) - np.uint64(key_lo)) >> np.uint64(shift)  # exact: an unsigned difference, >= 0
        return b if b < top else top

    @jit
    def _starts(upper, kind, lo_half, scale, key_lo, shift, n_buckets):
        """``start[k]``: number of edges whose bucket is below ``k`` (length n_buckets + 1)."""
        start = np.zeros(n_buckets + 1, dtype=np.int32)
        top = np.uint64(n_buckets - 1)
        for i in range(upper.size):
            start[_bucket(upper[i], kind, lo_half, scale, key_lo, shift, top) + np.uint64(1)] += 1
        for k in range(n_buckets):
            start[k + 1] += start[k]
        return start

    @jit
    def _linear_map(upper, n_buckets):
        """``(lo_half, scale, n_buckets)``; one bucket (scale 0) for an infinite edge or scale."""
        lo = upper[0]
        hi = upper[upper.size - 1]
        width = hi * 0.5 - lo * 0.5  # halved: no overflow for edges at +/-1.8e308
        scale = n_buckets / width if width > 0 else math.inf
        if math.isfinite(lo) and math.isfinite(hi) and math.isfinite(scale) and scale > 0:
            return lo * 0.5, scale, n_buckets
        return 0.0, 0.0, 1

    @jit
    def _order_map(upper, n_buckets):
        """``(key_lo, shift, n_buckets)``: images of lo .. hi shifted into at most n_buckets."""
        key_lo = _key(upper[0])
        span = _key(upper[upper.size - 1]) - key_lo  # exact, in [0, 2**64)
        shift = np.uint64(0)
        while (span >> shift) >= np.uint64(n_buckets):
            shift += np.uint64(1)
        return key_lo, shift, np.int64(span >> shift) + 1

    @jit
    def _build(upper, per_edge, max_buckets):
        """The bucket map (of those tried) with the shortest search, its tables and padded edges."""
        n = upper.size
        best_kind, best_lo_half, best_scale, best_key_lo, best_shift = LINEAR, 0.0, 0.0, np.uint64(0), np.uint64(0)
        best_steps = 64
        best_start = np.zeros(2, dtype=np.int32)
        for p in per_edge:
            n_buckets = min(max_buckets, p * n)
            for kind in range(2):
                lo_half, scale, key_lo, shift = 0.0, 0.0, np.uint64(0), np.uint64(0)
                if kind == LINEAR:
                    lo_half, scale, m = _linear_map(upper, n_buckets)
                else:
                    key_lo, shift, m = _order_map(upper, n_buckets)
                start = _starts(upper, kind, lo_half, scale, key_lo, shift, m)
                width = 0
                for k in range(m):
                    width = max(width, start[k + 1] - start[k])
                steps = 0
                while width >> steps:
                    steps += 1
                if steps < best_steps:
                    best_kind, best_lo_half, best_scale, best_key_lo, best_shift = kind, lo_half, scale, key_lo, shift
                    best_steps, best_start = steps, start
                if best_steps == 1:  # one edge per bucket at most: nothing shorter
                    break
            if best_steps == 1:
                break
        padded = np.empty(n + (1 << best_steps))
        for i in range(padded.size):
            padded[i] = upper[i] if i < n else np.inf
        first = np.empty(best_start.size - 1)
        for k in range(first.size):
            first[k] = padded[best_start[k]]
        return best_kind, best_lo_half, best_scale, best_key_lo, best_shift, best_steps, best_start, first, padded

    @jit
    def _codes_numba(x, padded, n, start, first, kind, lo_half, scale, key_lo, shift, steps, out):
        """Codes of ``x`` for the edges ``padded[:n]``, followed by ``2**steps`` infinities."""
        lo = padded[0]
        hi = padded[n - 1]
        top = np.uint64(start.size - 2)
        if steps == 1:  # at most one edge per bucket
            for j in range(x.size):
                v = x[j]
                w = v if v > lo else lo  # NaN -> lo
                w = w if w < hi else hi
                k = _bucket(w, kind, lo_half, scale, key_lo, shift, top)
                c = np.int64(start[k]) + (first[k] < w) + 1 + (v > hi)
                out[j] = c if v == v else 0
            return
        for j in range(x.size):
            v = x[j]
            w = v if v > lo else lo
            w = w if w < hi else hi
            i = np.int64(start[_bucket(w, kind, lo_half, scale, key_lo, shift, top)])
            # edges below w among padded[i : i + 2**steps - 1]; written out, not looped, so
            # the selects stay selects (a loop-carried select becomes a mispredicted branch)
            if steps >= 16:
                i += 32768 * (padded[i + 32767] < w)
            if steps >= 15:
                i += 16384 * (padded[i + 16383] < w)
            if steps >= 14:
                i += 8192 * (padded[i + 8191] < w)
            if steps >= 13:
                i += 4096 * (padded[i + 4095] < w)
            if steps >= 12:
                i += 2048 * (padded[i + 2047] < w)
            if steps >= 11:
                i += 1024 * (padded[i + 1023] < w)
            if steps >= 10:
                i += 512 * (padded[i + 511] < w)
            if steps >= 9:
                i += 256 * (padded[i + 255] < w)
            if steps >= 8:
                i += 128 * (padded[i + 127] < w)
            if steps >= 7:
                i += 64 * (padded[i + 63] < w)
            if steps >= 6:
                i += 32 * (padded[i + 31] < w)
            if steps >= 5:
                i += 16 * (padded[i + 15] < w)
            if steps >= 4:
                i += 8 * (padded[i + 7] < w)
            if steps >= 3:
                i += 4 * (padded[i + 3] < w)
            i += 2 * (padded[i + 1] < w)
            i += padded[i] < w
            c = i + 1 + (v > hi)
            out[j] = c if v == v else 0


    @jit
    def _lookup_numba(values, lo, lookup, out):
        for j in range(values.size):
            out[j] = lookup[np.int64(values[j]) - lo]


class _Table(NamedTuple):
    kind: int  # LINEAR or ORDER
    lo_half: float  # linear map
    scale: float  # linear map; 0 = a single bucket
    key_lo: int  # order map: image of lo, as uint64
    shift: int  # order map
    steps: int  # depth of the search in a bucket: its edges number at most 2**steps - 1
    start: np.ndarray  # (n_buckets + 1,) int32
    first: np.ndarray  # (n_buckets,) float64: upper[start[k]], inf past the last edge
    padded: np.ndarray  # (n_edges + 2**steps,) float64: upper, then infinities


def _table(upper: np.ndarray) -> _Table:
    """The bucket table of ``upper`` (length >= 1, float64, contiguous); needs numba."""
    return _Table(*_build(upper, BUCKETS_PER_EDGE, MAX_BUCKETS))


def numeric_codes(x: np.ndarray, upper: np.ndarray, dtype=np.uint16) -> np.ndarray:
    """Bin codes of ``x``: ``searchsorted(upper, x, side="left") + 1``, 0 where ``x`` is NaN.

    Parameters
    ----------
    x : (n_rows,) float64 values (NaN = missing)
    upper : (n_bins - 1,) strictly increasing float64 bin upper edges, none NaN; bin
        ``b`` (1-based) holds ``upper[b - 2] < x <= upper[b - 1]``
    dtype : code dtype (uint8 or uint16); codes wrap as ``astype`` would

    Returns
    -------
    (n_rows,) codes of ``dtype``, exactly those of :func:`numeric_codes_numpy`.
    """
    if numba is None:
        return numeric_codes_numpy(x, upper, dtype)
    x = np.ascontiguousarray(x, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    if upper.size == 0:
        return np.where(np.isnan(x), 0, 1).astype(dtype)
    out = np.empty(x.shape[0], dtype=dtype)
    if x.size == 0:
        return out
    t = _table(upper)
    if t.steps > MAX_STEPS:  # more than 65535 edges in one bucket: more than uint16 codes hold
        return numeric_codes_numpy(x, upper, dtype)
    x = x.view()
    x.flags.writeable = False  # one compiled signature whether the values came from Arrow (read-only) or not
    _codes_numba(x, t.padded, upper.size, t.start, t.first, t.kind, t.lo_half, t.scale,
                 np.uint64(t.key_lo), np.uint64(t.shift), t.steps, out)
    return out


def integer_codes(values: np.ndarray, upper: np.ndarray, dtype=np.uint16) -> np.ndarray | None:
    """Bin codes of integer ``values`` (none missing) from a lookup table over their span: equal to
    ``numeric_codes(values.astype(float64), upper, dtype)``, in one load per value instead of a
    search. None when the span is wider than :data:`LOOKUP_SPAN` or beyond float64's exact integers
    (use :func:`numeric_codes`)."""
    if numba is None or values.dtype.kind not in "iu" or values.size == 0:
        return None
    lo, hi = int(values.min()), int(values.max())
    if hi - lo >= LOOKUP_SPAN or max(abs(lo), abs(hi)) > EXACT_INTEGERS:
        return None
    lookup = numeric_codes(np.arange(lo, hi + 1, dtype=np.int64).astype(np.float64), upper, dtype)
    out = np.empty(values.shape[0], dtype=dtype)
    _lookup_numba(np.ascontiguousarray(values), np.int64(lo), lookup, out)
    return out
