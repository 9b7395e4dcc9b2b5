"""Impurity functions on class-count arrays.

Every function takes counts of shape ``(..., n_classes)`` (integers or floats,
the last axis is the class) and returns one value per leading index. They know
nothing of trees or Dask: the split searches and the discretizers call them on
slices of a histogram.

``impurity`` is the per-example measure ``I(S)`` (gini, or entropy in bits);
``weighted_impurity`` is the cumulative ``|S| * I(S)`` that Elomaa & Rousu
minimise (000, Section 2): a split's cost is the sum of it over its intervals,
and the information gain of a split of ``S`` is ``(|S| I(S) - cost) / |S|``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "IMPURITY",
    "entropy",
    "gini",
    "impurity",
    "split_information",
    "weighted_impurity",
]


def _totals(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = np.asarray(counts, dtype=np.float64)
    return counts, counts.sum(axis=-1)


def gini(counts: np.ndarray) -> np.ndarray:
    """Gini index ``1 - sum_c p_c**2``; 0 for an empty set."""
    counts, n = _totals(counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / n[..., None]
        g = 1.0 - np.sum(p * p, axis=-1)
    return np.where(n > 0, g, 0.0)


def entropy(counts: np.ndarray) -> np.ndarray:
    """Class entropy in bits ``-sum_c p_c log2 p_c``; 0 for an empty set."""
    counts, n = _totals(counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / n[..., None]
        terms = np.where(counts > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
        h = -np.sum(terms, axis=-1)
    return np.where(n > 0, h, 0.0)


IMPURITY = {"gini": gini, "entropy": entropy}
"""Registry of impurity functions by name. ``gain_ratio`` uses entropy."""


def impurity(counts: np.ndarray, name: str) -> np.ndarray:
    """Impurity ``I(S)`` of each count vector by registry name."""
    try:
        fn = IMPURITY[name]
    except KeyError:
        raise ValueError(
            f"unknown impurity {name!r}; expected one of {sorted(IMPURITY)}"
        ) from None
    return fn(counts)


def weighted_impurity(counts: np.ndarray, name: str) -> np.ndarray:
    """Cumulative cost ``|S| * I(S)`` of each count vector."""
    counts = np.asarray(counts, dtype=np.float64)
    return counts.sum(axis=-1) * impurity(counts, name)


def split_information(sizes: np.ndarray) -> np.ndarray:
    """Entropy in bits of the partition sizes (C4.5's split information).

    ``sizes`` has shape ``(..., arity)``: the number of examples in each child.
    """
    return entropy(sizes)
