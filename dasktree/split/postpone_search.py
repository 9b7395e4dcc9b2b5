"""The batched split search with postponed attributes (:mod:`dasktree.split.postpone`).

:func:`choose_postponed` counts each numeric attribute's blocks in every
training histogram (the histograms the level pass already counted: no extra
pass), lets ``params.postpone`` name the attributes to skip, and runs
:func:`~dasktree.split.choices.choose_batch` on the others only.

* A heuristic rule (``ratio``, ``rank``, ``relative``) decides from the block
  counts alone. Where the attributes it keeps give no valid test at all (too
  small children, say) while it postponed some, those are searched after all:
  a node does not become a leaf for want of a search. With ``criterion="gain_ratio"``,
  C4.5's average gain is that of the attributes searched.
* ``analytic`` searches in two rounds: first the nominal attributes and, per
  histogram, the numeric attribute of the highest bound; then every other
  numeric attribute whose bound is not below the best score of the first
  round (by :data:`~dasktree.split.postpone.BOUND_SLACK`). The winner is the
  better of the two rounds' (ties: the lower attribute index), so the tests
  chosen are exactly those of the search without postponing.

The returned :class:`~dasktree.split.choices.Choices` say how many
(histogram, attribute) searches were made and postponed.
"""

from __future__ import annotations

import numpy as np

from .types import TrainBatch
from .choices import Choices, choose_batch
from .postpone import BOUND_SLACK, analytic_bound, heuristic_postponed
from .postpone_kernel import batch_block_stats
from .search import AttributeLayout, SplitParams, node_impurity

__all__ = ["choose_postponed", "numeric_block_stats", "scores"]


def numeric_block_stats(batch: TrainBatch, layout: AttributeLayout, attributes: list[int], impurity: str,
                        costs: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~dasktree.split.postpone.block_stats` of ``attributes`` in every histogram: three (A, M) arrays
    (the costs zero unless ``costs``), by the compiled kernel where it applies."""
    return batch_block_stats(batch, layout.offsets, layout.widths, attributes, impurity, costs)


def scores(choices: Choices) -> np.ndarray:
    """The score that ranked each histogram's chosen test (-inf: no test)."""
    out = np.where(choices.attribute >= 0, choices.scores(), -np.inf)
    for m, candidate in choices.others.items():
        out[m] = candidate.score
    return out


def _take(into: Choices, other: Choices, rows: np.ndarray) -> None:
    """Histograms ``rows`` of ``into`` take ``other``'s choices."""
    for name in ("attribute", "gain", "cut", "default", "children", "score"):
        getattr(into, name)[rows] = getattr(other, name)[rows]
    for m in rows.tolist():
        into.others.pop(m, None)
        if m in other.others:
            into.others[m] = other.others[m]


def choose_postponed(batch: TrainBatch, layout: AttributeLayout, params: SplitParams, *,
                     engine: str = "auto") -> Choices:
    """:func:`~dasktree.split.choices.choose_batch` with ``params.postpone``'s attributes skipped."""
    rule = params.postpone
    m_total = len(batch)
    numeric = [a for a, kind in enumerate(layout.kinds) if kind == "numeric"]
    node_counts = batch.node_counts
    n = node_counts.sum(axis=1).astype(np.float64)
    blocks, sigma, missing = numeric_block_stats(batch, layout, numeric, params.impurity_name,
                                                 costs=rule[0] == "analytic")
    if rule[0] != "analytic":
        postponed = heuristic_postponed(rule, blocks, n)
        active = np.ones((len(layout.kinds), m_total), dtype=bool)
        active[numeric] = ~postponed
        choices = choose_batch(batch, layout, params, engine=engine, active=active)
        searched = choices.searched
        retry = (choices.attribute < 0) & postponed.any(axis=0) & (n > 0)
        if retry.any():
            again = np.zeros_like(active)
            again[numeric] = postponed & retry[None, :]
            later = choose_batch(batch, layout, params, engine=engine, active=again)
            _take(choices, later, np.flatnonzero(later.attribute >= 0))
            searched += later.searched
            postponed = postponed & ~retry[None, :]
        choices.searched, choices.postponed = searched, int(np.count_nonzero(postponed))
        return choices
    parent_impurity = node_impurity(node_counts, params.impurity_name)
    bound = analytic_bound(blocks, sigma, missing, n, parent_impurity, params.impurity_name, params.max_arity)
    first = np.zeros((len(layout.kinds), m_total), dtype=bool)
    first[[a for a in range(len(layout.kinds)) if a not in numeric]] = True
    if numeric:
        first[np.asarray(numeric)[np.argmax(bound, axis=0)], np.arange(m_total)] = True
    choices = choose_batch(batch, layout, params, engine=engine, active=first)
    best = scores(choices)
    rest = ~first[numeric] & (bound >= best[None, :] - BOUND_SLACK)
    second = np.zeros_like(first)
    second[numeric] = rest
    later = choose_batch(batch, layout, params, engine=engine, active=second)
    later_scores = scores(later)
    better = (later.attribute >= 0) & ((later_scores > best)
                                       | ((later_scores == best) & (later.attribute < choices.attribute)))
    _take(choices, later, np.flatnonzero(better))
    choices.searched += later.searched
    choices.postponed = int(np.count_nonzero(~first[numeric] & ~rest))
    return choices


def choose(batch: TrainBatch, layout: AttributeLayout, params: SplitParams, *, engine: str = "auto",
           active: np.ndarray | None = None, monotonic: np.ndarray | None = None,
           bounds: np.ndarray | None = None) -> Choices:
    """The batch's choices: :func:`choose_postponed` when ``params.postpone`` is set, else every
    attribute searched (:func:`~dasktree.split.choices.choose_batch`); with ``active`` (attributes, M)
    bool, only the attributes it names for each histogram (a forest's feature samples; not postponed).
    ``monotonic`` and ``bounds``: the constraints (:func:`~dasktree.split.choices.choose_batch`; not
    with ``postpone``, which the parameters refuse together)."""
    if active is not None or monotonic is not None:
        return choose_batch(batch, layout, params, engine=engine, active=active, monotonic=monotonic, bounds=bounds)
    if params.postpone is None:
        return choose_batch(batch, layout, params, engine=engine)
    return choose_postponed(batch, layout, params, engine=engine)
