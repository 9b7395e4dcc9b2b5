"""A node group's decisions as the columns of :class:`~dasktree.search_results.PackedResults`.

:func:`dasktree.node_search.search_group` decides every (node, tree) pair of a
group; this module writes the result: per pair its leaf reason or chosen test,
per chosen test its code table, threshold, gain and children counts (training
counts, and per part). A deep level of a cross-validation forest chooses
thousands of binary threshold tests, and the compiled scan gives them as
numbers (:class:`~dasktree.split.choices.Choices`): their tables, thresholds
and children counts are made here for all of them at once, with no
:class:`~dasktree.split.node_tests.Test` per node. Any other test (nominal,
multi-way, or from the numpy reference) comes as its
:class:`~dasktree.split.search.Candidate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .runs import bounds, firsts
from .search_results import PackedResults
from .split.binary_kernel import threshold_children
from .split.node_tests import Test, threshold_tables
from .split.choices import Choices
from .split.search import AttributeLayout

if TYPE_CHECKING:  # node_search imports this module
    from .node_search import SearchContext, SearchRequest, _Slots

__all__ = ["packed_decisions"]


def packed_decisions(slots: _Slots, requests: list[SearchRequest], all_counts: np.ndarray,
                     pair_request: np.ndarray, pair_tree: np.ndarray, reasons: list[str], batch_of_pair: np.ndarray,
                     batch_request: np.ndarray, choices: Choices, context: SearchContext) -> PackedResults:
    """The columns of a group's decisions.

    Pair ``k`` (request ``pair_request[k]``, tree ``pair_tree[k]``) ends at its
    node for ``reasons[k]``, or trains on histogram ``batch_of_pair[k]``, whose
    choice is in ``choices`` (request ``batch_request[b]``). The pairs keep their
    order; there is one chosen test per training histogram with a valid test, in
    their order.
    """
    layout = context.layout
    n_parts = context.n_folds * context.n_repeats
    chosen = np.flatnonzero(choices.attribute >= 0)  # training histograms with a test, in order
    choice_of = np.full(batch_request.size, -1, dtype=np.int64)
    choice_of[chosen] = np.arange(chosen.size)
    pair_choice = np.where(batch_of_pair >= 0, choice_of[np.maximum(batch_of_pair, 0)], -1)
    reasons = [reason if b < 0 or c >= 0 else "no_split"
               for reason, b, c in zip(reasons, batch_of_pair.tolist(), pair_choice.tolist())]
    candidates = [choices.others.get(b) for b in chosen.tolist()]  # None: a threshold test as numbers
    attribute, cut, default = choices.attribute[chosen], choices.cut[chosen].copy(), choices.default[chosen].copy()
    routing = cut.copy()  # Test.cut of each table: a nominal table may route as a threshold too
    for k, candidate in enumerate(candidates):
        if candidate is not None:
            test = candidate.test
            routing[k] = test.cut
            cut[k], default[k] = test.cut if test.kind == "numeric" and len(test.thresholds) == 1 else -1, test.default
    gain = choices.gain[chosen]
    tables, bin_start, thresholds = _tables(attribute, cut, default, candidates, layout)
    if any(c is not None for c in candidates):
        train_children = np.concatenate([choices.children[b] if c is None else c.child_counts
                                         for b, c in zip(chosen.tolist(), candidates)])
    else:
        train_children = choices.children[chosen].reshape(-1, choices.children.shape[-1])
    arity = np.asarray([2 if c is None else c.test.arity for c in candidates], dtype=np.int64)
    return PackedResults(
        nodes=np.asarray([r.node for r in requests], dtype=np.int64),
        counts=all_counts,
        pair_result=pair_request,
        pair_tree=pair_tree,
        pair_choice=pair_choice,
        reasons=tuple(reasons),
        attribute=attribute,
        kind=tuple("numeric" if c is None else c.test.kind for c in candidates),
        default=default,
        thresholds=thresholds,
        groups=tuple(() if c is None else c.test.groups for c in candidates),
        gain=gain,
        score=np.asarray([g if c is None else c.score for g, c in zip(gain.tolist(), candidates)], dtype=np.float64),
        bin_children=tables,
        bin_start=bin_start,
        cut=routing.astype(np.int64),
        train_children=train_children.astype(np.int64, copy=False),
        children=_children(slots, batch_request[chosen], attribute, cut, default, candidates, layout, n_parts),
        arity_start=bounds(arity),
    )


def _tables(attribute: np.ndarray, cut: np.ndarray, default: np.ndarray, candidates: list,
            layout: AttributeLayout) -> tuple[np.ndarray, np.ndarray, tuple]:
    """The chosen tests' code tables (concatenated int16), their starts, and their thresholds.

    A threshold test as numbers has the table :func:`~dasktree.split.node_tests.numeric_test`
    gives it (:func:`~dasktree.split.node_tests.threshold_tables`); its threshold is the upper
    edge of bin ``cut``."""
    numbers = np.asarray([c is None for c in candidates], dtype=bool)
    sizes = np.zeros(len(candidates), dtype=np.int64)
    upper_of = np.zeros(len(candidates))
    for a in np.unique(attribute[numbers]).tolist():
        at = numbers & (attribute == a)
        upper = layout.uppers[a]
        sizes[at] = upper.size + 2
        upper_of[at] = upper[cut[at] - 1]
    sizes[~numbers] = [c.test.bin_children.size for c in candidates if c is not None]
    starts = firsts(sizes)
    tables = threshold_tables(sizes, cut, default)  # the others' tables written over theirs below
    for k in np.flatnonzero(~numbers).tolist():
        tables[starts[k]:starts[k] + sizes[k]] = candidates[k].test.bin_children
    thresholds = tuple((x,) if c is None else c.test.thresholds for x, c in zip(upper_of.tolist(), candidates))
    return tables, bounds(sizes), thresholds


def _children(slots: _Slots, request: np.ndarray, attribute: np.ndarray, cut: np.ndarray, default: np.ndarray,
              candidates: list, layout: AttributeLayout, n_parts: int) -> np.ndarray:
    """Per-part class counts of each chosen test's children, test after test: (sum of arities, n_parts + 1, C).

    Threshold tests (``cut >= 0``) are counted in one compiled pass over the slices of their
    nodes, once per distinct (node, attribute, cut, default): trees choosing one test at a node
    share its counts."""
    n_classes = slots.slices.shape[2]
    per_test: list[np.ndarray | None] = [None] * request.size
    threshold = np.flatnonzero(cut >= 0)
    if threshold.size:
        width = int(layout.widths.max()) + 1
        key = ((request[threshold] * len(layout.kinds) + attribute[threshold]) * width + cut[threshold]) * width \
            + default[threshold]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        job = threshold[first]  # one chosen test per distinct key
        jobs, a = request[job], attribute[job]
        count = slots.count[jobs]
        starts = firsts(count)
        rows = threshold_children(
            slots.slices, np.repeat(slots.first[jobs] - starts, count) + np.arange(int(count.sum())),
            np.repeat(np.asarray(layout.offsets, dtype=np.int64)[a], count),
            np.repeat(np.asarray(layout.widths, dtype=np.int64)[a], count),
            np.repeat(cut[job], count), np.repeat(default[job], count))  # (slices, 2, C)
        counted = slots.expand(rows, starts, jobs, n_parts).transpose(0, 2, 1, 3)[inverse.ravel()]
        if threshold.size == request.size:  # every test a threshold: already in order
            return np.ascontiguousarray(counted).reshape(-1, n_parts + 1, n_classes)
        for j, k in enumerate(threshold.tolist()):
            per_test[k] = counted[j]
    for k, candidate in enumerate(candidates):
        if per_test[k] is None:
            per_slice = _child_counts(slots.of_request(int(request[k])), candidate.test, layout)  # (arity, slices, C)
            per_test[k] = slots.expand(per_slice.transpose(1, 0, 2), [0], [int(request[k])], n_parts)[0] \
                .transpose(1, 0, 2)
    if not per_test:
        return np.zeros((0, n_parts + 1, n_classes), dtype=np.int64)
    return np.concatenate(per_test).astype(np.int64, copy=False)


def _child_counts(sliced: np.ndarray, test: Test, layout: AttributeLayout) -> np.ndarray:
    """Per-slice class counts of each child: (arity, n_slices, n_classes)."""
    a = test.attribute
    o, w = int(layout.offsets[a]), int(layout.widths[a])
    rows = sliced[:, o:o + w, :]  # (slices, w, C)
    children = test.bin_children
    out = np.empty((test.arity, rows.shape[0], rows.shape[2]), dtype=np.int64)
    for child in range(test.arity - 1):
        out[child] = rows[:, children == child].sum(axis=1)
    out[-1] = rows.sum(axis=1) - out[:-1].sum(axis=0)  # every code goes to exactly one child
    return out
