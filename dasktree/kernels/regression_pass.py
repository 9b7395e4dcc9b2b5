"""The level pass of regression trees: walk rows down every tree, sum their targets at the frontier.

A :class:`RegressionPlan` holds the trees of a forest (the main tree and the
fold trees) as one array of nodes; a node being counted has a *slot*. Each row
walks each tree from its root to the node it reaches (tests are code -> child
tables, as in :class:`~dasktree.kernels.plans.RoutingPlan`). At a slot whose tree
trains on the row, for every attribute, the row adds its multiplicity ``w`` and
``w * q`` (its target in fixed point, :mod:`dasktree.binning.target`) to the two
channels of its bin, and the pieces of ``w * q**2``
(:func:`~dasktree.binning.target.square_pieces`) to the slot's node cells. A row
the tree holds out (its fold part) adds only to the node cells: ``w``, ``w * q``
and the pieces of ``w * q**2``, held out. The first ``n_bin_slots`` slots count
bins (the open frontier, to be searched); the others count held-out rows only
(leaves whose training sums are known, whose held-out ones the CV error needs).

In a bagged forest's pass (``plan.bagged``, :mod:`dasktree.io.bagging`) ``part[t, row]`` is the
row's multiplicity in member ``t``'s bag: tree ``t`` counts the row that many times (``w`` times
the multiplicity, an integer: the sums stay exact int64), no row is held out, and a row out of
the bag (multiplicity 0) adds nothing to tree ``t``.

:data:`CELLS` are a slot's node cells. The sums are int64 integers, so partial
histograms add in any order to the same total. :func:`regression_histogram` is
the numba kernel (GIL released); :func:`regression_histogram_numpy` the twin
the tests compare against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .histogram import order_by_node
from .jit import jit, numba

__all__ = ["RegressionPlan", "regression_histogram", "regression_histogram_numpy", "node_order", "CHANNELS", "NODE_CELLS",
           "TRAIN_SQUARES", "HELD_N", "HELD_S", "HELD_SQUARES"]

CHANNELS = 2  # per bin: training n, training sum of q
NODE_CELLS = 8  # per slot: training q**2 pieces (3); held-out n, sum of q, q**2 pieces (3)
TRAIN_SQUARES, HELD_N, HELD_S, HELD_SQUARES = slice(0, 3), 3, 4, slice(5, 8)
HALF = 15


@dataclass(frozen=True)
class RegressionPlan:
    """The trees as flat arrays and the slots a pass counts.

    Tree ``t`` starts at node ``root[t]``; node ``e`` tests attribute ``attribute[e]`` (-1: none) and
    sends code ``c`` to node ``table[offset[e] + c]``. ``slot[e] >= 0`` counts the rows reaching ``e``.
    Tree ``t`` holds out fold part ``holdout[t]`` (-1: the main tree trains on every row).
    """

    root: np.ndarray  # (n_trees,) int64
    attribute: np.ndarray  # (n_nodes,) int32
    offset: np.ndarray  # (n_nodes,) int64
    table: np.ndarray  # int32 child node of each code of each test
    slot: np.ndarray  # (n_nodes,) int32
    holdout: np.ndarray  # (n_trees,) int64
    n_slots: int
    total_bins: int
    offsets: np.ndarray  # (n_attributes,) int64 first bin of each attribute
    n_bin_slots: int = -1  # slots 0 .. n_bin_slots - 1 count bins (-1: every slot)
    bagged: bool = False  # a bagged forest's pass: ``part[t, row]`` is the row's multiplicity in member t

    # what the runners ask of any plan (:mod:`dasktree.engine.part_tasks`)
    fills: tuple = ()
    derived: tuple = ()
    keeps_starts: ClassVar[bool] = False  # every pass walks each tree from its root: no start nodes kept

    @property
    def binned(self) -> int:
        """Slots that count bins (the first ones)."""
        return self.n_slots if self.n_bin_slots < 0 else self.n_bin_slots

    @property
    def cells(self) -> int:
        return self.total_bins * CHANNELS

    @property
    def size(self) -> int:
        return self.binned * self.cells + self.n_slots * NODE_CELLS

    @property
    def hist_bytes(self) -> int:
        return self.size * 8

    def zeros(self, dtype=None) -> np.ndarray:
        return np.zeros(self.size, dtype=np.int64)

    def counting_all(self) -> "RegressionPlan":
        return self

    def for_workers(self, fills) -> "RegressionPlan":
        return self  # nothing is derived, nothing only the search reads

    def kept_slots(self) -> None:
        return None  # no pass derives from this one's sums

    def bins(self, hist: np.ndarray) -> np.ndarray:
        """The bins of the binned slots: (binned, total_bins, CHANNELS), a view."""
        return hist[:self.binned * self.cells].reshape(self.binned, self.total_bins, CHANNELS)

    def node_cells(self, hist: np.ndarray) -> np.ndarray:
        """Every slot's node cells: (n_slots, NODE_CELLS), a view."""
        return hist[self.binned * self.cells:].reshape(self.n_slots, NODE_CELLS)


def _walk_numpy(codes: np.ndarray, plan: RegressionPlan, t: int) -> np.ndarray:
    n = codes.shape[1]
    node = np.full(n, plan.root[t], dtype=np.int64)
    rows = np.arange(n)
    while True:
        a = plan.attribute[node]
        inner = a >= 0
        if not inner.any():
            return node
        code = codes[np.maximum(a, 0), rows].astype(np.int64)
        node = np.where(inner, plan.table[np.where(inner, plan.offset[node] + code, 0)], node)


def regression_histogram_numpy(codes, q, part, plan: RegressionPlan, weight=None) -> np.ndarray:
    """Reference implementation of :func:`regression_histogram` (numpy, tree by tree)."""
    out = plan.zeros()
    bins = plan.bins(out)
    node = plan.node_cells(out)
    n_rows = codes.shape[1]
    w = np.ones(n_rows, dtype=np.int64) if weight is None else weight.astype(np.int64)
    q = q.astype(np.int64)
    hi, lo = q >> HALF, q & ((1 << HALF) - 1)
    pieces = np.stack([hi * hi, hi * lo, lo * lo])
    base_w = w
    for t in range(plan.root.size):
        w = base_w * part[t].astype(np.int64) if plan.bagged else base_w
        slot = plan.slot[_walk_numpy(codes, plan, t)]
        held = (part[0].astype(np.int64) == plan.holdout[t]) if plan.holdout[t] >= 0 and not plan.bagged \
            else np.zeros(n_rows, bool)
        for i in np.flatnonzero((slot >= 0) & (w != 0)):
            s = int(slot[i])
            if held[i]:
                node[s, HELD_N] += w[i]
                node[s, HELD_S] += w[i] * q[i]
                node[s, HELD_SQUARES] += w[i] * pieces[:, i]
            elif s < plan.binned:
                for a in range(codes.shape[0]):
                    b = plan.offsets[a] + int(codes[a, i])
                    bins[s, b, 0] += w[i]
                    bins[s, b, 1] += w[i] * q[i]
                node[s, TRAIN_SQUARES] += w[i] * pieces[:, i]
    return out


if numba is not None:

    @jit
    def _main_nodes(codes, root, attribute, offset, table):
        """The node each row reaches in the first tree (the main tree)."""
        out = np.empty(codes.shape[1], dtype=np.int64)
        for i in range(codes.shape[1]):
            e = root[0]
            a = attribute[e]
            while a >= 0:
                e = table[offset[e] + codes[a, i]]
                a = attribute[e]
            out[i] = e
        return out

    @jit
    def _pass(codes, q, part, weight, root, attribute, offset, table, slot, holdout, offsets, cells, node_base, out,
              order, binned, bagged):
        n_attributes = codes.shape[0]
        weighted = weight.size > 0
        mask = (1 << HALF) - 1
        ordered = order.size > 0
        for k_row in range(codes.shape[1]):
            i = order[k_row] if ordered else k_row
            w0 = np.int64(weight[i]) if weighted else np.int64(1)
            qi = np.int64(q[i])
            hi, lo = qi >> HALF, qi & mask
            for t in range(root.size):
                w = w0 * np.int64(part[t, i]) if bagged else w0
                if w == 0:
                    continue
                wq = w * qi
                e = root[t]
                a = attribute[e]
                while a >= 0:
                    e = table[offset[e] + codes[a, i]]
                    a = attribute[e]
                s = slot[e]
                if s < 0:
                    continue
                k = node_base + s * 8
                if not bagged and holdout[t] >= 0 and part[0, i] == holdout[t]:
                    out[k + 3] += w
                    out[k + 4] += wq
                    out[k + 5] += w * hi * hi
                    out[k + 6] += w * hi * lo
                    out[k + 7] += w * lo * lo
                elif s < binned:
                    base = s * cells
                    for b in range(n_attributes):
                        j = base + (offsets[b] + codes[b, i]) * 2
                        out[j] += w
                        out[j + 1] += wq
                    out[k] += w * hi * hi
                    out[k + 1] += w * hi * lo
                    out[k + 2] += w * lo * lo


_NO_WEIGHT = np.zeros(0, dtype=np.int32)
_NO_ORDER = np.zeros(0, dtype=np.int64)
ORDER_BYTES = 4 << 20
"""Sums larger than this (a deep level's) are counted with the rows in order of their node in the main
tree: a row's nodes in the fold trees are mostly those of its neighbours there too, so consecutive
rows add to the same few slots (SPRINT's attribute lists partitioned by node) instead of missing the
cache on every add. The order changes no sum."""


def regression_histogram(codes, q, part, plan: RegressionPlan, *, weight=None, out=None,
                         order: np.ndarray | None = None) -> np.ndarray:
    """The sums of the plan's slots over these rows: flat int64 of ``plan.size`` cells, added to
    ``out`` when given.

    codes : (n_attributes, n_rows) uint8/uint16, 0 = missing
    q : (n_rows,) int32 targets in fixed point
    part : (n_repeats, n_rows) fold part of each row (the first repetition's is read); in a bagged
        pass (n_trees, n_rows) each row's multiplicity in each member's bag
    weight : (n_rows,) int32 multiplicities, or None
    order : the rows in the order to count them (:func:`node_order`), or None: as they are
    """
    if out is None:
        out = plan.zeros()
    if numba is None:
        out += regression_histogram_numpy(codes, q, part, plan, weight)
        return out
    if codes.shape[1] and plan.n_slots:
        _pass(np.ascontiguousarray(codes), q, part, _NO_WEIGHT if weight is None else weight, plan.root,
              plan.attribute, plan.offset, plan.table, plan.slot, plan.holdout, np.asarray(plan.offsets, np.int64),
              plan.cells, plan.binned * plan.cells, out, _NO_ORDER if order is None else order, plan.binned,
              plan.bagged)
    return out


def node_order(codes: np.ndarray, plan: RegressionPlan) -> np.ndarray | None:
    """The rows in order of the node they reach in the main tree (a stable counting sort), when the
    plan's sums are large enough for the order to matter (:data:`ORDER_BYTES`) and the rows are not
    in that order already; else None."""
    if plan.hist_bytes <= ORDER_BYTES or codes.shape[1] < 2 or numba is None:
        return None
    nodes = _main_nodes(np.ascontiguousarray(codes), plan.root, plan.attribute, plan.offset, plan.table)
    if bool(np.all(nodes[1:] >= nodes[:-1])):
        return None
    return order_by_node(nodes, plan.attribute.size)
