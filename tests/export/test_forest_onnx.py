"""A forest's ONNX export predicts every row as the forest does: the same mean probabilities, to
the bit, and the same labels."""

import numpy as np
import pyarrow as pa
import pytest

import dasktree
from dasktree.export.forest_onnx import forest_onnx_bytes
from dasktree.export.onnx_model import onnx_input
from dasktree.testing import mixed_frame

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("params", [dict(n_estimators=7, max_depth=6, random_state=1),
                                    dict(n_estimators=3, max_depth=4, max_features=None, random_state=2)])
def test_the_onnx_forest_predicts_every_row_as_the_forest(params):
    frame = mixed_frame(2500, seed=7)
    forest = dasktree.fit_forest(frame, target="label", **params)
    rows = mixed_frame(1500, seed=8)  # other rows, missing values and unseen categories among them
    table = pa.Table.from_pandas(rows.drop(columns=["label"]), preserve_index=False)
    session = ort.InferenceSession(forest_onnx_bytes(forest), providers=["CPUExecutionProvider"])
    label, proba = session.run(["label", "probabilities"], {"X": onnx_input(forest, table)})
    expected = forest.predict_proba_table(table)
    np.testing.assert_array_equal(proba, expected)
    assert list(label) == list(np.asarray(forest.classes)[np.argmax(expected, axis=1)])


def test_the_onnx_regression_forest_predicts_every_row_as_the_forest():
    frame = mixed_frame(2500, seed=7).drop(columns=["label"])
    forest = dasktree.fit_forest_regression(frame, target="x", n_estimators=5, max_depth=5, random_state=4)
    table = pa.Table.from_pandas(mixed_frame(1500, seed=8).drop(columns=["label", "x"]), preserve_index=False)
    session = ort.InferenceSession(forest_onnx_bytes(forest), providers=["CPUExecutionProvider"])
    [prediction] = session.run(["prediction"], {"X": onnx_input(forest, table)})
    np.testing.assert_array_equal(prediction, forest.predict_values(table))
