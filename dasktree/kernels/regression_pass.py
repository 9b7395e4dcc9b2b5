"""The level pass of regression trees: walk rows down every tree, sum their targets at the frontier.

A :class:`RegressionPlan` holds the trees of a forest (the main tree and the
fold trees) as one array of nodes; a frontier node being counted has a *slot*.
Each row walks each tree from its root to the node it reaches (tests are code
-> child tables, as in :class:`~dasktree.kernels.plans.RoutingPlan`). At a slot,
for every attribute, the row adds its multiplicity ``w`` and ``w * q`` (its
target in fixed point, :mod:`dasktree.binning.target`) to the channels of its
bin: channels 0 and 1 when the tree trains on it, 2 and 3 when the tree holds
out its fold part. The slot's node-level cells add the pieces of ``w * q**2``
(:func:`~dasktree.binning.target.square_pieces`): training, then held out.

The sums are int64 integers, so partial histograms add in any order to the
same total. :func:`regression_histogram` is the numba kernel (GIL released);
:func:`regression_histogram_numpy` the twin the tests compare against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RegressionPlan", "regression_histogram", "regression_histogram_numpy", "CHANNELS", "NODE_CELLS"]

CHANNELS = 4  # per bin: training n, training sum of q, held-out n, held-out sum of q
NODE_CELLS = 6  # per slot: the pieces of the sum of q**2, training then held out
HALF = 15

try:
    import numba
except ImportError:  # pragma: no cover
    numba = None


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

    # what the runners ask of any plan (:mod:`dasktree.engine.tasks`)
    fills: tuple = ()
    derived: tuple = ()
    regression: bool = True

    @property
    def cells(self) -> int:
        return self.total_bins * CHANNELS

    @property
    def size(self) -> int:
        return self.n_slots * (self.cells + NODE_CELLS)

    @property
    def hist_bytes(self) -> int:
        return self.size * 8

    def zeros(self, dtype=None) -> np.ndarray:
        return np.zeros(self.size, dtype=np.int64)

    def counting_all(self) -> "RegressionPlan":
        return self

    def bins(self, hist: np.ndarray) -> np.ndarray:
        """The bins of every slot: (n_slots, total_bins, CHANNELS), a view."""
        return hist[:self.n_slots * self.cells].reshape(self.n_slots, self.total_bins, CHANNELS)

    def node_cells(self, hist: np.ndarray) -> np.ndarray:
        """Each slot's pieces of the sums of squares: (n_slots, 2, 3), a view."""
        return hist[self.n_slots * self.cells:].reshape(self.n_slots, 2, 3)


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
    squares = plan.node_cells(out)
    n_rows = codes.shape[1]
    w = np.ones(n_rows, dtype=np.int64) if weight is None else weight.astype(np.int64)
    q = q.astype(np.int64)
    pieces = np.stack([(q >> HALF) ** 2, (q >> HALF) * (q & ((1 << HALF) - 1)), (q & ((1 << HALF) - 1)) ** 2])
    for t in range(plan.root.size):
        slot = plan.slot[_walk_numpy(codes, plan, t)]
        held = (part[0].astype(np.int64) == plan.holdout[t]) if plan.holdout[t] >= 0 else np.zeros(n_rows, bool)
        for i in np.flatnonzero(slot >= 0):
            s, h = int(slot[i]), 2 * int(held[i])
            for a in range(codes.shape[0]):
                b = plan.offsets[a] + int(codes[a, i])
                bins[s, b, h] += w[i]
                bins[s, b, h + 1] += w[i] * q[i]
            squares[s, int(held[i])] += w[i] * pieces[:, i]
    return out


if numba is not None:

    @numba.njit(cache=True, nogil=True)
    def _pass(codes, q, part, weight, root, attribute, offset, table, slot, holdout, offsets, cells, node_base, out):
        n_attributes = codes.shape[0]
        weighted = weight.size > 0
        mask = (1 << HALF) - 1
        for i in range(codes.shape[1]):
            w = np.int64(weight[i]) if weighted else np.int64(1)
            qi = np.int64(q[i])
            wq = w * qi
            hi, lo = qi >> HALF, qi & mask
            for t in range(root.size):
                e = root[t]
                a = attribute[e]
                while a >= 0:
                    e = table[offset[e] + codes[a, i]]
                    a = attribute[e]
                s = slot[e]
                if s < 0:
                    continue
                held = 1 if (holdout[t] >= 0 and part[0, i] == holdout[t]) else 0
                base = s * cells + 2 * held
                for b in range(n_attributes):
                    k = base + (offsets[b] + codes[b, i]) * 4
                    out[k] += w
                    out[k + 1] += wq
                k = node_base + s * 6 + 3 * held
                out[k] += w * hi * hi
                out[k + 1] += w * hi * lo
                out[k + 2] += w * lo * lo


_NO_WEIGHT = np.zeros(0, dtype=np.int32)


def regression_histogram(codes, q, part, plan: RegressionPlan, *, weight=None, out=None) -> np.ndarray:
    """The sums of the plan's slots over these rows: flat int64 of ``plan.size`` cells, added to
    ``out`` when given.

    codes : (n_attributes, n_rows) uint8/uint16, 0 = missing
    q : (n_rows,) int32 targets in fixed point
    part : (n_repeats, n_rows) fold part of each row (the first repetition's is read)
    weight : (n_rows,) int32 multiplicities, or None
    """
    if out is None:
        out = plan.zeros()
    if numba is None:
        out += regression_histogram_numpy(codes, q, part, plan, weight)
        return out
    if codes.shape[1] and plan.n_slots:
        _pass(np.ascontiguousarray(codes), q, part, _NO_WEIGHT if weight is None else weight, plan.root,
              plan.attribute, plan.offset, plan.table, plan.slot, plan.holdout, np.asarray(plan.offsets, np.int64),
              plan.cells, plan.n_slots * plan.cells, out)
    return out
