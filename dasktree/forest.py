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

This module is pure Python and numpy: it decides nothing about splits (that is
``dasktree.split``) and schedules nothing (that is ``dasktree.grow``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .split.node_tests import Test

__all__ = ["Branch", "Node", "Forest", "RoutingPlan", "root_plan"]


@dataclass
class Branch:
    trees: tuple[int, ...]
    test: Test
    children: list[int]


@dataclass
class Node:
    id: int
    depth: int
    trees: tuple[int, ...]  # the trees whose path reaches this node
    counts: np.ndarray | None  # (n_parts, n_classes) class counts of the node's rows per part
    branches: list[Branch] = field(default_factory=list)
    leaf_trees: tuple[int, ...] = ()  # trees that end here
    leaf_reason: dict[int, str] = field(default_factory=dict)

    def open_trees(self) -> tuple[int, ...]:
        """Trees still to decide at this node (neither a test nor a leaf yet)."""
        decided = set(self.leaf_trees).union(*(b.trees for b in self.branches))
        return tuple(t for t in self.trees if t not in decided)

    def branch_of(self, tree: int) -> Branch | None:
        for branch in self.branches:
            if tree in branch.trees:
                return branch
        return None


@dataclass(frozen=True)
class RoutingPlan:
    """Flat arrays that route rows through every tree of the forest.

    An *entry* is one tree's view of one node. ``entry_attribute[e]`` is the
    tested attribute (-1 when the tree has no test there); the child of code
    ``c`` is entry ``table[entry_offset[e] + c]``. ``slot_of_entry[e]`` is the
    histogram slot of the entry's node in this pass, -1 when it is not counted.
    """

    root_entry: np.ndarray  # (n_trees,)
    entry_attribute: np.ndarray  # (n_entries,) int32
    entry_offset: np.ndarray  # (n_entries,) int64
    slot_of_entry: np.ndarray  # (n_entries,) int32
    table: np.ndarray  # int32
    depth: int  # number of tests on the longest path
    n_slots: int


class Forest:
    """Nodes shared by the main tree and the fold trees."""

    def __init__(self, n_trees: int, holdout: np.ndarray, n_folds: int, n_classes: int):
        self.n_trees = n_trees
        self.holdout = np.asarray(holdout, dtype=np.int64)  # part held out by each tree; -1 none
        self.n_folds = n_folds  # parts per repetition
        self.n_classes = n_classes
        self.nodes: list[Node] = [Node(0, 0, tuple(range(n_trees)), None)]
        self.root_size = np.zeros(n_trees, dtype=np.int64)

    # ------------------------------------------------------------------ counts
    def train_counts(self, counts: np.ndarray, tree: int) -> np.ndarray:
        """Training counts of ``tree`` from per-part counts ``(..., n_parts, C)``."""
        total = counts[..., : self.n_folds, :].sum(axis=-2)
        h = self.holdout[tree]
        return total if h < 0 else total - counts[..., h, :]

    def validation_counts(self, counts: np.ndarray, tree: int) -> np.ndarray | None:
        h = self.holdout[tree]
        return None if h < 0 else counts[..., h, :]

    # ------------------------------------------------------------------ growth
    def add_node(self, depth: int, trees: tuple[int, ...], counts: np.ndarray) -> Node:
        node = Node(len(self.nodes), depth, trees, counts)
        self.nodes.append(node)
        return node

    def set_leaf(self, node: Node, tree: int, reason: str) -> None:
        node.leaf_trees = tuple(sorted((*node.leaf_trees, tree)))
        node.leaf_reason[tree] = reason

    def set_tests(self, node: Node, tests: dict[int, Test], child_counts: dict[int, np.ndarray]) -> list[Node]:
        """Give trees their tests at ``node``; trees with identical tests share children.

        ``child_counts[tree]`` is (arity, n_parts, n_classes). Returns the new children.
        """
        created = []
        by_test: dict[tuple, list[int]] = {}
        for tree in sorted(tests):
            by_test.setdefault(tests[tree].identity, []).append(tree)
        for trees in sorted(by_test.values()):
            test = tests[trees[0]]
            counts = child_counts[trees[0]]
            children = [self.add_node(node.depth + 1, tuple(trees), counts[i]) for i in range(test.arity)]
            node.branches.append(Branch(tuple(trees), test, [c.id for c in children]))
            created += children
        return created

    # ------------------------------------------------------------------ routing
    def routing_plan(self, slot_of_node: dict[int, int], widths: np.ndarray) -> RoutingPlan:
        """Arrays routing a row, in every tree, to the node it reaches now."""
        entry_attribute: list[int] = []
        entry_offset: list[int] = []
        slot: list[int] = []
        table: list[np.ndarray] = []
        size = 0
        roots = []
        depth = 0
        for tree in range(self.n_trees):
            # Entries of one tree, parents before children; child tables filled after.
            roots.append(len(entry_attribute))
            stack = [(0, None, 0)]  # (node id, (parent entry, codes leading here), depth)
            while stack:
                node_id, link, d = stack.pop()
                node = self.nodes[node_id]
                e = len(entry_attribute)
                if link is not None:
                    parent_entry, mask = link
                    table[parent_entry][mask] = e
                slot.append(slot_of_node.get(node_id, -1))
                branch = node.branch_of(tree)
                if branch is None:
                    entry_attribute.append(-1)
                    entry_offset.append(size)
                    table.append(np.zeros(0, dtype=np.int64))
                    continue
                depth = max(depth, d + 1)
                a = branch.test.attribute
                entry_attribute.append(a)
                entry_offset.append(size)
                size += int(widths[a])
                table.append(np.full(int(widths[a]), -1, dtype=np.int64))
                for child_index in reversed(range(len(branch.children))):
                    mask = branch.test.bin_children == child_index
                    stack.append((branch.children[child_index], (e, mask), d + 1))
        flat = np.concatenate(table).astype(np.int32) if table else np.zeros(0, np.int32)
        return RoutingPlan(
            root_entry=np.asarray(roots, dtype=np.int64),
            entry_attribute=np.asarray(entry_attribute, dtype=np.int32),
            entry_offset=np.asarray(entry_offset, dtype=np.int64),
            slot_of_entry=np.asarray(slot, dtype=np.int32),
            table=flat,
            depth=depth,
            n_slots=len(set(slot_of_node.values())),
        )

    # ------------------------------------------------------------------ reading trees
    def tree_nodes(self, tree: int) -> list[tuple[Node, Branch | None, list[int]]]:
        """Tree ``tree`` in breadth-first order: (node, its branch or None, child positions)."""
        out: list[tuple[Node, Branch | None, list[int]]] = []
        queue = [0]
        position = {0: 0}
        i = 0
        while i < len(queue):
            node = self.nodes[queue[i]]
            branch = node.branch_of(tree)
            kids = []
            if branch is not None:
                for child in branch.children:
                    position[child] = len(queue)
                    kids.append(len(queue))
                    queue.append(child)
            out.append((node, branch, kids))
            i += 1
        return out

    def distinct_nodes(self) -> int:
        return len(self.nodes)


def root_plan(widths: np.ndarray, n_classes: int) -> RoutingPlan:
    """The plan of a single pass at the root: every row counted in slot 0 (a whole-data histogram)."""
    return Forest(1, np.array([-1]), 1, n_classes).routing_plan({0: 0}, widths)
