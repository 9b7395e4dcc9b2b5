"""The level loop of both tasks (:func:`grow_levels`): one level pass per depth (per node group), for
every tree at once.

Each level: the frontier (nodes some tree still has to decide) loses the nodes that end before their
pass; its small nodes are gathered and grown in memory (:mod:`~dasktree.levels.small`: one row budget,
one compiled grower, :func:`grow_small`, one kind of block attached); the others are cut into node
groups that fit the histogram memory budget (:func:`node_groups`); for each group a runner makes one
pass over the data (route rows, count them, sum the counts where they are) and runs the task's search
next to the summed histogram. Only the chosen tests come back; the task's decisions give the trees
their tests, children and leaves, and the next frontier. Both tasks' trees are a
:class:`~dasktree.levels.forest.Forest`, made models by one function
(:func:`~dasktree.levels.to_model.tree_model`), their nodes' feature draws those of
:mod:`~dasktree.levels.sampling`.

This module is pure: the runners (:mod:`dasktree.engine.runner`) do the scheduling.

What differs per task is the task object the loop is given (classification's :class:`_Classes` here,
regression's trees in :mod:`dasktree.regress.grow`):

- node sharing and the statistic: the main and fold trees share a node until their tests differ
  (Blockeel-Struyf), counting class counts per fold part, so a child's held-out counts come with its
  parent's decision and its counts may be derived (its parent's less its siblings'); regression's trees
  share none (their thresholds differ from the first levels on), counting exact fixed-point sums (n, s)
  of the training rows per bin, the squares and held-out sums per node only, so a fold tree's leaf made
  before its pass is counted, held-out rows only, in the level's first pass after (``held``);
- the pass and its search: shared nodes walked from each row's kept start nodes
  (:class:`~dasktree.kernels.plans.PassPlan`), each (node, tree) pair searched from the node's part
  slices, equal training counts once, multi-way and nominal tests, postponing, a grid's settings
  (:mod:`~dasktree.levels.level_search`); against every tree walked from its root
  (:class:`~dasktree.kernels.regression_pass.RegressionPlan`), one binary search per node on its sums
  (:class:`dasktree.regress.grow.RegressionSearch`); either pass the runner's one
  :meth:`LevelRunner.level_pass`, the search the pass's context;
- the leaf rules: a (child, tree) pair ends when it is made (``min_samples_split``,
  ``min_samples_leaf``, pure) or after its pass (``min_impurity_decrease`` on the weighted gain,
  ``max_leaf_nodes`` best first across a level); a regression node before its pass (``max_depth``,
  ``min_samples``) or after (pure, no split, scikit-learn's decrease per row, rpart's cp for the main
  tree); the reasons' names are in the model files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from ..binning.spec import BinSpec
from ..gc_pause import collector_paused, older_objects_frozen
from ..io.schema import NUMERIC
from ..split.api import AttributeLayout, SplitParams, binary_monotonic
from .forest import Forest, Node, sharing
from .level_search import SearchContext, SearchRequest, leaf_reasons
from . import attach, small
from .results import PackedResults, concat, tests_of
from .sampling import tree_sampling

__all__ = ["GrowParams", "grow", "grow_small", "node_groups", "LevelRunner"]

EPSILON = np.finfo(np.float64).eps


@dataclass(frozen=True)
class GrowParams:
    """What the grow loop reads; built from the validated parameters (:func:`dasktree.params.validate`),
    whose layer "grow" names these fields (``split`` holds the layer "split")."""

    max_depth: int | None = None
    min_samples_split: int = 2
    min_impurity_decrease: float = 0.0
    max_leaf_nodes: int | None = None
    split: SplitParams = SplitParams()
    max_histogram_mb: float = 256.0
    # A grid of settings (dasktree.levels.settings): tree t grows with settings[tree_setting[t]]
    # (``split`` then only stands for them where one is asked for); () : every tree grows with ``split``
    settings: tuple[SplitParams, ...] = ()
    tree_setting: tuple[int, ...] = ()

    def smallest_leaf(self, trees) -> np.ndarray | int:
        """``min_samples_leaf`` of each of ``trees`` (one number without a grid)."""
        if not self.settings:
            return self.split.min_samples_leaf
        per_setting = np.asarray([s.min_samples_leaf for s in self.settings], dtype=np.int64)
        return per_setting[np.asarray(self.tree_setting, dtype=np.int64)[np.asarray(trees, dtype=np.int64)]]


class LevelRunner(Protocol):
    """What the grow loop asks of a runner (:class:`dasktree.engine.runner.Runner` has the rest)."""

    derived: int  # nodes derived so far rather than counted (a runner may count a plan's derived nodes)

    def level_pass(self, plan, requests, context, label: str):
        """Count ``plan``'s nodes over the data and search ``requests`` as the task's ``context`` does,
        either task's: ``context.search(hist, requests)`` next to the summed histogram; on a cluster
        ``context.pass_chunks(plan, requests, n)`` cuts the search in chunks, ``context.search_cells``
        sums and searches one where its cells are, ``context.merge`` joins their results
        (:class:`~dasktree.levels.level_search.SearchContext`, :class:`dasktree.regress.grow.RegressionSearch`)."""
        ...


@dataclass
class LevelReport:
    level: int
    frontier: int
    groups: int
    seconds: float
    splits: int
    distinct_tests: float = 0.0
    derived: int = 0  # nodes whose counts were derived, not counted (dasktree.kernels.subtraction)
    searches: int = 0  # attribute searches made: (training histogram, attribute) pairs
    postponed: int = 0  # attribute searches postponed (dasktree.split.postpone)
    search_seconds: float = 0.0  # split search time on the workers (block counts included), summed
    small_nodes: int = 0  # frontier nodes whose subtrees grew in memory (dasktree.levels.small)
    grown_in_memory: int = 0  # the nodes those subtrees made
    rows_gathered: int = 0  # the rows their pass gathered


@dataclass
class GrowReport:
    levels: list[LevelReport] = field(default_factory=list)

    @property
    def level_passes(self) -> int:
        return sum(level.groups for level in self.levels)


def node_groups(frontier: list[Node], node_bytes: list[int], budget_mb: float) -> list[list[Node]]:
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


def grow(runner: LevelRunner, spec: BinSpec, params: GrowParams, *, n_trees: int = 1,
         holdout: np.ndarray | None = None, n_folds: int = 1, n_repeats: int = 1,
         describe: Callable[..., None] | None = None, bagged: bool = False, max_features: int = 0,
         feature_seed: int = 0) -> tuple[Forest, GrowReport]:
    """Grow the forest level by level with ``runner`` making the passes. Before each pass,
    ``describe(level=, nodes=, rows=)`` (if given) hears what it counts: its frontier nodes and
    the rows reaching them (a row counts once per distinct node of the forest it reaches).

    ``bagged``: the ``n_trees`` trees are a forest's bootstrap members (the runner's rows carry
    their multiplicities, :class:`~dasktree.io.bagging.BagSpec`), each searching ``max_features``
    attributes per node (0: all) drawn from ``feature_seed`` (:mod:`dasktree.levels.sampling`).
    A node's larger child is derived as for any forest (its parent's slices less its siblings', member
    by member); its small nodes finish in memory as a single tree's do, each member's from its bag's
    multiplicities and its own features per node (:func:`~dasktree.levels.small.member_settings`)."""
    if bagged:
        holdout, n_folds, n_repeats = np.arange(n_trees), n_trees, 1
    with older_objects_frozen():  # a forest adds tens of thousands of nodes
        return _grow(runner, spec, params, n_trees, holdout, n_folds, n_repeats, describe,
                     (bagged, max_features, feature_seed))


def _grow(runner: LevelRunner, spec: BinSpec, params: GrowParams, n_trees: int, holdout: np.ndarray | None,
          n_folds: int, n_repeats: int, describe: Callable[..., None] | None,
          bagging: tuple = (False, 0, 0)) -> tuple[Forest, GrowReport]:
    holdout = np.full(n_trees, -1) if holdout is None else np.asarray(holdout)
    bagged, max_features, feature_seed = bagging
    if not bagged:  # a single tree's max_features: member 0's draw for every tree (dasktree.levels.sampling)
        max_features, feature_seed = tree_sampling(params.split.max_features, params.split.random_state,
                                                   len(spec.features))
        bagging = (bagged, max_features, feature_seed)
    forest = Forest(n_trees, holdout, n_folds, spec.n_classes, n_repeats, bagged=bagged, keyed=max_features > 0)
    forest.monotonic = binary_monotonic(params.split.monotonic_cst, spec)  # a bagged forest's members too
    if params.settings and len(params.tree_setting) != n_trees:
        raise RuntimeError("a grid's trees and their settings disagree: it's a bug, please report it")
    context = SearchContext(AttributeLayout.from_spec(spec), params.split, holdout, n_folds, n_repeats,
                            params.min_samples_split, spec.n_classes, params.settings,
                            np.asarray(params.tree_setting, dtype=np.int64) if params.settings else None,
                            bagged, max_features, feature_seed, monotonic=forest.monotonic)
    limit = (small.threshold(runner, spec, 2 * spec.n_classes) if small.forest_can_gather(spec, params)
             and not params.split.min_weight_fraction_leaf else 0)
    levels = grow_levels(runner, _Classes(forest, spec, params, context, bagging), [forest.nodes[0]], limit,
                         params.max_histogram_mb, describe)
    return forest, GrowReport(levels)


def grow_levels(runner, task, frontier: list, limit: int, budget_mb: float,
                describe: Callable[..., None] | None = None) -> list[LevelReport]:
    """The level loop of both tasks, from the roots ``frontier`` (a report per level). Each level the nodes
    that end before their pass leave the frontier (``task.before``; a fold tree's may join ``task.held``,
    counted for their held-out rows only in the level's first pass); its small nodes grow in memory in one
    gathering pass (``task.small_jobs`` within ``limit`` memberships, 0: none; ``task.grow_small``); the
    others are cut into node groups within ``budget_mb`` of histograms (``task.node_bytes``), a pass counts
    and searches each group (``task.count``; before it ``describe(level=, nodes=, rows=)``, if given, hears
    what it counts: ``task.rows``), and the task's decisions make the next frontier (``task.decide``: the
    frontier and the report's numbers). ``task`` is a task's trees as they grow, a
    :class:`~dasktree.levels.forest.Forest` and its rules: :class:`_Classes` here, regression's in
    :mod:`dasktree.regress.grow`."""
    reports: list[LevelReport] = []
    level = 0
    while frontier or task.held:
        started = time.perf_counter()
        frontier = task.before(frontier, level)
        gathered = LevelReport(level, 0, 0, 0.0, 0)
        if limit > 0:
            gather, frontier = task.small_jobs(runner, frontier, level, limit)
            if gather:
                gathered = task.grow_small(runner, gather, level)
                if not frontier and not task.held:
                    reports.append(gathered)
                    break
        groups = node_groups(frontier, task.node_bytes(frontier), budget_mb) or ([[]] if task.held else [])
        derived = getattr(runner, "derived", 0)
        results = []
        for g, group in enumerate(groups):
            if describe is not None:
                describe(level=level, nodes=len(group), rows=sum(task.rows(group)))
            label = (f"level {level}" if group else "held-out leaves") + (
                f" group {g + 1}/{len(groups)}" if len(groups) > 1 else "")
            results.append(task.count(runner, group, frontier, label))
        frontier, decided = task.decide(results, level)
        reports.append(LevelReport(
            level, sum(len(g) for g in groups), len(groups), time.perf_counter() - started, **decided,
            derived=getattr(runner, "derived", 0) - derived, small_nodes=gathered.small_nodes,
            grown_in_memory=gathered.grown_in_memory, rows_gathered=gathered.rows_gathered))
        level += 1
    return reports


class _Classes:
    """Classification's rules in the level loop: the main and fold trees share nodes (Blockeel-Struyf), each
    counting class counts per fold part; a pass's larger children derived from their parents' last counts
    (:mod:`dasktree.kernels.subtraction`); each (node, tree) pair searched from the node's part slices
    (:func:`~dasktree.levels.level_search.search_group`); leaves when a child is made, or after its pass."""

    held: tuple = ()  # a node's held-out counts come with its parent's decision

    def __init__(self, forest: Forest, spec: BinSpec, params: GrowParams, context: SearchContext, bagging: tuple):
        self.forest, self.spec, self.params, self.context, self.bagging = forest, spec, params, context, bagging
        self.new_branches: list[tuple[int, list[int]]] = []  # the last level's (parent, children) of each branch

    def before(self, frontier: list[Node], level: int) -> list[Node]:
        return frontier

    def small_jobs(self, runner, frontier: list[Node], level: int, limit: int) -> tuple[list[Node], list[Node]]:
        return small.forest_jobs(self.forest, frontier, limit, self.params.max_depth, small.most_rows(self.params),
                                 small.root_rows(runner, self.spec, self.forest) if level == 0 else None,
                                 small.row_memberships(runner, self.spec, self.forest, 2 * self.spec.n_classes),
                                 small.threads_of(runner))

    def grow_small(self, runner, gather: list[Node], level: int) -> LevelReport:
        """:func:`grow_small` of ``gather``'s nodes, each open tree's subtree (a grid's trees in a pass per
        setting, :func:`~dasktree.levels.small.setting_jobs`)."""
        forest, spec, params = self.forest, self.spec, self.params
        self.new_branches = []  # no parent's counts kept past a gathering pass
        jobs = [(node.id, t) for node in gather for t in node.open_trees()]
        made, rows, seconds = 0, 0, 0.0
        groups = small.setting_jobs(params, jobs)
        for split, group in groups:
            grown = grow_small(runner, forest, group, small.forest_gather_plan(forest, group, spec.widths), spec,
                               level, small.kernel.CLASSIFY, self.bagging[1:], n_classes=spec.n_classes,
                               criterion=small.class_criterion(split), min_samples_split=params.min_samples_split,
                               min_samples_leaf=split.min_samples_leaf, max_depth=params.max_depth,
                               min_decrease=params.min_impurity_decrease,
                               job_root_size=forest.root_size[np.asarray([t for _, t in group], dtype=np.int64)])
            made, rows = made + grown["grown_in_memory"], rows + grown["rows_gathered"]
            seconds += grown["small_seconds"]
        return LevelReport(level, 0, len(groups), seconds, 0, small_nodes=len(gather), grown_in_memory=made,
                           rows_gathered=rows)

    def node_bytes(self, frontier: list[Node]) -> list[int]:
        cells = self.spec.total_bins * self.spec.n_classes
        return [self.forest.node_bytes(node, cells) for node in frontier]

    def rows(self, nodes: list[Node]) -> list[int]:
        return _rows(nodes)

    def count(self, runner, group: list[Node], frontier: list[Node], label: str) -> PackedResults:
        rows = _rows(group)
        # Subtraction needs the parents' counts of the last pass: one group then and now.
        derive = (_derivations(self.new_branches, dict(zip([node.id for node in group], rows)))
                  if len(group) == len(frontier) else {})
        forest = self.forest
        plan = forest.pass_plan(group, self.spec.widths, self.spec.n_classes, frontier, derive)
        requests = [SearchRequest(node.id, s, node.open_trees(), base, parts, rest, n, node.key,
                                  forest.bounds_of(node, node.open_trees()))
                    for s, (node, base, parts, rest, n) in enumerate(
                        zip(group, plan.slot_base.tolist(), plan.slot_parts, plan.slot_rest, rows))]
        return runner.level_pass(plan, requests, self.context, label)

    def decide(self, results: list[PackedResults], level: int) -> tuple[list[Node], dict]:
        forest = self.forest
        packed = concat(results, forest.n_parts, self.spec.n_classes)
        with collector_paused():  # thousands of nodes, no cycles among them: nothing for it to free
            splits, tests_per_node, children = _apply(forest, packed, self.params, level)
        self.context = self.context.rooted(forest.root_size)  # min_weight_fraction_leaf's totals
        decided = (forest.nodes[i] for i in packed.nodes.tolist())
        self.new_branches = [] if len(results) > 1 else [(n.id, b.children) for n in decided for b in n.branches]
        return [node for node in children if node.open_trees()], dict(  # in id order, as created
            splits=splits, distinct_tests=float(np.mean(tests_per_node)) if tests_per_node else 0.0,
            searches=packed.searches, postponed=packed.postponed, search_seconds=packed.search_seconds)


def grow_small(runner, store, jobs: list[tuple[int, int]], plan, spec: BinSpec, level: int, task: int,
               sampling: tuple[int, int] = (0, 0), **settings) -> dict:
    """Either task's pass gathering the rows of ``jobs`` ((node, tree) pairs of ``store``, a slot each in
    ``plan``), their subtrees grown there in memory by the compiled grower for ``task`` (``settings``: the
    fit's limits; the bins, each job's feature draws, ``sampling`` = (max_features, feature_seed), and its
    value bounds added here) and attached to ``store`` (:func:`~dasktree.levels.attach.attach`); the
    nodes made, the rows gathered and the seconds, as a level report says them."""
    started = time.perf_counter()
    numeric = [f.kind == NUMERIC for f in spec.features]
    settings.update(offsets=spec.offsets, widths=spec.widths, numeric=np.array(numeric, dtype=bool),
                    upper=[f.upper if n else None for f, n in zip(spec.features, numeric)],
                    values=[f.values if n else None for f, n in zip(spec.features, numeric)],
                    **small.member_settings(store, jobs, *sampling), **small.bound_settings(store, jobs))
    results = runner.small_pass(plan, small.grow_chunk, f"level {level} (small nodes in memory)", plan=plan,
                                task=task, settings=settings)
    made = sum(attach.attach(store, jobs, chunk_jobs, nodes, spec) for chunk_jobs, nodes in results)
    return {"grown_in_memory": made, "rows_gathered": int(getattr(runner, "rows_gathered", 0)),
            "small_seconds": round(time.perf_counter() - started, 4)}


def _rows(nodes: list[Node]) -> list[int]:
    """Rows at each node from its counts (0 while unknown: the root before the first pass)."""
    if not nodes or any(node.counts is None for node in nodes):
        return [0 if node.counts is None else int(node.counts[-1].sum()) for node in nodes]
    return np.stack([node.counts[-1] for node in nodes]).sum(axis=1).tolist()


def _derivations(branches: list[tuple[int, list[int]]], rows: dict[int, int]) -> dict[int, tuple[int, tuple[int, ...]]]:
    """The child of each new branch to derive rather than count: the one with most rows, when all
    its siblings are counted in the pass (they are on the frontier: ``rows`` holds its nodes' rows)."""
    derive = {}
    for parent, children in branches:
        if len(children) >= 2 and all(k in rows for k in children):
            at = [rows[k] for k in children]
            largest = children[at.index(max(at))]  # the first of equals
            derive[largest] = (parent, tuple(c for c in children if c != largest))
    return derive


def _apply(forest: Forest, packed: PackedResults, params: GrowParams,
           level: int) -> tuple[int, list[int], list[Node]]:
    """Turn a level's decisions into branches, children and leaves; returns the new children too.

    Straight from the packed columns (:mod:`dasktree.levels.results`): a deep forest level decides
    thousands of (node, tree) pairs, and only what the forest keeps becomes objects."""
    ids = packed.nodes.tolist()
    nodes = [forest.nodes[i] for i in ids]
    for node, counts in zip(nodes, packed.counts):
        node.counts = counts
    if not nodes:
        return 0, [], []
    sizes = forest.train_sizes(packed.counts)  # (results, trees): training rows of every tree at the node
    if 0 in ids:
        forest.root_size = sizes[ids.index(0)].astype(np.int64)
    result, tree, choice = packed.pair_result, packed.pair_tree, packed.pair_choice
    reasons = list(packed.reasons)
    chosen = np.flatnonzero(choice >= 0)
    weighted = (sizes[result[chosen], tree[chosen]].astype(np.float64)
                / forest.root_size[tree[chosen]].astype(np.float64) * packed.gain[choice[chosen]])
    low = weighted + EPSILON < params.min_impurity_decrease
    for d in chosen[low].tolist():
        reasons[d] = "min_impurity_decrease"
    accepted, weighted = chosen[~low], weighted[~low]
    if params.max_leaf_nodes is not None:
        accepted = _within_leaf_budget(forest, packed, accepted, weighted, params.max_leaf_nodes, reasons)
    _set_pair_leaves(forest, nodes, packed, reasons)
    splits = 0
    tests_per_node: list[int] = []
    accepted = accepted[np.argsort(packed.nodes[result[accepted]], kind="stable")]  # by node id, then tree
    bounds = [0] + (np.flatnonzero(np.diff(result[accepted])) + 1).tolist() + [accepted.size]
    at_result, at_tree, at_choice = (a[accepted].tolist() for a in (result, tree, choice))
    arity_start = packed.arity_start.tolist()
    used = np.unique(at_choice).tolist()  # trees choosing one test share its Test
    test = dict(zip(used, tests_of(packed, used))).__getitem__
    branches = []  # (node, trees, test, child counts) of every branch, in node order
    for lo, hi in zip(bounds[:-1], bounds[1:]) if accepted.size else []:
        node = nodes[at_result[lo]]
        if hi - lo == 1:  # one tree deciding (most nodes deep in a bifurcated forest)
            shared = [((at_tree[lo],), at_choice[lo])]
        else:
            choice_of = {at_tree[d]: at_choice[d] for d in range(lo, hi)}
            shared = [(trees, choice_of[trees[0]]) for trees in sharing({t: test(k) for t, k in choice_of.items()})]
        branches += [(node, trees, test(k), packed.children[arity_start[k]:arity_start[k + 1]]) for trees, k in shared]
        tests_per_node.append(len(shared))  # a node is decided once: these are all its branches
        splits += len(shared)
    created = forest.add_branches(branches)
    if params.max_depth is not None and level + 1 >= params.max_depth:
        forest.end_all(created, "max_depth")
    elif created:  # every (child, tree) pair at once
        pair_child = [k for k, child in enumerate(created) for _ in child.trees]
        pair_tree = [t for child in created for t in child.trees]
        train = forest.train_counts_of(np.stack([child.counts for child in created])[pair_child], pair_tree)
        child_reasons = leaf_reasons(train, params.min_samples_split, params.smallest_leaf(pair_tree))
        first = 0
        for child in created:
            forest.set_leaves(child, child.trees, child_reasons[first:first + len(child.trees)])
            first += len(child.trees)
    return splits, tests_per_node, created


def _within_leaf_budget(forest: Forest, packed: PackedResults, accepted: np.ndarray, weighted: np.ndarray,
                        max_leaf_nodes: int, reasons: list[str]) -> np.ndarray:
    """The proposed pairs ``accepted`` that keep their tree within ``max_leaf_nodes`` leaves, best
    weighted gain first (ties: node id, then tree); the others get the reason "max_leaf_nodes"."""
    leaves = _leaf_counts(forest)
    node_of = packed.nodes[packed.pair_result[accepted]]
    trees = packed.pair_tree[accepted]
    arity = np.diff(packed.arity_start)[packed.pair_choice[accepted]]
    kept = []
    for i in np.lexsort((trees, node_of, -weighted)).tolist():
        t, extra = int(trees[i]), int(arity[i]) - 1
        if leaves[t] + extra <= max_leaf_nodes:
            leaves[t] += extra
            kept.append(i)
        else:
            reasons[int(accepted[i])] = "max_leaf_nodes"
    return accepted[np.sort(np.asarray(kept, dtype=np.int64))]


def _set_pair_leaves(forest: Forest, nodes: list[Node], packed: PackedResults, reasons: list[str]) -> None:
    """End each (node, tree) pair with a reason there (``reasons``, one per pair)."""
    ended = [d for d, reason in enumerate(reasons) if reason]
    by_result: dict[int, list[int]] = {}
    for d in ended:
        by_result.setdefault(int(packed.pair_result[d]), []).append(d)
    for i, pairs in by_result.items():
        forest.set_leaves(nodes[i], [int(packed.pair_tree[d]) for d in pairs], [reasons[d] for d in pairs])


def _leaf_counts(forest: Forest) -> np.ndarray:
    """Leaves each tree has now, counting its open nodes as leaves."""
    counts = np.zeros(forest.n_trees, dtype=np.int64)
    for node in forest.nodes:
        for tree in node.trees:
            if node.branch_of(tree) is None:
                counts[tree] += 1
    return counts
