"""Small forests for tests, built by the production path: tests grouped by :func:`sharing`, then
:meth:`~dasktree.levels.forest.Forest.add_branches`, as the grow loop adds a level's decisions."""

from __future__ import annotations

import numpy as np

from ..kernels.plans import RoutingPlan
from ..levels.forest import Forest, Node, sharing
from ..split.api import Test, nominal_test, numeric_test

__all__ = ["set_tests", "random_test", "random_forest", "routing_plan"]


def set_tests(forest: Forest, node: Node, tests: dict[int, Test], child_counts: dict[int, np.ndarray]) -> list[Node]:
    """Give trees their tests at ``node``; trees with identical tests share a branch and its children.

    ``child_counts[tree]`` is (arity, n_parts + 1, n_classes). Returns the new children.
    """
    return forest.add_branches([(node, trees, tests[trees[0]], child_counts[trees[0]]) for trees in sharing(tests)])


def random_test(rng, widths):
    """A random threshold or subset test on one of the attributes of ``widths`` (codes per attribute)."""
    a = int(rng.integers(len(widths)))
    n_codes = int(widths[a])
    if rng.random() < 0.5:
        cuts = np.sort(rng.choice(np.arange(1, n_codes - 1), size=min(int(rng.integers(1, 3)), n_codes - 2),
                                  replace=False))
        return numeric_test(a, cuts, np.arange(n_codes - 2, dtype=float), int(rng.integers(2)))
    codes = np.arange(1, n_codes)
    left = codes[rng.random(codes.size) < 0.5]
    return nominal_test(a, [left, np.setdiff1d(codes, left)], n_codes, 0)


def random_forest(rng, widths, n_trees, depth, n_repeats=1):
    """A forest whose trees share the root test and then pick random tests."""
    n_folds = max(1, (n_trees - 1) // n_repeats) if n_trees > 1 else 1
    holdout = np.array([-1] + list(range(n_trees - 1)))
    forest = Forest(n_trees, holdout, n_folds, 2, n_repeats)
    frontier = [forest.nodes[0]]
    for _ in range(depth):
        nxt = []
        for node in frontier:
            tests, counts = {}, {}
            for t in node.trees:
                a = int(rng.integers(len(widths)))
                n_codes = int(widths[a])
                if n_codes < 3:
                    continue
                if rng.random() < 0.5:
                    cut = int(rng.integers(1, n_codes - 1))
                    test = numeric_test(a, np.array([cut]), np.arange(n_codes - 2, dtype=float), int(rng.integers(2)))
                else:
                    codes = np.arange(1, n_codes)
                    left = codes[rng.random(codes.size) < 0.5]
                    test = nominal_test(a, [left, np.setdiff1d(codes, left)], n_codes, 0)
                if node.id == 0 and tests:
                    test = next(iter(tests.values()))
                tests[t] = test
                counts[t] = np.zeros((test.arity, forest.n_parts + 1, 2), dtype=np.int64)
            if tests:
                nxt += set_tests(forest, node, tests, counts)
        frontier = nxt
    return forest


def routing_plan(forest: Forest, slot_of_node: dict[int, int], widths: np.ndarray) -> RoutingPlan:
    """Arrays routing a row, in every tree of ``forest``, to the node it reaches now: the per-tree walk
    the level pass's shared routing (:meth:`~dasktree.levels.forest.Forest.pass_plan`) is tested against."""
    entry_attribute: list[int] = []
    entry_offset: list[int] = []
    slot: list[int] = []
    table: list[np.ndarray] = []
    size = 0
    roots = []
    depth = 0
    for tree in range(forest.n_trees):
        # Entries of one tree, parents before children; child tables filled after.
        roots.append(len(entry_attribute))
        stack = [(0, None, 0)]  # (node id, (parent entry, codes leading here), depth)
        while stack:
            node_id, link, d = stack.pop()
            node = forest.nodes[node_id]
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
