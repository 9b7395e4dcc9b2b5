"""A forest as PMML 4.4: a ``MiningModel`` whose ``Segmentation`` averages (``multipleModelMethod=
"average"``) one ``TreeModel`` segment per member, each the tree export's own
(:func:`dasktree.export.pmml.pmml_text` of the member), so a PMML consumer predicts the members'
mean class probabilities and the class of the highest, as ``predict_proba`` and ``predict`` do; a
regression forest's (``functionName`` its task's) the members' mean leaf value, as ``predict_values``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..model.forest_model import ForestModel
from .pmml import NAMESPACE, pmml_text

__all__ = ["forest_pmml_text"]


def _q(tag: str) -> str:
    return f"{{{NAMESPACE}}}{tag}"


def forest_pmml_text(forest: ForestModel) -> str:
    """The forest as a PMML 4.4 document (UTF-8 XML text)."""
    ET.register_namespace("", NAMESPACE)
    documents = [ET.fromstring(pmml_text(forest.member_model(m))) for m in range(forest.n_members)]
    first = documents[0]
    pmml = ET.Element(_q("PMML"), version="4.4")
    header = first.find(_q("Header"))
    header.set("description", f"dasktree forest of {forest.n_members} trees predicting {forest.target!r}")
    pmml.append(header)
    pmml.append(first.find(_q("DataDictionary")))
    tree0 = first.find(_q("TreeModel"))
    mining = ET.SubElement(pmml, _q("MiningModel"), modelName="dasktree_forest", functionName=forest.task.name,
                           algorithmName="dasktree")
    mining.append(tree0.find(_q("MiningSchema")))
    if tree0.find(_q("Output")) is not None:  # a regression tree's has none
        mining.append(tree0.find(_q("Output")))
    segmentation = ET.SubElement(mining, _q("Segmentation"), multipleModelMethod="average")
    for m, document in enumerate(documents):
        tree = document.find(_q("TreeModel"))
        output = tree.find(_q("Output"))
        if output is not None:
            tree.remove(output)
        tree.set("modelName", f"member_{m}")
        segment = ET.SubElement(segmentation, _q("Segment"), id=str(m))
        ET.SubElement(segment, _q("True"))
        segment.append(tree)
    ET.indent(pmml, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(pmml, encoding="unicode") + "\n"
