"""Metrics beyond accuracy, equal to scikit-learn's; evaluate, show --format report, plots, --help defaults."""

import argparse
import json
import re
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, classification_report, log_loss, roc_auc_score

from dasktree import DaskTreeClassifier
from dasktree.cli import build_parser, main
from dasktree.datasets import agrawal
from dasktree.engine.evaluate import evaluate_dataset
from dasktree.model.metrics import classification_metrics, cv_leaf_table, leaf_metrics
from dasktree.testing import mixed_frame, write_dataset


def _same(ours: dict, y, proba, names):
    predicted = np.argmax(proba, axis=1)
    report = classification_report(y, predicted, labels=list(range(len(names))), output_dict=True, zero_division=0)
    for i, c in enumerate(ours["per_class"]):
        for key in ("precision", "recall", "f1-score", "support"):
            assert c["f1" if key == "f1-score" else key] == pytest.approx(report[str(i)][key], abs=1e-12)
    assert ours["accuracy"] == pytest.approx(report["accuracy"], abs=1e-12)
    assert ours["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, predicted), abs=1e-12)
    assert ours["log_loss"] == pytest.approx(log_loss(y, proba, labels=list(range(len(names)))), rel=1e-9)
    if len(names) == 2:
        assert ours["roc_auc"] == pytest.approx(roc_auc_score(y, proba[:, 1]), abs=1e-12)


@pytest.mark.parametrize("function", [1, 5])
def test_evaluate_equals_sklearn_metrics_on_the_same_predictions(tmp_path, function, cluster_client):
    train = agrawal.generate(8000, function=function, perturbation=0.1, seed=0)
    test = agrawal.generate(3000, function=function, perturbation=0.1, seed=1)
    clf = DaskTreeClassifier(max_depth=5).fit(train, target="class")
    path = write_dataset(test, tmp_path / "test", n_files=3)
    ours = evaluate_dataset(clf.model_, path, "class", client=cluster_client)
    y = test["class"].to_numpy()
    _same(ours, y, clf.predict_proba(test.drop(columns=["class"])), clf.classes_)
    assert np.sum(ours["confusion_matrix"]["rows_true_columns_predicted"]) == len(test)


def test_leaf_table_metrics_equal_row_by_row_metrics_for_three_classes():
    frame = mixed_frame(3000, seed=5)
    y_codes = pd.Categorical(frame["label"]).codes
    clf = DaskTreeClassifier(max_depth=4).fit(frame.drop(columns=["label"]), y_codes)
    leaves = clf.model_.leaves(clf._table(frame.drop(columns=["label"])))
    counts = np.zeros((clf.tree_.n_nodes, len(clf.classes_)), dtype=np.int64)
    np.add.at(counts, (leaves, y_codes), 1)
    ours = leaf_metrics(counts, clf.tree_.value, clf.classes_)
    _same(ours, y_codes, clf.predict_proba(frame.drop(columns=["label"])), clf.classes_)
    assert ours == classification_metrics(y_codes, clf.tree_.value[leaves], clf.classes_)


def test_cv_metrics_are_the_fold_trees_held_out_rows():
    train = agrawal.generate(6000, function=2, perturbation=0.05, seed=3)
    clf = DaskTreeClassifier(max_depth=4, cv=4, keep_fold_trees=True).fit(train, target="class")
    cv = clf.cv_report_
    metrics = cv["metrics"]
    assert metrics["rows"] == len(train)
    assert metrics["accuracy"] == pytest.approx(cv["accuracy_pooled"], abs=1e-12)
    confusion = np.asarray(cv["confusion_matrix"]["rows_true_columns_predicted"])
    recall = np.diag(confusion) / confusion.sum(axis=1)
    assert [c["recall"] for c in metrics["per_class"]] == pytest.approx(recall.tolist())
    counts, proba = cv_leaf_table(clf.model_.fold_trees)
    assert counts.sum() == len(train) and proba.shape == counts.shape


def test_cli_evaluate_show_report_plot_and_predict_counts(tmp_path, capsys):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 6000, n_files=2, function=2, seed=0)
    model = tmp_path / "model.json"
    assert main(["fit", str(data), "--target", "class", "--out", str(model), "--max-depth", "4", "--cv", "3",
                 "--scheduler", "threads", "--quiet", "--json"]) == 0
    fitted = capsys.readouterr()
    assert json.loads(fitted.out)["report"]["cv"]["metrics"]["rows"] == 6000
    assert "cross-validated accuracy" in fitted.err  # --json: the human summary on stderr
    assert main(["evaluate", str(model), str(data), "--scheduler", "threads", "--json"]) == 0
    evaluated = capsys.readouterr()
    metrics = json.loads(evaluated.out)["metrics"]
    assert metrics["rows"] == 6000 and 0.5 < metrics["roc_auc"] <= 1 and "precision" in evaluated.err
    assert main(["show", str(model), "--format", "report"]) == 0
    shown = capsys.readouterr().out
    for needle in ("data", "parameters", "* max_depth", "tree", "cross-validation (1 x 3-fold",
                   "balanced accuracy", "log loss"):
        assert needle in shown, needle
    assert main(["predict", str(model), str(data), "--out", str(tmp_path / "pred"), "--scheduler", "threads",
                 "--quiet", "--json"]) == 0
    predicted = json.loads(capsys.readouterr().out)
    assert predicted["rows"] == 6000 and sum(predicted["class_counts"].values()) == 6000
    written = pd.read_parquet(tmp_path / "pred")["prediction"].value_counts()
    assert {str(k): int(v) for k, v in written.items()} == predicted["class_counts"]
    # plots: the tree (graphviz or matplotlib) and the CV results, checked by their magic bytes
    for name, extra, magic in (("tree.png", [], b"\x89PNG\r\n\x1a\n"), ("tree.svg", ["--engine", "matplotlib"], b"<svg"),
                               ("cv.png", ["--cv"], b"\x89PNG\r\n\x1a\n"), ("cv.svg", ["--cv"], b"<svg")):
        out = tmp_path / name
        assert main(["plot", str(model), "--out", str(out), *extra]) == 0
        head = out.read_bytes()[:4096]
        assert out.stat().st_size > 5000 and (head.startswith(magic) or magic in head), name
    assert main(["plot", str(model), "--out", str(tmp_path / "x.gif")]) != 0
    assert "the image format comes from the name" in capsys.readouterr().err


def test_plotcp_draws_the_prune_table(tmp_path):
    """The CV error against leaves with the 1-SE line, from report["prune"]["cp_table"] (its shared format)."""
    from dasktree.model import load
    from dasktree.model.plot import plot_cv

    train = agrawal.generate(3000, function=2, seed=3)
    clf = DaskTreeClassifier(max_depth=4, cv=3).fit(train, target="class")
    model = clf.model_
    model.report["prune"] = {"mode": "1se", "alpha": 0.01, "cp_table": [
        {"alpha": a, "leaves": n, "train_error": e, "cv_error": e + 0.02, "cv_se": 0.005}
        for a, n, e in ((0.0, 12, 0.10), (0.01, 6, 0.12), (0.05, 2, 0.25), (0.2, 1, 0.4))]}
    model.save(tmp_path / "m.json")
    plot_cv(load(tmp_path / "m.json"), str(tmp_path / "cp.png"))
    assert (tmp_path / "cp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_cv_draws_the_chosen_point_on_top_and_plot_replaces_only_with_overwrite(tmp_path, capsys):
    """The chosen subtree's marker comes after (over) the CV error markers in the SVG; an existing --out
    is kept, exit 1, unless --overwrite."""
    train = agrawal.generate(3000, function=2, seed=3)
    model = DaskTreeClassifier(max_depth=4, cv=3).fit(train, target="class").model_
    model.report["prune"] = {"mode": "cv-min", "alpha": 0.01, "cp_table": [
        {"alpha": a, "leaves": n, "train_error": e, "cv_error": e + 0.02, "cv_se": 0.005}
        for a, n, e in ((0.0, 12, 0.10), (0.01, 6, 0.12), (0.05, 2, 0.25), (0.2, 1, 0.4))]}
    path, out = tmp_path / "m.json", tmp_path / "cv.svg"
    model.save(path)
    assert main(["plot", str(path), "--cv", "--out", str(out)]) == 0
    svg = out.read_text()
    assert 'id="cv-error"' in svg and svg.index('id="chosen"') > svg.index('id="cv-error"')
    out.write_text("mine")
    assert main(["plot", str(path), "--cv", "--out", str(out)]) == 1
    assert "already exists" in capsys.readouterr().err and out.read_text() == "mine"
    assert main(["plot", str(path), "--out", str(out), "--engine", "matplotlib", "--overwrite"]) == 0
    assert out.read_text().lstrip().startswith("<?xml") or "<svg" in out.read_text()[:4096]


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _help_entries(text: str) -> dict[str, str]:
    """Each option's help entry in ``--help`` output, keyed by its option strings' first word."""
    body = text[text.index("\n\n"):]  # after the usage lines
    entries: dict[str, str] = {}
    key = None
    for line in body.splitlines():
        m = re.match(r"^  (-[-\w]+)", line)
        if m:
            key = m.group(1)
            entries[key] = line
        elif line.startswith("    ") and key:
            entries[key] += " " + line.strip()
        elif not line.strip():
            key = None
    return {k: " ".join(v.split()) for k, v in entries.items()}


def test_every_option_of_every_verb_says_its_default_in_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    verbs = _subparsers(build_parser())
    assert {"fit", "predict", "discretize", "show", "evaluate", "plot", "demo"} <= set(verbs)
    for verb, sub in verbs.items():
        text = sub.format_help()  # what `dasktree VERB --help` prints
        entries = _help_entries(text)
        for action in sub._actions:
            if action.dest == "help":
                continue
            assert action.help, (verb, action.dest)  # every option and argument says what it does
            if not action.option_strings or action.nargs == 0 or action.required:
                continue  # positionals, flags and required options have no default to show
            entry = entries[action.option_strings[0]]
            assert "(default" in entry, (verb, entry)
