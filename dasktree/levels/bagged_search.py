"""A bagged forest's search: each member trains on its own slice, among its sampled attributes.

In a bagged forest (:class:`~dasktree.levels.forest.Forest` ``bagged``) member ``t``'s rows are
counted, each its multiplicity in ``t``'s bag, in part ``t`` of every node it reaches: its
training histogram at a node is that slice as it lies (nothing subtracted), and it searches only
the ``max_features`` attributes :func:`~dasktree.levels.sampling.feature_mask` draws for it and
the node's key. Members are searched one histogram each (their bags differ), in one batch; the
decisions are packed as :func:`~dasktree.levels.level_search.search_group`'s. Under ``monotonic_cst``
each member searches within its own value bounds at the node, as a single tree does.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ..split.api import Choices, TrainBatch, choose
from .level_search import SearchContext, SearchRequest, _held_slices, _Slots, leaf_reasons, packed_decisions
from .results import PackedResults
from .sampling import feature_mask

__all__ = ["search_bagged"]


def search_bagged(hist: np.ndarray, requests: list[SearchRequest], context: SearchContext) -> PackedResults:
    """Best test per (node, member) of a node group of a bagged forest, from the group's summed
    flat histogram, as the columns of :class:`~dasktree.levels.results.PackedResults`."""
    layout = context.layout
    n_parts = context.n_folds * context.n_repeats
    a = int(np.argmin(layout.widths))  # every row has one code per attribute: the narrowest's bins sum its counts
    narrowest = slice(int(layout.offsets[a]), int(layout.offsets[a] + layout.widths[a]))
    slots = _Slots.of(hist, requests, int(layout.widths.sum()), context.n_classes, context.n_folds)
    slice_counts = slots.slices[:, narrowest, :].sum(axis=1)
    all_counts = slots.expand(slice_counts, slots.first, np.arange(len(requests)), n_parts)
    pair_request = np.repeat(np.arange(len(requests), dtype=np.int64), [len(r.trees) for r in requests])
    pair_tree = np.asarray([t for r in requests for t in r.trees], dtype=np.int64)
    train = all_counts[pair_request, pair_tree]  # (pairs, C): each member's own part
    reasons = leaf_reasons(train, context.min_samples_split, context.split.min_samples_leaf)
    head = np.flatnonzero([not reason for reason in reasons])  # one training histogram per searched pair
    batch_of_pair = np.full(pair_tree.size, -1, dtype=np.int64)
    batch_of_pair[head] = np.arange(head.size)
    own = _held_slices(slots, pair_request[head], pair_tree[head], n_parts)
    batch = TrainBatch(slots.slices, own, slots.slices, np.full(head.size, -1, dtype=np.int64), train[head])
    n_attributes = len(layout.kinds)
    active = None
    if 0 < context.max_features < n_attributes:
        keys = np.asarray([r.key for r in requests], dtype=np.uint64)[pair_request[head]]
        active = feature_mask(context.feature_seed, pair_tree[head], keys, n_attributes, context.max_features)
    bounds = None
    if context.monotonic is not None:  # monotonic_cst: each member's value bounds at the node, as a tree's
        bounds = np.asarray([b for r in requests for b in (r.bounds or [(-np.inf, np.inf)] * len(r.trees))],
                            dtype=np.float64).reshape(-1, 2)[head]
    started = time.perf_counter()
    choices = (choose(batch, layout, context.split, active=active, monotonic=context.monotonic, bounds=bounds)
               if head.size else Choices.none(0, context.n_classes, layout.uppers))
    seconds = time.perf_counter() - started
    packed = packed_decisions(slots, requests, all_counts, pair_request, pair_tree, reasons, batch_of_pair,
                              pair_request[head], choices, context)
    return replace(packed, searches=choices.searched, postponed=choices.postponed, search_seconds=seconds)
