"""Readable forms of a tree: indented text and graphviz dot. They take the model's arrays.

A classification leaf shows its class, rows and probability; a regression leaf its value (its
training mean, as scikit-learn's ``export_text`` shows ``value: [x]`` for a regressor) and rows.
"""

from __future__ import annotations

from ..binning.spec import BinSpec
from ..split.node_tests import Test
from .model import Model, TreeModel

__all__ = ["export_text", "export_dot", "branch_labels", "node_rows"]


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
    """The training rows (weighted) of node ``i``: a regression node's ``counts[i, 0]`` (the other
    column is its sum of targets), a classification node's class counts added."""
    return int(tree.counts[i, 0]) if model.task == "regression" else int(tree.counts[i].sum())


def _leaf_text(model: Model, tree: TreeModel, i: int) -> str:
    if model.task == "regression":
        return f"value: [{_fmt(model.node_values(tree)[i])}] (n={node_rows(model, tree, i)})"
    counts = tree.counts[i]
    value = tree.value[i]
    label = model.classes[int(value.argmax())]
    return f"class: {label!r} (n={int(counts.sum())}, p={value.max():.3f})"


def export_text(model: Model, *, tree: TreeModel | None = None, max_depth: int | None = None) -> str:
    """The tree as indented text, one line per branch and leaf."""
    tree = tree or model.tree
    lines: list[str] = []

    def walk(i: int, indent: str) -> None:
        test = tree.tests[i]
        if test is None or (max_depth is not None and tree.depth[i] >= max_depth):
            suffix = "" if test is None else " (truncated)"
            lines.append(f"{indent}{_leaf_text(model, tree, i)}{suffix}")
            return
        for label, child in zip(branch_labels(test, model.spec), tree.children[i]):
            lines.append(f"{indent}|--- {label}")
            walk(child, indent + "|   ")

    walk(0, "")
    return "\n".join(lines) + "\n"


def _dot_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def export_dot(model: Model, *, tree: TreeModel | None = None) -> str:
    """The tree in graphviz dot: boxes for tests and leaves, edges labelled by branch."""
    tree = tree or model.tree
    out = ["digraph dasktree {", '  node [shape=box, fontname="helvetica"];']
    for i, test in enumerate(tree.tests):
        n = node_rows(model, tree, i)
        if test is None:
            out.append(f'  n{i} [label="{_dot_quote(_leaf_text(model, tree, i))}", style=rounded];')
            continue
        name = model.spec.features[test.attribute].name
        out.append(f'  n{i} [label="{_dot_quote(name)}\\nn={n}"];')
        for label, child in zip(branch_labels(test, model.spec), tree.children[i]):
            out.append(f'  n{i} -> n{child} [label="{_dot_quote(label)}"];')
    out.append("}")
    return "\n".join(out) + "\n"
