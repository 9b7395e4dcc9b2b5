"""A float class column's NaN is no class: its rows are skipped as a null label's, counted in the
report and the fit's summary line, whatever the input (a dataset through the command, numpy,
pandas, dask). A NaN class once ran a whole fit and failed on save (exit 3: NaN is not JSON)."""

import json

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dasktree import DaskTreeClassifier
from dasktree.cli import main
from dasktree.model.model import load


def _rows(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(np.float64)
    y[rng.random(n) < 0.1] = np.nan
    return X, y


def test_the_command_skips_nan_labels_and_says_so(tmp_path, capsys):
    X, y = _rows()
    nan = int(np.isnan(y).sum())
    table = pa.table({"a": X[:, 0], "b": X[:, 1], "y": pa.array(y, from_pandas=False)})
    assert table.column("y").null_count == 0  # NaN, not null
    pq.write_table(table, tmp_path / "nan.parquet")
    as_null = table.set_column(2, "y", pa.array(y, from_pandas=True))  # the same rows, NaN as null
    assert as_null.column("y").null_count == nan
    pq.write_table(as_null, tmp_path / "null.parquet")
    models = {}
    for name in ("nan", "null"):
        out = tmp_path / f"{name}.json"
        assert main(["fit", str(tmp_path / f"{name}.parquet"), "--target", "y", "--task", "classification",
                     "--out", str(out), "--max-depth", "3"]) == 0
        said = capsys.readouterr().out
        assert f"passes over {len(y) - nan} rows ({nan} skipped: no target) in " in said
        models[name] = load(out)
    model = models["nan"]
    assert model.classes == (0.0, 1.0)
    assert model.report["rows_skipped_null_target"] == nan and model.report["rows_used"] == len(y) - nan
    assert json.dumps(model.tree.to_json()) == json.dumps(models["null"].tree.to_json())


def _frames(X, y):
    frame = pd.DataFrame(X, columns=["a", "b"])
    return {
        "numpy": (X, y),
        "pandas": (frame, pd.Series(y, name="y")),
        "dask": (dd.from_pandas(frame, npartitions=3), dd.from_pandas(pd.Series(y, name="y"), npartitions=3)),
    }


def test_python_skips_nan_labels():
    """numpy, pandas and dask: the same tree, its root counting the labelled rows of each class (the
    rows without a label still count in the features' bins, as a null label's do)."""
    X, y = _rows()
    labelled = ~np.isnan(y)
    trees = {}
    for kind, (Xi, yi) in _frames(X, y).items():
        clf = DaskTreeClassifier(max_depth=3).fit(Xi, yi)
        assert list(clf.classes_) == [0.0, 1.0], kind
        assert clf.report_["rows_skipped_null_target"] == int((~labelled).sum()), kind
        assert clf.model_.tree.counts[0].tolist() == [int((y == 0).sum()), int((y == 1).sum())], kind
        trees[kind] = json.dumps(clf.model_.tree.to_json())
    assert trees["numpy"] == trees["pandas"] == trees["dask"]


@pytest.mark.parametrize("y, match", [
    (np.full(20, np.nan), "NaN only"),
    (np.r_[np.zeros(10), np.ones(9), np.inf], "infinity"),
    (np.r_[np.zeros(19), np.nan], "one class"),
])
def test_python_refuses_labels_that_are_no_classes(y, match):
    X = np.random.default_rng(1).normal(size=(20, 2))
    with pytest.raises(ValueError, match=match):
        DaskTreeClassifier().fit(X, y)
