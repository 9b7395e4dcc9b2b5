"""What the compiled split kernels share: numpy's pairwise sum, jitable helpers, the ``log2`` table.

- :func:`pairwise_sum`: numpy's summation order as a scalar loop, so compiled
  code sums floats bit for bit as numpy does.
- :func:`jitable`: lets a compiled loop call a plain-Python helper by name
  (numba's ``register_jitable``), once per helper.
- The per-process table of ``log2`` of the integers that entropy costs read
  (:func:`log2_table_for`): grown in fixed chunks, so an entry's value never
  depends on what ran before in the process.

Every name here is imported by more than one kernel module of :mod:`dasktree.split`.
"""

from __future__ import annotations

import threading

import numpy as np

from ..kernels.jit import register_jitable

__all__ = ["pairwise_sum", "pairwise_leaf", "jitable", "LOG2_TABLE_MAX", "NO_TABLE", "log2_table_for",
           "units_log2_table", "log2_cache"]

LOG2_TABLE_MAX = 1 << 22
"""Largest example count for which entropy uses the cached ``log2`` table (8 bytes each)."""


def pairwise_sum(x, lo, n):
    """numpy's pairwise summation of ``x[lo:lo + n]``, without the initial value.

    The algorithm of numpy's ``pairwise_sum`` (``loops_utils.h.src``): fewer than
    8 terms are added in order starting from ``-0.0``; up to 128 terms go to
    8 accumulators combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``
    before the remainder is added in order; longer runs split in two at a
    multiple of 8 below the middle, recursively (an explicit stack here). A
    reduction of ``n`` values along a contiguous axis is ``0.0 +`` this sum;
    ``np.add.reduceat`` of a segment is its first value plus the sum of the
    others. The tests check both against numpy.
    """
    if n <= 128:
        return pairwise_leaf(x, lo, n)
    # Iterative post-order walk of numpy's recursion: frame d covers x[los[d] : los[d] + ns[d]].
    los = np.empty(64, np.int64)
    ns = np.empty(64, np.int64)
    halves = np.empty(64, np.int64)
    stage = np.zeros(64, np.int64)  # 0: expand, 1: left half pending, 2: right half pending
    left = np.empty(64)
    depth = 0
    los[0] = lo
    ns[0] = n
    value = 0.0
    while True:
        if stage[depth] == 0 and ns[depth] > 128:
            half = ns[depth] // 2
            half -= half % 8
            halves[depth] = half
            stage[depth] = 1
            los[depth + 1] = los[depth]
            ns[depth + 1] = half
            stage[depth + 1] = 0
            depth += 1
            continue
        if stage[depth] == 0:
            value = pairwise_leaf(x, los[depth], ns[depth])
        while True:  # hand ``value`` up to the parents that wait for it
            if depth == 0:
                return value
            depth -= 1
            if stage[depth] == 1:  # left half done: now the right half
                left[depth] = value
                stage[depth] = 2
                los[depth + 1] = los[depth] + halves[depth]
                ns[depth + 1] = ns[depth] - halves[depth]
                stage[depth + 1] = 0
                depth += 1
                break
            value = left[depth] + value


def pairwise_leaf(x, lo, n):
    """:func:`pairwise_sum` of at most 128 terms (numpy's unrolled base case)."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += x[lo + i]
        return res
    r0 = x[lo]
    r1 = x[lo + 1]
    r2 = x[lo + 2]
    r3 = x[lo + 3]
    r4 = x[lo + 4]
    r5 = x[lo + 5]
    r6 = x[lo + 6]
    r7 = x[lo + 7]
    end = n - n % 8
    for i in range(8, end, 8):
        r0 += x[lo + i]
        r1 += x[lo + i + 1]
        r2 += x[lo + i + 2]
        r3 += x[lo + i + 3]
        r4 += x[lo + i + 4]
        r5 += x[lo + i + 5]
        r6 += x[lo + i + 6]
        r7 += x[lo + i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(end, n):
        res += x[lo + i]
    return res


_JITABLE: set = set()
_JITABLE_LOCK = threading.Lock()


def jitable(*functions) -> None:
    """Let compiled loops call ``functions`` by name (numba's ``register_jitable``), once each.

    The functions stay plain Python for Python callers; a compiled caller
    compiles them into itself. numba's cache is keyed on the caller's file:
    a caller in another file than its helpers keeps stale code after the
    helpers change until its own file changes (or its cache is cleared).
    """
    with _JITABLE_LOCK:
        for f in functions:
            if f not in _JITABLE:
                register_jitable(f)
                _JITABLE.add(f)


_LOG2_CHUNK = 1 << 16
_LOG2_LOCK = threading.Lock()
_LOG2_CACHE = np.zeros(0)


NO_TABLE = np.zeros(0)  # writable, like the table: one numba signature


def units_log2_table(units: np.ndarray, crit: int) -> np.ndarray:
    """log2 of ``0 .. >= n`` (entry 0 is 0) for integer counts and entropy, else empty.

    ``n`` is the total of ``units``; see :func:`log2_table_for`.
    """
    if crit != 0 or units.shape[0] == 0:
        return NO_TABLE
    return log2_table_for(float(units.sum()), bool(np.all(units == np.floor(units))), crit)


def log2_table_for(total: float, integral: bool, crit: int) -> np.ndarray:
    """The ``log2`` table for units of sum ``total``, all integers when ``integral``, else empty.

    The table is cached per process and grown on demand, one fixed chunk of
    ``_LOG2_CHUNK`` integers at a time, each chunk by one ``np.log2`` call on
    the same array: an entry's value never depends on which calls grew the
    table, so results do not depend on what ran before in the process. The
    grown table is allocated once and filled chunk by chunk (at
    ``LOG2_TABLE_MAX`` it is 32 MB; the chunks and their concatenation held
    twice that at once).
    """
    global _LOG2_CACHE
    if crit != 0 or not integral or total > LOG2_TABLE_MAX:
        return NO_TABLE
    table = _LOG2_CACHE
    if table.shape[0] > total:
        return table
    with _LOG2_LOCK:
        table = _LOG2_CACHE
        n_chunks = int(total) // _LOG2_CHUNK + 1
        have = table.shape[0] // _LOG2_CHUNK
        if have < n_chunks:
            grown = np.empty(n_chunks * _LOG2_CHUNK)  # writable: one numba signature
            grown[: table.shape[0]] = table
            for chunk in range(have, n_chunks):
                first = chunk * _LOG2_CHUNK
                grown[first : first + _LOG2_CHUNK] = (
                    np.log2(np.arange(first, first + _LOG2_CHUNK, dtype=np.float64))
                    if first
                    else np.concatenate(
                        ([0.0], np.log2(np.arange(1, _LOG2_CHUNK, dtype=np.float64)))
                    )
                )
            table = _LOG2_CACHE = grown
    return table


def log2_cache() -> np.ndarray:
    """The ``log2`` table as large as it has grown in this process (possibly empty)."""
    return _LOG2_CACHE
