"""Readable forms of a tree: indented text and graphviz dot. They take the model's arrays.

A classification leaf shows its class, rows and probability; a regression leaf its value (its
training mean, as scikit-learn's ``export_text`` shows ``value: [x]`` for a regressor) and rows.
"""

from __future__ import annotations

from ..binning.spec import BinSpec
from ..split.api import Test
from .model import Model, TreeModel

__all__ = ["export_text", "export_dot", "branch_labels", "node_rows", "subtree_sizes"]


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def branch_labels(test: Test, spec: BinSpec) -> list[str]:
    """The condition of each child of ``test`` in the data's own terms."""
    bins = spec.features[test.attribute]
    name = bins.name
    labels: list[str] = []
    if test.kind == "numeric":
        t = test.thresholds
        for i in range(test.arity):
            if i == 0:
                text = f"{name} <= {_fmt(t[0])}"
            elif i == test.arity - 1:
                text = f"{name} > {_fmt(t[-1])}"
            else:
                text = f"{_fmt(t[i - 1])} < {name} <= {_fmt(t[i])}"
            labels.append(text)
    else:
        for group in test.groups:
            cats = [bins.categories[c - 1] for c in group]
            shown = ", ".join(repr(c) for c in cats[:8]) + (", ..." if len(cats) > 8 else "")
            labels.append(f"{name} in {{{shown}}}")
    labels[test.default] += " or missing"
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
    sizes = subtree_sizes(tree) if max_depth is not None else None
    lines: list[str] = []
    cut = 0
    depth, tests, children, spec = tree.depth.tolist(), tree.tests, tree.children, model.spec
    limit = -1 if max_depth is None else max_depth
    stack: list[tuple[int, str, str | None]] = [(0, "", None)]  # depth first, children in order
    while stack:
        i, indent, label = stack.pop()
        if label is not None:
            lines.append(f"{indent[:-4]}|--- {label}")
        test = tests[i]
        if test is None or 0 <= limit <= depth[i]:
            suffix = ""
            if test is not None:
                below = sizes[i] - 1
                cut += below
                suffix = f" (truncated: {below} nodes below)"
            lines.append(f"{indent}{leaf_text(i)}{suffix}")
            continue
        kids = list(zip(children[i], branch_labels(test, spec)))
        for child, child_label in reversed(kids):
            stack.append((child, indent + "|   ", child_label))
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
    sizes = subtree_sizes(tree) if max_depth is not None else None
    depth = tree.depth.tolist()
    rows = model.task.node_rows(tree).tolist()
    out = ["digraph dasktree {", '  node [shape=box, fontname="helvetica"];']
    for i, test in enumerate(tree.tests):
        if max_depth is not None and depth[i] > max_depth:
            continue
        if test is None or (max_depth is not None and depth[i] == max_depth):
            more = "" if test is None else f" (truncated: {sizes[i] - 1} nodes below)"
            out.append(f'  n{i} [label="{_dot_quote(leaf_text(i) + more)}", style=rounded];')
            continue
        name = model.spec.features[test.attribute].name
        out.append(f'  n{i} [label="{_dot_quote(name)}\\nn={int(rows[i])}"];')
        for label, child in zip(branch_labels(test, model.spec), tree.children[i]):
            out.append(f'  n{i} -> n{child} [label="{_dot_quote(label)}"];')
    out.append("}")
    return "\n".join(out) + "\n"
