"""The level-pass kernel: route rows through the forest, count them at the frontier.

For every row, in every tree of the forest, walk from the root to the node the
row reaches now (a :class:`~dasktree.forest.RoutingPlan` entry). If that node
has a histogram slot in this pass, add the row once to it, whatever the number
of trees that share the node (004, Section 3.2.2): for each repetition ``r``,
in part ``r * n_folds + part[r, row]``, for every attribute ``a`` at row
``offsets[a] + codes[a, row]``, in column ``y[row]``.

The result has shape (n_slots, n_parts, total_bins, n_classes) and holds exact
integer counts, so partial histograms add in any order to the same total.

Two implementations: :func:`level_histogram` (a numba loop over rows, one
pass, no temporaries) and :func:`level_histogram_numpy` (vectorised numpy,
``bincount`` per pass; the reference the tests compare against). Both take the
same arguments and return identical arrays.
"""

from __future__ import annotations

import numpy as np

from .forest import RoutingPlan

__all__ = ["level_histogram", "level_histogram_numpy", "route", "route_numpy"]

try:  # numba is a declared dependency; the numpy twin keeps the package importable without it
    import numba
except ImportError:  # pragma: no cover
    numba = None


# ----------------------------------------------------------------- numpy twin
def route_numpy(codes: np.ndarray, plan: RoutingPlan) -> np.ndarray:
    """Entry reached by each row in each tree: (n_trees, n_rows)."""
    n = codes.shape[1]
    position = np.repeat(plan.root_entry[:, None], n, axis=1)
    if n == 0:
        return position
    table = plan.table if plan.table.size else np.zeros(1, dtype=np.int32)
    rows = np.arange(n)[None, :]
    for _ in range(plan.depth):
        attribute = plan.entry_attribute[position]
        internal = attribute >= 0
        if not internal.any():
            break
        code = codes[np.maximum(attribute, 0), rows]
        index = np.where(internal, plan.entry_offset[position] + code, 0)
        position = np.where(internal, table[index], position)
    return position


def _frontier_pairs(codes: np.ndarray, plan: RoutingPlan) -> tuple[np.ndarray, np.ndarray]:
    """(rows, slots): each row once per distinct frontier node it reaches."""
    slots = plan.slot_of_entry[route_numpy(codes, plan)]  # (T, n)
    if slots.shape[0] > 1:
        slots = np.sort(slots, axis=0)
        duplicate = np.zeros_like(slots, dtype=bool)
        duplicate[1:] = slots[1:] == slots[:-1]
        slots = np.where(duplicate, -1, slots)
    tree_index, rows = np.nonzero(slots >= 0)
    return rows, slots[tree_index, rows]


def level_histogram_numpy(codes, y, part, plan: RoutingPlan, *, n_folds: int, offsets: np.ndarray,
                          total_bins: int, n_classes: int) -> np.ndarray:
    """Reference implementation of :func:`level_histogram` with numpy ``bincount``."""
    n_repeats = part.shape[0]
    n_parts = n_repeats * n_folds
    shape = (plan.n_slots, n_parts, total_bins, n_classes)
    rows, slots = _frontier_pairs(codes, plan)
    if rows.size == 0:
        return np.zeros(shape, dtype=np.int64)
    out = np.zeros(int(np.prod(shape)), dtype=np.int64)
    cls = y[rows].astype(np.int64)
    for r in range(n_repeats):
        p = r * n_folds + part[r, rows].astype(np.int64)
        base = (slots.astype(np.int64) * n_parts + p) * total_bins
        index = (base[None, :] + offsets[:, None] + codes[:, rows]) * n_classes + cls[None, :]
        out += np.bincount(index.ravel(), minlength=out.size)
    return out.reshape(shape)


# ----------------------------------------------------------------- numba kernel
if numba is not None:

    @numba.njit(cache=True, nogil=True)
    def _walk(codes, i, e, entry_attribute, entry_offset, table):
        a = entry_attribute[e]
        while a >= 0:
            e = table[entry_offset[e] + codes[a, i]]
            a = entry_attribute[e]
        return e

    @numba.njit(cache=True, nogil=True)
    def _route_numba(codes, root_entry, entry_attribute, entry_offset, table, out):
        for i in range(codes.shape[1]):
            for t in range(root_entry.size):
                out[t, i] = _walk(codes, i, root_entry[t], entry_attribute, entry_offset, table)

    @numba.njit(cache=True, nogil=True)
    def _histogram_numba(codes, y, part, root_entry, entry_attribute, entry_offset, slot_of_entry,
                         table, n_folds, offsets, out):
        n_attributes = codes.shape[0]
        n_trees = root_entry.size
        seen = np.empty(n_trees, dtype=np.int64)
        for i in range(codes.shape[1]):
            m = 0
            c = y[i]
            for t in range(n_trees):
                e = _walk(codes, i, root_entry[t], entry_attribute, entry_offset, table)
                s = slot_of_entry[e]
                if s < 0:
                    continue
                duplicate = False
                for j in range(m):
                    if seen[j] == s:
                        duplicate = True
                        break
                if duplicate:
                    continue
                seen[m] = s
                m += 1
                for r in range(part.shape[0]):
                    p = r * n_folds + part[r, i]
                    for a in range(n_attributes):
                        out[s, p, offsets[a] + codes[a, i], c] += 1


def _table(plan: RoutingPlan) -> np.ndarray:
    return plan.table if plan.table.size else np.zeros(1, dtype=np.int32)


def route(codes: np.ndarray, plan: RoutingPlan) -> np.ndarray:
    """Entry reached by each row in each tree: (n_trees, n_rows)."""
    if numba is None:
        return route_numpy(codes, plan)
    out = np.empty((plan.root_entry.size, codes.shape[1]), dtype=np.int64)
    _route_numba(np.ascontiguousarray(codes), plan.root_entry, plan.entry_attribute,
                 plan.entry_offset, _table(plan), out)
    return out


def level_histogram(codes, y, part, plan: RoutingPlan, *, n_folds: int, offsets: np.ndarray,
                    total_bins: int, n_classes: int) -> np.ndarray:
    """Class-count histogram of the frontier: (n_slots, n_parts, total_bins, n_classes) int64.

    Parameters
    ----------
    codes : (n_attributes, n_rows) uint8/uint16, 0 = missing
    y : (n_rows,) class codes
    part : (n_repeats, n_rows) fold part of each row in each repetition
    plan : where each tree sends each code, and the slot of each frontier node
    """
    if numba is None:
        return level_histogram_numpy(codes, y, part, plan, n_folds=n_folds, offsets=offsets,
                                     total_bins=total_bins, n_classes=n_classes)
    out = np.zeros((plan.n_slots, part.shape[0] * n_folds, total_bins, n_classes), dtype=np.int64)
    if codes.shape[1] and plan.n_slots:
        _histogram_numba(np.ascontiguousarray(codes), y, part, plan.root_entry, plan.entry_attribute,
                         plan.entry_offset, plan.slot_of_entry, _table(plan), n_folds,
                         np.asarray(offsets, dtype=np.int64), out)
    return out
