"""Readable forms of a tree: indented text and graphviz dot. They take the model's arrays.

A classification leaf shows its class, rows and probability; a regression leaf its value (its
training mean, as scikit-learn's ``export_text`` shows ``value: [x]`` for a regressor) and rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

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
    """Each node's number of nodes in its subtree, itself included (children follow their parent)."""
    size = [1] * tree.n_nodes
    for i in range(tree.n_nodes - 1, -1, -1):
        for c in tree.children[i]:
            size[i] += size[c]
    return size


def export_text(model: Model, *, tree: TreeModel | None = None, max_depth: int | None = None) -> str:
    """The tree as indented text, one line per branch and leaf. With ``max_depth``, a test at that
    depth is shown as a leaf marked ``(truncated: N nodes below)``, and a last line counts the nodes
    cut below the depth."""
    tree = tree or model.tree
    leaf_text = model.task.leaf_texts(model, tree)
    table = node_tests_of(tree.tests)
    labels, tested = tree_labels(tree, model.spec, table), table.inner.tolist()
    sizes = subtree_sizes(tree) if max_depth is not None else None
    lines: list[str] = []
    append = lines.append
    cut = 0
    depth, children = tree.depth.tolist(), tree.children
    limit = -1 if max_depth is None else max_depth
    pad, branch = [""], [""]  # at each depth below the root: "|   " * d, and "|   " * (d - 1) + "|--- "
    stack: list[tuple[int, int, str | None]] = [(0, 0, None)]  # depth first, children in order
    while stack:
        i, d, label = stack.pop()
        if d == len(pad):
            pad.append(pad[-1] + "|   ")
            branch.append(pad[d - 1] + "|--- ")
        if label is not None:
            append(branch[d] + label)
        if not tested[i] or 0 <= limit <= depth[i]:
            if tested[i]:
                below = sizes[i] - 1
                cut += below
                append(f"{pad[d]}{leaf_text(i)} (truncated: {below} nodes below)")
            else:
                append(pad[d] + leaf_text(i))
            continue
        d += 1
        for child, child_label in reversed(list(zip(children[i], labels(i)))):
            stack.append((child, d, child_label))
    if cut:
        lines.append(f"({cut} of {tree.n_nodes} nodes below depth {max_depth} not shown)")
    return "\n".join(lines) + "\n"


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
