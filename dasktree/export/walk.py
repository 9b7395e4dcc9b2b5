"""The tree as every export reads it: each test's children as conditions on the column's own values.

Prediction routes a row by its *codes* (:mod:`dasktree.binning.encode`): code 0 is missing
(null, NaN), a numeric bin ``b`` holds ``upper[b - 2] < x <= upper[b - 1]``, a nominal code is
a category's place in the model's category list. A test's code table (``bin_children``) sends
every code to a child. This module turns that table back into conditions on the values, one
:class:`Branch` per child, so that an export which tests the conditions sends every row where
dasktree sends it:

* numeric: the child's intervals ``lo < x <= hi`` (adjacent bins of one child merged; ``lo``
  is -inf for the first bin, ``hi`` +inf for the last), from the bin edges themselves, so a
  value at a threshold goes where the kernel sends it;
* nominal: the child's categories, and whether values outside the model's categories (unseen
  in training, or beyond ``max_categories``) go to it: to the ``__other__`` code's child when
  the attribute has one, else they are missing;
* ``missing``: whether null / NaN go to this child (the code-0 child: the test's learned
  direction, its ``default``).

Leaves carry their outputs (:func:`leaf_outputs`): the class dasktree predicts and the class
probabilities, the same arrays :meth:`~dasktree.model.Model.predict_proba_table` reads; a
regression tree's leaf its value (:func:`leaf_values`: the double
:meth:`~dasktree.model.model.Model.predict_values` gives). The formats write a leaf
only through these outputs (SQL: a literal per output; ONNX: a row of a leaf table; PMML:
``score`` and, for classes, ``ScoreDistribution``); the routing above is the same for both tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..binning.spec import OTHER, FeatureBins
from ..errors import InputError
from ..io.schema import NUMERIC
from ..model.model import VERSION, Model, TreeModel
from ..split.node_tests import Test

__all__ = ["Branch", "branches", "LeafOutputs", "leaf_outputs", "describe", "label_kind", "leaf_values",
           "regression", "MAX_DEPTH"]

INF = float("inf")
MAX_DEPTH = 200
"""Deepest tree an export writes: a nested CASE per level (DuckDB and PostgreSQL limit expression depth), a
recursion per level while writing."""


@dataclass(frozen=True)
class Branch:
    """The values a child of a test receives.

    child : the child's node index.
    intervals : numeric: ``(lo, hi)`` pairs, ``lo < x <= hi``, increasing and disjoint.
    categories : nominal: the category strings sent to this child (``__other__`` left out).
    rest : nominal: values outside the model's categories go to this child.
    missing : null and NaN go to this child.
    """

    child: int
    intervals: tuple[tuple[float, float], ...] = ()
    categories: tuple[str, ...] = ()
    rest: bool = False
    missing: bool = False

    @property
    def empty(self) -> bool:
        """No value reaches this child (a nominal group with no category, not missing, not the rest)."""
        return not (self.intervals or self.categories or self.rest or self.missing)


def branches(test: Test, children: list[int], bins: FeatureBins) -> list[Branch]:
    """One :class:`Branch` per child of ``test`` (in child order), from its code table."""
    table = np.asarray(test.bin_children, dtype=np.int64)
    missing = int(table[0])
    if bins.kind == NUMERIC:
        edges = [-INF, *map(float, bins.upper), INF]  # bin b (1-based): edges[b-1] < x <= edges[b]
        runs: dict[int, list[tuple[float, float]]] = {}
        b = 1
        while b < table.size:
            c = int(table[b])
            end = b
            while end + 1 < table.size and int(table[end + 1]) == c:
                end += 1
            runs.setdefault(c, []).append((edges[b - 1], edges[end]))
            b = end + 1
        return [Branch(node, intervals=tuple(runs.get(i, ())), missing=i == missing)
                for i, node in enumerate(children)]
    n = len(bins.categories)
    rest = int(table[n]) if bins.has_other else missing
    cats: dict[int, list[str]] = {}
    for code in range(1, n + 1):
        if bins.categories[code - 1] == OTHER and code == n:
            continue
        cats.setdefault(int(table[code]), []).append(bins.categories[code - 1])
    return [Branch(node, categories=tuple(cats.get(i, ())), rest=i == rest, missing=i == missing)
            for i, node in enumerate(children)]


@dataclass(frozen=True)
class LeafOutputs:
    """What each node predicts (rows of a node are used at leaves only).

    label : (n_nodes,) index of the predicted class (``argmax``, first of ties, as ``predict``).
    proba : (n_nodes, n_classes) float64 class probabilities.
    """

    label: np.ndarray
    proba: np.ndarray


def leaf_outputs(tree: TreeModel) -> LeafOutputs:
    proba = tree.value
    return LeafOutputs(np.argmax(proba, axis=1), proba)


def leaf_values(model: Model, tree: TreeModel) -> np.ndarray:
    """A regression tree's prediction at every node (float64; a node without training rows its
    parent's), as :meth:`~dasktree.model.model.Model.node_values`."""
    return np.asarray(model.node_values(tree), dtype=np.float64)


def regression(model: Model) -> bool:
    """Whether the model predicts numbers (its leaves' values) rather than classes: the one question
    an export asks of the task (:attr:`dasktree.model.task.Task.predicts_classes`), since a format's
    outputs for numbers (one double) and for classes (a label and its probabilities) differ in shape."""
    return not model.task.predicts_classes


def label_kind(classes: tuple) -> str:
    """``"string"``, ``"integer"``, ``"double"`` or ``"boolean"``: the type every class label has."""
    kinds = {_label_kind(c) for c in classes}
    if len(kinds) != 1 or None in kinds:
        raise InputError(f"cannot export class labels {list(classes)[:5]!r}: they must all be strings, "
                         "all integers, all booleans or all numbers")
    return kinds.pop()


def _label_kind(value: Any) -> str | None:
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, (int, np.integer)):
        return "integer"
    if isinstance(value, (float, np.floating)):
        return "double" if np.isfinite(value) else None
    return "string" if isinstance(value, str) else None


def describe(model: Model) -> dict:
    """What every export carries: versions, the task, target, classes (none for regression), and
    each feature's name and kind (with a nominal feature's categories, in code order)."""
    from .. import __version__

    features = []
    for bins in model.spec.features:
        feature: dict[str, Any] = {"name": bins.name, "kind": bins.kind}
        if bins.kind != NUMERIC:
            feature["categories"] = list(bins.categories)
        features.append(feature)
    return {"producer": "dasktree", "dasktree_version": __version__, "model_format_version": VERSION,
            "task": model.task.name, "target": model.target, "classes": [_plain(c) for c in model.classes],
            "features": features}


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def check_tree(model: Model) -> TreeModel:
    """The tree to export; refuses one deeper than :data:`MAX_DEPTH` with one line."""
    tree = model.tree
    if tree.max_depth > MAX_DEPTH:
        raise InputError(f"the tree is {tree.max_depth} levels deep; exports nest at most {MAX_DEPTH} "
                         "(prune it or fit with a smaller max_depth)")
    if not regression(model):
        label_kind(model.classes)
    return tree
