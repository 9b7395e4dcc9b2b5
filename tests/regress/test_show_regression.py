"""``dasktree show`` of a saved regression model: text (each leaf's value and rows, as scikit-learn's
``export_text`` shows a regressor's), dot, JSON, the readable report and rpart's cp table."""

import json
import re

import numpy as np
import pytest

from dasktree.cli import main
from dasktree.model.grown_json import rows_from_json
from dasktree.model.text import export_dot, export_text
from dasktree.model.model import load
from dasktree import fit_regression
from dasktree.testing.data import mixed_frame


def _frame(n=2000, seed=0):
    frame = mixed_frame(n, seed).drop(columns=["label"])
    rng = np.random.default_rng(seed + 1)
    frame["y"] = 2.0 * frame["x"].fillna(0.0) + (frame["colour"] == "red") * 3.0 + rng.normal(size=n)
    return frame


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    frame = _frame()
    out = {}
    for name, params in {"cv": {"max_depth": 5, "cv": 5, "prune": "cv"},
                         "plain": {"max_depth": 3, "prune": "none"}}.items():
        path = root / f"{name}.json"
        fit_regression(frame, target="y", scheduler="inprocess", **params).save(path)
        out[name] = str(path)
    return out


def _leaf_lines(text):
    return [line for line in text.splitlines() if "value: [" in line]


def test_text_shows_every_leafs_value_and_rows(models, capsys):
    model = load(models["cv"])
    assert main(["show", models["cv"]]) == 0
    text = capsys.readouterr().out
    assert text == export_text(model)
    leaves = [i for i, t in enumerate(model.tree.tests) if t is None]
    lines = _leaf_lines(text)
    assert len(lines) == len(leaves) == model.tree.n_leaves
    values = model.node_values()
    shown = [re.search(r"value: \[(\S+)\] \(n=(\d+)\)", line).groups() for line in lines]
    # depth first, children in order: the leaves as the text walks them
    order = []

    def walk(i):
        if model.tree.tests[i] is None:
            order.append(i)
        for c in model.tree.children[i]:
            walk(c)

    walk(0)
    assert [float(v) for v, _ in shown] == [float(f"{values[i]:.6g}") for i in order]
    assert [int(n) for _, n in shown] == [int(model.tree.counts[i, 0]) for i in order]
    assert sum(int(n) for _, n in shown) == 2000  # rows, not rows plus the sum of targets
    assert "class:" not in text and "|--- x <= " in text


def test_text_truncated_at_a_depth_shows_the_inner_nodes_value(models):
    model = load(models["cv"])
    text = export_text(model, max_depth=1)
    lines = _leaf_lines(text)
    assert len(lines) == 2 and all(line.endswith(" nodes below)") and "(truncated: " in line for line in lines)
    below = sum(int(line.split("(truncated: ")[1].split()[0]) for line in lines)
    assert below == model.tree.n_nodes - 3  # the root and its two children are shown
    assert text.splitlines()[-1] == f"({below} of {model.tree.n_nodes} nodes below depth 1 not shown)"
    first = model.tree.children[0][0]
    assert f"value: [{model.node_values()[first]:.6g}] (n={int(model.tree.counts[first, 0])})" in lines[0]


def test_dot_labels_nodes_with_rows(models):
    model = load(models["plain"])
    dot = export_dot(model)
    assert dot.startswith("digraph dasktree {") and dot.count("value: [") == model.tree.n_leaves
    assert 'n0 [label="x\\nn=2000"]' in dot


def test_json_is_the_model_file(models, capsys, tmp_path):
    """The model file with its columns as plain lists of numbers and its cp table as rows (the file keeps
    them in base64): the same model when loaded."""
    assert main(["show", models["plain"], "--format", "json"]) == 0
    text = capsys.readouterr().out
    shown = json.loads(text)
    with open(models["plain"]) as f:
        saved = json.load(f)
    prune = saved["report"]["prune"]
    assert isinstance(prune["cp_table"], dict)  # the file keeps the cp table as typed columns; shown as rows
    saved["report"]["prune"] = {**prune, "cp_table": rows_from_json(prune["cp_table"])}
    assert set(shown) == set(saved) and shown["report"] == saved["report"]
    assert isinstance(shown["tree"]["counts"], list)
    again = tmp_path / "shown.json"
    again.write_text(text)
    assert load(again).dumps() == load(models["plain"]).dumps()
    assert shown["task"] == "regression" and set(shown["target_scale"]) == {"lo", "step", "bits"}


def test_cp_prints_the_whole_table_and_marks_the_pruned_tree(models, capsys):
    model = load(models["cv"])
    table = model.report["prune"]["cp_table"]
    assert main(["show", models["cv"], "--format", "cp"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"cv pruning at alpha {model.report['prune']['alpha']:.6g}: "
                               f"{model.tree.n_leaves} of {model.grown_tree.n_leaves} leaves; 5-fold")
    assert lines[1].split() == ["alpha", "leaves", "train_mse", "cv_mse", "cv_se"]
    rows = lines[2:]
    assert len(rows) == len(table)
    for line, row in zip(rows, table):
        cells = line.lstrip("* ").split()
        assert [float(c) for c in cells] == [float(f"{row[k]:.6g}") for k in ("alpha", "leaves", "train_mse",
                                                                                "cv_error", "cv_se")]
    marked = [i for i, line in enumerate(rows) if line.startswith("*")]
    assert [table[i]["leaves"] for i in marked] == [model.tree.n_leaves]
    # the cp table's CV MSE of the chosen tree is the CV report's pooled MSE (the same fold trees)
    assert table[marked[0]]["cv_error"] == pytest.approx(model.report["cv"]["mse"], rel=1e-12)


def test_cp_without_folds_has_no_cv_columns(models, capsys):
    assert main(["show", models["plain"], "--format", "cp"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "none pruning at alpha 0: 8 of 8 leaves"
    assert all(line.split()[-2:] == ["-", "-"] for line in lines[2:])
    assert lines[2].startswith("*")  # the grown tree is the first row


def test_report_has_the_target_the_folds_and_the_cp_rows(models, capsys):
    assert main(["show", models["cv"], "--format", "report"]) == 0
    text = capsys.readouterr().out
    model = load(models["cv"])
    cv = model.report["cv"]
    for needle in ("a dasktree regression tree of 'y'", "target mean", "(30-bit fixed point)", "* cv ", "* prune",
                   "cross-validation (5-fold", f"pooled: MSE {cv['mse']:.6g}", "pruning (cv, chosen alpha",
                   f"{model.tree.n_leaves} leaves, training MSE {model.report['training']['mse']:.6g}"):
        assert needle in text, needle
    assert text.count("\n      ") >= 5  # a line per fold
    assert "accuracy" not in text and "classes" not in text
