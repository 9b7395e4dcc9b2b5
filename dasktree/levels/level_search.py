"""A level pass's search: from a node group's summed histogram to each tree's test.

:func:`search_group` runs on a worker next to the summed counts (one task per
search chunk) and returns only counts and tests. Tree ``t`` trains on the
node's total minus the part it holds out (004, Section 2.2.2): the training
histograms are never copied, but described as "total minus slice" to the
batched split search (:func:`dasktree.split.choices.choose_batch`); trees with
the same training counts at a node make the same choice and are searched once.
The decisions go back as the columns of
:class:`~dasktree.levels.results.PackedResults` (:func:`packed_decisions`): per
(node, tree) pair its leaf reason or chosen test, per chosen test its code table,
threshold, gain and children counts (training counts, and per part). A deep
level of a cross-validation forest chooses thousands of binary threshold tests,
and the compiled scan gives them as numbers
(:class:`~dasktree.split.choices.Choices`): their tables, thresholds and
children counts are made for all of them at once, with no
:class:`~dasktree.split.node_tests.Test` per node. Any other test (nominal,
multi-way, or from the numpy reference) comes as its
:class:`~dasktree.split.search.Candidate`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..kernels.ragged import bounds, firsts
from ..split.api import (AttributeLayout, Choices, SplitParams, Test, TrainBatch, choose, fraction_rows,
                         threshold_children, threshold_tables)
from .results import PackedResults, concat
from .sampling import feature_mask

__all__ = ["SearchRequest", "SearchContext", "leaf_reasons", "search_group", "packed_decisions"]


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
    key: int = 0  # the node's path key (dasktree.levels.sampling): the feature samples of max_features
    bounds: tuple | None = None  # monotonic_cst: each of ``trees``' value bounds (lo, hi) at the node (None: none)

    @property
    def n_slices(self) -> int:
        """Slices of the node in the histogram: its rest slice (when ``rest``), then its parts."""
        return int(self.rest) + len(self.parts)


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
    # A grid of settings (dasktree.levels.settings): tree t searches with splits[tree_split[t]]; () : split
    splits: tuple[SplitParams, ...] = ()
    tree_split: np.ndarray | None = None
    # A bagged forest (dasktree.levels.bagged_search): member t trains on part t alone, and searches
    # max_features attributes per node drawn from (feature_seed, t, the node's key); 0: all. A single
    # tree's max_features (not bagged): every tree searches member 0's draw at the node's key
    bagged: bool = False
    max_features: int = 0
    feature_seed: int = 0
    # min_weight_fraction_leaf (split.min_weight_fraction_leaf): tree t's training rows, root_size[t], once
    # its root is counted (None or 0 before: the root's own rows are the tree's)
    root_size: np.ndarray | None = None
    # monotonic_cst per attribute (int8; None: none): the requests carry each tree's bounds at the node
    monotonic: np.ndarray | None = None

    def split_of(self, trees: np.ndarray) -> np.ndarray:
        """The index into :attr:`searches` of each tree's split parameters."""
        if self.tree_split is None:
            return np.zeros(len(trees), dtype=np.int64)
        return np.asarray(self.tree_split, dtype=np.int64)[trees]

    @property
    def searches(self) -> tuple[SplitParams, ...]:
        """The distinct split parameters searched with: the grid's, or the one :attr:`split`."""
        return self.splits or (self.split,)

    def rooted(self, root_size: np.ndarray) -> "SearchContext":
        """This context knowing each tree's training rows (its root's, once counted), which
        ``min_weight_fraction_leaf`` is a fraction of; itself without that parameter."""
        return replace(self, root_size=np.asarray(root_size, dtype=np.int64)) if self.split.min_weight_fraction_leaf \
            else self

    def with_leaves(self, pair_tree: np.ndarray, pair_split: np.ndarray, train: np.ndarray,
                    smallest_leaf: np.ndarray) -> tuple["SearchContext", np.ndarray, np.ndarray]:
        """With ``min_weight_fraction_leaf``: each pair's smallest child (its setting's ``min_samples_leaf``, or
        the fraction of its tree's rows if larger, :func:`fraction_rows`), and this context with one split
        parameters per distinct (setting, smallest child), each pair's index into them. ``train``: the
        pairs' training counts (the root's rows at the first level)."""
        fraction = self.split.min_weight_fraction_leaf
        if not fraction:
            return self, pair_split, smallest_leaf
        known = self.root_size if self.root_size is not None else np.zeros(0, dtype=np.int64)
        root = known[pair_tree] if known.size else np.zeros(pair_tree.size, dtype=np.int64)
        root = np.where(root > 0, root, train.sum(axis=1))  # before the root is counted, it is the node
        leaf = np.maximum(smallest_leaf, fraction_rows(fraction, root))
        distinct, index = np.unique(np.column_stack([pair_split, leaf]).reshape(-1, 2), axis=0, return_inverse=True)
        splits = tuple(replace(self.searches[int(s)], min_samples_leaf=int(n)) for s, n in distinct.tolist())
        return replace(self, splits=splits, tree_split=None), index.reshape(-1).astype(np.int64), leaf

    # the pass's search as the runners run it (regression's: dasktree.regress.grow.RegressionSearch)
    def search(self, hist: np.ndarray, requests: list[SearchRequest]) -> PackedResults:
        return search_group(hist, requests, self)

    def pass_chunks(self, plan, requests: list[SearchRequest], n_tasks: int) -> tuple:
        """On a cluster: the plan as counted (a node of few rows in uint16, ``PassPlan.narrowed``) and at
        most ``n_tasks`` search chunks (:func:`~dasktree.levels.search_chunks.search_chunks`)."""
        from .search_chunks import in_units, search_chunks

        chunks = search_chunks(requests, plan, n_tasks, self)
        plan = plan.narrowed([r.rows for r in sorted(requests, key=lambda r: r.slot)])
        return plan, [in_units(c, plan) for c in chunks] if plan.mixed else chunks

    def search_cells(self, *hists: np.ndarray, lo: int, hi: int, chunk, **options) -> PackedResults:
        from .search_chunks import search_cells

        return search_cells(*hists, lo=lo, hi=hi, chunk=chunk, context=self, **options)

    def merge(self, results: list[PackedResults]) -> PackedResults:
        return concat(results, self.n_folds * self.n_repeats, self.n_classes)


def leaf_reasons(train: np.ndarray, min_samples_split: int, min_samples_leaf) -> list[str]:
    """Why each row of ``train`` (trees, n_classes) makes a leaf: too few rows to split
    ("min_samples_split"), to fill two leaves ("min_samples_leaf", one number or one per row),
    one class ("pure"), or ""."""
    sizes = train.sum(axis=1)
    reasons = np.select(
        [sizes < min_samples_split, sizes < 2 * min_samples_leaf, np.count_nonzero(train, axis=1) <= 1],
        ["min_samples_split", "min_samples_leaf", "pure"], "")
    return reasons.tolist()


@dataclass(frozen=True)
class _Slots:
    """The group's histogram as slices, and where each request's are.

    Request ``i`` has slices ``first[i]:first[i] + count[i]``: its rest slice
    (when ``rest[i]``), then one per part of ``parts[i]`` in increasing order,
    so its first ``in_total[i]`` slices (the rest slice and the parts of the
    first repetition) sum to its total. ``tracked``, ``part`` and ``part_first``
    are the parts flat: request ``i``'s are ``part[part_first[i]:part_first[i] + tracked[i]]``.
    """

    slices: np.ndarray  # (n, total_bins, n_classes)
    first: np.ndarray  # (requests,) int64, and so on
    count: np.ndarray
    rest: np.ndarray
    in_total: np.ndarray
    tracked: np.ndarray
    part: np.ndarray
    part_first: np.ndarray

    @classmethod
    def of(cls, hist: np.ndarray, requests: list[SearchRequest], total_bins: int, n_classes: int,
           n_folds: int) -> "_Slots":
        cells = total_bins * n_classes
        if any(list(r.parts) != sorted(r.parts) for r in requests):
            raise RuntimeError("a search request's parts are not in increasing order: it's a bug, please report it")
        count = np.asarray([r.n_slices for r in requests], dtype=np.int64)
        base = np.asarray([r.base for r in requests], dtype=np.int64)
        if hist.size % cells == 0 and not (base % cells).any():
            flat, first = hist, base // cells
        else:  # slots off slice borders: copy the requests' slices
            first = firsts(count)
            flat = np.concatenate([hist[:0]] + [hist[r.base:r.base + c * cells] for r, c in zip(requests, count.tolist())])
        rest = np.asarray([r.rest for r in requests], dtype=np.int64)
        tracked = np.asarray([len(r.parts) for r in requests], dtype=np.int64)
        part = np.asarray([p for r in requests for p in r.parts], dtype=np.int64)
        in_total = rest + np.bincount(np.repeat(np.arange(len(requests)), tracked)[part < n_folds],
                                      minlength=len(requests))
        return cls(flat.reshape(-1, total_bins, n_classes), first, count, rest, in_total, tracked, part,
                   firsts(tracked))

    def of_request(self, i: int) -> np.ndarray:
        return self.slices[self.first[i]:self.first[i] + self.count[i]]

    def expand(self, rows: np.ndarray, starts: np.ndarray, jobs: np.ndarray, n_parts: int) -> np.ndarray:
        """:func:`~dasktree.kernels.plans.expand_slices` of many requests at once: (len(jobs), n_parts + 1, ...).

        Request ``jobs[k]`` has its per-slice arrays in ``rows[starts[k]:starts[k] + count]``.
        """
        jobs = np.asarray(jobs, dtype=np.int64)
        starts = np.asarray(starts, dtype=np.int64)
        out = np.zeros((jobs.size, n_parts + 1) + rows.shape[1:], dtype=rows.dtype)
        tracked = self.tracked[jobs]
        within = np.arange(int(tracked.sum())) - np.repeat(firsts(tracked), tracked)  # a job's k-th tracked part
        job = np.repeat(np.arange(jobs.size), tracked)
        out[job, self.part[self.part_first[jobs][job] + within]] = rows[(starts + self.rest[jobs])[job] + within]
        cumulative = np.concatenate([np.zeros((1,) + rows.shape[1:], dtype=rows.dtype), np.cumsum(rows, axis=0)])
        out[:, n_parts] = cumulative[starts + self.in_total[jobs]] - cumulative[starts]
        return out


def _held_slices(slots: _Slots, request: np.ndarray, held: np.ndarray, n_parts: int) -> np.ndarray:
    """The slice of part ``held[k]`` among request ``request[k]``'s slices, for each k (it tracks it)."""
    key = np.repeat(np.arange(slots.tracked.size), slots.tracked) * (n_parts + 1) + slots.part  # increasing
    want = request * (n_parts + 1) + held
    at = np.searchsorted(key, want)
    if want.size and ((at >= key.size).any() or (key[np.minimum(at, key.size - 1)] != want).any()):
        raise RuntimeError("a tree's held-out part has rows at a node that does not track it: it's a bug, "
                           "please report it")
    return slots.first[request] + slots.rest[request] + at - slots.part_first[request]


def _train_batches(slots: _Slots, plus_request: np.ndarray, minus: np.ndarray,
                   node_counts: np.ndarray) -> list[tuple[np.ndarray, TrainBatch]]:
    """The training histograms searched, as (indices, batch) pairs: histogram ``b`` is the total of
    request ``plus_request[b]`` minus slice ``minus[b]`` (-1: none).

    A node's total is the sum of its first ``in_total`` slices. When taking the held-out slice
    away leaves one of them (a node of one fold tree: its rest slice; a node's only slice), that
    slice *is* the training histogram, and is searched where it lies; the others subtract from a
    total summed once per node. The counts are the same integers either way."""
    lo, in_total = slots.first[plus_request], slots.in_total[plus_request]
    inside = (lo <= minus) & (minus < lo + in_total)
    direct = in_total - inside == 1
    batches = []
    if direct.any():
        plus = lo + (inside & (minus == lo))  # the one in-total slice left
        take = np.where(inside, -1, minus)  # and a slice still to subtract (another repetition's part), or -1
        batches.append((np.flatnonzero(direct),
                        TrainBatch(slots.slices, plus[direct], slots.slices, take[direct], node_counts[direct])))
    if not direct.all():
        summed = np.flatnonzero(~direct)
        nodes, row = np.unique(plus_request[summed], return_inverse=True)
        plus = np.empty((nodes.size,) + slots.slices.shape[1:], dtype=slots.slices.dtype)
        flat_plus = plus.reshape(nodes.size, -1)
        flat_slices = slots.slices.reshape(slots.slices.shape[0], -1)
        for r, i in enumerate(nodes.tolist()):
            np.add.reduce(flat_slices[slots.first[i]:slots.first[i] + slots.in_total[i]], axis=0, out=flat_plus[r])
        batches.append((summed, TrainBatch(plus, row.ravel().astype(np.int64), slots.slices, minus[summed],
                                           node_counts[summed])))
    return batches


def _choices(slots: _Slots, plus_request: np.ndarray, minus: np.ndarray, node_counts: np.ndarray,
             context: SearchContext, split: np.ndarray, active: np.ndarray | None = None,
             bounds: np.ndarray | None = None) -> Choices:
    """:func:`~dasktree.split.choices.choose_batch` of every training histogram (a batch of each kind
    per split parameters: histogram ``b`` is searched with ``context.searches[split[b]]``), among the
    attributes ``active[:, b]`` when given (a single tree's ``max_features``)."""
    out = Choices.none(plus_request.size, context.n_classes, context.layout.uppers)
    searches = context.searches
    for s in (range(1) if len(searches) == 1 else np.unique(split).tolist()):
        mine = np.arange(plus_request.size) if len(searches) == 1 else np.flatnonzero(split == s)
        for within, batch in _train_batches(slots, plus_request[mine], minus[mine], node_counts[mine]):
            indices = mine[within]
            found = choose(batch, context.layout, searches[s], active=None if active is None else active[:, indices],
                           monotonic=context.monotonic, bounds=None if bounds is None else bounds[indices])
            out.searched += found.searched
            out.postponed += found.postponed
            for name in ("attribute", "gain", "cut", "default", "children", "score"):
                getattr(out, name)[indices] = getattr(found, name)
            out.others.update((int(indices[m]), candidate) for m, candidate in found.others.items())
    return out


def search_group(hist: np.ndarray, requests: list[SearchRequest], context: SearchContext) -> PackedResults:
    """Best test per (node, tree) of a node group, from the group's summed flat histogram, as the
    columns of :class:`~dasktree.levels.results.PackedResults`.

    Runs on a worker, next to the histogram; returns only counts and tests.
    Tree ``t`` trains on the node's total minus the part it holds out. Each
    distinct training histogram is searched once, all of them in one batch,
    without copying them: a node's total (the rest slice plus the tracked parts
    of the first repetition) is summed once, and a tree's histogram is that
    total minus its part's slice. Trees holding out a part with no rows at
    the node, and the main tree, train on the total itself. Trees choosing the
    same test at a node share its children counts.
    """
    if context.bagged:
        from .bagged_search import search_bagged

        return search_bagged(hist, requests, context)
    layout = context.layout
    n_parts = context.n_folds * context.n_repeats
    # Every row has one code (0: missing) in each attribute: the narrowest one's bins sum to the class counts.
    a = int(np.argmin(layout.widths))
    narrowest = slice(int(layout.offsets[a]), int(layout.offsets[a] + layout.widths[a]))
    slots = _Slots.of(hist, requests, int(layout.widths.sum()), context.n_classes, context.n_folds)
    slice_counts = slots.slices[:, narrowest, :].sum(axis=1)  # (slices, C): the class counts of every slice
    all_counts = slots.expand(slice_counts, slots.first, np.arange(len(requests)), n_parts)
    pair_request = np.repeat(np.arange(len(requests), dtype=np.int64), [len(r.trees) for r in requests])
    pair_tree = np.asarray([t for r in requests for t in r.trees], dtype=np.int64)
    held = np.asarray(context.holdout, dtype=np.int64)[pair_tree]
    held_part = np.where(held[:, None] >= 0, all_counts[pair_request, np.maximum(held, 0)], 0)
    train = all_counts[pair_request, n_parts] - held_part  # (pairs, C)
    pair_split = context.split_of(pair_tree)  # a grid's trees search with their setting's parameters
    smallest_leaf = np.asarray([p.min_samples_leaf for p in context.searches], dtype=np.int64)[pair_split]
    context, pair_split, smallest_leaf = context.with_leaves(pair_tree, pair_split, train, smallest_leaf)
    reasons = leaf_reasons(train, context.min_samples_split, smallest_leaf)
    searched = np.asarray([not reason for reason in reasons], dtype=bool)
    # the main tree, and a tree whose part has no rows here, train on the total: nothing to subtract
    minus = np.full(pair_tree.size, -1, dtype=np.int64)
    subtract = searched & held_part.any(axis=1)
    minus[subtract] = _held_slices(slots, pair_request[subtract], held[subtract], n_parts)
    # the distinct training histograms (request, slice subtracted, split parameters), in the order of
    # their first pairs: trees of two settings share a histogram but not its search
    pairs = np.flatnonzero(searched)
    histogram = pair_request[pairs] * (slots.slices.shape[0] + 1) + minus[pairs] + 1
    key = histogram * len(context.searches) + pair_split[pairs]
    pair_bounds = None
    if context.monotonic is not None:  # trees of one histogram but other bounds are searched apart
        pair_bounds = np.asarray([b for r in requests for b in (r.bounds or [(-np.inf, np.inf)] * len(r.trees))],
                                 dtype=np.float64).reshape(-1, 2)
        bits = pair_bounds[pairs].view(np.int64)
        key = np.column_stack([key, bits])
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True, axis=0 if key.ndim > 1 else None)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    batch_of_pair = np.full(pair_tree.size, -1, dtype=np.int64)
    batch_of_pair[pairs] = rank[inverse.ravel()]
    head = pairs[first[order]]  # per training histogram: its first pair
    active = None
    if 0 < context.max_features < len(layout.kinds):  # a single tree's draw per node path: member 0's
        keys = np.asarray([r.key for r in requests], dtype=np.uint64)[pair_request[head]]
        active = feature_mask(context.feature_seed, np.zeros(head.size, dtype=np.int64), keys, len(layout.kinds),
                              context.max_features)
    started = time.perf_counter()
    choices = _choices(slots, pair_request[head], minus[head], train[head], context, pair_split[head], active,
                       None if pair_bounds is None else pair_bounds[head])
    seconds = time.perf_counter() - started
    packed = packed_decisions(slots, requests, all_counts, pair_request, pair_tree, reasons, batch_of_pair,
                              pair_request[head], choices, context)
    return replace(packed, searches=choices.searched, postponed=choices.postponed, search_seconds=seconds)


# ---------------------------------------------------------------- the decisions as columns
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
    pair_choice = np.full(batch_of_pair.size, -1, dtype=np.int64)  # -1: no training histogram (e.g. a pure root)
    trained = batch_of_pair >= 0
    pair_choice[trained] = choice_of[batch_of_pair[trained]]
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
        score=np.asarray([g if c is None else c.score for g, c in zip(choices.scores()[chosen].tolist(), candidates)],
                         dtype=np.float64),
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
