"""Block counts of every numeric attribute of a batch of training histograms, compiled.

:func:`batch_block_stats` gives, for each attribute and each histogram of a
:class:`~dasktree.split.types.TrainBatch`, what
:func:`dasktree.split.postpone.block_stats` gives from the histogram's rows:
the number of blocks, and (when asked) the weighted impurity of all bins and of
the missing values. It reads the stored slices in place (``plus - minus``),
only the bins non-empty in the node's ``plus`` histogram, as the binary scan
does: counting costs about one pass over the cells, which the superlinear
multi-way search easily repays and the linear binary scan barely does. Without
numba, or on float histograms, the numpy twin runs on the materialised columns.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels.jit import jit, numba
from .types import TrainBatch
from .postpone import block_stats


__all__ = ["batch_block_stats"]


def batch_block_stats(batch: TrainBatch, offsets: np.ndarray, widths: np.ndarray, attributes: list[int],
                      impurity: str, costs: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks (A, M) int64, and with ``costs`` the bins' and the missing values' weighted impurity (A, M)."""
    m_total = len(batch)
    blocks = np.zeros((len(attributes), m_total), dtype=np.int64)
    sigma = np.zeros((len(attributes), m_total))
    missing = np.zeros((len(attributes), m_total))
    integer = np.issubdtype(batch.plus.dtype, np.integer) and np.issubdtype(batch.minus.dtype, np.integer)
    if numba is None or not integer or not attributes or not m_total:
        for i, a in enumerate(attributes):
            blocks[i], sigma[i], missing[i] = block_stats(batch.columns(int(offsets[a]), int(widths[a])), impurity)
        return blocks, sigma, missing
    minus = batch.minus if batch.minus.shape[0] else np.zeros((1,) + batch.plus.shape[1:], batch.plus.dtype)
    _blocks(batch.plus, np.asarray(batch.plus_index, dtype=np.int64), minus.astype(batch.plus.dtype, copy=False),
            np.asarray(batch.minus_index, dtype=np.int64), np.asarray(offsets, dtype=np.int64)[attributes],
            np.asarray(widths, dtype=np.int64)[attributes], bool(costs), impurity == "entropy", blocks, sigma,
            missing)
    return blocks, sigma, missing


def _cost(counts: np.ndarray, entropy: bool) -> float:  # pragma: no cover - compiled
    """``|S| I(S)`` of one count vector."""
    n = 0.0
    for c in range(counts.size):
        n += counts[c]
    if n <= 0:
        return 0.0
    if entropy:
        s = 0.0
        for c in range(counts.size):
            if counts[c] > 0:
                s += counts[c] * math.log2(counts[c])
        return n * math.log2(n) - s
    squares = 0.0
    for c in range(counts.size):
        squares += counts[c] * counts[c]
    return n - squares / n


def _blocks(plus, plus_index, minus, minus_index, offsets, widths, costs, entropy, blocks, sigma,
            missing):  # pragma: no cover - compiled
    n_classes = plus.shape[2]
    counts = np.zeros(n_classes, dtype=np.float64)
    # The non-empty bins of the current ``plus`` histogram, per attribute (as the binary scan keeps
    # them): a training histogram, plus minus a held-out part, is empty wherever its plus is.
    node_bins = np.zeros((offsets.size, max(1, widths.max())), dtype=np.int64)
    node_n_bins = np.zeros(offsets.size, dtype=np.int64)
    node = -1
    for m in range(plus_index.size):
        p = plus_index[m]
        q = minus_index[m]
        if p != node:
            node = p
            for i in range(offsets.size):
                found = 0
                for j in range(1, widths[i]):
                    s = 0
                    for c in range(n_classes):
                        s += plus[p, offsets[i] + j, c]
                    node_bins[i, found] = j
                    found += s != 0
                node_n_bins[i] = found
        for i in range(offsets.size):
            o = offsets[i]
            if costs:  # the missing values
                for c in range(n_classes):
                    counts[c] = plus[p, o, c] - minus[q, o, c] if q >= 0 else plus[p, o, c]
                missing[i, m] = _cost(counts, entropy)
            count = 0
            previous = -2  # the label of the last non-empty bin: its class when uniform, -1 mixed, -2 none
            cost = 0.0
            for k in range(node_n_bins[i]):
                j = o + node_bins[i, k]
                present = 0
                label = -1
                for c in range(n_classes):
                    v = plus[p, j, c] - minus[q, j, c] if q >= 0 else plus[p, j, c]
                    counts[c] = v
                    if v > 0:
                        present += 1
                        label = c
                if present == 0:
                    continue
                if present > 1:
                    label = -1
                if label < 0 or label != previous:
                    count += 1
                previous = label
                if costs and present > 1:
                    cost += _cost(counts, entropy)
            blocks[i, m] = count
            sigma[i, m] = cost


if numba is not None:
    _cost = jit(_cost)
    _blocks = jit(_blocks)
