"""Discretization methods as pure numpy kernels on one attribute's histogram.

The project computes, in one pass over the data, a histogram per numeric
attribute: bins in increasing value order, each with its class counts. Every
method here runs on that small histogram alone and shares one signature::

    method(counts, values, **params) -> cuts

``counts``
    array of shape ``(n_bins, n_classes)``, non-negative class counts per bin,
    bins in increasing value order. All-zero rows (empty bins) are allowed.
``values``
    array of shape ``(n_bins,)``, the bins' representative values in
    non-decreasing order (for exact bins, the distinct values). Only the
    unsupervised methods need it; the supervised ones accept ``None``.
``cuts``
    sorted ``intp`` array of cut indices; cut ``j`` separates bin ``j`` from
    bin ``j + 1`` (examples with bin index ``<= j`` go left), the convention of
    :mod:`dasktree.split.blocks`.

Empty bins hold no example, so a cut may be put anywhere between two non-empty
bins without changing the partition of the examples. Every method returns the
canonical position: the cut sits right after the last non-empty bin on its
left. Hence two non-empty bins are never separated by more than one cut, and
no cut lies before the first or after the last non-empty bin.

The supervised top-down methods (:func:`mdlp`, :func:`distance`) only consider
boundary points, the borders of the blocks of
:func:`dasktree.split.blocks.bins_to_blocks`: the cut minimising the class
information entropy lies on one (Fayyad & Irani 1992), so for :func:`mdlp` this
loses nothing. For :func:`distance` it is a restriction, see its notes.
:func:`chimerge` starts from the non-empty bins, as Kerber does.

Sources: 003 (Fayyad & Irani's MDLP), 002 (Cerquides & López de Mántaras'
distance-based discretization; also surveys equal width / frequency and
ChiMerge), Kerber (1992) "ChiMerge: Discretization of numeric attributes",
AAAI-92, pp. 123-128.
"""

from __future__ import annotations

import numpy as np

from .chimerge import chimerge
from .counts import check_counts, check_int, check_values, no_cuts
from .distance import distance
from .mdlp import mdlp

__all__ = [
    "METHODS",
    "chimerge",
    "distance",
    "equal_frequency",
    "equal_width",
    "mdlp",
]


def _cuts_between_groups(nonempty: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Cut after each non-empty bin whose group differs from the next one's."""
    change = np.flatnonzero(group[1:] != group[:-1])
    return nonempty[change].astype(np.intp)


def equal_width(counts, values, *, n_intervals: int = 10) -> np.ndarray:
    r"""Equal-width intervals on the value range of the non-empty bins.

    With ``lo`` and ``hi`` the smallest and largest value of a non-empty bin,
    a bin of value ``v`` falls in interval

    .. math::

        i(v) = \min\left(\left\lfloor n \frac{v - lo}{hi - lo} \right\rfloor,
                         n - 1\right), \qquad n = \text{n\_intervals},

    i.e. ``[lo + i w, lo + (i + 1) w)`` with ``w = (hi - lo) / n``, the last
    interval closed. A cut is put between consecutive non-empty bins in
    different intervals; intervals without a bin give no cut, so there are at
    most ``n - 1`` cuts, and none if ``hi == lo``.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin (only emptiness matters).
    values : array_like of shape (n_bins,)
        The bins' representative values, non-decreasing.
    n_intervals : int, default 10
        Number of equal-width intervals (>= 1).

    Returns
    -------
    ndarray of intp
        Sorted cut indices; cut ``j`` separates bin ``j`` from bin ``j + 1``.
    """
    counts = check_counts(counts)
    values = check_values(values, counts.shape[0], required=True)
    n = check_int("n_intervals", n_intervals, 1)
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    if nonempty.size < 2 or n == 1:
        return no_cuts()
    v = values[nonempty]
    lo, hi = v[0], v[-1]
    if hi <= lo:
        return no_cuts()
    group = np.minimum(np.floor((v - lo) * n / (hi - lo)), n - 1)
    return _cuts_between_groups(nonempty, group)


def equal_frequency(counts, values, *, n_intervals: int = 10) -> np.ndarray:
    r"""Equal-frequency intervals on the cumulative counts of the bins.

    With ``N`` examples, ``cum(j)`` the number of examples in bins ``<= j`` and
    ``n = n_intervals``, the ``i``-th cut (``i = 1 .. n - 1``) goes right after
    the first non-empty bin at which the cumulative count reaches the quantile:

    .. math::

        j_i = \min \{ j : n \cdot cum(j) \ge i N \}.

    A bin is never split, so heavy bins make intervals unequal: cuts that land
    on the same bin are kept once, and a cut after the last non-empty bin
    (which would separate nothing) is dropped.

    Parameters
    ----------
    counts : array_like of shape (n_bins, n_classes)
        Non-negative class counts per bin (only bin sizes matter).
    values : array_like of shape (n_bins,)
        The bins' representative values, non-decreasing (checked, otherwise
        unused).
    n_intervals : int, default 10
        Number of intervals aimed at (>= 1).

    Returns
    -------
    ndarray of intp
        Sorted, distinct cut indices; cut ``j`` separates bin ``j`` from bin
        ``j + 1``.
    """
    counts = check_counts(counts)
    check_values(values, counts.shape[0], required=True)
    n = check_int("n_intervals", n_intervals, 1)
    sizes = counts.sum(axis=1)
    nonempty = np.flatnonzero(sizes > 0)
    if nonempty.size < 2 or n == 1:
        return no_cuts()
    cum = np.cumsum(sizes[nonempty])
    total = cum[-1]
    targets = np.arange(1, n) * total
    pos = np.searchsorted(cum * n, targets, side="left")
    pos = np.unique(pos[pos < nonempty.size - 1])
    return nonempty[pos].astype(np.intp)


METHODS = {
    "mdlp": mdlp,
    "distance": distance,
    "chimerge": chimerge,
    "equal_width": equal_width,
    "equal_frequency": equal_frequency,
}
"""Registry of discretization methods by name; all share the signature above."""
