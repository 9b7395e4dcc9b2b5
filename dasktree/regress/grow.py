"""Regression trees in the level loop (:func:`dasktree.levels.grow.grow_levels`, classification's too):
the main tree and every fold tree in the same passes, their rules as the loop's task object.

Each pass counts the open frontier nodes of every tree
(:class:`~dasktree.kernels.regression_pass.RegressionPlan`), in groups whose sums fit
``max_histogram_mb``; next to the summed bins (on a worker, in a Dask fit),
:class:`RegressionSearch` chooses each node's test (:mod:`dasktree.split.regression`)
and only the decisions come back. The trees are a :class:`~dasktree.levels.forest.Forest`
whose trees share no node, each node's statistic its exact sums. A fold tree ``t`` holds out part ``t - 1``:
its rows there add to the node's held-out sums, so every node of it knows
what cross-validation and pruning read (Blockeel & Struyf, 004, Section 2.2.2),
with no pass of their own. Fold trees do not share nodes here: each walks its own
tree, which costs a walk per tree and row, but no pass. (On continuous data the
fold trees choose thresholds apart from the first levels on, so sharing would
save little where the passes cost most.)

A node whose rows are few enough is not counted at all: the pass that reaches it gathers its rows
and its subtree grows to the end in memory (:mod:`dasktree.levels.small`), with the tests the level
passes would choose; the passes stop once every open node is small. A bagged forest's members
gather alike, as classification's: each row counted its multiplicity in the member's bag, each node
searching the attributes the level search draws for it (:func:`~dasktree.levels.small.member_settings`).
(Not with the ``poisson``
criterion or a ``min_impurity_decrease``, whose floats the compiled grower does not repeat bit for
bit: those fits stay level-wise.)

A node becomes a leaf before it is counted when it is at ``max_depth`` or has
fewer than ``min_samples_split`` rows (or fewer than twice ``min_samples_leaf``);
after, when its training targets are all equal, no test has a positive size on
both sides, or its decrease is below ``min_impurity_decrease`` (scikit-learn's
rule: the decrease of the weighted impurity, per row of the whole data). A fold
tree's leaf made before it is counted still needs its held-out sums: it is
counted, held-out rows only, in the next pass (one more pass after the last
level when there is any).

A fit pruned at rpart's complexity (``prune="cp"``, ``cp`` here) grows its main tree only as far as
that pruning can reach: a node that would split becomes a leaf (``"cp"``) when its own sum of squared
errors is below ``cp`` times the root's (:func:`~dasktree.split.small_grower.cp_limit`, the same
compiled test in the passes and in memory), as cost-complexity pruning at that alpha collapses it
whatever grows below it. The pruned tree is the one growing on would give; the grown tree stops there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..binning.spec import BinSpec
from ..binning.target import square_sum
from ..gc_pause import older_objects_frozen
from ..io.schema import NUMERIC
from ..kernels.regression_pass import (CHANNELS, HELD_N, HELD_S, HELD_SQUARES, NODE_CELLS, TRAIN_SQUARES,
                                       RegressionPlan)
from ..levels import attach, small
from ..levels.forest import Forest, Node
from ..levels.grow import LevelReport, grow_levels, grow_small
from ..levels.sampling import feature_mask, tree_members, tree_sampling
from ..levels.search_chunks import MIN_CHUNK_SLICES, SearchChunk
from ..split.api import NodeSplits, RegressionLayout, Test, best_splits, monotonic_of
from ..split.api import small_grower as kernel

__all__ = ["RegressionGrowParams", "RegressionSearch", "grow_params", "grow_regression", "layout_of"]


@dataclass(frozen=True)
class RegressionGrowParams:
    criterion: str = "squared_error"
    max_depth: int | None = None
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_impurity_decrease: float = 0.0
    min_weight_fraction_leaf: float = 0.0  # each child at least this fraction of its tree's rows (no small nodes)
    max_histogram_mb: float = 256.0
    # every node's own sum of squares kept (M5's pessimistic pruning reads them): the compiled grower
    # of small nodes keeps (n, s) only, so such fits stay in the level passes
    node_squares: bool = False
    # a bagged forest (dasktree.forest_fit): tree t is member t, counting each row its multiplicity in
    # t's bag (the runner's part lines), searching ``max_features`` attributes per node (0: all) drawn by
    # dasktree.levels.sampling.feature_mask from ``feature_seed``, t and the node's path key
    bagged: bool = False
    max_features: int = 0
    feature_seed: int = 0
    # monotonic_cst per attribute (dasktree.split.monotonic; None: none): each node's value bounded
    monotonic: tuple | None = None
    # prune="cp": rpart's complexity; the main tree stops where pruning at cp times its root's mean squared
    # error must cut (0: grows on)
    cp: float = 0.0


def single_tree_fields(settings, spec: BinSpec) -> dict:
    """A single tree's ``max_features`` draw and ``monotonic_cst`` as :class:`RegressionGrowParams` fields."""
    out = {}
    k, seed = tree_sampling(settings.get("max_features"), settings.get("random_state", 0), len(spec.features))
    if k:
        out.update(max_features=k, feature_seed=seed)
    cst = monotonic_of(settings.get("monotonic_cst"), spec)
    if cst is not None:
        out["monotonic"] = tuple(cst.tolist())
    return out


def grow_params(settings, runner, spec: BinSpec | None = None, **extra) -> RegressionGrowParams:
    """The level loop's parameters from a regression fit's validated ``settings``, the histogram budget
    within the runner's (planned against ``memory_limit``); ``extra``: the other fields. ``spec``: a single
    tree's ``max_features`` (every tree draws as member 0) and ``monotonic_cst`` read against its features."""
    if spec is not None:
        extra = {**single_tree_fields(settings, spec), **extra}
    return RegressionGrowParams(
        criterion=settings["criterion"], max_depth=settings["max_depth"],
        min_samples_split=settings["min_samples_split"], min_samples_leaf=settings["min_samples_leaf"],
        min_impurity_decrease=float(settings["min_impurity_decrease"]),
        min_weight_fraction_leaf=float(settings.get("min_weight_fraction_leaf") or 0.0),
        max_histogram_mb=min(settings["max_histogram_mb"], getattr(runner, "max_histogram_mb", None) or np.inf),
        **extra)


def layout_of(spec: BinSpec, params: RegressionGrowParams) -> RegressionLayout:
    numeric = np.array([f.kind == NUMERIC for f in spec.features], dtype=bool)
    empty = np.zeros(0)
    return RegressionLayout(
        offsets=np.asarray(spec.offsets, dtype=np.int64), widths=np.asarray(spec.widths, dtype=np.int64),
        numeric=numeric, upper=tuple(f.upper if f.kind == NUMERIC else empty for f in spec.features),
        values=tuple(f.values if f.kind == NUMERIC else empty for f in spec.features),
        criterion=params.criterion, min_samples_leaf=params.min_samples_leaf,
        lo=spec.target.lo, step=spec.target.step, min_weight_fraction_leaf=params.min_weight_fraction_leaf)


@dataclass(frozen=True)
class RegressionSearch:
    """A regression pass's search, the context of the runner's ``level_pass`` (as classification's is a
    :class:`~dasktree.levels.level_search.SearchContext`); the pass's plan is its one request. Next to
    the summed sums: each binned slot's training sums (m, 2), every slot's node cells (n_slots, 8) and
    each binned slot's best test (:class:`~dasktree.split.regression.NodeSplits`), among the attributes
    ``active[:, slot]`` when given; small, what goes back to the client. On a cluster the binned slots are
    cut in runs, each chunk summing its own cells (the last one's run is followed by every node cells)."""

    layout: RegressionLayout
    active: np.ndarray | None = None  # (n_attributes, slots) the attributes each slot searches (None: all)

    def search(self, hist: np.ndarray, plan: RegressionPlan) -> tuple:
        return self._slots(hist, (0, plan.binned, plan.binned, plan.total_bins))

    def pass_chunks(self, plan: RegressionPlan, requests: RegressionPlan, n_tasks: int,
                    least: int = MIN_CHUNK_SLICES) -> tuple:
        """At most ``n_tasks`` runs of binned slots, of ``least`` slots or more (one at least)."""
        n = max(1, min(n_tasks, plan.binned // least))
        edges = [plan.binned * k // n for k in range(n + 1)]
        return plan, [SearchChunk(a * plan.cells, b * plan.cells if b < plan.binned else plan.size,
                                  [(a, b, plan.binned, plan.total_bins)]) for a, b in zip(edges, edges[1:])]

    def search_cells(self, *hists: np.ndarray, lo: int, hi: int, chunk: SearchChunk) -> tuple:
        total = np.array(hists[0][lo:hi], dtype=np.int64)
        for h in hists[1:]:
            total += h[lo:hi]
        [slots] = chunk.requests
        return self._slots(total, slots)

    def merge(self, results: list) -> tuple:
        """The chunks' results, in slot order, as one pass's."""
        if len(results) == 1:
            return results[0]
        splits = [r[2] for r in results]
        return (np.concatenate([r[0] for r in results]), results[-1][1], NodeSplits(
            *(np.concatenate([getattr(x, name) for x in splits]) for name in ("gain", "attribute", "cut", "default")),
            [t for x in splits for t in x.tables], np.concatenate([x.children for x in splits])))

    def _slots(self, hist: np.ndarray, slots: tuple) -> tuple:
        """Binned slots ``a:b`` of ``slots`` (a, b, binned slots, total bins) from ``hist``, which starts at
        slot ``a``'s bins (every node cells after them when ``b`` is the last binned slot; else none)."""
        a, b, binned, total_bins = slots
        cut = (b - a) * total_bins * CHANNELS
        bins = hist[:cut].reshape(b - a, total_bins, CHANNELS)
        layout, first = self.layout, int(self.layout.offsets[0]) if len(self.layout.offsets) else 0
        width = int(layout.widths[0]) if len(layout.widths) else 0
        if (a, b) != (0, binned):
            layout = replace(layout, root_n=None if layout.root_n is None else layout.root_n[a:b],
                             bounds=None if layout.bounds is None else layout.bounds[a:b])
        cells = hist[cut:].reshape(-1, NODE_CELLS).copy() if b == binned else None
        return (bins[:, first:first + width].sum(axis=1), cells,
                best_splits(bins, layout, None if self.active is None else self.active[:, a:b]))


class _Trees(Forest):
    """The trees' nodes: a :class:`~dasktree.levels.forest.Forest` whose trees share none (tree ``t``'s root
    is node ``t``), each node's statistic its training and held-out sums ``(n, s)`` (``counts``, (4,) int64)
    and, once counted, their sums of squares (``squares``, Python ints); the flat arrays a pass walks as
    the trees grow (node ``e``'s attribute and its code -> child table); and regression's rules in the level
    loop (:func:`~dasktree.levels.grow.grow_levels`): a fold tree's leaf made before its pass is counted,
    held-out rows only, in the next (:attr:`held`)."""

    def __init__(self, spec: BinSpec, params: RegressionGrowParams, holdout: np.ndarray, rows: int):
        n = holdout.size
        super().__init__(n, holdout, max(1, n - 1), 2, bagged=params.bagged, keyed=params.max_features > 0,
                         separate=True)
        for node in self.nodes:
            node.counts = np.zeros(2 * CHANNELS, dtype=np.int64)
        self.spec, self.params, self.rows_in_data = spec, params, rows
        self.monotonic = None if params.monotonic is None else np.asarray(params.monotonic, dtype=np.int8)
        self.layout = replace(layout_of(spec, params), monotonic=self.monotonic)
        self.held: list[Node] = []  # fold trees' leaves made before they were counted: their held-out sums
        self.attribute: list[int] = [-1] * n
        self.offset: list[int] = [0] * n
        self.tables: list[np.ndarray] = []
        self.table_size = 0
        self.stats_width = 2  # a grown node's training (and held-out) statistics: (n, s)
        self.stop = 0.0  # the main tree's cp stop (kernel.cp_limit), once its root is counted

    def train_counts(self, counts: np.ndarray, tree: int) -> np.ndarray:
        return counts[..., :2]

    def validation_counts(self, counts: np.ndarray, tree: int) -> np.ndarray | None:
        return None if self.holdout[tree] < 0 else counts[..., 2:]

    def value(self, train: np.ndarray) -> float:
        """A node's value: its training mean (NaN without rows)."""
        return float(train[1]) / float(train[0]) if train[0] else np.nan

    def total_n(self, sums, cells) -> int:
        """Every row, as counted: the main tree's root's training rows (its first pass counts them)."""
        root = self.nodes[0]
        if root.squares is None and len(sums):  # the first pass: the root is slot 0
            return int(sums[0, 0] + cells[0, HELD_N])
        return int(root.counts[0] + root.counts[2])

    def finish_job(self, e: int, tree: int, test: Test | None, reason: str, stats: np.ndarray) -> None:
        """Node ``e`` grown in memory (:func:`dasktree.levels.attach.attach`): its sums (training and held-out
        (n, s), the pieces of their squares) and its test or leaf; a leaf already takes its held-out sums."""
        node = self.nodes[e]
        held = square_sum(*stats[7:10])
        if node.leaf_reason:
            node.counts[2:] = stats[2:4]
            node.squares = (node.squares[0] if node.squares else 0, held)
            return
        node.counts, node.squares = stats[:4].copy(), (square_sum(*stats[4:7]), held)
        self.end_job(node, tree, test, reason)

    def split(self, node: Node, test: Test, children: np.ndarray) -> list[Node]:
        """``node``'s test and its two children, whose sums are ``children`` (2, 4)."""
        kids = self.add_branches([(node, node.trees, test, children)])
        self.attribute += [-1, -1]
        self.offset += [0, 0]
        self.attribute[node.id], self.offset[node.id] = test.attribute, self.table_size
        table = np.asarray([kid.id for kid in kids], dtype=np.int32)[test.bin_children.astype(np.int64)]
        self.tables.append(table)
        self.table_size += table.size
        return kids

    def plan(self, counted: list[Node], held_only: list[Node]) -> RegressionPlan:
        """The pass counting ``counted`` (bins and all) and ``held_only`` (held-out rows only), in slots
        0, 1, ... in order: the trees as the flat arrays it walks."""
        slot = np.full(len(self.nodes), -1, dtype=np.int32)
        slot[[node.id for node in counted + held_only]] = np.arange(len(counted) + len(held_only), dtype=np.int32)
        return RegressionPlan(root=np.arange(self.n_trees, dtype=np.int64),
                              attribute=np.asarray(self.attribute, dtype=np.int32),
                              offset=np.asarray(self.offset, dtype=np.int64), slot=slot,
                              table=np.concatenate(self.tables).astype(np.int32) if self.tables else np.zeros(1, np.int32),
                              holdout=self.holdout, n_slots=len(counted) + len(held_only),
                              total_bins=self.spec.total_bins, offsets=np.asarray(self.spec.offsets, dtype=np.int64),
                              n_bin_slots=len(counted), bagged=self.bagged)

    # ------------------------------------------------------------ the level loop's rules
    def before(self, frontier: list[Node], level: int) -> list[Node]:
        """The frontier less its leaves made before their pass; a fold tree's joins :attr:`held`."""
        counted = []
        for node in frontier:
            reason = _leaf_before(node, self.params) if level > 0 else ""
            if not reason:
                counted.append(node)
                continue
            self.set_leaf(node, node.trees[0], reason)
            if self.holdout[node.trees[0]] >= 0:
                self.held.append(node)
        return counted

    def small_jobs(self, runner, frontier: list[Node], level: int, limit: int) -> tuple[list[Node], list[Node]]:
        """The nodes gathered rather than counted (:func:`~dasktree.levels.small.jobs`: a fold tree's node
        holds its held-out rows too, :func:`~dasktree.levels.small.with_held_out`; with levels enough left,
        :func:`~dasktree.levels.small.deep_enough`; balanced on the runner's threads,
        :func:`~dasktree.levels.small.balanced`) and the held-out leaves gathered with them, in the rows
        left; the others."""
        if not small.deep_enough(level, self.params.max_depth):
            return [], frontier
        k = max(1, self.n_trees - 1)
        estimates = [self.rows_in_data if level == 0 else small.with_held_out(int(node.counts[0]), k)
                     if self.holdout[node.trees[0]] >= 0 else int(node.counts[0]) for node in frontier]
        gathered, counted, left = small.jobs(frontier, estimates, limit, [(e or 0, e or 0) for e in estimates],
                                             small.threads_of(runner))
        if not gathered:
            return [], frontier
        leaves, self.held, _ = small.jobs(self.held, [int(node.counts[0]) // k + 1 for node in self.held], left)
        return gathered + leaves, counted

    def grow_small(self, runner, gather: list[Node], level: int) -> LevelReport:
        """:func:`~dasktree.levels.grow.grow_small` of ``gather``'s nodes."""
        params = self.params
        leaf = np.asarray([kernel.REASONS.index(node.leaf_reason[node.trees[0]]) if node.leaf_reason else 0
                           for node in gather], dtype=np.int8)
        # the main tree's cp stop: known once its root is counted, else (the root gathered) from the root's sums
        stop = np.asarray([0.0 if node.trees[0] or not params.cp else -1.0 if node.id == 0 else self.stop
                           for node in gather], dtype=np.float64)
        jobs = [(node.id, node.trees[0]) for node in gather]
        grown = grow_small(runner, self, jobs,
                           small.forest_gather_plan(self, jobs, self.spec.widths), self.spec, level, kernel.REGRESS,
                           (params.max_features, params.feature_seed),
                           criterion=kernel.SQUARED_ERROR if params.criterion == "squared_error" else kernel.FRIEDMAN,
                           min_samples_split=params.min_samples_split, min_samples_leaf=params.min_samples_leaf,
                           max_depth=params.max_depth, job_leaf=leaf, job_cp=stop, cp=params.cp)
        return LevelReport(level, 0, 1, grown["small_seconds"], 0, small_nodes=len(gather),
                           grown_in_memory=grown["grown_in_memory"], rows_gathered=grown["rows_gathered"])

    def node_bytes(self, frontier: list[Node]) -> list[int]:
        return [8 * (self.spec.total_bins * CHANNELS + NODE_CELLS)] * len(frontier)

    def rows(self, nodes: list[Node]) -> list[int]:
        return [int(node.counts[0]) for node in nodes]

    def count(self, runner, group: list[Node], frontier: list[Node], label: str) -> tuple:
        """One pass counting ``group`` and, the level's first, the held-out rows of :attr:`held`; each
        node's test searched next to the sums (the runner's ``level_pass`` with a :class:`RegressionSearch`)."""
        extra, self.held = self.held, []
        plan = self.plan(group, extra)
        bounds = None if self.monotonic is None else np.asarray([self.bounds_of(n, n.trees) for n in group])
        k, n_attributes = self.params.max_features, len(self.spec.features)
        active = feature_mask(  # a bagged forest's member its own draw, a single tree's trees member 0's
            self.params.feature_seed, tree_members([n.trees[0] for n in group], self.params.bagged),
            np.asarray([n.key for n in group], np.uint64), n_attributes, k) if 0 < k < n_attributes and group else None
        search = RegressionSearch(replace(
            self.layout, root_n=[self.nodes[node.trees[0]].counts[0] for node in group],
            bounds=None if bounds is None else bounds.reshape(len(group), 2)), active)
        sums, cells, splits = runner.level_pass(plan, plan, search, label)
        return group, extra, sums, cells, splits

    def decide(self, results: list[tuple], level: int) -> tuple[list[Node], dict]:
        """Each pass's nodes decided in slot order: held-out sums, or a test and children, or a leaf."""
        children: list[Node] = []
        for group, extra, sums, cells, splits in results:
            for k, node in enumerate(extra):
                _held(node, cells[len(group) + k])
            total_n = self.total_n(sums, cells)
            for k, node in enumerate(group):
                tree = node.trees[0]
                tree_n = total_n if not self.params.bagged else (  # a member's rows: its root's, its bag's
                    int(sums[k, 0]) if node.id == tree else int(self.nodes[tree].counts[0]))
                children += _decide(self, node, k, sums, cells, splits, tree_n)
        return children, {"splits": len(children) // 2}


def _leaf_before(node: Node, params: RegressionGrowParams) -> str:
    n = int(node.counts[0])
    if params.max_depth is not None and node.depth >= params.max_depth:
        return "max_depth"
    if n < params.min_samples_split or n < 2 * params.min_samples_leaf:
        return "min_samples"
    return ""


def grow_regression(runner, spec: BinSpec, params: RegressionGrowParams, *, holdout: np.ndarray,
                    describe=None, rows: int = 0) -> tuple[Forest, list[dict]]:
    """Grow the trees (tree ``t`` holds out part ``holdout[t]``, -1: none) in the level loop
    (:func:`~dasktree.levels.grow.grow_levels`): a forest whose trees share no node, with the subtrees
    grown in memory, and a report line per level. ``rows``: the data's rows (whether the roots are small
    already)."""
    gathering = (params.criterion in ("squared_error", "friedman_mse") and not params.min_impurity_decrease > 0
                 and not params.node_squares and not params.min_weight_fraction_leaf)
    trees = _Trees(spec, params, holdout, rows)
    with older_objects_frozen():  # a deep tree adds tens of thousands of nodes: a collection scans the fit's only
        levels = grow_levels(runner, trees, trees.nodes[:holdout.size], small.threshold(runner, spec) if gathering
                             else 0, params.max_histogram_mb, describe)
    return trees, [asdict(level) for level in levels]


def _held(node: Node, cells: np.ndarray) -> None:
    """A node's held-out sums and sum of squares, from its node cells."""
    node.counts[2], node.counts[3] = cells[HELD_N], cells[HELD_S]
    train = node.squares[0] if node.squares else 0
    node.squares = (train, square_sum(*cells[HELD_SQUARES]))


def _decide(forest: _Trees, node: Node, k: int, sums, cells, splits, total_n: int) -> list[Node]:
    """``node`` (slot ``k`` of the pass): its sums as counted, then its test and children or a leaf."""
    params, spec = forest.params, forest.spec
    node.counts = np.array([sums[k, 0], sums[k, 1], cells[k, HELD_N], cells[k, HELD_S]], dtype=np.int64)
    node.squares = (square_sum(*cells[k, TRAIN_SQUARES]), square_sum(*cells[k, HELD_SQUARES]))
    n, s = int(node.counts[0]), int(node.counts[1])
    if node.id == 0 and params.cp > 0:  # the main tree's root: where its growth stops
        forest.stop = float(kernel.cp_limit(sums[k, 0], sums[k, 1], *cells[k, TRAIN_SQUARES], params.cp))
    reason = ""
    if n == 0 or n * node.squares[0] == s * s:  # every training target equal: nothing to decrease
        reason = "pure"
    elif not np.isfinite(float(splits.gain[k])):
        reason = "no_split"
    elif params.min_impurity_decrease > 0 and _decrease(node, splits.children[k], spec, total_n) \
            < params.min_impurity_decrease:
        reason = "min_impurity_decrease"
    elif forest.stop > 0 and node.trees[0] == 0 and kernel.sse_bound(sums[k, 0], sums[k, 1],
                                                                     *cells[k, TRAIN_SQUARES]) < forest.stop:
        reason = "cp"  # it would split, and pruning at cp cuts it whatever grows below
    if reason:
        forest.set_leaf(node, node.trees[0], reason)
        return []
    test = attach.binary_test(spec, int(splits.attribute[k]), int(splits.cut[k]), int(splits.default[k]),
                             splits.tables[k])
    kids = np.zeros((2, 2 * CHANNELS), dtype=np.int64)
    kids[:, :CHANNELS] = splits.children[k]  # held-out sums: when the child is counted
    return forest.split(node, test, kids)


def _decrease(node: Node, children: np.ndarray, spec: BinSpec, total_n: int) -> float:
    """scikit-learn's impurity decrease of a split, in the target's units: the decrease of the sum of
    squared errors per row of the whole data (the sums of squares cancel)."""
    n, s = float(node.counts[0]), float(node.counts[1])
    kids = sum(float(c[1]) ** 2 / float(c[0]) for c in children if c[0] > 0)
    return (kids - s * s / n) * spec.target.step ** 2 / total_n
