"""A search chunk's results in wire form: a few flat arrays, not thousands of objects.

A deep level of a cross-validation forest decides thousands of (node, tree)
pairs. As objects per node (each decision a
:class:`~dasktree.split.node_tests.Test` with its own bin table, and two count
arrays) they cost more to pickle on the worker and unpickle on the client than the
search itself costs. The search writes
its results as columns that pickle as a handful of buffers
(:func:`dasktree.levels.level_search.packed_decisions`).
:func:`concat` joins a level's chunks on the client, and the grow loop
(:func:`dasktree.levels.grow._apply`) reads the columns as they are: only the tests
the forest keeps become :class:`~dasktree.split.node_tests.Test` objects
(:func:`tests_of`), one per branch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.ragged import firsts
from ..split.api import Test

__all__ = ["PackedResults", "concat", "tests_of"]


@dataclass(frozen=True)
class PackedResults:
    """The results of one search chunk, column by column.

    Decision ``d`` is tree ``pair_tree[d]``'s at result ``pair_result[d]``:
    chosen test ``pair_choice[d]``, or a leaf for ``reasons[d]`` when that is -1.
    Chosen test ``k`` has its code table in ``bin_children[bin_start[k]:bin_start[k + 1]]``
    (``cut[k]``: its :attr:`~dasktree.split.node_tests.Test.cut`, so the client need not read the
    table to route by it) and its ``arity`` children in rows ``arity_start[k]:arity_start[k + 1]`` of
    ``train_children`` (training counts, as in :class:`~dasktree.split.search.Candidate`) and of
    ``children`` (per-part counts: the parts, then the total).
    """

    nodes: np.ndarray  # (n,) int64
    counts: np.ndarray  # (n, n_parts + 1, n_classes)
    pair_result: np.ndarray  # (m,) int64
    pair_tree: np.ndarray  # (m,) int64
    pair_choice: np.ndarray  # (m,) int64, -1: a leaf
    reasons: tuple[str, ...]  # (m,)
    attribute: np.ndarray  # (k,) int64
    kind: tuple[str, ...]
    default: np.ndarray  # (k,) int64
    thresholds: tuple[tuple[float, ...], ...]
    groups: tuple[tuple[tuple[int, ...], ...], ...]
    gain: np.ndarray  # (k,) float64
    score: np.ndarray  # (k,) float64
    bin_children: np.ndarray  # concatenated code tables
    bin_start: np.ndarray  # (k + 1,) int64
    cut: np.ndarray  # (k,) int64 threshold cut of each code table, -1 for another
    train_children: np.ndarray  # (sum of arities, n_classes)
    children: np.ndarray  # (sum of arities, n_parts + 1, n_classes)
    arity_start: np.ndarray  # (k + 1,) int64
    searches: int = 0  # attribute searches made by the split search (histogram, attribute pairs)
    postponed: int = 0  # attribute searches postponed (dasktree.split.postpone)
    search_seconds: float = 0.0  # time of the split search on the worker, blocks included

    @classmethod
    def empty(cls, n_parts: int, n_classes: int) -> "PackedResults":
        """No results (a chunk without nodes)."""
        none = np.zeros(0, dtype=np.int64)
        return cls(none, np.zeros((0, n_parts + 1, n_classes), dtype=np.int64), none, none, none, (), none, (), none,
                   (), (), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int16), np.zeros(1, dtype=np.int64), none,
                   np.zeros((0, n_classes), dtype=np.int64), np.zeros((0, n_parts + 1, n_classes), dtype=np.int64),
                   np.zeros(1, dtype=np.int64))


def tests_of(packed: PackedResults, chosen: list[int]) -> list[Test]:
    """Chosen tests ``chosen`` of ``packed`` as :class:`Test` s (their code tables views of the column),
    their arity and cut known."""
    bin_start, arity_start = packed.bin_start.tolist(), packed.arity_start.tolist()
    attribute, default, cut = packed.attribute.tolist(), packed.default.tolist(), packed.cut.tolist()
    return [Test(attribute[k], packed.kind[k], packed.bin_children[bin_start[k]:bin_start[k + 1]], default[k],
                 packed.thresholds[k], packed.groups[k]).knowing_arity(arity_start[k + 1] - arity_start[k], cut[k])
            for k in chosen]


def concat(packs: list[PackedResults], n_parts: int, n_classes: int) -> PackedResults:
    """One :class:`PackedResults` holding the results of ``packs`` in order (a level's search chunks)."""
    if len(packs) == 1:
        return packs[0]
    if not packs:
        return PackedResults.empty(n_parts, n_classes)
    n_results = firsts([p.nodes.size for p in packs])
    n_chosen = firsts([p.gain.size for p in packs])
    n_bins = firsts([p.bin_children.size for p in packs])
    n_children = firsts([p.children.shape[0] for p in packs])

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in packs])

    def starts(name: str, shift: np.ndarray) -> np.ndarray:
        return np.concatenate([[0]] + [getattr(p, name)[1:] + s for p, s in zip(packs, shift.tolist())])

    return PackedResults(
        nodes=joined("nodes"),
        counts=joined("counts"),
        pair_result=np.concatenate([p.pair_result + s for p, s in zip(packs, n_results.tolist())]),
        pair_tree=joined("pair_tree"),
        pair_choice=np.concatenate([np.where(p.pair_choice >= 0, p.pair_choice + s, -1)
                                    for p, s in zip(packs, n_chosen.tolist())]),
        reasons=tuple(r for p in packs for r in p.reasons),
        attribute=joined("attribute"),
        kind=tuple(k for p in packs for k in p.kind),
        default=joined("default"),
        thresholds=tuple(t for p in packs for t in p.thresholds),
        groups=tuple(g for p in packs for g in p.groups),
        gain=joined("gain"),
        score=joined("score"),
        bin_children=joined("bin_children"),
        bin_start=starts("bin_start", n_bins),
        cut=joined("cut"),
        train_children=joined("train_children"),
        children=joined("children"),
        arity_start=starts("arity_start", n_children),
        searches=sum(p.searches for p in packs),
        postponed=sum(p.postponed for p in packs),
        search_seconds=sum(p.search_seconds for p in packs),
    )
