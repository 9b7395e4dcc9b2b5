"""Pruning a fitted model: the CV error against direct prediction, JSON, every prediction path, determinism."""

import json
import os
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dasktree import DaskTreeClassifier
from dasktree.engine.predict import predict_dataset
from dasktree.errors import InputError
from dasktree.fit import fit
from dasktree.io.folds import FoldSpec
from dasktree.model import Model, load
from dasktree.model.prune import (
    cp_table,
    fold_alpha,
    leaves_at,
    pruned_tree,
    weakest_link,
)
from dasktree.model.pruning import prune_model


def _noisy(n=1500, seed=0):
    """Numeric and nominal columns, missing values, 3 classes, 20% label noise."""
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 40, n).astype(float)
    x1 = rng.normal(size=n).round(2)
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    y = np.where(x0 > 25, "a", np.where((x1 > 0) | (colour == "red"), "b", "c"))
    flip = rng.random(n) < 0.2
    y[flip] = rng.choice(["a", "b", "c"], flip.sum())
    x1[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame({"id": np.arange(n), "x0": x0, "x1": x1, "colour": colour, "y": y})


@pytest.mark.parametrize("params", [
    dict(cv=4),
    dict(cv=3, repeats=2, criterion="entropy"),
    dict(cv=4, max_arity=3, nominal_split="multiway"),
])
def test_cv_error_of_every_alpha_equals_direct_prediction_of_the_held_out_rows(params):
    frame = _noisy()
    model = fit(frame, target="y", features=["x0", "x1", "colour"], key="id", prune="none", keep_fold_trees=True,
                **params)
    k, repeats = params["cv"], params.get("repeats", 1)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    parts = FoldSpec(k, repeats, 0, key="id").parts_of(table, SimpleNamespace(key="memory", offset=0))
    # (repeats, rows): each row's fold, from its key "id" alone
    y = frame["y"].to_numpy()
    criterion = model.params["criterion"]
    rows = cp_table(model.tree, model.fold_trees, criterion, repeats)
    assert len(rows) > 2
    for i, row in enumerate(rows):
        beta = fold_alpha(rows, i)
        wrong = 0
        for t, fold in enumerate(model.fold_trees):
            pruned = pruned_tree(fold, leaves_at(weakest_link(fold.children, fold.counts, criterion), beta))
            held = parts[t // k] == t % k
            predicted = np.asarray(model.classes)[model.predict_codes(table.filter(pa.array(held)), pruned)]
            wrong += int((predicted != y[held]).sum())
        assert row["cv_error"] == pytest.approx(wrong / (len(y) * repeats), abs=1e-12), i
    # the chosen pruning's CV report counts the fold trees pruned the same way
    pruned_model = prune_model(model, mode="cv")
    chosen = [r["alpha"] for r in rows].index(pruned_model.report["prune"]["alpha"])
    assert 1 - pruned_model.report["cv"]["accuracy_pooled"] == pytest.approx(rows[chosen]["cv_error"])


def test_prune_report_contract_and_modes():
    frame = _noisy(seed=1)
    est = DaskTreeClassifier(cv=5).fit(frame[["x0", "x1", "colour"]], frame["y"])
    info = est.report_["prune"]
    assert info["mode"] == "cv-min" and info["alpha"] == est.ccp_alpha_
    assert set(info["cp_table"][0]) == {"alpha", "leaves", "train_error", "cv_error", "cv_se"}
    assert list(est.cp_table_.columns) == ["alpha", "leaves", "train_error", "cv_error", "cv_se"]
    assert est.report_["leaves"] == est.tree_.n_leaves < info["leaves_grown"]
    assert DaskTreeClassifier().fit(frame[["x0", "x1"]], frame["y"]).report_["prune"]["mode"] == "pessimistic"
    unpruned = DaskTreeClassifier(prune=None).fit(frame[["x0", "x1"]], frame["y"])
    assert unpruned.report_["prune"]["mode"] == "none" and unpruned.model_.full_tree is None
    fixed = DaskTreeClassifier(ccp_alpha=0.01).fit(frame[["x0", "x1"]], frame["y"])
    assert fixed.report_["prune"] == {**fixed.report_["prune"], "mode": "alpha", "alpha": 0.01}
    # re-pruning without a pass: the same tree as fitting at that alpha
    again = unpruned.prune_model(0.01)
    assert again.tree_.to_json() == fixed.tree_.to_json()
    assert again.report_ == fixed.report_


@pytest.mark.parametrize("params,message", [
    (dict(prune="bogus"), "prune must be one of"),
    (dict(prune="cv"), "give cv=k too"),
    (dict(ccp_alpha=-0.5), "ccp_alpha must be a finite number >= 0"),
    (dict(ccp_alpha=0.1, prune="cv", cv=3), "not both"),
    (dict(confidence=1.5), "confidence must be a number in (0, 1)"),
])
def test_bad_pruning_parameters_fail_before_any_work(params, message):
    frame = _noisy(200)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fit(frame, target="y", features=["x0"], **params)


def test_prune_on_a_loaded_model_equals_pruning_the_fitted_object(tmp_path):
    frame = _noisy(seed=2)
    model = fit(frame, target="y", features=["x0", "x1", "colour"], cv=5, keep_fold_trees=True)  # cv-min again
    path = tmp_path / "m.json"
    model.save(path)
    loaded = load(path)
    assert loaded.dumps() == model.dumps()
    for how in [dict(alpha=0.004), dict(mode="cv-min"), dict(mode="pessimistic"), dict(mode="none")]:
        alpha = how.pop("alpha", None)
        assert prune_model(loaded, alpha, **how).dumps() == prune_model(model, alpha, **how).dumps()
    # pruning to none gives back the grown tree; the pruned model's file still holds it
    assert prune_model(model, mode="none").tree.to_json() == model.full_tree.to_json()
    assert "full_tree" in json.loads(model.dumps())
    with pytest.raises(InputError, match="chooses alpha by cross-validation, and this model was fitted without it"):
        prune_model(fit(frame, target="y", features=["x0"], prune=None), mode="cv")


def test_cli_show_cp_and_prune(tmp_path, capsys):
    from dasktree.cli import main

    frame = _noisy(seed=3)
    model = fit(frame, target="y", features=["x0", "x1", "colour"], cv=4)
    path = str(tmp_path / "m.json")
    model.save(path)
    assert main(["show", path, "--format", "cp"]) == 0
    out = capsys.readouterr().out
    assert "cv-min pruning at alpha" in out and "cv_error" in out
    assert sum(line.startswith("*") for line in out.splitlines()) == 1
    out2 = str(tmp_path / "m2.json")
    assert main(["prune", path, "--alpha", "0.02", "--out", out2]) == 0
    assert load(out2).dumps() == prune_model(model, 0.02).dumps()
    before = open(out2).read()
    assert main(["prune", path, "--mode", "pessimistic", "--out", out2]) == 1
    assert "already exists" in capsys.readouterr().err and open(out2).read() == before
    assert main(["prune", path, "--mode", "pessimistic", "--out", out2, "--overwrite"]) == 0
    assert load(out2).report["prune"]["mode"] == "pessimistic"
    assert main(["prune", path, "--alpha", "-1", "--out", str(tmp_path / "m3.json")]) == 2
    assert not os.path.exists(tmp_path / "m3.json")


def _write(frame, directory, n_files):
    os.makedirs(directory)
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[chunk], preserve_index=False),
                       os.path.join(directory, f"part-{i:03d}.parquet"), row_group_size=97)


def test_pruned_model_is_bit_identical_across_partitionings_and_predicts_alike_everywhere(tmp_path, cluster_client):
    frame = _noisy(2000, seed=4)
    _write(frame, tmp_path / "one", 1)
    _write(frame, tmp_path / "seven", 7)
    kw = dict(target="y", features=["x0", "x1", "colour"], key="id", cv=5, client=cluster_client)
    one = fit(str(tmp_path / "one"), **kw)
    seven = fit(str(tmp_path / "seven"), part_rows=150, **kw)
    assert one.report["prune"]["alpha"] == seven.report["prune"]["alpha"]
    assert one.tree.n_leaves < one.full_tree.n_leaves
    assert one.dumps() == seven.dumps()
    in_memory = fit(frame, **{**kw, "client": None})
    assert in_memory.report["prune"]["alpha"] == one.report["prune"]["alpha"]
    assert in_memory.tree.to_json() == one.tree.to_json()
    # predictions: in memory, Parquet out on the cluster, a dask DataFrame on the cluster, a reloaded model
    path = tmp_path / "m.json"
    one.save(path)
    est = DaskTreeClassifier.from_model(load(path)).set_params(client=cluster_client)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    expected = np.asarray(one.classes)[one.predict_codes(table)]
    grown = Model(spec=one.spec, target=one.target, tree=one.full_tree, params=one.params)
    assert (expected != np.asarray(one.classes)[grown.predict_codes(table)]).any()  # pruning changes something
    assert (est.predict(frame[["x0", "x1", "colour"]]) == expected).all()
    files = predict_dataset(one, str(tmp_path / "seven"), str(tmp_path / "out"), keep=["id"], client=cluster_client)
    written = pd.concat([pd.read_parquet(f) for f in files]).sort_values("id")
    assert (written["prediction"].to_numpy() == expected).all()
    import dask.dataframe as dd

    lazy = est.predict(dd.from_pandas(frame[["x0", "x1", "colour"]], npartitions=3)).compute()
    assert (lazy.to_numpy() == expected).all()
    importances = est.feature_importances_
    assert importances.sum() == pytest.approx(1.0)


def test_a_tree_without_splits_prunes_to_itself():
    frame = pd.DataFrame({"x": np.zeros(60), "y": np.repeat(["a", "b"], 30)})
    model = fit(frame, target="y", cv=3)
    assert model.tree.n_nodes == 1
    info = model.report["prune"]
    assert info["mode"] == "cv-min" and info["alpha"] == 0.0 and len(info["cp_table"]) == 1
    assert info["fold_alpha"] is None  # the last row: fold trees pruned to their root
    json.loads(model.dumps())


def test_re_pruning_without_fold_trees_takes_the_cv_error_from_the_cp_table(tmp_path, capsys):
    """A model fit with cv but without its fold trees: the old tree's CV accuracy is not the new tree's."""
    from dasktree.cli import main

    frame = _noisy(seed=4)
    model = fit(frame, target="y", features=["x0", "x1", "colour"], cv=4, max_depth=6)
    assert not model.fold_trees and model.report["cv"]["per_fold"]
    table = model.report["prune"]["cp_table"]
    row = table[-2]  # a small tree of the sequence, not the one chosen
    assert row["leaves"] != model.report["leaves"]
    pruned = prune_model(model, row["alpha"])
    assert pruned.report["leaves"] == row["leaves"]
    assert pruned.report["cv"]["accuracy_pooled"] == pytest.approx(1 - row["cv_error"])
    assert pruned.report["cv"]["estimated_from"] == "cp table"
    assert [r["cv_error"] for r in pruned.report["prune"]["cp_table"]] == [r["cv_error"] for r in table]
    with_folds = fit(frame, target="y", features=["x0", "x1", "colour"], cv=4, max_depth=6, keep_fold_trees=True)
    assert with_folds.report["prune"]["cp_table"] == table  # the same CV errors either way
    path, out = str(tmp_path / "m.json"), str(tmp_path / "p.json")
    model.save(path)
    assert main(["prune", path, "--alpha", repr(row["alpha"]), "--out", out]) == 0
    said = capsys.readouterr().out
    assert f"-> {row['leaves']} leaves, cross-validated accuracy {1 - row['cv_error']:.4f} (the cp table's)" in said
    assert main(["show", out, "--format", "report"]) == 0 and "the cp table's CV error" in capsys.readouterr().out
    assert main(["plot", out, "--cv", "--out", str(tmp_path / "cp.svg")]) == 0  # the cp table's panel alone
    pessimistic = prune_model(model, mode="pessimistic")  # not a subtree of the sequence: no estimate, said so
    assert "cv" not in pessimistic.report and "keep_fold_trees" in pessimistic.report["prune"]["cv_note"]
    # cv and cv-min choose by the cp table's CV errors: the same alpha and tree as with the fold trees
    for mode in ("cv", "cv-min"):
        q = str(tmp_path / f"{mode}.json")
        assert main(["prune", path, "--mode", mode, "--out", q]) == 0
        said = capsys.readouterr().out
        by_table, by_folds = load(q), prune_model(with_folds, mode=mode)
        assert by_table.tree.to_json() == by_folds.tree.to_json()
        assert by_table.report["prune"] == {**by_folds.report["prune"], "cp_table": by_table.report["prune"]["cp_table"]}
        assert by_table.report["cv"]["estimated_from"] == "cp table"
        assert f"{mode} pruning, " in said and "(the cp table's)" in said


@pytest.mark.parametrize("seed", [5, 6, 7])
@pytest.mark.parametrize("mode", ["cv", "cv-min"])
def test_cv_re_pruning_from_the_cp_table_equals_pruning_with_the_fold_trees(seed, mode):
    """The fit's cp table holds every subtree's CV error, counted on the fold trees: choosing from it
    gives the alpha, the tree and the fold alpha that the fold trees give, for both rules."""
    import dataclasses

    frame = _noisy(seed=seed)
    for params in (dict(cv=5), dict(cv=3, repeats=2, criterion="entropy")):
        kept = fit(frame, target="y", features=["x0", "x1", "colour"], max_depth=7, keep_fold_trees=True,
                   prune="none", **params)
        dropped = dataclasses.replace(kept, fold_trees=[])
        by_folds, by_table = prune_model(kept, mode=mode), prune_model(dropped, mode=mode)
        assert by_table.tree.to_json() == by_folds.tree.to_json()
        for key in ("mode", "alpha", "fold_alpha", "leaves", "leaves_grown"):
            assert by_table.report["prune"][key] == by_folds.report["prune"][key], key
        assert by_table.report["prune"]["cp_table"] == by_folds.report["prune"]["cp_table"]
        if params.get("repeats", 1) == 1:  # one repetition: the pooled accuracy is 1 - the row's CV error
            assert by_table.report["cv"]["accuracy_pooled"] == pytest.approx(by_folds.report["cv"]["accuracy_pooled"])
