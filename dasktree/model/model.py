"""The fitted model: plain arrays plus a format version, saved as JSON.

A :class:`TreeModel` is one tree as flat node arrays (node 0 the root, nodes in
breadth-first order); a :class:`Model` is the main tree, the bin spec that
encodes new data the way the training data was encoded, the column roles,
the parameters and the fit report. Loading a model reads JSON and runs no code
(never pickle). Prediction encodes rows with the bin spec and routes them with
the same kernel as training, so a threshold test ``x <= t`` holds exactly as
in training.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ..binning.spec import BinSpec
from ..errors import DataError
from ..gc_pause import collector_paused
from ..io.outputs import atomic_write_text, read_json_file
from .node_table import NodeTests, node_tests_of
from .task import CLASSIFICATION, Task, task_named

if TYPE_CHECKING:  # what prediction uses is imported there: loading and showing a model loads no compiled kernel
    import pyarrow as pa

    from ..kernels.plans import RoutingPlan
    from ..split.api import Test

__all__ = ["TreeModel", "ChildLinks", "children_given", "Model", "FORMAT", "VERSION", "EXPORTERS", "load"]

EXPORTERS: dict = {}
"""What :meth:`Model.export` hands the model to (``"export"``, ``"write"``): the exporters stand a floor
above the model, and :mod:`dasktree.export` fills this when it loads (``import dasktree`` loads it)."""

FORMAT = "dasktree.model"
VERSION = 7
"""Version 2: fold trees are saved only when kept (``keep_fold_trees``); the CV report is always there.
Version 3: the grown tree of a pruned model (``full_tree``) is saved as columns with its tests' tables
as runs (:mod:`dasktree.model.grown_json`), a fraction of the bytes. Version 4: every tree is (``tree``
and ``fold_trees`` too): a 30,000-leaf tree's node list held about 7.7 million table entries, whose
JSON took most of ``dasktree show``'s time to read. Version 5: the trees kept beside the one predictions
use (``full_tree``, each of ``fold_trees``) are each saved as a JSON text (a string holding the same
columns), which a reader that does not use them (``dasktree show``) passes over as one string instead of
parsing it: the grown tree can be thousands of times the pruned tree (``tree``, still an object). A
reader takes either form of either (``dasktree show --format json`` prints them as objects). Version 6: every
tree is typed arrays, each column one base64 string of little-endian numbers (the ``arrays`` layout of
:mod:`dasktree.model.grown_json`): the JSON of the columns layout, a list per node and a number per entry,
was most of ``dasktree show``'s load. Version 7: the report's cp table (``report["prune"]["cp_table"]``, a row
per subtree of the pruning sequence: thousands for a deep tree) is typed columns, each one base64 string
(:func:`dasktree.model.grown_json.rows_to_json`): its numbers, a float parsed and checked one by one, were
most of a load; read back as the same rows."""
READS = (1, 2, 3, 4, 5, 6, 7)
"""Format versions this dasktree reads (version 1 files always held their fold trees)."""


class ChildLinks:
    """A tree's children as two arrays (int64): each node's number of children (``sizes``), and every node's
    children one node after another (``flat``). Given as :class:`TreeModel`'s ``children``, the lists are
    made when ``children`` is first read: a fit's fold trees and a loaded tree are pruned, counted and
    checked from the arrays (:meth:`TreeModel.links`), and a list per node of hundreds of thousands of
    nodes is most of the time of making them."""

    __slots__ = ("sizes", "flat")

    def __init__(self, sizes: np.ndarray, flat: np.ndarray):
        self.sizes, self.flat = sizes, flat

    def __len__(self) -> int:
        return int(self.sizes.size)

    def lists(self) -> list[list[int]]:
        """Node ``i``'s children as a list, for every node."""
        flat, ends = self.flat.tolist(), np.cumsum(self.sizes).tolist()
        return [flat[a:b] for a, b in zip([0, *ends[:-1]], ends)]


def children_given(tree) -> tuple[object, int]:
    """What ``tree``'s children were last given as (its list, or its :class:`ChildLinks`) and its number of
    nodes, without making the lists: what a tree's kept shape and pruning path are checked against (trees
    are not edited in place). Any object with ``children`` (a list per node) answers too."""
    given = getattr(tree, "__dict__", {}).get("_kids_given")
    if given is None:
        kids = tree.children
        return kids, len(kids)
    kids = tree.__dict__["_kids"]
    return given, len(given) if kids is None else len(kids)


@dataclass
class TreeModel:
    """One tree as flat arrays; ``tests[i]`` is None at a leaf. ``tests`` is the list a fit builds, or
    (a loaded tree) a :class:`~dasktree.model.node_table.NodeTests`: the same sequence, each test made
    when first read. ``children`` is a list per node, or given as :class:`ChildLinks`, whose lists are
    made when ``children`` is first read."""

    tests: Sequence[Test | None]
    children: list[list[int]]
    counts: np.ndarray  # (n_nodes, n_classes) training class counts
    depth: np.ndarray  # (n_nodes,)
    validation: np.ndarray | None = None  # (n_nodes, n_classes) held-out counts (fold trees)
    leaf_reason: list[str] = field(default_factory=list)
    # monotonic_cst per attribute (int8; None: none): each node's value is clipped to its bounds, which
    # are a function of the tree's own counts (dasktree.split.monotonic.tree_bounds), so a pruned copy's
    # are its own. Not saved with the tree: the model's params hold it (Model sets it on its trees).
    monotonic: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        return len(self.tests)

    @property
    def n_leaves(self) -> int:
        if isinstance(self.tests, NodeTests):
            return self.tests.n_leaves
        if self.__dict__.get("_kids", ()) is None:  # children given as arrays (ChildLinks): a leaf has none
            return int(np.count_nonzero(self.__dict__["_links"][0] == 0))
        return sum(t is None for t in self.tests)

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if self.depth.size else 0

    @property
    def value(self) -> np.ndarray:
        """Class probabilities per node; a node without training rows takes its parent's. One pass over
        the nodes: read it once and index it (``tree.value[i]`` in a loop recomputes every node's)."""
        total = self.counts.sum(axis=1)
        value = np.zeros(self.counts.shape, dtype=np.float64)
        np.divide(self.counts, total[:, None], out=value, where=total[:, None] > 0)
        empty = np.flatnonzero(total == 0)
        if empty.size:
            parent = self.parents()
            for c in empty.tolist():  # parents come first (breadth-first order)
                if parent[c] >= 0:
                    value[c] = value[parent[c]]
        if self.monotonic is not None and value.shape[1] == 2:  # monotonic_cst: the second class's probability
            p = self.clipped(value[:, 1])
            moved = p != value[:, 1]
            value[moved, 1], value[moved, 0] = p[moved], 1.0 - p[moved]
        return value

    def clipped(self, raw: np.ndarray) -> np.ndarray:
        """Each node's value as the tree predicts it: ``raw`` (the nodes' unclipped values: the second class's
        probability, or a regression node's mean) clipped to the node's bounds under ``monotonic``
        (:meth:`bounds`), or ``raw`` itself without constraints. One rule for both tasks: what predictions,
        exports, pruning and the CV report read."""
        if self.monotonic is None:
            return raw
        bounds = self.bounds(raw)
        return np.clip(raw, bounds[:, 0], bounds[:, 1])

    def bounds(self, raw: np.ndarray) -> np.ndarray:
        """Under ``monotonic``: each node's value bounds (n_nodes, 2) from the nodes' unclipped values
        ``raw`` (:func:`~dasktree.split.api.tree_bounds`); kept per ``raw`` and constraints, as a tree's
        counts do not change (reports and pruning ask for its values many times)."""
        from ..split.api import tree_bounds

        key = (np.ascontiguousarray(raw).tobytes(), np.asarray(self.monotonic).tobytes())
        kept = self.__dict__.setdefault("_bounds_kept", {})
        if key not in kept:
            if len(kept) >= 4:
                kept.clear()
            tests = self.tests
            attribute = tests.attribute if isinstance(tests, NodeTests) else \
                np.fromiter((-1 if t is None else t.attribute for t in tests), dtype=np.int64, count=len(tests))
            kept[key] = tree_bounds(self.children, attribute, raw, self.monotonic)
        return kept[key]

    def links(self) -> tuple[np.ndarray, np.ndarray]:
        """``children`` as arrays (int64): each node's number of children, and every node's children one node
        after another. Kept once made (a tree's children are not changed in place); a tree given its children
        as :class:`ChildLinks` (a fit's trees, a tree read from a model file's arrays) comes with them."""
        kept = self.__dict__.get("_links")
        if kept is None:
            kids = self.children
            kept = self.__dict__["_links"] = (
                np.fromiter(map(len, kids), dtype=np.int64, count=len(kids)),
                np.fromiter(chain.from_iterable(kids), dtype=np.int64))
        return kept

    def parents(self) -> np.ndarray:
        """Each node's parent (-1 at the root)."""
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        lengths, flat = self.links()
        parent[flat] = np.repeat(np.arange(self.n_nodes), lengths)
        return parent

    def routing_plan(self, widths: np.ndarray) -> RoutingPlan:
        """The plan that routes encoded rows down this tree (every code table at once, no ``Test`` made:
        :class:`~dasktree.model.node_table.NodeTests`)."""
        from ..kernels.plans import RoutingPlan

        table = node_tests_of(self.tests)
        sizes, flat = self.links()
        child_start = np.zeros(self.n_nodes + 1, dtype=np.int64)
        np.cumsum(sizes, out=child_start[1:])
        sizes = table.table_sizes
        node = np.repeat(np.arange(self.n_nodes, dtype=np.int64), sizes)
        routes = flat[child_start[node] + table.tables] if table.tables.size else np.zeros(0, dtype=np.int64)
        routes = routes.astype(np.int32) if routes.size else np.zeros(1, np.int32)
        return RoutingPlan(np.zeros(1, dtype=np.int64), table.attribute.astype(np.int32),
                           table.table_start[:-1].copy(), np.arange(self.n_nodes, dtype=np.int32), routes,
                           self.max_depth, self.n_nodes)

    def to_json(self) -> dict:
        nodes = []
        for i in range(self.n_nodes):
            node: dict[str, Any] = {"depth": int(self.depth[i]), "counts": self.counts[i].tolist()}
            if self.validation is not None:
                node["validation"] = self.validation[i].tolist()
            if self.tests[i] is None:
                node["leaf"] = self.leaf_reason[i] if i < len(self.leaf_reason) else ""
            else:
                node["test"] = self.tests[i].to_json()
                node["children"] = self.children[i]
            nodes.append(node)
        return {"nodes": nodes}

    @classmethod
    def from_json(cls, d: dict) -> "TreeModel":
        nodes = d["nodes"]
        has_validation = bool(nodes) and "validation" in nodes[0]
        return cls(
            NodeTests.from_nodes([n.get("test") for n in nodes]),
            [list(n.get("children", [])) for n in nodes],
            np.asarray([n["counts"] for n in nodes], dtype=np.int64),
            np.asarray([n["depth"] for n in nodes], dtype=np.int64),
            np.asarray([n["validation"] for n in nodes], dtype=np.int64) if has_validation else None,
            [n.get("leaf", "") for n in nodes],
        )


@dataclass
class Model:
    """A fitted dasktree model: what ``fit`` returns and ``load`` reads. ``task`` says what it predicts
    (:mod:`dasktree.model.task`: class labels, or numbers) and answers everything that differs."""

    spec: BinSpec
    target: str
    tree: TreeModel
    params: dict = field(default_factory=dict)
    report: dict = field(default_factory=dict)
    fold_trees: list[TreeModel] = field(default_factory=list)  # grown in full; pruned on use
    run: dict = field(default_factory=dict)  # timings of the fit that made it; not saved
    full_tree: TreeModel | None = None  # the grown tree when ``tree`` is a pruned subtree of it
    task: Task = CLASSIFICATION

    def __post_init__(self):
        """Under ``monotonic_cst`` (in ``params``), every tree's constraints per attribute: its nodes' values
        are clipped to their bounds (:meth:`TreeModel.bounds`, from the tree's own counts, again wherever a
        model is made or read), so predictions, reports and exports take the clipped values."""
        value = self.params.get("monotonic_cst") if isinstance(self.params, dict) else None
        if value is None:
            return
        from ..split.api import monotonic_of

        cst = monotonic_of(value, self.spec)
        for tree in (self.tree, self.full_tree, *self.fold_trees):
            if tree is not None:
                tree.monotonic = cst

    @property
    def grown_tree(self) -> TreeModel:
        """The tree as grown, before any pruning (``tree`` is the one predictions use)."""
        return self.tree if self.full_tree is None else self.full_tree

    @property
    def classes(self) -> tuple:
        return self.spec.classes

    @property
    def features(self) -> list[str]:
        return [f.name for f in self.spec.features]

    # ---------------------------------------------------------------- predict
    def leaves(self, table: pa.Table, tree: TreeModel | None = None) -> np.ndarray:
        """Index of the leaf each row reaches."""
        from ..binning.encode import encode_features
        from ..kernels.histogram import route

        tree = tree or self.tree
        codes = encode_features(table, self.spec)
        return route(codes, tree.routing_plan(self.spec.widths))[0]

    def node_values(self, tree: TreeModel | None = None) -> np.ndarray:
        """Every node's prediction: class probabilities, or (regression) a number in the target's units."""
        return self.task.node_values(self, tree or self.tree)

    def predict_values(self, table: pa.Table, tree: TreeModel | None = None) -> np.ndarray:
        """Each row's leaf's value (:meth:`node_values`)."""
        tree = tree or self.tree
        return self.node_values(tree)[self.leaves(table, tree)]

    def predict_proba_table(self, table: pa.Table, tree: TreeModel | None = None) -> np.ndarray:
        self.task.check_proba()
        return self.predict_values(table, tree)

    def predict_codes(self, table: pa.Table, tree: TreeModel | None = None) -> np.ndarray:
        return np.argmax(self.predict_proba_table(table, tree), axis=1)

    # ---------------------------------------------------------------- importances, pruning path
    def feature_importances(self) -> np.ndarray:
        """Each feature's share of the tree's impurity decrease (of its squared error's for regression),
        summing to 1 (as scikit-learn)."""
        return self.task.feature_importances(self)

    def pruning_path(self) -> tuple[np.ndarray, np.ndarray]:
        """scikit-learn's ``cost_complexity_pruning_path`` of the tree the cp table is of, from the
        weakest-link sequence: ``ccp_alphas`` (0, then the effective alpha of each collapse) and
        ``impurities`` (the leaves' total before the first collapse and after each)."""
        return self.task.pruning_path(self)

    # ---------------------------------------------------------------- JSON
    def to_json(self, *, kept_as_text: bool = True) -> dict:
        """The model file's fields; with ``kept_as_text`` (as saved), every tree's columns as typed arrays in
        base64 and the grown tree and the fold trees each as a JSON text (format version 6), else the columns
        as lists of numbers and the trees as objects (to read them: ``show --format json``)."""
        from .grown_json import arrays_to_json

        def kept(tree: TreeModel):
            columns = arrays_to_json(tree, binary=kept_as_text)
            return json.dumps(columns, sort_keys=True, allow_nan=False, separators=(",", ":")) if kept_as_text \
                else columns

        return {
            "format": FORMAT,
            "version": VERSION,
            **self.task.file_fields(self),
            "target": self.target,
            "classes": _jsonable(list(self.classes)),
            "bins": self.spec.to_json()["features"],
            "params": self.params,
            "tree": arrays_to_json(self.tree, binary=kept_as_text),
            **({"fold_trees": [kept(t) for t in self.fold_trees]} if self.fold_trees else {}),
            "report": _report_to_file(self.report) if kept_as_text else self.report,
            **({} if self.full_tree is None else {"full_tree": kept(self.full_tree)}),
        }

    @classmethod
    def from_json(cls, d: dict, where: str = "model", *, lazy: bool = False) -> "Model":
        """The model of a model file's JSON, checked (:mod:`dasktree.model.check`): a damaged file is a
        :class:`DataError` naming what is wrong. With ``lazy``, the trees a model keeps beside the one it
        predicts with (the grown tree of a pruned model, the kept fold trees) are read and checked when first
        used, not now: ``dasktree show`` prints the tree alone, and the grown tree can be thousands of times
        its size."""
        from .grown_json import grown_from_json

        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise DataError(f"{where}: not a dasktree model (no \"format\": \"{FORMAT}\")")
        version = d.get("version")
        if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
            raise DataError(f"{where}: model format version {version} is newer than this dasktree reads "
                            f"(up to {VERSION}): upgrade dasktree to load it")
        if version not in READS:
            raise DataError(f"{where}: model format version {version!r}; this dasktree reads {list(READS)}")
        try:
            spec = BinSpec.from_json({"classes": d["classes"], "features": d["bins"], "target": d.get("target_scale")})
            task = task_named(d.get("task", CLASSIFICATION.name))
            tree = grown_from_json(d["tree"])
            kept = {**{f"fold tree {i}": t for i, t in enumerate(d.get("fold_trees", []))},
                    **({"full_tree": d["full_tree"]} if "full_tree" in d else {})}
            if lazy and not isinstance(d.get("fold_trees", []), list):
                raise TypeError("the fold trees are not a list")
            read = (lambda name, raw: _LaterTree(_checked_tree, raw, spec, where, name)) if lazy else \
                (lambda name, raw: grown_from_json(_kept_json(raw, where, name)))
            trees = {name: read(name, raw) for name, raw in kept.items()}
            model = cls(
                spec=spec, target=d["target"], tree=tree,
                params=d.get("params", {}), report=task.report_of_file(_report_of_file(d.get("report", {}))),
                fold_trees=[t for name, t in trees.items() if name != "full_tree"],
                full_tree=trees.get("full_tree"), task=task,
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
            raise DataError(f"{where}: malformed model: {type(exc).__name__}: {exc}") from None
        from .check import check_model_parts

        check_model_parts(model.spec, {"tree": model.tree, **({} if lazy else trees)}, where)
        if not isinstance(model.target, str) or not isinstance(model.params, dict) \
                or not isinstance(model.report, dict):
            raise DataError(f"{where}: malformed model: its target, params or report is of the wrong type")
        return model

    def dumps(self, indent: int | None = None) -> str:
        """The model as JSON text: compact (as saved: a third of the indented bytes, written by the
        C encoder), or indented by ``indent`` for reading (``dasktree show --format json``)."""
        compact = {"separators": (",", ":")} if indent is None else {"indent": indent}
        return json.dumps(self.to_json(kept_as_text=indent is None), sort_keys=True, allow_nan=False, **compact)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model as JSON to a temporary name, then rename: never half-written."""
        atomic_write_text(path, self.dumps())

    def evaluate_part(self, table: pa.Table, target: str, where: str, weight: str | None = None):
        """One part's mergeable statistic of an evaluation and its rows without a target (its task's)."""
        return self.task.evaluate_part(self, table, target, where, weight)

    def evaluate_merge(self, results: list, weighted: bool) -> dict:
        """The metrics of the parts' statistics (:meth:`evaluate_part`), merged in the parts' order."""
        return self.task.evaluate_merge(self, results, weighted)

    def export(self, format: str, out: str | os.PathLike | None = None, *, overwrite: bool = False,
               **options) -> str | bytes:
        """The model as SQL or PMML text, or ONNX bytes (:func:`dasktree.export.export_model`);
        with ``out``, also written there atomically (refused if it exists, unless ``overwrite``)."""
        if out is not None:
            return EXPORTERS["write"](self, format, out, overwrite=overwrite, **options)
        return EXPORTERS["export"](self, format, **options)


def _report_to_file(report: dict) -> dict:
    """The report as a model file holds it (format version 7): its cp table as typed columns."""
    prune = report.get("prune") if isinstance(report, dict) else None
    if not isinstance(prune, dict) or not isinstance(prune.get("cp_table"), list):
        return report
    from .grown_json import rows_to_json

    return {**report, "prune": {**prune, "cp_table": rows_to_json(prune["cp_table"])}}


def _report_of_file(report):
    """The report of a model file: its cp table's rows read back from typed columns (a list as it is)."""
    prune = report.get("prune") if isinstance(report, dict) else None
    if not isinstance(prune, dict) or not isinstance(prune.get("cp_table"), dict):
        return report
    from .grown_json import rows_from_json

    return {**report, "prune": {**prune, "cp_table": rows_from_json(prune["cp_table"])}}


def _kept_json(raw, where: str, name: str):
    """A kept tree's columns from the file: its JSON text (format version 5) read, or the object as it is."""
    from ..io.outputs import read_json_text

    return read_json_text(raw, f"{where}: malformed model: {name}") if isinstance(raw, str) else raw


def _checked_tree(raw, spec: BinSpec, where: str, name: str) -> TreeModel:
    """A model file's tree ``name`` read from its JSON ``raw`` and checked, as :meth:`Model.from_json` reads
    every tree: a damaged one is a :class:`DataError` naming the file and the tree."""
    from .check import check_model_parts
    from .grown_json import grown_from_json

    try:
        with collector_paused():
            tree = grown_from_json(_kept_json(raw, where, name))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as exc:
        raise DataError(f"{where}: malformed model: {name}: {type(exc).__name__}: {exc}") from None
    check_model_parts(spec, {name: tree}, where)
    return tree


class _LaterTree(TreeModel):
    """A tree of a model file read and checked when first used (:meth:`Model.from_json` with ``lazy``): any
    attribute read makes it, and from then on it is a :class:`TreeModel` like any other."""

    def __init__(self, read, *args):  # no dataclass fields yet: reading one comes to __getattr__
        self.__dict__["_later"] = (read, args)

    def _made(self) -> None:
        later = self.__dict__.pop("_later", None)
        if later is not None:
            read, args = later
            try:
                self.__dict__.update(read(*args).__dict__)
            except BaseException:
                self.__dict__["_later"] = later  # the next use raises the same error
                raise
            self.__class__ = TreeModel

    def __getattr__(self, name: str):
        if name == "_later" or "_later" not in self.__dict__:
            raise AttributeError(name)
        self._made()
        return getattr(self, name)

    def __repr__(self) -> str:
        self._made()
        return repr(self)

    def __reduce_ex__(self, protocol):  # pickled (sent to a worker) as the tree it is
        self._made()
        return self.__reduce_ex__(protocol)


def _children(self: TreeModel) -> list[list[int]]:
    d = self.__dict__
    if "_kids" not in d:  # not made yet (_LaterTree): its __getattr__ reads it
        raise AttributeError("children")
    kids = d["_kids"]
    if kids is None:
        kids = d["_kids"] = d["_kids_given"].lists()
    return kids


def _set_children(self: TreeModel, value) -> None:
    d = self.__dict__
    d["_kids_given"] = value
    if isinstance(value, ChildLinks):
        d["_kids"], d["_links"] = None, (value.sizes, value.flat)
    else:
        d["_kids"] = value
        d.pop("_links", None)


TreeModel.children = property(  # type: ignore[assignment]
    _children, _set_children,
    doc="Node ``i``'s children (a list per node), made from :class:`ChildLinks` when first read.")


def _jsonable(values: list) -> list:
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def load(path: str | os.PathLike, *, lazy: bool = False) -> Model:
    """Read a model saved by :meth:`Model.save` (JSON; runs no code). ``lazy``: see :meth:`Model.from_json`."""
    with collector_paused():  # a million small lists and no cycle: the collector's passes were half the read
        return Model.from_json(read_json_file(path, "model"), where=os.fspath(path), lazy=lazy)

