"""A search chunk's results in wire form: a few flat arrays, not thousands of objects.

A deep level of a cross-validation forest decides thousands of (node, tree)
pairs. As :class:`~dasktree.node_search.NodeResult` objects (each decision a
:class:`~dasktree.split.node_tests.Test` with its own bin table, and two count
arrays) they cost about 50 microseconds each to pickle on the worker and as
much again to unpickle on the client, more than the search itself (measured:
5,249 decisions took 0.39 s to dump and 0.29 s to load). :func:`pack` turns a
chunk's results into columns that pickle as a handful of buffers;
:func:`unpack` gives back equal objects on the client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .node_search import NodeResult, TreeDecision
from .split.node_tests import Test
from .split.search import Candidate

__all__ = ["PackedResults", "pack", "unpack"]


@dataclass(frozen=True)
class PackedResults:
    """The results of one search chunk, column by column.

    Decision ``d`` is tree ``pair_tree[d]``'s at result ``pair_result[d]``:
    chosen test ``pair_choice[d]``, or a leaf for ``reasons[d]`` when that is -1.
    Chosen test ``k`` has its code table in ``bin_children[bin_start[k]:bin_start[k + 1]]``
    and its ``arity`` children in rows ``arity_start[k]:arity_start[k + 1]`` of
    ``train_children`` (training counts, as in :class:`Candidate`) and of
    ``children`` (per-part counts, as in :class:`TreeDecision`).
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
    train_children: np.ndarray  # (sum of arities, n_classes)
    children: np.ndarray  # (sum of arities, n_parts + 1, n_classes)
    arity_start: np.ndarray  # (k + 1,) int64


def pack(results: list[NodeResult], n_parts: int, n_classes: int) -> PackedResults:
    """The columns of ``results``; a chosen test shared by several trees is stored once."""
    pair_result, pair_tree, pair_choice, reasons = [], [], [], []
    chosen: list[TreeDecision] = []
    index_of: dict[tuple[int, int], int] = {}  # (id of the candidate, id of the children counts)
    for i, result in enumerate(results):
        for tree, decision in result.decisions.items():
            pair_result.append(i)
            pair_tree.append(tree)
            reasons.append(decision.reason)
            if decision.candidate is None:
                pair_choice.append(-1)
                continue
            key = (id(decision.candidate), id(decision.child_counts))
            if key not in index_of:
                index_of[key] = len(chosen)
                chosen.append(decision)
            pair_choice.append(index_of[key])
    tests = [d.candidate.test for d in chosen]
    arities = [t.arity for t in tests]
    return PackedResults(
        nodes=np.asarray([r.node for r in results], dtype=np.int64),
        counts=(np.stack([r.counts for r in results]) if results
                else np.zeros((0, n_parts + 1, n_classes), dtype=np.int64)),
        pair_result=np.asarray(pair_result, dtype=np.int64),
        pair_tree=np.asarray(pair_tree, dtype=np.int64),
        pair_choice=np.asarray(pair_choice, dtype=np.int64),
        reasons=tuple(reasons),
        attribute=np.asarray([t.attribute for t in tests], dtype=np.int64),
        kind=tuple(t.kind for t in tests),
        default=np.asarray([t.default for t in tests], dtype=np.int64),
        thresholds=tuple(t.thresholds for t in tests),
        groups=tuple(t.groups for t in tests),
        gain=np.asarray([d.candidate.gain for d in chosen], dtype=np.float64),
        score=np.asarray([d.candidate.score for d in chosen], dtype=np.float64),
        bin_children=(np.concatenate([t.bin_children for t in tests]) if tests else np.zeros(0, dtype=np.int16)),
        bin_start=np.concatenate([[0], np.cumsum([t.bin_children.size for t in tests], dtype=np.int64)]),
        train_children=(np.concatenate([d.candidate.child_counts for d in chosen]) if chosen
                        else np.zeros((0, n_classes), dtype=np.int64)),
        children=(np.concatenate([d.child_counts for d in chosen]) if chosen
                  else np.zeros((0, n_parts + 1, n_classes), dtype=np.int64)),
        arity_start=np.concatenate([[0], np.cumsum(arities, dtype=np.int64)]),
    )


def unpack(packed: PackedResults) -> list[NodeResult]:
    """The :class:`NodeResult` s that :func:`pack` was given, equal field for field."""
    bin_start, arity_start = packed.bin_start.tolist(), packed.arity_start.tolist()
    gain, score = packed.gain.tolist(), packed.score.tolist()
    attribute, default = packed.attribute.tolist(), packed.default.tolist()
    chosen: list[tuple[Candidate, np.ndarray]] = []
    for k in range(len(packed.kind)):
        test = Test(attribute[k], packed.kind[k], packed.bin_children[bin_start[k]:bin_start[k + 1]],
                    default[k], packed.thresholds[k], packed.groups[k])
        lo, hi = arity_start[k], arity_start[k + 1]
        candidate = Candidate(test, gain[k], score[k], packed.train_children[lo:hi])
        chosen.append((candidate, packed.children[lo:hi]))
    results = [NodeResult(node, packed.counts[i], {}) for i, node in enumerate(packed.nodes.tolist())]
    for i, tree, choice, reason in zip(packed.pair_result.tolist(), packed.pair_tree.tolist(),
                                       packed.pair_choice.tolist(), packed.reasons):
        results[i].decisions[tree] = TreeDecision(*(chosen[choice] if choice >= 0 else (None, None)), reason)
    return results
