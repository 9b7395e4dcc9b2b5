"""A forest's PMML (a MiningModel averaging a TreeModel per member), scored by JPMML-Evaluator,
predicts every row as the forest does."""

import os
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dasktree
from dasktree.export.forest_pmml import forest_pmml_text
from dasktree.testing import mixed_frame
from dasktree.testing.exports import missing_engine

reason = missing_engine("pmml")
pytestmark = pytest.mark.skipif(reason is not None, reason=reason or "")


def test_the_pmml_forest_predicts_every_row_as_the_forest():
    from jpmml_evaluator import make_evaluator

    forest = dasktree.fit_forest(mixed_frame(2500, seed=7), target="label", n_estimators=5, max_depth=5,
                                 random_state=4)
    rows = mixed_frame(600, seed=9).drop(columns=["label"])
    table = pa.Table.from_pandas(rows, preserve_index=False)
    frame = pd.DataFrame({f.name: [np.nan if v is None else v for v in table.column(f.name).to_pylist()]
                          if f.kind == "numeric" else table.column(f.name).to_pylist() for f in forest.spec.features})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "forest.pmml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(forest_pmml_text(forest))
        result = make_evaluator(path, backend="jpype").verify().evaluateAll(frame)
    expected = forest.predict_proba_table(table)
    got = result[[f"proba_{c}" for c in forest.classes]].to_numpy(dtype=np.float64)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    labels = np.asarray(forest.classes)[np.argmax(expected, axis=1)]
    clear = np.sort(expected, axis=1)[:, -1] - np.sort(expected, axis=1)[:, -2] > 1e-9  # no tie to break
    assert [str(v) for v in result["prediction"][clear]] == [str(v) for v in labels[clear]]
    assert clear.mean() > 0.8


def test_the_pmml_regression_forest_predicts_every_row_as_the_forest():
    from jpmml_evaluator import make_evaluator

    forest = dasktree.fit_forest_regression(mixed_frame(2500, seed=7).drop(columns=["label"]), target="x",
                                            n_estimators=5, max_depth=5, random_state=4)
    table = pa.Table.from_pandas(mixed_frame(600, seed=9).drop(columns=["label", "x"]), preserve_index=False)
    frame = pd.DataFrame({f.name: [np.nan if v is None else v for v in table.column(f.name).to_pylist()]
                          if f.kind == "numeric" else table.column(f.name).to_pylist() for f in forest.spec.features})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "forest.pmml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(forest_pmml_text(forest))
        result = make_evaluator(path, backend="jpype").verify().evaluateAll(frame)
    column = "prediction" if "prediction" in result.columns else "x"
    np.testing.assert_allclose(result[column].to_numpy(dtype=np.float64), forest.predict_values(table),
                               rtol=1e-12, atol=1e-12)  # JPMML's mean is its own arithmetic
