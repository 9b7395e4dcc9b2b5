"""The tree as ONNX: one ``ai.onnx.ml`` ``TreeEnsemble`` (opset 5) node, built with the ``onnx``
package's helpers, and two ``Gather`` nodes for the outputs.

Input contract: one tensor ``X`` of doubles, shape ``[N, n_features]``, columns in the model's
feature order (``metadata_props["features"]``). A numeric feature is its value as dasktree reads
it (dates as days and timestamps in their unit since the epoch), NaN when missing. A nominal
feature is its category's *code*: the 1-based position of the value in the feature's
``categories`` list; NaN or 0 when missing; any other number (-1, say) for a value outside the
list, which then goes where dasktree sends an unseen category. :func:`onnx_input` makes ``X``
from an Arrow table.

Outputs: ``label`` ``[N]`` (the class dasktree predicts, typed as the classes are: string,
int64, bool or double) and ``probabilities`` ``[N, n_classes]`` (double, classes in the order
of ``metadata_props["classes"]``), equal to ``predict_proba``. A regression tree's one output
is ``prediction`` ``[N]`` (double), its leaf's value gathered from a table of the model's own
doubles, equal to ``predict``.

Why ``TreeEnsemble`` (ai.onnx.ml 5) and not ``TreeEnsembleClassifier``: it compares doubles with
double thresholds (``nodes_splits`` is a double tensor), so no threshold is rounded to float32
and a value at a threshold takes the branch it takes in dasktree (the classifier operator's
outputs are float32 whatever its thresholds); it tests set membership (``BRANCH_MEMBER``), so a
nominal subset is one node; and its leaves give the leaf's row in a table of double
probabilities, so the probabilities are the model's own. A multi-way test becomes a chain of
binary nodes: ``x <= t1`` true to child 0, false to ``x <= t2``, and so on, the last child the
final false branch; a nominal test chains ``x in S_i``, the child of values outside the
categories last. NaN follows ``nodes_missing_value_tracks_true``: true at the chain's node of
the child that takes missing values, false before it.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..io.schema import NUMERIC, nominal_values, numeric_values
from ..model.model import Model, TreeModel
from .walk import branches, check_tree, describe, label_kind, leaf_outputs, leaf_values, regression

__all__ = ["onnx_model", "onnx_bytes", "onnx_input", "CONTRACT"]

BRANCH_LEQ, BRANCH_MEMBER = 0, 6
ML_OPSET, ONNX_OPSET = 5, 21
CONTRACT = ("X: double [N, n_features] in the order of 'features'; numeric: the value, NaN if missing; "
            "nominal: the 1-based position of the value in the feature's 'categories', NaN or 0 if missing, "
            "any other number (e.g. -1) for a value outside the list")


def _onnx():
    try:
        import onnx
    except ImportError:
        raise InputError("the ONNX export needs the onnx package: pip install onnx "
                         "(or pip install 'dasktree[export]')") from None
    return onnx


class _Nodes:
    """The ``nodes_*`` arrays of one ONNX tree, filled as the dasktree tree is walked."""

    def __init__(self):
        self.feature: list[int] = []
        self.mode: list[int] = []
        self.split: list[float] = []
        self.members: list[list[float]] = []
        self.missing_true: list[int] = []
        self.true: list[tuple[bool, int]] = []  # (is leaf, index)
        self.false: list[tuple[bool, int]] = []

    def add(self, feature: int, mode: int, split: float, members: list[float] | None, missing_true: bool) -> int:
        self.feature.append(feature)
        self.mode.append(mode)
        self.split.append(split)
        if members is not None:
            self.members.append(members)
        self.missing_true.append(int(missing_true))
        self.true.append((True, -1))
        self.false.append((True, -1))
        return len(self.feature) - 1


def _chain(model: Model, tree: TreeModel, i: int) -> list[tuple[int, int, float, list[float] | None, bool, int]]:
    """The binary steps of node ``i``'s test, and the child of the last false branch:
    ``[(feature, mode, split, members, missing_true, child), ...], else_child``."""
    test = tree.tests[i]
    bins = model.spec.features[test.attribute]
    arms = branches(test, tree.children[i], bins)
    steps = []
    if bins.kind == NUMERIC:
        runs = sorted((hi, b.child, b.missing) for b in arms for _, hi in b.intervals)
        seen_missing = False
        for hi, child, missing in runs[:-1]:
            steps.append((test.attribute, BRANCH_LEQ, hi, None, missing and not seen_missing, child))
            seen_missing |= missing
        return steps, runs[-1][1]
    code = {c: k + 1 for k, c in enumerate(bins.categories)}
    rest = next(b for b in arms if b.rest)
    for b in arms:
        if b is rest or b.empty:
            continue
        members = sorted(float(code[c]) for c in b.categories) + ([0.0] if b.missing else [])
        steps.append((test.attribute, BRANCH_MEMBER, math.nan, members, b.missing, b.child))
    return steps, rest.child


def _build(model: Model, tree: TreeModel) -> tuple[_Nodes, list[int]]:
    """The ONNX nodes of ``tree`` and the dasktree node of each ONNX leaf, in leaf order."""
    nodes, leaves = _Nodes(), []

    def ref(i: int) -> tuple[bool, int]:
        if tree.tests[i] is None:
            leaves.append(i)
            return True, len(leaves) - 1
        steps, last = _chain(model, tree, i)
        if not steps:  # every value, missing or not, goes to one child
            return ref(last)
        ids = [nodes.add(f, mode, split, members, missing) for f, mode, split, members, missing, _ in steps]
        for k, step in enumerate(steps):
            nodes.true[ids[k]] = ref(step[-1])
            nodes.false[ids[k]] = (False, ids[k + 1]) if k + 1 < len(ids) else ref(last)
        return False, ids[0]

    root = ref(0)
    if root[0]:  # a tree that is one leaf: one node whose branches both reach it
        nodes.add(0, BRANCH_LEQ, 0.0, None, False)
        nodes.true[0] = nodes.false[0] = root
    return nodes, leaves


def _label_tensor(classes: list, kind: str, labels: np.ndarray):
    onnx = _onnx()
    from onnx import TensorProto, helper

    values = [classes[k] for k in labels]
    if kind == "string":
        return helper.make_tensor("label_table", TensorProto.STRING, [len(values)], [str(v).encode() for v in values]), TensorProto.STRING
    dtype, proto = {"integer": (np.int64, TensorProto.INT64), "boolean": (np.bool_, TensorProto.BOOL),
                    "double": (np.float64, TensorProto.DOUBLE)}[kind]
    return onnx.numpy_helper.from_array(np.asarray(values, dtype=dtype), "label_table"), proto


def ensemble_node(nodes, leaves, output: str, name: str):
    """The ``TreeEnsemble`` node of one tree's :func:`_build` (``nodes``, ``leaves``) reading ``X``: its
    output ``output`` is the index of the leaf each row reaches (a double), gathered from the tree's
    tables after it (the tree's and each forest member's, :mod:`dasktree.export.forest_onnx`)."""
    from onnx import helper, numpy_helper

    members = [v for s in nodes.members for v in (*s, math.nan)][:-1] if nodes.members else []
    return helper.make_node(
        "TreeEnsemble", ["X"], [output], domain="ai.onnx.ml", name=name,
        n_targets=1, aggregate_function=1, post_transform=0, tree_roots=[0],
        nodes_featureids=nodes.feature,
        nodes_modes=numpy_helper.from_array(np.asarray(nodes.mode, dtype=np.uint8), "nodes_modes"),
        nodes_splits=numpy_helper.from_array(np.asarray(nodes.split, dtype=np.float64), "nodes_splits"),
        nodes_truenodeids=[k for _, k in nodes.true], nodes_trueleafs=[int(leaf) for leaf, _ in nodes.true],
        nodes_falsenodeids=[k for _, k in nodes.false], nodes_falseleafs=[int(leaf) for leaf, _ in nodes.false],
        nodes_missing_value_tracks_true=nodes.missing_true,
        leaf_targetids=[0] * len(leaves),
        leaf_weights=numpy_helper.from_array(np.arange(len(leaves), dtype=np.float64), "leaf_weights"),
        **({"membership_values": numpy_helper.from_array(np.asarray(members, dtype=np.float64), "membership_values")}
           if members else {}),
    )


def onnx_model(model: Model):
    """The model as an ``onnx.ModelProto`` (checked with ``onnx.checker``)."""
    onnx = _onnx()
    from onnx import TensorProto, helper, numpy_helper

    tree = check_tree(model)
    nodes, leaves = _build(model, tree)
    n_features, classes = model.spec.n_features, list(model.classes)
    ensemble = ensemble_node(nodes, leaves, "leaf", "tree")
    index = [
        ensemble,
        helper.make_node("Constant", [], ["flat"], value=numpy_helper.from_array(np.array([-1], np.int64), "flat")),
        helper.make_node("Reshape", ["leaf", "flat"], ["leaf_flat"]),
        helper.make_node("Cast", ["leaf_flat"], ["leaf_index"], to=TensorProto.INT64)]
    if regression(model):
        value_table = numpy_helper.from_array(np.ascontiguousarray(leaf_values(model, tree)[leaves]), "value_table")
        gathers = [helper.make_node("Gather", ["value_table", "leaf_index"], ["prediction"], axis=0)]
        outs = [helper.make_tensor_value_info("prediction", TensorProto.DOUBLE, ["N"])]
        tables = [value_table]
    else:
        outputs = leaf_outputs(tree)
        label_table, label_type = _label_tensor(classes, label_kind(model.classes), outputs.label[leaves])
        gathers = [helper.make_node("Gather", ["label_table", "leaf_index"], ["label"], axis=0),
                   helper.make_node("Gather", ["proba_table", "leaf_index"], ["probabilities"], axis=0)]
        outs = [helper.make_tensor_value_info("label", label_type, ["N"]),
                helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE, ["N", len(classes)])]
        tables = [label_table, numpy_helper.from_array(np.ascontiguousarray(outputs.proba[leaves]), "proba_table")]
    graph = helper.make_graph(
        index + gathers, "dasktree", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, ["N", n_features])],
        outs, initializer=tables)
    meta = describe(model)
    proto = helper.make_model(graph, producer_name="dasktree", producer_version=meta["dasktree_version"],
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              doc_string=f"dasktree tree predicting {model.target!r}. {CONTRACT}")
    helper.set_model_props(proto, {
        "dasktree_version": str(meta["dasktree_version"]), "model_format_version": str(meta["model_format_version"]),
        "task": meta["task"], "target": json.dumps(meta["target"]), "classes": json.dumps(meta["classes"]),
        "features": json.dumps(meta["features"]), "input_contract": CONTRACT,
        "thresholds": "float64 (nodes_splits as a double tensor): none rounded",
    })
    onnx.checker.check_model(proto)
    return proto


def onnx_bytes(model: Model) -> bytes:
    """The serialized ONNX model."""
    return onnx_model(model).SerializeToString()


def onnx_input(model: Model, table: pa.Table) -> np.ndarray:
    """``X`` for the ONNX model from an Arrow table with the model's feature columns (the contract
    in the module's docstring): values of numeric features, codes of nominal ones."""
    X = np.empty((table.num_rows, model.spec.n_features), dtype=np.float64)
    for j, bins in enumerate(model.spec.features):
        if bins.name not in table.column_names:
            raise InputError(f"column {bins.name!r} that the model uses is missing from the data")
        column = table.column(bins.name)
        if bins.kind == NUMERIC:
            X[:, j] = numeric_values(column, bins.name)
            continue
        values = nominal_values(column)
        index = pc.index_in(values, value_set=pa.array(bins.categories, type=pa.string()))
        codes = index.cast(pa.float64()).fill_null(-2.0).to_numpy(zero_copy_only=False) + 1.0  # unseen: -1
        codes[~values.is_valid().to_numpy(zero_copy_only=False)] = np.nan
        X[:, j] = codes
    return X
