"""The same rows give the same model whatever holds them: one Parquet file, seven files of other row
groups, a pandas frame, a dask frame of several partitions, the estimator's X, y. With cross-validation
too (a row's folds follow its content, :mod:`dasktree.io.folds`), for both tasks, byte for byte."""

import json

import dask.dataframe as dd
import pandas as pd
import numpy as np
import pytest

import dasktree
from dasktree import DaskTreeClassifier, DaskTreeRegressor
from dasktree import fit_regression
from dasktree.testing import mixed_frame, write_dataset

N = 6000


def _frame():
    frame = mixed_frame(N, seed=3)
    rng = np.random.default_rng(8)
    amount = 3 * frame["x"].fillna(0) + (frame["colour"] == "red") * 2 + frame["k"] / 10 + rng.normal(size=N)
    return frame.assign(amount=amount.round(3))


FRAME = _frame()
TASKS = {  # target, the column the task leaves out, the fit
    "classification": ("label", "amount", dasktree.fit, DaskTreeClassifier),
    "regression": ("amount", "label", fit_regression, DaskTreeRegressor),
}
PARAMS = [("classification", dict(max_depth=6)), ("classification", dict(max_depth=6, cv=10)),
          ("classification", dict(max_depth=5, cv=3, repeats=2, seed=4)),
          ("regression", dict(max_depth=5)), ("regression", dict(max_depth=5, cv=10))]


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("same-rows")
    return {"one file": write_dataset(FRAME, root / "one", n_files=1, row_group_size=1000),
            "seven files": write_dataset(FRAME, root / "seven", n_files=7, row_group_size=317)}


def _models(task: str, params: dict, datasets: dict, **where) -> dict[str, str]:
    target, left_out, fit, estimator = TASKS[task]
    out = {}
    for name, path in datasets.items():
        out[name] = fit(path, target=target, exclude=[left_out], part_rows=700, **where, **params).dumps()
    out["dask frame"] = fit(dd.from_pandas(FRAME, npartitions=5), target=target, exclude=[left_out], **where,
                            **params).dumps()
    if not where:  # data in memory is learned in this process
        out["pandas frame"] = fit(FRAME, target=target, exclude=[left_out], **params).dumps()
        X, y = FRAME.drop(columns=[target, left_out]), FRAME[target]
        out["estimator X, y"] = estimator(**params).fit(X, y).model_.dumps()
    return out


@pytest.mark.parametrize("task,params", PARAMS, ids=[f"{t}-{sorted(p.items())}" for t, p in PARAMS])
def test_the_same_rows_in_every_form_give_one_model(task, params, datasets):
    models = _models(task, params, datasets)
    assert len(set(models.values())) == 1, {name: hash(text) for name, text in models.items()}
    if "cv" in params:  # the folds hold about their share each: a fair hash of distinct rows
        report = json.loads(models["one file"])["report"]
        rows = [f["rows"] for f in report["cv"]["per_fold"]]
        assert len(rows) == params["cv"] * params.get("repeats", 1)
        assert min(rows) > 0.8 * N / params["cv"] and "warnings" not in report


@pytest.mark.cluster
@pytest.mark.parametrize("task", sorted(TASKS))
def test_on_a_cluster_files_and_a_dask_frame_give_the_in_memory_model(task, datasets, cluster_client):
    params = dict(max_depth=5, cv=10)
    target, left_out, fit, _ = TASKS[task]
    expected = fit(FRAME, target=target, exclude=[left_out], **params).dumps()
    models = _models(task, params, datasets, client=cluster_client)
    assert set(models.values()) == {expected}, sorted(models)


def test_rows_rewritten_in_another_order_and_layout_keep_their_folds(tmp_path):
    """An ETL compaction: the rows sorted otherwise, columns reordered, ints widened, strings as
    categories; the held-out rows of each fold are the same rows."""
    from dasktree.io.folds import FoldSpec
    from dasktree.io.schema import resolve_roles
    from dasktree.io.sources import open_source

    rewritten = FRAME.sort_values(["colour", "x"], na_position="first").reset_index(drop=True)
    rewritten = rewritten[list(reversed(rewritten.columns))].astype({"k": "int64", "colour": "category"})
    spec = FoldSpec(10, 2, 5)
    fold_of = {}
    for name, frame, n_files in (("original", FRAME, 3), ("rewritten", rewritten, 5)):
        source, target = open_source(write_dataset(frame, tmp_path / name, n_files=n_files, row_group_size=500),
                                     target="label")
        roles = resolve_roles(source.schema, target, exclude=["amount"])
        hashed = spec.hashing(roles)
        rows = {}
        for part in source.parts:
            table = source.read(part, roles.columns)
            parts = hashed.parts_of(table, part)
            for row, folds in zip(table.select(["x", "k", "colour", "flag", "label"]).to_pylist(), parts.T):
                rows.setdefault(repr(sorted(row.items())), set()).add(tuple(folds))
        assert all(len(folds) == 1 for folds in rows.values())  # duplicates share their folds
        fold_of[name] = rows
    assert fold_of["original"] == fold_of["rewritten"]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_few_distinct_rows_fold_into_few_groups_and_the_fit_says_so(task, tmp_path, capsys):
    """Two binary features: four distinct feature rows, so some of ten folds hold no rows. The model
    still saves (an empty fold scores None, not NaN), and the fit warns, in the report and on stderr."""
    from dasktree.cli import main

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 2000), "b": rng.integers(0, 2, 2000)})
    label = frame["a"].to_numpy() ^ (rng.random(2000) < 0.1).astype(np.int64)
    frame["y"] = np.where(label == 1, "yes", "no") if task == "classification" else label * 1.5
    path = write_dataset(frame, tmp_path / "data")
    out = tmp_path / "model.json"
    assert main(["fit", path, "--target", "y", "--task", task, "--cv", "10", "--out", str(out)]) == 0
    assert "dasktree: warning: cross-validation: " in capsys.readouterr().err
    report = json.loads(out.read_text())["report"]
    assert any("folds hold under half their share" in w and "key=COLUMN" in w for w in report["warnings"])
    folds = report["cv"]["per_fold"]
    assert min(f["rows"] for f in folds) == 0
    if task == "classification":
        assert all((f["accuracy"] is None) == (f["rows"] == 0) for f in folds)
    # a key column folds by row: no warning
    keyed = fit_regression if task == "regression" else dasktree.fit
    model = keyed(frame.assign(id=np.arange(2000)), target="y", key="id", cv=10)
    assert "warnings" not in model.report
