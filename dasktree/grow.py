"""The grow loop: one level pass per depth, for every tree of the forest at once.

Each level: the frontier (distinct nodes some tree still has to decide) is cut
into node groups that fit the histogram memory budget; for each group a
runner makes one pass over the data (route rows, count them, sum the counts
where they are) and runs :func:`search_group` next to the summed histogram.
Only the chosen tests come back. The forest then gets its new branches and
children; a child that is already a leaf for every tree that reaches it
(depth limit, too small, pure) never enters a pass.

This module is pure: the runners (``dasktree.runners``) do the scheduling.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from .binning import BinSpec
from .forest import Forest, Node
from .split.search import AttributeLayout, Candidate, SplitParams, best_splits

__all__ = ["GrowParams", "SearchRequest", "NodeResult", "search_group", "grow", "Runner"]

EPSILON = np.finfo(np.float64).eps


@dataclass(frozen=True)
class GrowParams:
    max_depth: int | None = None
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_impurity_decrease: float = 0.0
    max_leaf_nodes: int | None = None
    split: SplitParams = SplitParams()
    max_histogram_mb: float = 256.0


@dataclass(frozen=True)
class SearchRequest:
    node: int
    slot: int
    trees: tuple[int, ...]


@dataclass
class TreeDecision:
    candidate: Candidate | None
    child_counts: np.ndarray | None  # (arity, n_parts, n_classes)
    reason: str = ""


@dataclass
class NodeResult:
    node: int
    counts: np.ndarray  # (n_parts, n_classes)
    decisions: dict[int, TreeDecision]


@dataclass(frozen=True)
class SearchContext:
    """What a search task needs besides the histogram: small, sent once per pass."""

    layout: AttributeLayout
    split: SplitParams
    holdout: np.ndarray
    n_folds: int
    min_samples_split: int


def _leaf_reason(train: np.ndarray, min_samples_split: int, min_samples_leaf: int) -> str:
    n = int(train.sum())
    if n < min_samples_split:
        return "min_samples_split"
    if n < 2 * min_samples_leaf:
        return "min_samples_leaf"
    if np.count_nonzero(train) <= 1:
        return "pure"
    return ""


def _child_counts(hist: np.ndarray, candidate: Candidate, layout: AttributeLayout) -> np.ndarray:
    """Per-part class counts of each child: (arity, n_parts, n_classes)."""
    test = candidate.test
    a = test.attribute
    o, w = int(layout.offsets[a]), int(layout.widths[a])
    rows = hist[:, o:o + w, :]  # (P, w, C)
    out = np.zeros((test.arity, rows.shape[0], rows.shape[2]), dtype=np.int64)
    np.add.at(out, test.bin_children.astype(np.int64), rows.transpose(1, 0, 2))
    return out


def search_group(hist: np.ndarray, requests: list[SearchRequest], context: SearchContext) -> list[NodeResult]:
    """Best test per (node, tree) of a node group, from the group's summed histogram.

    ``hist`` has shape (n_slots, n_parts, total_bins, n_classes). Runs on a
    worker, next to the histogram; returns only counts and tests. Trees with
    equal training counts at a node make equal choices, so each distinct
    training histogram is searched once; all of them in one batch.
    """
    layout = context.layout
    forest = Forest(len(context.holdout), context.holdout, context.n_folds, hist.shape[-1])
    first = slice(int(layout.offsets[0]), int(layout.offsets[0] + layout.widths[0]))
    results: list[NodeResult] = []
    pending: list[tuple[NodeResult, int, int]] = []  # (result, tree, index into searched)
    searched: list[np.ndarray] = []
    index_of: dict[tuple[int, bytes], int] = {}
    for request in requests:
        node_hist = hist[request.slot]  # (P, Tb, C)
        counts = node_hist[:, first, :].sum(axis=1)
        result = NodeResult(request.node, counts, {})
        for tree in request.trees:
            train = forest.train_counts(counts, tree)
            reason = _leaf_reason(train, context.min_samples_split, context.split.min_samples_leaf)
            if reason:
                result.decisions[tree] = TreeDecision(None, None, reason)
                continue
            train_hist = forest.train_counts(node_hist.transpose(1, 0, 2), tree)  # (Tb, C)
            key = (request.slot, train_hist.tobytes())
            if key not in index_of:
                index_of[key] = len(searched)
                searched.append(train_hist)
            pending.append((result, tree, index_of[key]))
        results.append(result)
    candidates = best_splits(np.stack(searched), layout, context.split) if searched else []
    slot_of = {r.node: q.slot for r, q in zip(results, requests)}
    for result, tree, i in pending:
        candidate = candidates[i]
        if candidate is None:
            result.decisions[tree] = TreeDecision(None, None, "no_split")
        else:
            child_counts = _child_counts(hist[slot_of[result.node]], candidate, layout)
            result.decisions[tree] = TreeDecision(candidate, child_counts)
    return results


class Runner(Protocol):
    def level_pass(self, plan, requests: list[SearchRequest], context: SearchContext,
                   label: str) -> list[NodeResult]: ...


@dataclass
class LevelReport:
    level: int
    frontier: int
    groups: int
    seconds: float
    splits: int
    distinct_tests: float = 0.0


@dataclass
class GrowReport:
    levels: list[LevelReport] = field(default_factory=list)

    @property
    def level_passes(self) -> int:
        return sum(level.groups for level in self.levels)


def _node_groups(frontier: list[Node], bytes_per_node: int, budget_mb: float) -> list[list[Node]]:
    per_group = max(1, int(budget_mb * 2**20) // max(1, bytes_per_node))
    return [frontier[i:i + per_group] for i in range(0, len(frontier), per_group)]


def grow(runner: Runner, spec: BinSpec, params: GrowParams, *, n_trees: int = 1,
         holdout: np.ndarray | None = None, n_folds: int = 1, n_repeats: int = 1,
         progress: Callable[[str], None] | None = None) -> tuple[Forest, GrowReport]:
    """Grow the forest level by level with ``runner`` making the passes."""
    holdout = np.full(n_trees, -1) if holdout is None else np.asarray(holdout)
    forest = Forest(n_trees, holdout, n_folds, spec.n_classes)
    layout = AttributeLayout.from_spec(spec)
    context = SearchContext(layout, params.split, holdout, n_folds, params.min_samples_split)
    n_parts = n_folds * n_repeats
    bytes_per_node = n_parts * spec.total_bins * spec.n_classes * 8
    report = GrowReport()
    frontier: list[Node] = [forest.nodes[0]]
    level = 0
    while frontier:
        started = time.perf_counter()
        groups = _node_groups(frontier, bytes_per_node, params.max_histogram_mb)
        results: list[NodeResult] = []
        for g, group in enumerate(groups):
            slots = {node.id: i for i, node in enumerate(group)}
            plan = forest.routing_plan(slots, spec.widths)
            requests = [SearchRequest(node.id, slots[node.id], node.open_trees()) for node in group]
            label = f"level {level}" + (f" group {g + 1}/{len(groups)}" if len(groups) > 1 else "")
            results += runner.level_pass(plan, requests, context, label)
        splits, tests_per_node = _apply(forest, results, params, level)
        frontier = [node for node in forest.nodes if node.depth == level + 1 and node.open_trees()]
        report.levels.append(LevelReport(
            level, sum(len(g) for g in groups), len(groups), time.perf_counter() - started, splits,
            float(np.mean(tests_per_node)) if tests_per_node else 0.0,
        ))
        if progress is not None:
            progress(f"level {level}: {report.levels[-1].frontier} nodes, {splits} split")
        level += 1
    return forest, report


def _apply(forest: Forest, results: list[NodeResult], params: GrowParams, level: int) -> tuple[int, list[int]]:
    """Turn a level's decisions into branches, children and leaves."""
    accepted: dict[tuple[int, int], TreeDecision] = {}
    proposals: list[tuple[float, int, int, TreeDecision]] = []
    by_node = {r.node: r for r in results}
    for result in results:
        node = forest.nodes[result.node]
        node.counts = result.counts
        if node.id == 0:
            forest.root_size = np.array(
                [int(forest.train_counts(result.counts, t).sum()) for t in range(forest.n_trees)]
            )
        for tree, decision in sorted(result.decisions.items()):
            if decision.candidate is None:
                forest.set_leaf(node, tree, decision.reason)
                continue
            n_node = float(forest.train_counts(result.counts, tree).sum())
            weighted = n_node / float(forest.root_size[tree]) * decision.candidate.gain
            if weighted + EPSILON < params.min_impurity_decrease:
                forest.set_leaf(node, tree, "min_impurity_decrease")
                continue
            proposals.append((weighted, node.id, tree, decision))
    if params.max_leaf_nodes is not None:
        leaves = _leaf_counts(forest)
        for weighted, node_id, tree, decision in sorted(proposals, key=lambda p: (-p[0], p[1], p[2])):
            extra = decision.candidate.test.arity - 1
            if leaves[tree] + extra <= params.max_leaf_nodes:
                leaves[tree] += extra
                accepted[(node_id, tree)] = decision
            else:
                forest.set_leaf(forest.nodes[node_id], tree, "max_leaf_nodes")
    else:
        accepted = {(node_id, tree): d for _, node_id, tree, d in proposals}
    splits = 0
    tests_per_node: list[int] = []
    for node_id in sorted(by_node):
        node = forest.nodes[node_id]
        tests = {t: d.candidate.test for (n, t), d in accepted.items() if n == node_id}
        if not tests:
            continue
        child_counts = {t: d.child_counts for (n, t), d in accepted.items() if n == node_id}
        children = forest.set_tests(node, tests, child_counts)
        tests_per_node.append(len(node.branches))
        splits += len(node.branches)
        for child in children:
            for tree in child.trees:
                train = forest.train_counts(child.counts, tree)
                if params.max_depth is not None and child.depth >= params.max_depth:
                    forest.set_leaf(child, tree, "max_depth")
                else:
                    reason = _leaf_reason(train, params.min_samples_split, params.split.min_samples_leaf)
                    if reason:
                        forest.set_leaf(child, tree, reason)
    return splits, tests_per_node


def _leaf_counts(forest: Forest) -> np.ndarray:
    """Leaves each tree has now, counting its open nodes as leaves."""
    counts = np.zeros(forest.n_trees, dtype=np.int64)
    for node in forest.nodes:
        for tree in node.trees:
            if node.branch_of(tree) is None:
                counts[tree] += 1
    return counts
