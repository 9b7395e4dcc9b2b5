"""The level-pass kernel: walk rows through the forest, count them at the frontier.

Every row walks the forest's distinct nodes from the root (a
:class:`~dasktree.kernels.plans.PassPlan`): at a node, each branch (one per distinct
test among the trees there) sends it to one child, so the row reaches each
node once however many trees share it (004, Section 3.2.2). At a node being
counted, for each repetition ``r``, the row goes to the slice of its part
``r * n_folds + part[r, row]`` (or to none), and there to the cells
``(offsets[a] + codes[a, row]) * n_classes + y[row]`` of every attribute ``a``,
adding 1, or the row's multiplicity when rows are weighted (``weight``,
:mod:`dasktree.io.weights`). In a bagged forest's pass (``plan.bagged``) ``part[m, row]`` is
the row's multiplicity in member ``m`` (:mod:`dasktree.io.bagging`), counted (times its weight)
in member ``m``'s slice.

The result is a flat array of ``plan.size`` exact counts (use ``plan.view``
for a slot), so partial histograms add in any order to the same total. A
part's counts are int32 (half the memory traffic of the random increments and
half the bytes to send), or uint16 at the nodes of fewer than 65,536 rows in
a plan's mixed layout (:meth:`~dasktree.kernels.plans.PassPlan.narrowed`); sums of
parts are int64 (:func:`add_counts`, or the search tasks').

*Start nodes.* A row need not walk from the root every pass. ``starts``
(shape ``(K, n_rows)``, kept with the encoded part between passes) holds nodes
of the row's paths such that every node it can still reach descends from
exactly one of them: node ``n`` as ``n + 1``, in the first entries of the
row's column, 0 after them. A fresh array is zeros with the root (1) in its
first line, and a pass reads and writes only as many of a row's entries as it
has starts (one to a few in a stable forest, where ``K`` is the number of
trees): lines of the array no row has reached are never written, and their
memory is never faulted in. The array is uint16 while the forest's node ids
fit (:meth:`~dasktree.binning.encode.Encoded.start_nodes`). A pass moves each start
down through nodes with exactly one branch (decided, all their trees agree),
walks from each, and then keeps as the row's starts the open frontier nodes
it reached (``plan.node_open``), when there are at most ``K``; otherwise the old
(descended) starts stay. A row of a single tree walks one step per pass; a
row in a forest that has bifurcated steps once from each of its few frontier
nodes instead of walking every fold tree's path from the root. A node's
branches never change once decided, so any starts a row ever had in the same
forest give the same counts, only in more time: the counts never depend on them.

*Row order.* The increments are random writes into the histogram; once it
outgrows the cache they miss on every row. A part's rows may be put in the
order of their start nodes (:func:`order_by_node`, a stable counting sort):
then consecutive rows count into the same few nodes, as SPRINT's attribute
lists are partitioned by node. Counts are sums, so the order never changes them.

Two implementations of the pass: :func:`level_histogram` (a numba loop over
rows, one pass, no temporaries) and :func:`level_histogram_numpy` (recursive
numpy over nodes with ``bincount``; the reference the tests compare against).
:func:`route` walks one tree's :class:`~dasktree.kernels.plans.RoutingPlan` for
prediction.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .jit import jit, numba
from .plans import PassPlan, RoutingPlan
from .subtraction import units_and_wide

__all__ = ["level_histogram", "level_histogram_numpy", "route", "route_numpy", "add_counts", "order_by_node"]


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


def _count_rows(out, rows, slot, codes, y, part, plan: PassPlan, n_folds: int, offsets, weight=None) -> None:
    n_classes = plan.n_classes
    for r in range(part.shape[0]):
        if plan.bagged:  # the row's multiplicity in member r, in member r's slice
            multiplicity = part[r, rows].astype(np.int64)
            slices = np.where(multiplicity > 0, np.int64(plan.part_slice[slot, r]), -1)
        else:
            multiplicity = None
            slices = plan.part_slice[slot, r * n_folds + part[r, rows].astype(np.int64)].astype(np.int64)
        keep = slices >= 0
        if not keep.any():
            continue
        kept = rows[keep]
        base = plan.slot_base[slot] + slices[keep] * plan.cells
        index = base[None, :] + (offsets[:, None] + codes[:, kept]) * n_classes + y[kept][None, :]
        times = None if weight is None else weight[kept].astype(np.int64)
        if multiplicity is not None:
            times = multiplicity[keep] if times is None else times * multiplicity[keep]
        if times is None:
            out += np.bincount(index.ravel(), minlength=out.size)
        else:  # float64 sums of whole numbers below 2**53: exact
            w = np.broadcast_to(times[None, :], index.shape).ravel().astype(np.float64)
            out += np.bincount(index.ravel(), weights=w, minlength=out.size).astype(np.int64)


def _descend_numpy(codes, plan: PassPlan, starts: np.ndarray) -> None:
    """Move each row's start nodes down through single-branch nodes, in place."""
    for start in starts:
        _descend_one(codes, plan, start)


def _descend_one(codes, plan: PassPlan, start: np.ndarray) -> None:
    n_branches = np.diff(plan.branch_start)
    rows = np.flatnonzero(start > 0)
    while rows.size:
        node = start[rows] - 1
        single = n_branches[node] == 1
        rows, node = rows[single], node[single]
        if not rows.size:
            return
        b = plan.branch_start[node]
        start[rows] = plan.child(b, codes[plan.branch_attribute[b], rows].astype(np.int64)) + 1


def level_histogram_numpy(codes, y, part, plan: PassPlan, *, n_folds: int, offsets: np.ndarray,
                          total_bins: int, n_classes: int, starts: np.ndarray | None = None,
                          weight: np.ndarray | None = None) -> np.ndarray:
    """Reference implementation of :func:`level_histogram`: recursive numpy over the nodes.

    It walks from the given ``starts`` (descended) but does not move them to the frontier.
    """
    out = np.zeros(plan.size, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    y = y.astype(np.int64)

    def visit(node: int, rows: np.ndarray) -> None:
        if rows.size == 0:
            return
        slot = int(plan.node_slot[node])
        if slot >= 0:
            _count_rows(out, rows, slot, codes, y, part, plan, n_folds, offsets, weight)
        for b in range(plan.branch_start[node], plan.branch_start[node + 1]):
            child = plan.child(b, codes[plan.branch_attribute[b], rows].astype(np.int64))
            for c in np.unique(child):
                visit(int(c), rows[child == c])

    if starts is None:
        visit(0, np.arange(codes.shape[1]))
    else:
        _descend_numpy(codes, plan, starts)
        for start in starts:
            for node in np.unique(start[start > 0]):
                visit(int(node) - 1, np.flatnonzero(start == node))
    return out if weight is not None or plan.bagged else out.astype(np.int32)


# ----------------------------------------------------------------- numba kernel
if numba is not None:

    @jit
    def _walk(codes, i, e, entry_attribute, entry_offset, table):
        a = entry_attribute[e]
        while a >= 0:
            e = table[entry_offset[e] + codes[a, i]]
            a = entry_attribute[e]
        return e

    @jit
    def _route_numba(codes, root_entry, entry_attribute, entry_offset, table, out):
        for i in range(codes.shape[1]):
            for t in range(root_entry.size):
                out[t, i] = _walk(codes, i, root_entry[t], entry_attribute, entry_offset, table)

    @jit
    def _child(codes, i, b, branch_attribute, branch_offset, table, branch_cut, branch_default, branch_child,
               children):
        """Row ``i``'s child through branch ``b`` (:class:`~dasktree.kernels.plans.PassPlan`): a compare for a
        threshold branch, a table load for another."""
        code = codes[branch_attribute[b], i]
        cut = branch_cut[b]
        if cut >= 0:
            index = branch_default[b] if code == 0 else np.int64(code > cut)
        else:
            index = table[branch_offset[b] + code]
        return children[branch_child[b] + index]

    @jit
    def _descend_row(codes, i, node, branch_start, branch_attribute, branch_offset, table, branch_cut,
                     branch_default, branch_child, children):
        b = branch_start[node]
        while branch_start[node + 1] - b == 1:
            node = _child(codes, i, b, branch_attribute, branch_offset, table, branch_cut, branch_default,
                          branch_child, children)
            b = branch_start[node]
        return node

    @jit
    def _pass_numba(codes, y, part, node_slot, node_open, branch_start, branch_attribute, branch_offset, table,
                    branch_cut, branch_default, branch_child, children, slot_base, slot_wide, part_slice, n_folds,
                    offsets, n_classes, cells, narrow, wide, stack, starts, found, weight, bagged):
        n_attributes = codes.shape[0]
        n_repeats = part.shape[0]
        width = starts.shape[0]
        weighted = weight.size > 0
        for i in range(codes.shape[1]):
            c = y[i]
            add = np.int64(weight[i]) if weighted else np.int64(1)
            n_found = 0
            n_old = 0
            for k in range(width):
                node = starts[k, i] - 1
                if node < 0:
                    break
                n_old += 1
                node = _descend_row(codes, i, node, branch_start, branch_attribute, branch_offset, table,
                                    branch_cut, branch_default, branch_child, children)
                starts[k, i] = node + 1
                stack[0] = node
                top = 1
                while top > 0:
                    top -= 1
                    node = stack[top]
                    s = node_slot[node]
                    if s >= 0:
                        for r in range(n_repeats):
                            times = add
                            if bagged:  # part[r, i]: the row's multiplicity in member r
                                j = part_slice[s, r]
                                times = add * np.int64(part[r, i])
                                if times == 0:
                                    continue
                            else:
                                j = part_slice[s, r * n_folds + part[r, i]]
                            if j < 0:
                                continue
                            base = slot_base[s] + j * cells
                            if slot_wide[s]:
                                for a in range(n_attributes):
                                    wide[base + (offsets[a] + codes[a, i]) * n_classes + c] += times
                            else:
                                for a in range(n_attributes):
                                    narrow[base + (offsets[a] + codes[a, i]) * n_classes + c] += times
                    if node_open[node]:
                        if n_found < width:
                            found[n_found] = node
                        n_found += 1
                    for b in range(branch_start[node], branch_start[node + 1]):
                        stack[top] = _child(codes, i, b, branch_attribute, branch_offset, table, branch_cut,
                                            branch_default, branch_child, children)
                        top += 1
            if n_found <= width:  # the open frontier nodes reached become the starts; else keep the old
                for k in range(n_found):
                    starts[k, i] = found[k] + 1
                for k in range(n_found, n_old):  # entries from n_old on are 0 already
                    starts[k, i] = 0

    @jit
    def _counting_order(keys, n_keys):
        first = np.zeros(n_keys + 1, dtype=np.int64)
        for i in range(keys.size):
            first[keys[i] + 1] += 1
        for k in range(n_keys):
            first[k + 1] += first[k]
        order = np.empty(keys.size, dtype=np.int64)
        for i in range(keys.size):
            k = keys[i]
            order[first[k]] = i
            first[k] += 1
        return order


def order_by_node(start: np.ndarray, n_nodes: int) -> np.ndarray:
    """Stable order of rows by start node (a counting sort; keys ``0 .. n_nodes - 1``): rows of a
    node together."""
    if numba is None:
        return np.argsort(start, kind="stable")
    return _counting_order(start, n_nodes)


def _table(plan: RoutingPlan) -> np.ndarray:
    return plan.table if plan.table.size else np.zeros(1, dtype=plan.table.dtype)


def route(codes: np.ndarray, plan: RoutingPlan) -> np.ndarray:
    """Entry reached by each row in each tree: (n_trees, n_rows)."""
    if numba is None:
        return route_numpy(codes, plan)
    out = np.empty((plan.root_entry.size, codes.shape[1]), dtype=np.int64)
    _route_numba(np.ascontiguousarray(codes), plan.root_entry, plan.entry_attribute,
                 plan.entry_offset, _table(plan), out)
    return out


def level_histogram(codes, y, part, plan: PassPlan, *, n_folds: int, offsets: np.ndarray,
                    total_bins: int, n_classes: int, starts: np.ndarray | None = None,
                    out: np.ndarray | None = None, weight: np.ndarray | None = None) -> np.ndarray:
    """Class-count histogram of the nodes a pass counts: flat int32 of ``plan.size`` cells (uint16 units
    of a mixed plan)
    (a derived slot's cells are left as they are: its rows move to it uncounted).

    Parameters
    ----------
    codes : (n_attributes, n_rows) uint8/uint16, 0 = missing
    y : (n_rows,) class codes
    part : (n_repeats, n_rows) fold part of each row in each repetition
    plan : the forest's nodes and branches, and the slots and slices of the counted nodes
    starts : (K, n_rows) uint16 or int32 start nodes of each row in this forest (node + 1, first in
        a row's column; 0: none; each fits: node + 1 <= the dtype's max), updated in place (None: the root)
    out : counts to add to (``plan.size``: int32 or int64 cells, or a mixed plan's uint16 units), e.g.
        several parts' sum; None: a new array (:meth:`~dasktree.kernels.plans.PassPlan.zeros`)
    weight : (n_rows,) int32 multiplicity of each row, or None: each row counts once. The
        caller sizes ``out`` for the sum (int64 cells once it reaches 2**31).
    """
    if codes.shape[1] >= 2**31:
        raise ValueError("a part of 2**31 rows or more: split it (int32 counts per part)")
    if out is None:
        out = plan.zeros()
    if numba is None:
        uniform = dataclasses.replace(plan, slot_base=plan.uniform_base(), slot_wide=None)
        counts = level_histogram_numpy(codes, y, part, uniform, n_folds=n_folds, offsets=offsets,
                                       total_bins=total_bins, n_classes=n_classes, starts=starts, weight=weight)
        for slot in range(plan.n_slots):
            view = plan.view(out, slot)
            np.add(view, uniform.view(counts, slot), out=view, casting="unsafe")  # exact: a cell fits its slot
        return out
    if codes.shape[1] and plan.n_slots:
        stack = np.empty(plan.node_slot.size + 1, dtype=np.int64)
        if starts is None:
            starts = np.ones((1, codes.shape[1]), dtype=np.int32)  # the root
        found = np.empty(starts.shape[0], dtype=np.int32)
        if plan.mixed:  # uint16 units; a wide slot's cells through an int32 view, from half its base
            (narrow, wide), slot_wide = units_and_wide(out), plan.slot_wide.astype(np.uint8)
            slot_base = np.where(plan.slot_wide, plan.slot_base // 2, plan.slot_base)
        else:
            narrow, wide, slot_wide = _NO_UNITS, out, np.ones(plan.n_slots, dtype=np.uint8)
            slot_base = plan.slot_base
        _pass_numba(np.ascontiguousarray(codes), y, part, plan.node_slot, plan.node_open, plan.branch_start,
                    plan.branch_attribute, plan.branch_offset, _table(plan), plan.branch_cut, plan.branch_default,
                    plan.branch_child, plan.children, slot_base, slot_wide, plan.part_slice, n_folds,
                    np.asarray(offsets, dtype=np.int64), n_classes, plan.cells, narrow, wide, stack, starts, found,
                    _NO_WEIGHT if weight is None else weight, plan.bagged)
    return out


_NO_UNITS = np.zeros(1, dtype=np.uint16)  # the kernel's narrow counts when a plan has none
_NO_WEIGHT = np.zeros(0, dtype=np.int32)  # the kernel's weights when each row counts once


def add_counts(*hists: np.ndarray) -> np.ndarray:
    """Exact sum of histograms as int64 (parts' int32 counts, or sums of them)."""
    total = hists[0].astype(np.int64)  # always a copy: never adds into an input
    for h in hists[1:]:
        total += h
    return total
