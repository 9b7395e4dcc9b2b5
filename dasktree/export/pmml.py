"""The tree as PMML 4.4: a ``TreeModel`` with its multi-way tests kept, written with the
standard library's ``xml.etree``.

Each dasktree node is a ``Node`` (``id`` its index, ``score`` the class dasktree predicts there,
``recordCount``) with one ``ScoreDistribution`` per class holding the training count: an
evaluator's probability is count / total, as ``predict_proba``'s (no ``probability`` attribute:
decimal probabilities need not sum to 1 in doubles, and JPMML renormalizes them, moving the last
bit). A node no training row reached predicts as its nearest ancestor with rows, as dasktree
does: its ``ScoreDistribution`` holds that ancestor's counts, named by an ``Extension``
``dasktree_distribution_of``, while its ``recordCount`` stays 0. A child's predicate is its values
(:mod:`dasktree.export.walk`): numeric ``x <= hi``, ``x > lo`` or both under ``and`` (several
intervals under ``or``); nominal ``SimpleSetPredicate isIn`` its categories, and the child that
takes values outside the model's categories last, ``isNotIn`` the categories of its siblings
(``True`` when they have none). ``missingValueStrategy="defaultChild"``: a predicate on a
missing value is UNKNOWN and the row goes to the node's ``defaultChild``, the learned
direction; a child that takes only missing values tests ``isMissing``. Numeric fields declare
``NaN`` a missing value, and every field is read ``asIs`` when invalid, so a category the
model never saw goes where dasktree sends it.

A regression tree is a ``TreeModel`` of ``functionName="regression"``: each ``Node``'s
``score`` is its value (the shortest decimal that reads back as the double dasktree predicts;
a node without training rows its parent's), the target a continuous double, and the output
``prediction`` the ``predictedValue``; no ``ScoreDistribution``.

Input contract: numeric fields are doubles as dasktree reads them (dates as days since the
epoch, timestamps in their unit), nominal fields strings as dasktree casts them (``"true"``
for a boolean true). The ``Header``'s ``Extension`` elements carry the dasktree and model format
versions; each ``DataField``'s ``Extension`` its kind.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from typing import Any

from ..errors import InputError
from ..io.schema import NUMERIC
from ..model.model import Model, TreeModel
from .walk import Branch, branches, check_tree, describe, label_kind, leaf_outputs, leaf_values, regression

__all__ = ["pmml_text", "NAMESPACE"]

NAMESPACE = "http://www.dmg.org/PMML-4_4"
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_TYPES = {"string": "string", "integer": "integer", "boolean": "boolean", "double": "double"}


def _text(value: str, what: str) -> str:
    if _XML_BAD.search(value):
        raise InputError(f"cannot write {what} {value!r} in PMML: it holds a character XML 1.0 cannot carry")
    return value


def _number(x: float) -> str:
    return repr(float(x))


def _label(value: Any, kind: str) -> str:
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "double":
        return _number(value)
    return _text(str(value), "class label")


def _array(values: list[str]) -> ET.Element:
    array = ET.Element("Array", type="string", n=str(len(values)))
    array.text = " ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return array


def _interval(field: str, lo: float, hi: float) -> ET.Element:
    parts = ([ET.Element("SimplePredicate", field=field, operator="greaterThan", value=_number(lo))] if lo > -math.inf else []) \
        + ([ET.Element("SimplePredicate", field=field, operator="lessOrEqual", value=_number(hi))] if hi < math.inf else [])
    if not parts:
        return ET.Element("SimplePredicate", field=field, operator="isNotMissing")
    return parts[0] if len(parts) == 1 else _compound("and", parts)


def _compound(operator: str, parts: list[ET.Element]) -> ET.Element:
    element = ET.Element("CompoundPredicate", booleanOperator=operator)
    element.extend(parts)
    return element


def _predicate(branch: Branch, field: str, numeric: bool, others: list[str]) -> ET.Element:
    if numeric:
        if not branch.intervals:
            return ET.Element("SimplePredicate", field=field, operator="isMissing")
        parts = [_interval(field, lo, hi) for lo, hi in branch.intervals]
        return parts[0] if len(parts) == 1 else _compound("or", parts)
    if branch.rest:
        if not others:
            return ET.Element("True")
        element = ET.Element("SimpleSetPredicate", field=field, booleanOperator="isNotIn")
    elif branch.categories:
        element = ET.Element("SimpleSetPredicate", field=field, booleanOperator="isIn")
        others = list(branch.categories)
    else:
        return ET.Element("SimplePredicate", field=field, operator="isMissing")
    element.append(_array([_text(c, "category") for c in others]))
    return element


class _Writer:
    def __init__(self, model: Model, tree: TreeModel, kind: str):
        self.model, self.tree, self.kind = model, tree, kind
        numbers = regression(model)
        self.values = leaf_values(model, tree) if numbers else None
        self.outputs = None if numbers else leaf_outputs(tree)
        self.classes = [_label(c, kind) for c in model.classes]
        self.source = list(range(tree.n_nodes))  # the node whose counts give node i's probabilities
        for i in range(tree.n_nodes):  # parents come first (breadth-first order)
            for c in tree.children[i]:
                if tree.counts[c].sum() == 0:
                    self.source[c] = self.source[i]

    def node(self, i: int, predicate: ET.Element) -> ET.Element:
        tree = self.tree
        if self.values is not None:  # regression: the value, the rows (counts[:, 0]), no distribution
            element = ET.Element("Node", id=str(i), score=_number(self.values[i]), recordCount=str(int(tree.counts[i, 0])))
            element.append(predicate)
        else:
            element = ET.Element("Node", id=str(i), score=self.classes[int(self.outputs.label[i])],
                                 recordCount=str(int(tree.counts[i].sum())))
            source = self.source[i]
            if source != i:
                ET.SubElement(element, "Extension", name="dasktree_distribution_of", value=str(source))
            element.append(predicate)
            # under monotonic_cst a node's probabilities are its clipped values, not its counts' shares: said
            clipped = tree.monotonic is not None
            for k, label in enumerate(self.classes):
                ET.SubElement(element, "ScoreDistribution", value=label, recordCount=str(int(tree.counts[source, k])),
                              **({"probability": _number(self.outputs.proba[i, k])} if clipped else {}))
        test = tree.tests[i]
        if test is None:
            return element
        bins = self.model.spec.features[test.attribute]
        numeric = bins.kind == NUMERIC
        arms = [b for b in branches(test, tree.children[i], bins) if not b.empty]
        if not numeric:  # the child of values outside the categories last: isNotIn its siblings' categories
            arms.sort(key=lambda b: b.rest)
        others = [c for b in arms if not b.rest for c in b.categories]
        element.set("defaultChild", str(next(b.child for b in arms if b.missing)))
        for b in arms:
            element.append(self.node(b.child, _predicate(b, bins.name, numeric, others)))
        return element


def pmml_text(model: Model) -> str:
    """The model as a PMML 4.4 document (UTF-8 XML text)."""
    tree = check_tree(model)
    numbers = regression(model)
    kind = "double" if numbers else label_kind(model.classes)
    meta = describe(model)
    pmml = ET.Element("PMML", xmlns=NAMESPACE, version="4.4")
    header = ET.SubElement(pmml, "Header", description=_text(f"dasktree tree predicting {model.target!r}", "target"))
    for name in ("dasktree_version", "model_format_version"):
        ET.SubElement(header, "Extension", name=name, value=str(meta[name]))
    ET.SubElement(header, "Application", name="dasktree", version=str(meta["dasktree_version"]))
    names = [_text(f.name, "column name") for f in model.spec.features]
    target = _text(model.target, "column name")
    if target in names:
        raise InputError(f"cannot write PMML: the target {target!r} is also a feature name")
    dictionary = ET.SubElement(pmml, "DataDictionary", numberOfFields=str(len(names) + 1))
    for feature in model.spec.features:
        numeric = feature.kind == NUMERIC
        field = ET.SubElement(dictionary, "DataField", name=feature.name, optype="continuous" if numeric else "categorical",
                              dataType="double" if numeric else "string")
        ET.SubElement(field, "Extension", name="dasktree_kind", value=feature.kind)
        if numeric:
            ET.SubElement(field, "Value", value="NaN", property="missing")
    if numbers:
        ET.SubElement(dictionary, "DataField", name=target, optype="continuous", dataType="double")
    else:
        field = ET.SubElement(dictionary, "DataField", name=target, optype="categorical", dataType=_TYPES[kind])
        for label in (_label(c, kind) for c in model.classes):
            ET.SubElement(field, "Value", value=label)
    tree_model = ET.SubElement(pmml, "TreeModel", modelName="dasktree", functionName=model.task.name,
                               algorithmName="dasktree", splitCharacteristic="multiSplit",
                               missingValueStrategy="defaultChild", noTrueChildStrategy="returnNullPrediction")
    schema = ET.SubElement(tree_model, "MiningSchema")
    ET.SubElement(schema, "MiningField", name=target, usageType="target")
    for name in names:
        ET.SubElement(schema, "MiningField", name=name, invalidValueTreatment="asIs")
    output = ET.SubElement(tree_model, "Output")
    if numbers:
        ET.SubElement(output, "OutputField", name="prediction", optype="continuous", dataType="double",
                      feature="predictedValue")
    else:
        ET.SubElement(output, "OutputField", name="prediction", optype="categorical", dataType=_TYPES[kind],
                      feature="predictedValue")
    for c, label in zip(model.classes, (_label(c, kind) for c in model.classes)):
        ET.SubElement(output, "OutputField", name=_text(f"proba_{c}", "class label"), optype="continuous",
                      dataType="double", feature="probability", value=label)
    tree_model.append(_Writer(model, tree, kind).node(0, ET.Element("True")))
    ET.indent(pmml, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(pmml, encoding="unicode") + "\n"
