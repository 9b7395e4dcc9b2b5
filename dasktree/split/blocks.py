"""Bins to blocks: the boundary points of a numeric attribute at a node.

Elomaa & Rousu (001, Definition 2): with the examples ordered by the value of a
numeric attribute, a *bin* holds the examples of one value (or pre-bin). A
*block* is a maximal run of adjacent class-uniform bins of the same class
(a uniform block), or a single bin that holds more than one class (a mixed
block). Mixed bins are never merged with another bin. Empty bins hold no
examples of the node and are skipped. Block borders are exactly the boundary
points (001, Definition 1): the only cut points a well-behaved evaluation
function needs.

Cut convention used throughout ``dasktree.split``: cut ``j`` separates bin
``j`` from bin ``j + 1`` (examples with bin index ``<= j`` go left).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Blocks", "bins_to_blocks"]


@dataclass(frozen=True)
class Blocks:
    """Blocks of one attribute at one node.

    Attributes
    ----------
    counts : ndarray of shape (n_blocks, n_classes)
        Class counts per block, in value order.
    last_bin : ndarray of shape (n_blocks,)
        Index (into the original bins) of the last non-empty bin of each
        block. The boundary points are the cuts ``last_bin[:-1]``.
    uniform : ndarray of bool, shape (n_blocks,)
        True for a uniform block, False for a mixed one.
    """

    counts: np.ndarray
    last_bin: np.ndarray
    uniform: np.ndarray

    @property
    def n_blocks(self) -> int:
        return int(self.counts.shape[0])

    @property
    def boundary_points(self) -> np.ndarray:
        """Cut indices (into bins) of the block borders: ``n_blocks - 1`` of them."""
        return self.last_bin[:-1]


def bins_to_blocks(counts: np.ndarray) -> Blocks:
    """Merge a node's bins into blocks (001, Definition 2).

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Class counts per bin, bins in increasing value order.

    Returns
    -------
    Blocks
        The blocks of the non-empty bins. No non-empty bin gives zero blocks.
    """
    counts = np.asarray(counts)
    if counts.ndim != 2:
        raise ValueError(f"counts must be 2-D (bins x classes), got shape {counts.shape}")
    sizes = counts.sum(axis=1)
    bins = np.flatnonzero(sizes > 0)
    n_classes = counts.shape[1]
    if bins.size == 0:
        return Blocks(
            np.zeros((0, n_classes), dtype=counts.dtype),
            np.zeros(0, dtype=np.intp),
            np.zeros(0, dtype=bool),
        )
    present = counts[bins] > 0
    uniform = present.sum(axis=1) == 1
    label = np.where(uniform, present.argmax(axis=1), -1)
    # A new block starts at every bin except a uniform bin whose class equals
    # the previous (uniform) bin's class.
    starts = np.ones(bins.size, dtype=bool)
    starts[1:] = ~(uniform[1:] & uniform[:-1] & (label[1:] == label[:-1]))
    first = np.flatnonzero(starts)
    block_counts = np.add.reduceat(counts[bins], first, axis=0)
    last = np.append(first[1:], bins.size) - 1
    return Blocks(block_counts, bins[last], uniform[first])
