"""A forest as ONNX: one ``ai.onnx.ml`` ``TreeEnsemble`` node per member (the tree export's, each
giving its leaf), each leaf's class probabilities gathered from the member's table of the model's
own doubles, summed over the members in member order and divided by their number (as
:meth:`~dasktree.model.forest_model.ForestModel.predict_proba_codes` takes the mean), and the
label the first class of the highest mean (``ArgMax``, as ``numpy.argmax``): equal to
``predict_proba`` and ``predict`` on every row. A regression forest's (its task predicts no
classes): each member's leaf values gathered, summed in member order and divided by the members,
``prediction`` equal to ``predict_values`` on every row. The input contract is the tree export's
(:data:`dasktree.export.onnx_model.CONTRACT`; :func:`dasktree.export.onnx_model.onnx_input` makes ``X``).
"""

from __future__ import annotations

import json

import numpy as np

from ..errors import InputError
from ..model.forest_model import ForestModel
from .onnx_model import CONTRACT, ML_OPSET, ONNX_OPSET, _build, _label_tensor, _onnx, ensemble_node
from .walk import MAX_DEPTH, describe, label_kind, leaf_outputs, regression

__all__ = ["forest_onnx_model", "forest_onnx_bytes"]


def _member_nodes(forest: ForestModel, m: int, tree) -> list:
    """Member ``m``'s TreeEnsemble node, its leaf index as int64, and its probabilities gathered."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, leaves = _build(forest, tree)
    ensemble = ensemble_node(nodes, leaves, f"leaf_{m}", f"member_{m}")
    values = (np.asarray(forest.task.node_values(forest, tree), dtype=np.float64)[leaves] if regression(forest)
              else leaf_outputs(tree).proba[leaves])  # (leaves,): a regression member's leaf values
    table = numpy_helper.from_array(np.ascontiguousarray(values), f"proba_table_{m}")
    return [ensemble,
            helper.make_node("Reshape", [f"leaf_{m}", "flat"], [f"leaf_flat_{m}"]),
            helper.make_node("Cast", [f"leaf_flat_{m}"], [f"leaf_index_{m}"], to=TensorProto.INT64),
            helper.make_node("Gather", [f"proba_table_{m}", f"leaf_index_{m}"], [f"proba_{m}"], axis=0)], table


def forest_onnx_model(forest: ForestModel):
    """The forest as an ``onnx.ModelProto`` (checked with ``onnx.checker``)."""
    onnx = _onnx()
    from onnx import TensorProto, helper, numpy_helper

    classes = list(forest.classes)
    deepest = max(m.max_depth for m in forest.members)
    if deepest > MAX_DEPTH:
        raise InputError(f"a member is {deepest} levels deep; exports nest at most {MAX_DEPTH} "
                         "(fit with a smaller max_depth)")
    graph_nodes = [helper.make_node("Constant", [], ["flat"],
                                    value=numpy_helper.from_array(np.array([-1], np.int64), "flat"))]
    tables = []
    for m, tree in enumerate(forest.members):
        nodes, table = _member_nodes(forest, m, tree)
        graph_nodes += nodes
        tables.append(table)
    total = "proba_0"
    for m in range(1, forest.n_members):  # in member order: the sum numpy's mean over members makes
        graph_nodes.append(helper.make_node("Add", [total, f"proba_{m}"], [f"sum_{m}"]))
        total = f"sum_{m}"
    graph_nodes.append(helper.make_node("Constant", [], ["members"],
                                        value=numpy_helper.from_array(np.array(float(forest.n_members)), "members")))
    if regression(forest):
        graph_nodes.append(helper.make_node("Div", [total, "members"], ["prediction"]))
        outputs = [helper.make_tensor_value_info("prediction", TensorProto.DOUBLE, ["N"])]
    else:
        label_table, label_type = _label_tensor(classes, label_kind(forest.classes), np.arange(len(classes)))
        tables.append(label_table)
        graph_nodes += [
            helper.make_node("Div", [total, "members"], ["probabilities"]),
            helper.make_node("ArgMax", ["probabilities"], ["label_index"], axis=1, keepdims=0),
            helper.make_node("Gather", ["label_table", "label_index"], ["label"], axis=0)]
        outputs = [helper.make_tensor_value_info("label", label_type, ["N"]),
                   helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE, ["N", len(classes)])]
    graph = helper.make_graph(
        graph_nodes, "dasktree_forest",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, ["N", forest.spec.n_features])],
        outputs, initializer=tables)
    meta = describe(forest)
    proto = helper.make_model(graph, producer_name="dasktree", producer_version=meta["dasktree_version"],
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                                             helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                              doc_string=f"dasktree forest of {forest.n_members} trees predicting "
                                         f"{forest.target!r}. {CONTRACT}")
    helper.set_model_props(proto, {
        "dasktree_version": str(meta["dasktree_version"]), "task": forest.task.name, "kind": "forest",
        "members": str(forest.n_members), "target": json.dumps(meta["target"]),
        "classes": json.dumps(meta["classes"]), "features": json.dumps(meta["features"]), "input_contract": CONTRACT,
        "thresholds": "float64 (nodes_splits as a double tensor): none rounded",
    })
    onnx.checker.check_model(proto)
    return proto


def forest_onnx_bytes(forest: ForestModel) -> bytes:
    """The serialized ONNX model of the forest."""
    return forest_onnx_model(forest).SerializeToString()


