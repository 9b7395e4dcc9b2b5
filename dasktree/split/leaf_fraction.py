"""``min_weight_fraction_leaf``: the fewest rows a child may hold, as a fraction of its tree's rows.

scikit-learn allows a split when each child's weight is at least ``min_weight_fraction_leaf`` times the
tree's total training weight, that product in float64. Here weights are whole-row multiplicities
(:mod:`dasktree.io.weights`) and a tree's total is its root's training rows, counted exactly, so the
rule is a smallest child in rows: the least whole ``n >= fraction * rows`` (the same float64 product,
so ``0.01 * 900`` allows a child of 9 rows, as scikit-learn does), the same whatever the partitioning.
A split search takes it as it takes ``min_samples_leaf``: the larger of the two applies.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fraction_rows"]


def fraction_rows(fraction: float, rows) -> np.ndarray:
    """The fewest rows (int64, ``rows``' shape) a child may hold in a tree of ``rows`` training rows
    under ``min_weight_fraction_leaf=fraction``: the least whole ``n`` with ``n >= fraction * rows``,
    the product in float64."""
    rows = np.asarray(rows, dtype=np.int64)
    return np.ceil(float(fraction) * rows.astype(np.float64)).astype(np.int64)
