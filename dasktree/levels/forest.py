"""The forest: trees that share nodes until they choose different tests.

Blockeel & Struyf (004, Section 3.1). Tree 0 is the main tree, trained on all
rows; with cross-validation tree ``t >= 1`` holds out one fold *part*. Each
:class:`Node` keeps the class counts of its rows per part, so the training
counts of tree ``t`` there are ``total - part[t]`` and its validation counts are
``part[t]`` (004, Section 2.2.2). A node is reached by a set of trees; each of
them either has its test in one of the node's :class:`Branch` es (trees that
chose the identical test share a branch and its children) or ends at the node
(a leaf of that tree). A node with more than one branch is a *bifurcation*.
A single tree is a forest of one.

A *bagged* forest (``bagged``) is one of bootstrap members: member ``t`` counts each row its
multiplicity in ``t``'s bag (:mod:`dasktree.io.bagging`) in part ``t``, and trains on part ``t``
alone (``holdout[t] = t``, ``n_folds`` = members, one repetition; no rest slice): its training
counts are ``part[t]``, and a node's total row is the sum of its members' parts.

This module is pure Python and numpy: it decides nothing about splits (that is
``dasktree.split``) and schedules nothing (that is ``dasktree.levels.grow``).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field

import numpy as np

from ..kernels.plans import PassPlan
from ..kernels.ragged import bounds, firsts
from ..kernels.subtraction import Derivation, slice_map
from ..split.api import UNBOUNDED, Test, child_bounds
from .sampling import child_key

__all__ = ["Branch", "Node", "Forest", "sharing"]

MAX_STARTS = 16  # start nodes kept per row (2 or 4 bytes each): one per tree of a 10-fold forest (11), capped


@dataclass(slots=True)
class Branch:
    trees: tuple[int, ...]
    test: Test
    children: list[int]


@dataclass(slots=True)
class Node:
    id: int
    depth: int
    trees: tuple[int, ...]  # the trees whose path reaches this node
    counts: np.ndarray | None  # (n_parts, n_classes) class counts of the node's rows per part
    branches: list[Branch] = field(default_factory=list)
    leaf_trees: tuple[int, ...] = ()  # trees that end here
    leaf_reason: dict[int, str] = field(default_factory=dict)
    # tree -> index of its branch: kept by Forest.add_branches, which alone adds branches
    branch_index: dict[int, int] = field(default_factory=dict, repr=False)
    key: int = 0  # the node's path from the root (dasktree.levels.sampling.child_key): a bagged forest's samples
    bounds: dict | None = None  # monotonic_cst: tree -> its value's (lo, hi) here (None, or a tree absent: unbounded)
    squares: tuple | None = None  # a regression node's sums of squares once counted (training, held out)

    def open_trees(self) -> tuple[int, ...]:
        """Trees still to decide at this node (neither a test nor a leaf yet)."""
        if not self.leaf_trees and not self.branch_index:
            return self.trees
        return tuple(t for t in self.trees if t not in self.branch_index and t not in self.leaf_reason)

    def branch_of(self, tree: int) -> Branch | None:
        i = self.branch_index.get(tree)
        return None if i is None else self.branches[i]


class _FlatBranches:
    """The forest's branches as the flat arrays of a :class:`PassPlan`, grown as branches are added.

    Branches come in increasing node order (a level's nodes are decided in id
    order and their children get higher ids), so each pass only appends: the
    branches added since the last :meth:`arrays` become arrays then, all at once
    (a forest adds thousands a level).

    A *threshold branch* (two children: missing to a default, codes up to a
    cut to child 0, the others to child 1; every binary numeric test, and a
    nominal one whose categories fall that way: its test's
    :attr:`~dasktree.split.node_tests.Test.cut`) is routed by comparing the
    code with its cut, and has no table: a compare in the kernel instead of a
    load from a table of megabytes, and a plan a fraction of the size. Other
    branches have a table of each code's child *index* (the test's
    ``bin_children``), one byte while every such test has at most 256
    children: a quarter of the node ids it replaces.
    """

    def __init__(self):
        self.node = np.zeros(0, np.int64)  # per branch: its node
        self.attribute = np.zeros(0, np.int32)
        self.first_child = np.zeros(0, np.int64)  # per branch: its first child in self.children
        self.children = np.zeros(0, np.int32)
        self.offset = np.zeros(0, np.int64)  # per branch: its first cell in the table (0 for a threshold)
        self.cut = np.zeros(0, np.int32)  # per branch: codes 1..cut go to child 0, the others to 1 (-1: a table)
        self.default = np.zeros(0, np.int32)  # per branch: the child index of code 0 (missing)
        self._table = np.zeros(0, np.uint8)
        self._pending: list[tuple[int, Test, list[int]]] = []  # branches added since the last arrays()
        self._last = -1  # the node of the last branch added

    def add(self, node: int, test: Test, children: list[int]) -> None:
        if node < self._last:
            raise RuntimeError("branches added out of node order: it's a bug, please report it")
        self._last = node
        self._pending.append((node, test, children))

    def arrays(self, n_nodes: int) -> tuple[np.ndarray, ...]:
        """(branch_start, branch_attribute, branch_offset, table, branch_cut, branch_default, branch_child,
        children) over ``n_nodes`` nodes."""
        if self._pending:
            self._take_pending()
        per_node = np.bincount(self.node, minlength=n_nodes)
        branch_start = bounds(per_node)
        return (branch_start, self.attribute, self.offset, self._table, self.cut, self.default, self.first_child,
                self.children)

    def _take_pending(self) -> None:
        """The branches added since the last :meth:`arrays` appended to the arrays (a table only for
        those whose test is no threshold)."""
        nodes, tests, children = zip(*self._pending)
        self._pending = []
        n = len(tests)
        arity = np.fromiter(map(len, children), dtype=np.int64, count=n)
        cut = np.fromiter((t.cut for t in tests), dtype=np.int32, count=n)  # known to tests from a search
        tabled = [t.bin_children for t, c in zip(tests, cut.tolist()) if c < 0]
        sizes = np.zeros(n, dtype=np.int64)
        sizes[cut < 0] = [t.size for t in tabled]
        self.offset = np.concatenate([self.offset, np.where(cut < 0, self._table.size + firsts(sizes), 0)])
        self.cut = np.concatenate([self.cut, cut])
        self.default = np.concatenate([self.default, np.fromiter((t.bin_children[0] for t in tests), np.int32, n)])
        self.node = np.concatenate([self.node, np.asarray(nodes, dtype=np.int64)])
        self.attribute = np.concatenate([self.attribute, np.fromiter((t.attribute for t in tests), np.int32, n)])
        self.first_child = np.concatenate([self.first_child, self.children.size + firsts(arity)])
        self.children = np.concatenate([self.children, np.fromiter(itertools.chain.from_iterable(children),
                                                                   np.int32, int(arity.sum()))])
        if tabled:
            wide = self._table.dtype != np.uint8 or max(int(t.max()) for t in tabled) >= 256
            dtype = np.uint16 if wide else np.uint8
            self._table = np.concatenate([self._table.astype(dtype)] + [t.astype(dtype) for t in tabled])


class Forest:
    """Nodes shared by the main tree and the fold trees."""

    def __init__(self, n_trees: int, holdout: np.ndarray, n_folds: int, n_classes: int, n_repeats: int = 1,
                 bagged: bool = False, keyed: bool = False, separate: bool = False):
        self.n_trees = n_trees
        self.bagged = bagged
        self.keyed = bagged or keyed  # nodes know their path keys (dasktree.levels.sampling): feature samples
        self.monotonic: np.ndarray | None = None  # monotonic_cst per attribute: nodes' bounds per tree (bounds_of)
        self.separate = separate  # the trees share no node: tree t's root is node t (a task's own rule, Trees)
        if bagged and not separate and (n_folds != n_trees or n_repeats != 1 or list(holdout) != list(range(n_trees))):
            raise RuntimeError("a bagged forest's member t trains on part t of n_trees: it's a bug, please report it")
        self.holdout = np.asarray(holdout, dtype=np.int64)  # part held out by each tree; -1 none
        self.n_folds = n_folds  # parts per repetition
        self.n_parts = n_folds * n_repeats
        self.n_classes = n_classes
        self.nodes: list[Node] = ([Node(t, 0, (t,), None) for t in range(n_trees)] if separate
                                  else [Node(0, 0, tuple(range(n_trees)), None)])
        self.id = uuid.uuid4().hex  # names this forest's node ids for the start nodes kept with the data
        self.root_size = np.zeros(n_trees, dtype=np.int64)
        self._slices: dict[tuple[int, ...], tuple[tuple[int, ...], bool]] = {}
        self._flat = _FlatBranches()
        self.grown: list = []  # subtrees grown in memory, as arrays (levels/attach.py's GrownBlock)
        self.grown_nodes = 0  # their nodes (the jobs' own are nodes of the forest)
        self.made_tests: dict = {}  # their tests, by (attribute, cut, default) as one number: made once (attach.attach)
        self.stats_width = n_classes  # a grown node's training (and held-out) statistics: class counts

    # ------------------------------------------------------------------ counts
    def train_counts(self, counts: np.ndarray, tree: int) -> np.ndarray:
        """Training counts of ``tree`` from node counts ``(..., n_parts + 1, C)``.

        Row ``n_parts`` holds the total; row ``p`` the rows of part ``p``
        (filled for the parts held out by the node's trees, zero otherwise).
        """
        if self.bagged:
            return counts[..., tree, :]
        total = counts[..., self.n_parts, :]
        h = self.holdout[tree]
        return total if h < 0 else total - counts[..., h, :]

    def train_sizes(self, counts: np.ndarray) -> np.ndarray:
        """Training rows of every tree from node counts ``(..., n_parts + 1, C)``: ``(..., n_trees)``."""
        per_part = counts.sum(axis=-1)
        if self.bagged:
            return per_part[..., :self.n_trees]
        held = np.where(self.holdout >= 0, per_part[..., np.maximum(self.holdout, 0)], 0)
        return per_part[..., [self.n_parts]] - held

    def train_counts_of(self, counts: np.ndarray, trees) -> np.ndarray:
        """Training counts of ``trees[i]`` from node counts ``counts[i]`` (n, n_parts + 1, C): (n, C)."""
        held = self.holdout[list(trees)]
        rows = np.arange(len(held))
        if self.bagged:
            return counts[rows, held]
        return counts[:, self.n_parts] - np.where(held[:, None] >= 0, counts[rows, np.maximum(held, 0)], 0)

    def validation_counts(self, counts: np.ndarray, tree: int) -> np.ndarray | None:
        if self.bagged:  # out-of-bag rows are not counted in the passes
            return None
        h = self.holdout[tree]
        return None if h < 0 else counts[..., h, :]

    # ------------------------------------------------------------------ growth
    def set_leaf(self, node: Node, tree: int, reason: str) -> None:
        node.leaf_trees = tuple(sorted((*node.leaf_trees, tree)))
        node.leaf_reason[tree] = reason

    def set_leaves(self, node: Node, trees, reasons) -> None:
        """:meth:`set_leaf` for each tree of ``trees`` whose reason is not empty."""
        ended = [(t, r) for t, r in zip(trees, reasons) if r]
        if ended:
            node.leaf_reason.update(ended)
            node.leaf_trees = tuple(sorted((*node.leaf_trees, *(t for t, _ in ended))))

    def end_all(self, nodes: list[Node], reason: str) -> None:
        """Every tree reaching each of ``nodes`` (new, undecided) ends there for ``reason``."""
        for node in nodes:
            node.leaf_trees = node.trees
            node.leaf_reason = dict.fromkeys(node.trees, reason)

    def add_branches(self, branches: list[tuple[Node, tuple[int, ...], Test, np.ndarray]]) -> list[Node]:
        """Give each ``(node, trees, test, child_counts)`` of ``branches`` its branch, in order (a
        level's thousands at once): ``trees`` (sorted) share ``test`` at ``node`` and its new children,
        whose counts ``child_counts`` are (arity, n_parts + 1, n_classes). A node's branches are added
        in the order of their first trees, the nodes in id order. Returns the new children, in id order."""
        nodes, flat = self.nodes, self._flat
        start = first = len(nodes)
        for node, trees, test, child_counts in branches:
            depth, ids = node.depth + 1, list(range(first, first + test.arity))
            first += len(ids)
            nodes += [Node(i, depth, trees, counts, key=child_key(node.key, j) if self.keyed else 0)
                      for j, (i, counts) in enumerate(zip(ids, child_counts))]
            if self.monotonic is not None:
                self._bound_children(node, trees, test, nodes[-len(ids):])
            index = len(node.branches)
            for t in trees:
                node.branch_index[t] = index
            node.branches.append(Branch(trees, test, ids))
            flat.add(node.id, test, ids)
        return nodes[start:]

    def _bound_children(self, node: Node, trees, test: Test, children: list[Node]) -> None:
        """Under ``monotonic_cst``: the new children's bounds per tree, from ``node``'s and each tree's
        training share of the second class in each child (:func:`~dasktree.split.api.child_bounds`)."""
        c = int(self.monotonic[test.attribute]) if test.arity == 2 else 0
        if not c:
            for child in children:
                child.bounds = node.bounds
            return
        left, right = ({}, {})
        for t in trees:
            lo, hi = (node.bounds or {}).get(t, UNBOUNDED)
            left[t], right[t] = child_bounds(c, lo, hi, *(self.value(self.train_counts(child.counts, t))
                                                         for child in children))
        children[0].bounds, children[1].bounds = left, right

    def value(self, train: np.ndarray) -> float:
        """A tree's value at a node from its training counts there, what ``monotonic_cst`` bounds: the
        second class's share (NaN without rows)."""
        return float(train[1]) / float(train.sum()) if train.sum() else np.nan

    def finish_job(self, node_id: int, tree: int, test: Test | None, reason: str, stats: np.ndarray) -> None:
        """A node grown in memory for ``tree`` (:func:`dasktree.levels.attach.attach`): its test as a branch
        of that tree without children (the subtree below is a grown block), or the tree ends there.
        ``stats``: its training then held-out class counts; the root's counts come from them when it was
        gathered before any pass counted it (the main tree's training counts are the total, a fold
        tree's held-out ones its part's, a bagged member's training ones its part's, the total their sum),
        and so does the tree's root size."""
        node = self.nodes[node_id]
        if node_id == 0:
            c = self.n_classes
            if node.counts is None:
                node.counts = np.zeros((self.n_parts + 1, c), dtype=np.int64)
            h = int(self.holdout[tree])
            if self.bagged:  # member t's part: its bag's counts; the total line sums the members'
                node.counts[h] = stats[:c]
                node.counts[self.n_parts] += stats[:c]
            else:
                node.counts[self.n_parts if h < 0 else h] = stats[:c] if h < 0 else stats[c:2 * c]
            self.root_size[tree] = int(stats[:c].sum())
        self.end_job(node, tree, test, reason)

    def end_job(self, node: Node, tree: int, test: Test | None, reason: str) -> None:
        """``tree``'s test at ``node`` grown in memory, a branch without children, or its leaf there."""
        if test is None:
            self.set_leaf(node, tree, reason)
            return
        node.branch_index[tree] = len(node.branches)
        node.branches.append(Branch((tree,), test, []))

    def bounds_of(self, node: Node, trees) -> tuple | None:
        """``trees``' value bounds at ``node`` (what a search request carries), or None without constraints."""
        if self.monotonic is None:
            return None
        own = node.bounds or {}
        return tuple(own.get(t, UNBOUNDED) for t in trees)

    # ------------------------------------------------------------------ passes
    def slices(self, node: Node) -> tuple[tuple[int, ...], bool]:
        """(tracked parts: those held out by the trees reaching the node, has a rest slice) of its
        histogram: a function of its trees."""
        known = self._slices.get(node.trees)
        if known is None:
            parts = tuple(sorted({int(self.holdout[t]) for t in node.trees if self.holdout[t] >= 0}))
            rest = not self.bagged and sum(1 for p in parts if p < self.n_folds) < self.n_folds
            known = self._slices[node.trees] = (parts, rest)
        return known

    def node_bytes(self, node: Node, cells: int) -> int:
        parts, rest = self.slices(node)
        return (len(parts) + int(rest)) * cells * 8

    def pass_plan(self, group: list[Node], widths: np.ndarray, n_classes: int,
                  frontier: list[Node] | None = None,
                  derive: dict[int, tuple[int, tuple[int, ...]]] | None = None) -> PassPlan:
        """The plan of one pass counting the nodes of ``group`` (slots in group order).

        ``frontier`` (default: the group) is every node of the level still to be
        decided, whichever group counts it: the rows' start nodes move there.
        ``derive`` maps a node of the group to (its parent, its siblings, all in
        the group): it is not counted but derived (:mod:`dasktree.kernels.subtraction`).
        """
        n_nodes = len(self.nodes)
        node_slot = np.full(n_nodes, -1, dtype=np.int32)
        node_open = np.zeros(n_nodes, dtype=np.uint8)
        node_open[[node.id for node in (group if frontier is None else frontier)]] = 1
        (branch_start, branch_attribute, branch_offset, table, branch_cut, branch_default, branch_child,
         children) = self._flat.arrays(n_nodes)
        cells = int(np.sum(widths)) * n_classes
        node_slot[[node.id for node in group]] = np.arange(len(group), dtype=np.int32)
        layouts = [self.slices(node) for node in group]
        parts_of = tuple(parts for parts, _ in layouts)
        rest_of = tuple(rest for _, rest in layouts)
        counts = np.asarray([len(parts) + int(rest) for parts, rest in layouts], dtype=np.int64)
        bases = firsts(counts * cells)
        # each distinct layout's row of part -> slice, once
        rows: dict[tuple, np.ndarray] = {}
        for layout in layouts:
            if layout not in rows:
                parts, rest = layout
                row = np.full(self.n_parts, -1, dtype=np.int16)
                if rest:
                    row[: self.n_folds] = 0
                row[list(parts)] = np.arange(int(rest), int(rest) + len(parts))
                rows[layout] = row
        part_slice = (np.stack([rows[layout] for layout in layouts]) if layouts
                      else np.full((0, self.n_parts), -1, dtype=np.int16))
        cursor = int(counts.sum()) * cells
        derived = []
        for child_id, (parent_id, siblings) in sorted((derive or {}).items()):
            child, parent = self.nodes[child_id], self.nodes[parent_id]
            derived.append(Derivation(child_id, int(node_slot[child_id]), parent_id,
                                      tuple(int(node_slot[c]) for c in siblings),
                                      slice_map(*self.slices(child), *self.slices(parent), self.n_folds)))
            if derived[-1].slot < 0 or min(derived[-1].siblings, default=0) < 0:
                raise RuntimeError("a derived node or its siblings are not in the pass: it's a bug, please report it")
            node_slot[child_id] = -1
        return PassPlan(
            node_slot=node_slot,
            branch_start=branch_start,
            branch_attribute=branch_attribute,
            branch_offset=branch_offset,
            table=table,
            branch_cut=branch_cut,
            branch_default=branch_default,
            branch_child=branch_child,
            children=children,
            slot_base=bases,
            slot_slices=counts,
            part_slice=part_slice,
            slot_parts=parts_of,
            slot_rest=rest_of,
            total_bins=int(np.sum(widths)),
            n_classes=n_classes,
            size=cursor,
            node_open=node_open,
            start_width=min(self.n_trees, MAX_STARTS),
            forest_id=self.id,
            derived=tuple(derived),
            bagged=self.bagged,
        )

    # ------------------------------------------------------------------ reading trees
    def tree_nodes(self, tree: int) -> list[tuple[Node, Branch | None, list[int]]]:
        """Tree ``tree`` in breadth-first order: (node, its branch or None, child positions)."""
        out: list[tuple[Node, Branch | None, list[int]]] = []
        queue = [tree if self.separate else 0]
        i = 0
        while i < len(queue):
            node = self.nodes[queue[i]]
            branch = node.branch_of(tree)
            kids = []
            if branch is not None:
                for child in branch.children:
                    kids.append(len(queue))
                    queue.append(child)
            out.append((node, branch, kids))
            i += 1
        return out

    def distinct_nodes(self) -> int:
        return len(self.nodes) + self.grown_nodes


def sharing(tests: dict[int, Test]) -> list[tuple[int, ...]]:
    """The trees of ``tests`` (tree -> its test at one node) grouped by identical test: one group per
    branch, in the order of their first trees."""
    if len(tests) == 1:  # most nodes of a bifurcated forest's deep levels: nothing to group
        return [tuple(tests)]
    by_test: dict[tuple, list[int]] = {}
    for tree in sorted(tests):
        by_test.setdefault(tests[tree].identity, []).append(tree)
    return sorted(tuple(trees) for trees in by_test.values())
