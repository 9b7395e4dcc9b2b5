"""Readable forms of a tree: indented text and graphviz dot. They take the model's arrays.

A classification leaf shows its class, rows and probability; a regression leaf its value (its
training mean, as scikit-learn's ``export_text`` shows ``value: [x]`` for a regressor) and rows.
"""

from __future__ import annotations

from itertools import repeat
from operator import eq
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..binning.spec import BinSpec
from .model import Model, TreeModel
from .node_table import NodeTests, node_tests_of

if TYPE_CHECKING:
    from ..split.api import Test

__all__ = ["export_text", "export_dot", "branch_labels", "tree_labels", "node_rows", "subtree_sizes"]


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _labels(name: str, kind: str, arity: int, thresholds, groups, default: int, categories) -> list[str]:
    labels: list[str] = []
    if kind == "numeric":
        t = thresholds
        for i in range(arity):
            if i == 0:
                text = f"{name} <= {_fmt(t[0])}"
            elif i == arity - 1:
                text = f"{name} > {_fmt(t[-1])}"
            else:
                text = f"{_fmt(t[i - 1])} < {name} <= {_fmt(t[i])}"
            labels.append(text)
    else:
        for group in groups:
            cats = [categories[c - 1] for c in group]
            shown = ", ".join(repr(c) for c in cats[:8]) + (", ..." if len(cats) > 8 else "")
            labels.append(f"{name} in {{{shown}}}")
    labels[default] += " or missing"
    return labels


def branch_labels(test: Test, spec: BinSpec) -> list[str]:
    """The condition of each child of ``test`` in the data's own terms."""
    bins = spec.features[test.attribute]
    return _labels(bins.name, test.kind, test.arity, test.thresholds, test.groups, test.default, bins.categories)


def tree_labels(tree: TreeModel, spec: BinSpec, table: NodeTests | None = None) -> Callable[[int], list[str]]:
    """A function of a tested node giving :func:`branch_labels` of its test, read from the tree's tests as
    columns (``table``, :class:`~dasktree.model.node_table.NodeTests`): no ``Test`` is made, and the columns
    are read once for every node (a loaded 30,000-leaf tree's tests made one by one were most of
    ``dasktree show``)."""
    table = node_tests_of(tree.tests) if table is None else table
    arity = (table.child_range()[1] + 1).tolist()
    attribute, default = table.attribute.tolist(), table.default.tolist()
    thresholds, cut = table.thresholds.tolist(), table.threshold_start.tolist()
    kind, groups, features = table.kind, table.groups, spec.features
    names = [f.name for f in features]

    memo: dict = {}  # a binary threshold test's labels by (attribute, threshold, default): a tree repeats them

    def labels(i: int) -> list[str]:
        a, start = attribute[i], cut[i]
        if arity[i] == 2 and cut[i + 1] == start + 1 and kind[i] == "numeric":
            key = (a, thresholds[start], default[i])
            found = memo.get(key)
            if found is None:
                found = memo[key] = _labels(names[a], "numeric", 2, thresholds[start:start + 1], (), default[i], ())
            return list(found)
        return _labels(names[a], kind[i], arity[i], thresholds[start:cut[i + 1]], groups[i], default[i],
                       features[a].categories)

    return labels


def node_rows(model: Model, tree: TreeModel, i: int) -> int:
    """The training rows (weighted) of node ``i`` (the task's count of them)."""
    return int(model.task.node_rows(tree)[i])


def subtree_sizes(tree: TreeModel) -> list[int]:
    """Each node's number of nodes in its subtree, itself included."""
    shape = _Shape(tree)
    return shape.sizes(np.ones(tree.n_nodes, dtype=np.int64)).tolist()


class _Shape:
    """A tree's links as arrays, computed once for a whole-tree text: each node's parent, its children
    (``flat[child_start[i]:child_start[i + 1]]``), its place among its parent's children, and its level
    (edges from the root), found by doubling along the parents (``log2(depth)`` array steps, no walk)."""

    def __init__(self, tree: TreeModel):
        n = tree.n_nodes
        self.child_count, self.flat = tree.links()
        self.child_start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.child_count, out=self.child_start[1:])
        self.owner = np.repeat(np.arange(n, dtype=np.int64), self.child_count)
        self.parent = np.full(n, -1, dtype=np.int64)
        self.parent[self.flat] = self.owner
        self.rank = np.zeros(n, dtype=np.int64)  # the child's place among its parent's children
        self.rank[self.flat] = np.arange(self.flat.size) - self.child_start[self.owner]
        self.level = self.along_path(np.ones(n, dtype=np.int64))
        self.by_level = np.argsort(self.level, kind="stable")
        self.level_ends = np.searchsorted(self.level[self.by_level], np.arange(int(self.level.max(initial=0)) + 2))

    def along_path(self, values: np.ndarray) -> np.ndarray:
        """Per node, the sum of ``values`` over its ancestors and itself, the root left out."""
        total = np.where(self.parent >= 0, values, 0)
        up = self.parent.copy()
        while True:
            has = up >= 0
            if not has.any():
                return total
            total[has] += total[up[has]]
            up[has] = up[up[has]]

    def levels(self, deepest_first: bool = False):
        """Each level's nodes, the root's first (or with ``deepest_first``, the deepest level's)."""
        spans = list(zip(self.level_ends[:-1].tolist(), self.level_ends[1:].tolist()))
        for a, b in reversed(spans) if deepest_first else spans:
            yield self.by_level[a:b]

    def sizes(self, own: np.ndarray) -> np.ndarray:
        """Per node, the sum of ``own`` over its subtree (itself included), summed level by level upwards."""
        total = own.astype(np.int64, copy=True)
        for nodes in self.levels(deepest_first=True):
            below = nodes[self.parent[nodes] >= 0]
            np.add.at(total, self.parent[below], total[below])
        return total


def _edge_labels(tree: TreeModel, spec: BinSpec, table: NodeTests, shape: _Shape,
                 tested: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each child's branch label (an object array over the nodes) and where there is one (not where a node is
    no child of a node of ``tested``, or a child its parent's labels leave out). A binary threshold test's two
    labels are made once per (attribute, threshold) of the tree and indexed; any other test's by
    :func:`tree_labels`."""
    n = tree.n_nodes
    label = np.full(n, None, dtype=object)
    has = np.zeros(n, dtype=bool)
    arity = table.child_range()[1] + 1
    cuts = np.diff(table.threshold_start)
    numeric = np.fromiter(map(eq, table.kind, repeat("numeric")), dtype=bool, count=n)
    binary = tested & numeric & (arity == 2) & (shape.child_count == 2) & (cuts == 1)
    fast = np.flatnonzero(binary)
    if fast.size:
        attribute, threshold = table.attribute[fast], table.thresholds[table.threshold_start[fast]]
        bits, where = np.unique(threshold.view(np.int64), return_inverse=True)  # -0.0 is not 0.0, as in _fmt
        shown = np.array([_fmt(t) for t in bits.view(np.float64).tolist()], dtype=object)[where.reshape(-1)]
        names = np.array([f.name for f in spec.features], dtype=object)[attribute]
        below, above = names + " <= " + shown, names + " > " + shown
        missing = np.array(["", " or missing"], dtype=object)
        default = table.default[fast]
        first, second = shape.flat[shape.child_start[fast]], shape.flat[shape.child_start[fast] + 1]
        label[first] = below + missing[(default == 0).astype(np.int64)]
        label[second] = above + missing[(default == 1).astype(np.int64)]
        has[first] = has[second] = True
    slow = np.flatnonzero(tested & ~binary).tolist()
    if slow:
        labels = tree_labels(tree, spec, table)
        children = tree.children
        for i in slow:
            for child, text in zip(children[i], labels(i)):
                label[child] = text
                has[child] = True
    return label, has


def export_text(model: Model, *, tree: TreeModel | None = None, max_depth: int | None = None) -> str:
    """The tree as indented text, one line per branch and leaf, depth first. With ``max_depth``, a test at
    that depth is shown as a leaf marked ``(truncated: N nodes below)``, and a last line counts the nodes
    cut below the depth.

    Built from the tree's arrays at once, not by a walk: every shown node's place in the depth-first
    order is its parent's, plus one, plus the shown subtrees of its earlier siblings; its lines (its
    branch's label, and a leaf's text) go to that place in one array of lines."""
    tree = tree or model.tree
    n = tree.n_nodes
    table = node_tests_of(tree.tests)
    shape = _Shape(tree)
    inner = table.inner
    cut = inner & (tree.depth >= max_depth) if max_depth is not None and max_depth >= 0 else np.zeros(n, dtype=bool)
    opened = inner & ~cut  # a test whose children are shown
    label, labelled = _edge_labels(tree, model.spec, table, shape, opened)
    # shown: the root, and each child its parent opens and labels, under shown ancestors
    hidden = np.zeros(n, dtype=np.int64)
    child = shape.flat
    hidden[child] = (~opened[shape.owner] | ~labelled[child]).astype(np.int64)
    shown = shape.along_path(hidden) == 0
    lines = np.where(shown, (np.arange(n) > 0).astype(np.int64) + (~opened).astype(np.int64), 0)
    # each shown node's first line: lines of the nodes before it in depth-first order
    below = shape.sizes(lines)  # a subtree's lines
    earlier = np.zeros(n, dtype=np.int64)  # the lines of a node's earlier siblings' subtrees
    run = np.cumsum(below[child]) - below[child]
    earlier[child] = run - run[shape.child_start[shape.owner]]
    first = np.full(n, -1, dtype=np.int64)  # the root has no branch line: its leaf's (a tree of one node) is line 0
    for nodes in shape.levels():
        nodes = nodes[shape.parent[nodes] >= 0]
        first[nodes] = first[shape.parent[nodes]] + 1 + earlier[nodes]
    out = np.empty(int(lines.sum()), dtype=object)
    depth = shape.level
    top = int(depth.max(initial=0)) + 1
    pad = np.array(["|   " * d for d in range(top)], dtype=object)
    branch = np.array([""] + ["|   " * (d - 1) + "|--- " for d in range(1, top)], dtype=object)
    branched = np.flatnonzero(shown & (np.arange(n) > 0))
    out[first[branched]] = branch[depth[branched]] + label[branched]
    ends = np.flatnonzero(shown & ~opened)
    texts = model.task.leaf_texts_of(model, tree, ends)
    truncated = ends[cut[ends]]
    if truncated.size:
        below_all = shape.sizes(np.ones(n, dtype=np.int64)) - 1
        more = {i: f" (truncated: {b} nodes below)" for i, b in zip(truncated.tolist(), below_all[truncated].tolist())}
        texts = [t + more.get(i, "") for i, t in zip(ends.tolist(), texts)]
        cut_nodes = int(below_all[truncated].sum())
    out[first[ends] + 1] = pad[depth[ends]] + np.array(texts, dtype=object)
    text = "\n".join(out.tolist()) + "\n"
    if truncated.size and cut_nodes:
        text += f"({cut_nodes} of {n} nodes below depth {max_depth} not shown)\n"
    return text


def _dot_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def export_dot(model: Model, *, tree: TreeModel | None = None, max_depth: int | None = None) -> str:
    """The tree in graphviz dot: boxes for tests and leaves, edges labelled by branch. With ``max_depth``,
    a test at that depth is drawn as a leaf marked ``(truncated: N nodes below)`` and nothing below it."""
    tree = tree or model.tree
    leaf_text = model.task.leaf_texts(model, tree)
    table = node_tests_of(tree.tests)
    labels = tree_labels(tree, model.spec, table)
    tested, attribute = table.inner.tolist(), table.attribute.tolist()
    sizes = subtree_sizes(tree) if max_depth is not None else None
    depth = tree.depth.tolist()
    rows = model.task.node_rows(tree).tolist()
    names = [f.name for f in model.spec.features]
    out = ["digraph dasktree {", '  node [shape=box, fontname="helvetica"];']
    for i in range(tree.n_nodes):
        if max_depth is not None and depth[i] > max_depth:
            continue
        if not tested[i] or (max_depth is not None and depth[i] == max_depth):
            more = "" if not tested[i] else f" (truncated: {sizes[i] - 1} nodes below)"
            out.append(f'  n{i} [label="{_dot_quote(leaf_text(i) + more)}", style=rounded];')
            continue
        out.append(f'  n{i} [label="{_dot_quote(names[attribute[i]])}\\nn={int(rows[i])}"];')
        for label, child in zip(labels(i), tree.children[i]):
            out.append(f'  n{i} -> n{child} [label="{_dot_quote(label)}"];')
    out.append("}")
    return "\n".join(out) + "\n"
