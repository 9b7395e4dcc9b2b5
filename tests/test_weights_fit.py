"""Row weights end to end: a dataset's weight column, dask weights, the CLI; the same model as in memory."""


import numpy as np
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.io.weights import multiplicities
from dasktree.model.model import Model
from dasktree.model.model import load as load_model
from dasktree.testing import mixed_frame
from dasktree.testing.data import write_dataset
from dasktree.testing.processes import run_command


@pytest.fixture(scope="module")
def weighted():
    """Mixed columns, heavy integer weights (nodes of few rows count past uint16), some rows of weight 0."""
    frame = mixed_frame(6000, seed=11)
    rng = np.random.default_rng(5)
    frame["w"] = rng.integers(0, 3000, size=len(frame))
    frame["id"] = np.arange(len(frame))
    return frame


def _same(a: Model, b: Model) -> None:
    assert a.tree.to_json() == b.tree.to_json()
    assert [t.to_json() for t in a.fold_trees] == [t.to_json() for t in b.fold_trees]
    assert a.report["cv"] == b.report["cv"]
    assert {**a.report["weights"], "column": None} == {**b.report["weights"], "column": None}


def test_a_weight_column_gives_the_in_memory_model_whatever_the_partitioning(weighted, tmp_path, cluster_client):
    options = dict(target="label", key="id", exclude=["id"], cv=3, max_depth=6, keep_fold_trees=True)
    X = weighted.drop(columns=["w"])
    reference = dasktree.fit(X, sample_weight=weighted["w"].to_numpy(), **options)
    assert reference.report["weights"]["rule"] == "integer"
    assert reference.report["weights"]["counted"] == int(weighted["w"].sum())
    assert reference.report["rows_skipped_zero_weight"] == int((weighted["w"] == 0).sum())
    assert reference.tree.counts[0].sum() == weighted["w"].sum()
    for n_files, part_rows in ((1, 100_000), (4, 700)):
        path = write_dataset(weighted, tmp_path / f"files{n_files}", n_files=n_files)
        _same(dasktree.fit(path, sample_weight="w", part_rows=part_rows, scheduler="inprocess", **options), reference)
        _same(dasktree.fit(path, sample_weight="w", part_rows=part_rows, client=cluster_client, **options), reference)


def test_fixed_point_and_class_weights_on_a_dataset_equal_memory(weighted, tmp_path, cluster_client):
    frame = weighted.assign(w=weighted["w"] / 1000.0)
    path = write_dataset(frame, tmp_path / "data", n_files=3)
    options = dict(target="label", exclude=["id"], max_depth=5, prune=None, class_weight="balanced")
    reference = dasktree.fit(frame.drop(columns=["w"]), sample_weight=frame["w"].to_numpy(), **options)
    on_cluster = dasktree.fit(path, sample_weight="w", client=cluster_client, **options)
    assert on_cluster.tree.to_json() == reference.tree.to_json()
    labels = frame["label"].to_numpy()
    m = multiplicities(frame["w"].to_numpy(), labels, "balanced")
    assert on_cluster.tree.counts[0].sum() == m.sum() and on_cluster.report["weights"]["rule"] == "fixed point"
    counts = dict(zip(*np.unique(labels, return_counts=True)))
    for label, factor in on_cluster.report["weights"]["class_factors"].items():
        assert factor == pytest.approx(len(labels) / (len(counts) * counts[label]))


def test_dask_weights_beside_dask_X_equal_pandas(weighted, cluster_client):
    import dask.dataframe as dd

    X, y, w = weighted.drop(columns=["label", "w", "id"]), weighted["label"], weighted["w"]
    reference = DaskTreeClassifier(max_depth=5).fit(X, y, sample_weight=w.to_numpy())
    dX, dy, dw = (dd.from_pandas(v, npartitions=3) for v in (X, y, w))
    clf = DaskTreeClassifier(client=cluster_client, max_depth=5).fit(dX, dy, sample_weight=dw)
    assert clf.model_.tree.to_json() == reference.model_.tree.to_json()
    assert clf.score(dX, dy, sample_weight=dw) == pytest.approx(reference.score(X, y, sample_weight=w))
    other = DaskTreeClassifier(client=cluster_client, max_depth=5).fit(dX, dy, sample_weight=dd.from_pandas(w, npartitions=2))
    assert other.model_.tree.to_json() == reference.model_.tree.to_json()  # paired by index, whatever the partitions


def test_the_command_weighs_rows_by_a_column_and_classes(weighted, tmp_path):
    path = write_dataset(weighted, tmp_path / "data", n_files=2)
    out = tmp_path / "model.json"
    done = run_command("fit", path, "--target", "label", "--exclude", "id",
                           "--weight", "w", "--class-weight", "high=2.5,low=1", "--max-depth", "4", "--out", str(out),
                           "--quiet")
    assert done.returncode == 0, done.stderr
    expected = dasktree.fit(path, target="label", exclude=["id"], sample_weight="w", class_weight={"high": 2.5, "low": 1},
                            max_depth=4)
    assert load_model(str(out)).tree.to_json() == expected.tree.to_json()
    shown = run_command("show", str(out), "--format", "report").stdout
    assert "weights column 'w' (fixed point" in shown
    evaluated = run_command("evaluate", str(out), path, "--weight", "w",
                                "--json", "--quiet")
    assert evaluated.returncode == 0, evaluated.stderr
    from dasktree.engine.evaluate import evaluate_dataset

    report = __import__("json").loads(evaluated.stdout)
    assert report["weight"] == "w"
    assert report["metrics"]["accuracy"] == evaluate_dataset(expected, path, "label", scheduler="threads",
                                                             weight="w")["accuracy"]
    bad = run_command("fit", path, "--target", "label", "--weight", "w",
                          "--class-weight", "zz=2", "--out", str(tmp_path / "other.json"), "--quiet")
    assert bad.returncode == 2 and not (tmp_path / "other.json").exists() and bad.stderr.strip().splitlines() == [
        "dasktree: error: class_weight names 'zz', which is not a class; the classes are ['high', 'low', 'mid']"]


def test_evaluate_weighs_rows_as_scikit_learn_metrics_do(weighted, tmp_path):
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss

    from dasktree.engine.evaluate import evaluate_dataset

    path = write_dataset(weighted, tmp_path / "data", n_files=3)
    model = dasktree.fit(path, target="label", exclude=["id", "w"], max_depth=4)
    metrics = evaluate_dataset(model, path, "label", scheduler="threads", weight="w")
    table = __import__("pyarrow").Table.from_pandas(weighted, preserve_index=False)
    proba = model.predict_proba_table(table)
    predicted = np.asarray(model.classes)[proba.argmax(axis=1)]
    y, w = weighted["label"].to_numpy(), weighted["w"].to_numpy()
    assert metrics["accuracy"] == pytest.approx(accuracy_score(y, predicted, sample_weight=w))
    assert metrics["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, predicted, sample_weight=w))
    assert metrics["log_loss"] == pytest.approx(log_loss(y, proba, labels=list(model.classes), sample_weight=w))
    assert metrics["accuracy"] != pytest.approx(evaluate_dataset(model, path, "label", scheduler="threads")["accuracy"])
