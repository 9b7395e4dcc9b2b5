"""A level pass's search: from a node group's summed histogram to each tree's test.

:func:`search_group` runs on a worker next to the summed counts (one task per
search chunk) and returns only counts and tests. Tree ``t`` trains on the
node's total minus the part it holds out (004, Section 2.2.2): the training
histograms are never copied, but described as "total minus slice" to the
batched split search (:func:`dasktree.split.search.search_batch`); trees with
the same training counts at a node make the same choice and are searched once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .split.binary_kernel import threshold_children
from .split.node_tests import Test
from .split.search import AttributeLayout, Candidate, SplitParams, TrainBatch, search_batch

__all__ = ["SearchRequest", "TreeDecision", "NodeResult", "SearchContext", "leaf_reasons", "search_group"]


@dataclass(frozen=True)
class SearchRequest:
    """One node of a pass: where its slices are in the flat histogram, and who decides there."""

    node: int
    slot: int
    trees: tuple[int, ...]  # the trees still to decide at the node
    base: int  # first cell of its slices
    parts: tuple[int, ...]  # the parts it tracks, in slice order after the rest slice
    rest: bool  # whether slice 0 is the rest slice
    rows: int = 0  # rows at the node (0: not known yet): how much a multi-way search there costs

    @property
    def n_slices(self) -> int:
        """Slices of the node in the histogram: its rest slice (when ``rest``), then its parts."""
        return int(self.rest) + len(self.parts)


@dataclass
class TreeDecision:
    candidate: Candidate | None
    child_counts: np.ndarray | None  # (arity, n_parts + 1, n_classes): parts, then the total
    reason: str = ""


@dataclass
class NodeResult:
    node: int
    counts: np.ndarray  # (n_parts + 1, n_classes): parts, then the total
    decisions: dict[int, TreeDecision]


@dataclass(frozen=True)
class SearchContext:
    """What a search task needs besides the histogram: small, sent once per pass."""

    layout: AttributeLayout
    split: SplitParams
    holdout: np.ndarray
    n_folds: int
    n_repeats: int
    min_samples_split: int
    n_classes: int


def leaf_reasons(train: np.ndarray, min_samples_split: int, min_samples_leaf: int) -> list[str]:
    """Why each row of ``train`` (trees, n_classes) makes a leaf: too few rows to split
    ("min_samples_split"), to fill two leaves ("min_samples_leaf"), one class ("pure"), or ""."""
    sizes = train.sum(axis=1)
    reasons = np.select(
        [sizes < min_samples_split, sizes < 2 * min_samples_leaf, np.count_nonzero(train, axis=1) <= 1],
        ["min_samples_split", "min_samples_leaf", "pure"], "")
    return reasons.tolist()


def _child_counts(sliced: np.ndarray, candidate: Candidate, layout: AttributeLayout) -> np.ndarray:
    """Per-slice class counts of each child: (arity, n_slices, n_classes)."""
    test = candidate.test
    a = test.attribute
    o, w = int(layout.offsets[a]), int(layout.widths[a])
    rows = sliced[:, o:o + w, :]  # (slices, w, C)
    children = test.bin_children
    out = np.empty((test.arity, rows.shape[0], rows.shape[2]), dtype=np.int64)
    for child in range(test.arity - 1):
        out[child] = rows[:, children == child].sum(axis=1)
    out[-1] = rows.sum(axis=1) - out[:-1].sum(axis=0)  # every code goes to exactly one child
    return out


def _threshold_cut(test: Test) -> int | None:
    """The cut ``q`` of a binary threshold test (bins ``1..q`` left), else None."""
    if test.kind != "numeric" or len(test.thresholds) != 1:
        return None
    return int(np.searchsorted(test.bin_children[1:], 1))


@dataclass(frozen=True)
class _Slots:
    """The group's histogram as slices, and where each request's are.

    Request ``i`` has slices ``first[i]:first[i] + count[i]``: its rest slice
    (when ``rest[i]``), then one per part of ``parts[i]`` in increasing order,
    so its first ``in_total[i]`` slices (the rest slice and the parts of the
    first repetition) sum to its total.
    """

    slices: np.ndarray  # (n, total_bins, n_classes)
    first: list[int]
    count: list[int]
    parts: list[tuple[int, ...]]
    rest: list[bool]
    in_total: list[int]

    @classmethod
    def of(cls, hist: np.ndarray, requests: list[SearchRequest], total_bins: int, n_classes: int,
           n_folds: int) -> "_Slots":
        cells = total_bins * n_classes
        if any(list(r.parts) != sorted(r.parts) for r in requests):
            raise RuntimeError("a search request's parts are not in increasing order: it's a bug, please report it")
        count = [r.n_slices for r in requests]
        if hist.size % cells == 0 and all(r.base % cells == 0 for r in requests):
            flat, first = hist, [r.base // cells for r in requests]
        else:  # slots off slice borders: copy the requests' slices
            first = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(int).tolist() if requests else []
            flat = np.concatenate([hist[:0]] + [hist[r.base:r.base + c * cells] for r, c in zip(requests, count)])
        in_total = [int(r.rest) + sum(1 for p in r.parts if p < n_folds) for r in requests]
        return cls(flat.reshape(-1, total_bins, n_classes), first, count, [r.parts for r in requests],
                   [r.rest for r in requests], in_total)

    def of_request(self, i: int) -> np.ndarray:
        return self.slices[self.first[i]:self.first[i] + self.count[i]]

    def expand(self, rows: np.ndarray, starts: list[int], jobs: list[int], n_parts: int) -> np.ndarray:
        """:func:`~dasktree.forest.expand_slices` of many requests at once: (len(jobs), n_parts + 1, ...).

        Request ``jobs[k]`` has its per-slice arrays in ``rows[starts[k]:starts[k] + count]``.
        """
        out = np.zeros((len(jobs), n_parts + 1) + rows.shape[1:], dtype=rows.dtype)
        job: list[int] = []
        part: list[int] = []
        source: list[int] = []
        for k, (i, s) in enumerate(zip(jobs, starts)):
            job += [k] * len(self.parts[i])
            part += self.parts[i]
            source += range(s + int(self.rest[i]), s + self.count[i])
        out[job, part] = rows[source]
        cumulative = np.concatenate([np.zeros((1,) + rows.shape[1:], dtype=rows.dtype), np.cumsum(rows, axis=0)])
        lo = np.asarray(starts, dtype=np.int64)
        out[:, n_parts] = cumulative[lo + np.asarray([self.in_total[i] for i in jobs], dtype=np.int64)] - cumulative[lo]
        return out


def _children(slots: _Slots, chosen: list[tuple[int, Candidate]], layout: AttributeLayout,
              n_parts: int) -> list[np.ndarray]:
    """Children counts (arity, n_parts + 1, C) of each (request, candidate) in ``chosen``."""
    out: list[np.ndarray | None] = [None] * len(chosen)
    cut_of: dict[int, int | None] = {}  # id of a test -> its cut (nodes choosing equal tests share the object)
    for _, c in chosen:
        if id(c.test) not in cut_of:
            cut_of[id(c.test)] = _threshold_cut(c.test)
    threshold = [(k, cut_of[id(c.test)]) for k, (_, c) in enumerate(chosen) if cut_of[id(c.test)] is not None]
    if threshold:  # binary threshold tests: one compiled pass over all their slices
        index, offset, width, cut, default, starts, jobs = [], [], [], [], [], [], []
        for k, q in threshold:
            i, candidate = chosen[k]
            a, n = candidate.test.attribute, slots.count[i]
            starts.append(len(index))
            jobs.append(i)
            index += range(slots.first[i], slots.first[i] + n)
            offset += [int(layout.offsets[a])] * n
            width += [int(layout.widths[a])] * n
            cut += [q] * n
            default += [candidate.test.default] * n
        rows = threshold_children(slots.slices, index, offset, width, cut, default)  # (rows, 2, C)
        expanded = slots.expand(rows, starts, jobs, n_parts).transpose(0, 2, 1, 3).copy()
        for j, (k, _) in enumerate(threshold):
            out[k] = expanded[j]
    for k, (i, candidate) in enumerate(chosen):
        if out[k] is None:
            per_slice = _child_counts(slots.of_request(i), candidate, layout)  # (arity, slices, C)
            out[k] = np.ascontiguousarray(slots.expand(per_slice.transpose(1, 0, 2), [0], [i], n_parts)[0]
                                          .transpose(1, 0, 2))
    return out


def _train_batches(slots: _Slots, searched: list[int], plus_of: list[int], minus_of: list[int],
                   node_counts: np.ndarray) -> list[tuple[np.ndarray, TrainBatch]]:
    """The training histograms searched, as (batch indices, batch) pairs: histogram ``b`` is the
    total of request ``searched[plus_of[b]]`` minus slice ``minus_of[b]`` (-1: none).

    A node's total is the sum of its first ``in_total`` slices. When taking the held-out slice
    away leaves one of them (a node of one fold tree: its rest slice; a node's only slice), that
    slice *is* the training histogram, and is searched where it lies; the others subtract from a
    total summed once per node. The counts are the same integers either way."""
    direct_plus: list[int] = []  # per direct histogram: its slice
    direct_minus: list[int] = []  # and a slice still to subtract (another repetition's part), or -1
    direct: list[int] = []
    summed: list[int] = []
    for b, (j, minus) in enumerate(zip(plus_of, minus_of)):
        i = searched[j]
        lo, n = slots.first[i], slots.in_total[i]
        inside = lo <= minus < lo + n
        if n - int(inside) == 1:
            direct.append(b)
            direct_plus.append(lo + int(inside and minus == lo))  # the one in-total slice left
            direct_minus.append(-1 if inside else minus)
        else:
            summed.append(b)
    batches = []
    if direct:
        batches.append((np.asarray(direct, dtype=np.int64),
                        TrainBatch(slots.slices, np.asarray(direct_plus, dtype=np.int64), slots.slices,
                                   np.asarray(direct_minus, dtype=np.int64), node_counts[direct])))
    if summed:
        nodes = sorted({plus_of[b] for b in summed})  # positions in searched of the nodes summed
        row_of = {j: r for r, j in enumerate(nodes)}
        plus = np.empty((len(nodes),) + slots.slices.shape[1:], dtype=slots.slices.dtype)
        flat_plus = plus.reshape(len(nodes), -1)
        flat_slices = slots.slices.reshape(slots.slices.shape[0], -1)
        for r, j in enumerate(nodes):
            i = searched[j]
            np.add.reduce(flat_slices[slots.first[i]:slots.first[i] + slots.in_total[i]], axis=0, out=flat_plus[r])
        batches.append((np.asarray(summed, dtype=np.int64),
                        TrainBatch(plus, np.asarray([row_of[plus_of[b]] for b in summed], dtype=np.int64),
                                   slots.slices, np.asarray([minus_of[b] for b in summed], dtype=np.int64),
                                   node_counts[summed])))
    return batches


def search_group(hist: np.ndarray, requests: list[SearchRequest], context: SearchContext) -> list[NodeResult]:
    """Best test per (node, tree) of a node group, from the group's summed flat histogram.

    Runs on a worker, next to the histogram; returns only counts and tests.
    Tree ``t`` trains on the node's total minus the part it holds out. Each
    distinct training histogram is searched once, all of them in one batch,
    without copying them: a node's total (the rest slice plus the tracked parts
    of the first repetition) is summed once, and a tree's histogram is that
    total minus its part's slice. Trees holding out a part with no rows at
    the node, and the main tree, train on the total itself. Trees choosing the
    same test at a node share its children counts.
    """
    layout = context.layout
    n_parts = context.n_folds * context.n_repeats
    # Every row has one code (0: missing) in each attribute: the narrowest one's bins sum to the class counts.
    a = int(np.argmin(layout.widths))
    narrowest = slice(int(layout.offsets[a]), int(layout.offsets[a] + layout.widths[a]))
    slots = _Slots.of(hist, requests, int(layout.widths.sum()), context.n_classes, context.n_folds)
    slice_counts = slots.slices[:, narrowest, :].sum(axis=1)  # (slices, C): the class counts of every slice
    all_counts = slots.expand(slice_counts, slots.first, list(range(len(requests))), n_parts)
    results = [NodeResult(r.node, all_counts[i], {}) for i, r in enumerate(requests)]
    pair_request = [i for i, r in enumerate(requests) for _ in r.trees]  # the (request, tree) pairs to decide
    pair_tree = [t for r in requests for t in r.trees]
    if not pair_tree:
        return results
    held = np.asarray(context.holdout, dtype=np.int64)[pair_tree]
    held_part = np.where(held[:, None] >= 0, all_counts[pair_request, np.maximum(held, 0)], 0)
    train = all_counts[pair_request, n_parts] - held_part  # (pairs, C)
    reasons = leaf_reasons(train, context.min_samples_split, context.split.min_samples_leaf)
    part_rows = held_part.any(axis=1).tolist()
    held = held.tolist()
    pending: list[tuple[int, int, int]] = []  # (request, tree, batch index)
    searched: list[int] = []  # the requests with a search
    plus_of: list[int] = []  # per batch index: its request's index in searched
    minus_of: list[int] = []  # per batch index: the slice of the held-out part, or -1
    pair_of: list[int] = []  # per batch index: a pair training on it
    index_of: dict[tuple[int, int], int] = {}
    for k, (i, tree) in enumerate(zip(pair_request, pair_tree)):
        if reasons[k]:
            results[i].decisions[tree] = TreeDecision(None, None, reasons[k])
            continue
        minus = -1  # the main tree, and a tree whose part has no rows here, train on the total
        if part_rows[k]:
            minus = slots.first[i] + int(slots.rest[i]) + slots.parts[i].index(held[k])
        if (i, minus) not in index_of:
            if not searched or searched[-1] != i:
                searched.append(i)
            index_of[(i, minus)] = len(plus_of)
            plus_of.append(len(searched) - 1)
            minus_of.append(minus)
            pair_of.append(k)
        pending.append((i, tree, index_of[(i, minus)]))
    if not plus_of:
        return results
    candidates: list[Candidate | None] = [None] * len(plus_of)
    for indices, batch in _train_batches(slots, searched, plus_of, minus_of, train[pair_of]):
        for b, candidate in zip(indices.tolist(), search_batch(batch, layout, context.split)):
            candidates[b] = candidate
    chosen: dict[tuple[int, tuple], int] = {}  # (request, test identity) -> index in chosen_list
    chosen_list: list[tuple[int, Candidate]] = []
    child_of: dict[int, int] = {}  # batch index -> index in chosen_list
    for i, _, b in pending:
        candidate = candidates[b]
        if candidate is not None and b not in child_of:
            key = (i, candidate.test.identity)
            if key not in chosen:
                chosen[key] = len(chosen_list)
                chosen_list.append((i, candidate))
            child_of[b] = chosen[key]
    children = _children(slots, chosen_list, layout, n_parts)
    for i, tree, b in pending:
        candidate = candidates[b]
        results[i].decisions[tree] = (TreeDecision(None, None, "no_split") if candidate is None
                                      else TreeDecision(candidate, children[child_of[b]]))
    return results
