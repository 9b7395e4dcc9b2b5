"""The grow loop: one level pass per depth, for every tree of the forest at once.

Each level: the frontier (distinct nodes some tree still has to decide) is cut
into node groups that fit the histogram memory budget; for each group a
runner makes one pass over the data (route rows, count them, sum the counts
where they are) and runs :func:`~dasktree.node_search.search_group` next to
the summed histogram. Only the chosen tests come back. The forest then gets
its new branches and children; a child that is already a leaf for every tree
that reaches it (depth limit, too small, pure) never enters a pass.

This module is pure: the runners (``dasktree.runners``) do the scheduling.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from .binning import BinSpec
from .collector import older_objects_frozen
from .forest import Forest, Node
from .node_search import NodeResult, SearchContext, SearchRequest, TreeDecision, leaf_reasons, search_group
from .split.search import AttributeLayout, SplitParams

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


class Runner(Protocol):
    derived: int  # nodes derived so far rather than counted (a runner may count a plan's derived nodes)

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
    derived: int = 0  # nodes whose counts were derived, not counted (dasktree.derive)


@dataclass
class GrowReport:
    levels: list[LevelReport] = field(default_factory=list)

    @property
    def level_passes(self) -> int:
        return sum(level.groups for level in self.levels)


def _node_groups(frontier: list[Node], node_bytes: list[int], budget_mb: float) -> list[list[Node]]:
    """Consecutive frontier nodes whose histograms fit the budget together (at least one node each)."""
    budget = budget_mb * 2**20
    groups: list[list[Node]] = []
    used = 0.0
    for node, size in zip(frontier, node_bytes):
        if groups and used + size <= budget:
            groups[-1].append(node)
            used += size
        else:
            groups.append([node])
            used = size
    return groups


def grow(runner: Runner, spec: BinSpec, params: GrowParams, *, n_trees: int = 1,
         holdout: np.ndarray | None = None, n_folds: int = 1, n_repeats: int = 1,
         progress: Callable[[str], None] | None = None) -> tuple[Forest, GrowReport]:
    """Grow the forest level by level with ``runner`` making the passes."""
    with older_objects_frozen():  # a forest adds tens of thousands of nodes
        return _grow(runner, spec, params, n_trees, holdout, n_folds, n_repeats, progress)


def _grow(runner: Runner, spec: BinSpec, params: GrowParams, n_trees: int, holdout: np.ndarray | None,
          n_folds: int, n_repeats: int, progress: Callable[[str], None] | None) -> tuple[Forest, GrowReport]:
    holdout = np.full(n_trees, -1) if holdout is None else np.asarray(holdout)
    forest = Forest(n_trees, holdout, n_folds, spec.n_classes, n_repeats)
    layout = AttributeLayout.from_spec(spec)
    context = SearchContext(layout, params.split, holdout, n_folds, n_repeats, params.min_samples_split,
                            spec.n_classes)
    cells = spec.total_bins * spec.n_classes
    report = GrowReport()
    frontier: list[Node] = [forest.nodes[0]]
    new_branches: list[tuple[int, list[int]]] = []  # the last level's (parent, children) of each branch
    level = 0
    while frontier:
        started = time.perf_counter()
        groups = _node_groups(frontier, [forest.node_bytes(node, cells) for node in frontier],
                              params.max_histogram_mb)
        # Subtraction needs the parents' counts of the last pass: one group then and now.
        derive = _derivations(forest, new_branches, frontier) if len(groups) == 1 else {}
        derived = getattr(runner, "derived", 0)
        results: list[NodeResult] = []
        for g, group in enumerate(groups):
            plan = forest.pass_plan(group, spec.widths, spec.n_classes, frontier, derive)
            requests = [
                SearchRequest(node.id, s, node.open_trees(), base, parts, rest, rows)
                for s, (node, base, parts, rest, rows) in enumerate(
                    zip(group, plan.slot_base.tolist(), plan.slot_parts, plan.slot_rest, _rows(group)))
            ]
            label = f"level {level}" + (f" group {g + 1}/{len(groups)}" if len(groups) > 1 else "")
            results += runner.level_pass(plan, requests, context, label)
        splits, tests_per_node, children = _apply(forest, results, params, level)
        frontier = [node for node in children if node.open_trees()]  # in id order, as created
        decided = (forest.nodes[r.node] for r in results)
        new_branches = [] if len(groups) > 1 else [(n.id, b.children) for n in decided for b in n.branches]
        report.levels.append(LevelReport(
            level, sum(len(g) for g in groups), len(groups), time.perf_counter() - started, splits,
            float(np.mean(tests_per_node)) if tests_per_node else 0.0, getattr(runner, "derived", 0) - derived,
        ))
        if progress is not None:
            progress(f"level {level}: {report.levels[-1].frontier} nodes, {splits} split")
        level += 1
    return forest, report


def _rows(nodes: list[Node]) -> list[int]:
    """Rows at each node from its counts (0 while unknown: the root before the first pass)."""
    if not nodes or any(node.counts is None for node in nodes):
        return [0 if node.counts is None else int(node.counts[-1].sum()) for node in nodes]
    return np.stack([node.counts[-1] for node in nodes]).sum(axis=1).tolist()


def _derivations(forest: Forest, branches: list[tuple[int, list[int]]],
                 frontier: list[Node]) -> dict[int, tuple[int, tuple[int, ...]]]:
    """The child of each new branch to derive rather than count: the one with most rows, when all
    its siblings are counted in the pass (they are on the frontier)."""
    open_ids = {node.id for node in frontier}
    candidates = [(p, c) for p, c in branches if len(c) >= 2 and all(k in open_ids for k in c)]
    rows = _rows([forest.nodes[k] for _, children in candidates for k in children])
    derive = {}
    first = 0
    for parent, children in candidates:
        at = rows[first:first + len(children)]
        first += len(children)
        largest = children[at.index(max(at))]  # the first of equals
        derive[largest] = (parent, tuple(c for c in children if c != largest))
    return derive


def _apply(forest: Forest, results: list[NodeResult], params: GrowParams,
           level: int) -> tuple[int, list[int], list[Node]]:
    """Turn a level's decisions into branches, children and leaves; returns the new children too."""
    proposals: list[tuple[float, int, int, TreeDecision]] = []
    all_sizes = forest.train_sizes(np.stack([r.counts for r in results])).tolist() if results else []
    for result, sizes in zip(results, all_sizes):  # sizes: training rows of every tree at the node
        node = forest.nodes[result.node]
        node.counts = result.counts
        if node.id == 0:
            forest.root_size = np.asarray(sizes, dtype=np.int64)
        root_size = forest.root_size
        for tree, decision in sorted(result.decisions.items()):
            if decision.candidate is None:
                forest.set_leaf(node, tree, decision.reason)
                continue
            weighted = float(sizes[tree]) / float(root_size[tree]) * decision.candidate.gain
            if weighted + EPSILON < params.min_impurity_decrease:
                forest.set_leaf(node, tree, "min_impurity_decrease")
                continue
            proposals.append((weighted, node.id, tree, decision))
    by_accepted_node: dict[int, dict[int, TreeDecision]] = {}
    if params.max_leaf_nodes is not None:
        leaves = _leaf_counts(forest)
        for weighted, node_id, tree, decision in sorted(proposals, key=lambda p: (-p[0], p[1], p[2])):
            extra = decision.candidate.test.arity - 1
            if leaves[tree] + extra <= params.max_leaf_nodes:
                leaves[tree] += extra
                by_accepted_node.setdefault(node_id, {})[tree] = decision
            else:
                forest.set_leaf(forest.nodes[node_id], tree, "max_leaf_nodes")
    else:
        for _, node_id, tree, decision in proposals:
            by_accepted_node.setdefault(node_id, {})[tree] = decision
    splits = 0
    tests_per_node: list[int] = []
    created: list[Node] = []
    for node_id in sorted(by_accepted_node):
        node = forest.nodes[node_id]
        decided = by_accepted_node[node_id]
        tests = {t: d.candidate.test for t, d in decided.items()}
        child_counts = {t: d.child_counts for t, d in decided.items()}
        children = forest.set_tests(node, tests, child_counts)
        tests_per_node.append(len(node.branches))
        splits += len(node.branches)
        created += children
    if params.max_depth is not None and level + 1 >= params.max_depth:
        reasons = ["max_depth"] * sum(len(child.trees) for child in created)
    elif created:  # every (child, tree) pair at once
        pair_child = [k for k, child in enumerate(created) for _ in child.trees]
        pair_tree = [t for child in created for t in child.trees]
        train = forest.train_counts_of(np.stack([child.counts for child in created])[pair_child], pair_tree)
        reasons = leaf_reasons(train, params.min_samples_split, params.split.min_samples_leaf)
    first = 0
    for child in created:
        forest.set_leaves(child, child.trees, reasons[first:first + len(child.trees)])
        first += len(child.trees)
    return splits, tests_per_node, created


def _leaf_counts(forest: Forest) -> np.ndarray:
    """Leaves each tree has now, counting its open nodes as leaves."""
    counts = np.zeros(forest.n_trees, dtype=np.int64)
    for node in forest.nodes:
        for tree in node.trees:
            if node.branch_of(tree) is None:
                counts[tree] += 1
    return counts
