"""``dasktree prune`` of a regression model (:func:`dasktree.regress.reprune.reprune`): pruning a saved
model again, with no pass, gives the tree and the report a fit pruned that way gives."""

import json

import numpy as np
import pytest

from dasktree.cli import main
from dasktree.errors import InputError, ParameterError
from dasktree.model.model import load
from dasktree import fit_regression
from dasktree.regress.reprune import reprune
from dasktree.testing.data import mixed_frame


def _frame(n=2500, seed=0):
    frame = mixed_frame(n, seed).drop(columns=["label"])
    rng = np.random.default_rng(seed + 1)
    frame["y"] = (2.0 * frame["x"].fillna(0.0) + (frame["colour"] == "red") * 3.0 - (frame["k"] > 30) * 1.5
                  + rng.normal(scale=1.5, size=n))
    return frame


FRAME = _frame()
BASE = {"max_depth": 6, "cv": 5, "seed": 3}


def _fit(**params):
    return fit_regression(FRAME, target="y", scheduler="inprocess", **{**BASE, **params})


@pytest.fixture(scope="module")
def unpruned():
    return _fit(prune="none", keep_fold_trees=True)


def _same_model(got, want):
    assert got.tree.to_json() == want.tree.to_json()
    assert (got.full_tree is None) == (want.full_tree is None)
    assert got.grown_tree.to_json() == want.grown_tree.to_json()
    for key in ("depth", "nodes", "leaves"):
        assert got.report[key] == want.report[key]
    assert got.report["prune"] == want.report["prune"]
    assert got.report["prune"]["leaves_grown"] == want.report["prune"]["cp_table"][0]["leaves"]  # the tree pruned
    assert got.report["training"] == want.report["training"]  # from the sums of squares the fit kept: exact


@pytest.mark.parametrize("mode", ["cv", "cv-min"])
def test_reprune_by_cv_is_the_fit_pruned_so(unpruned, mode):
    want = _fit(prune=mode, keep_fold_trees=True)
    got = reprune(unpruned, mode=mode)
    assert got.tree.n_leaves < unpruned.tree.n_leaves or mode == "cv-min"
    _same_model(got, want)
    # counted again on the fold trees, with the held-out sums of squares the fit kept: the same figures
    assert got.report["cv"] == want.report["cv"] and got.report["cv"]["folds"] == 5


def test_reprune_at_an_alpha_is_the_fit_with_ccp_alpha(unpruned):
    table = unpruned.report["prune"]["cp_table"]
    alpha = (table[len(table) // 2]["alpha"] + table[len(table) // 2 + 1]["alpha"]) / 2
    want = _fit(ccp_alpha=alpha, keep_fold_trees=True)
    got = reprune(unpruned, alpha)
    assert got.report["prune"]["mode"] == "alpha" and got.tree.n_leaves == table[len(table) // 2]["leaves"]
    _same_model(got, want)
    assert got.report["cv"]["mse"] == pytest.approx(want.report["cv"]["mse"], rel=1e-9)


def test_reprune_back_to_none_gives_the_grown_tree(unpruned):
    pruned = _fit(prune="cv", keep_fold_trees=True)
    back = reprune(pruned, mode="none")
    _same_model(back, unpruned)
    assert back.full_tree is None
    assert back.report["cv"]["mse"] == pytest.approx(unpruned.report["cv"]["mse"], rel=1e-9)


def test_without_fold_trees_the_cv_report_is_the_cp_tables(unpruned):
    model = _fit(prune="none")
    assert not model.fold_trees
    want = _fit(prune="cv")
    got = reprune(model, mode="cv")
    _same_model(got, want)
    cv = got.report["cv"]
    assert cv["estimated_from"] == "cp table" and cv["per_fold"] == []
    assert cv["mse"] == pytest.approx(want.report["cv"]["mse"], rel=1e-9)
    assert cv["r2"] == pytest.approx(want.report["cv"]["r2"], rel=1e-6)


def test_a_grown_tree_larger_than_the_cp_tables_first_row_reprunes_to_none():
    """A split of no decrease (children of equal means) leaves the grown tree one leaf larger than its
    subtree at alpha 0, the cp table's first row: re-pruned to none without fold trees, it reads that
    row's CV error (the same predictions), not a row of its own leaves (there is none)."""
    import pandas as pd

    frame = pd.DataFrame({"a": np.repeat([0.0, 1.0], 40), "y": np.tile([1.0, 3.0], 40)})
    model = fit_regression(frame, target="y", cv=10)
    table = model.report["prune"]["cp_table"]
    assert model.grown_tree.n_leaves == 2 and table[0]["leaves"] == 1
    got = reprune(model, mode="none")
    assert got.tree.n_leaves == 2
    assert got.report["cv"]["estimated_from"] == "cp table"
    assert got.report["cv"]["mse"] == pytest.approx(table[0]["cv_error"], rel=1e-12)


def test_max_leaf_nodes_reprunes_its_best_first_tree():
    model = _fit(prune="none", max_leaf_nodes=12, keep_fold_trees=True)
    table = model.report["prune"]["cp_table"]
    assert table[0]["leaves"] == 12 and model.grown_tree.n_leaves > 12
    alpha = table[4]["alpha"]
    _same_model(reprune(model, alpha), _fit(max_leaf_nodes=12, ccp_alpha=alpha, keep_fold_trees=True))
    _same_model(reprune(reprune(model, alpha), mode="none"), model)


def test_bad_modes_are_refused_in_one_line(unpruned):
    with pytest.raises(ParameterError, match="a model file does not keep: fit with prune=.pessimistic."):
        reprune(unpruned, mode="pessimistic")
    with pytest.raises(ParameterError, match="not both"):
        reprune(unpruned, 0.1, mode="cv")
    with pytest.raises(ParameterError, match="alpha must be a finite number"):
        reprune(unpruned, -1.0)
    plain = fit_regression(FRAME, target="y", scheduler="inprocess", max_depth=3)
    with pytest.raises(InputError, match="fitted without it"):
        reprune(plain, mode="cv-min")


def test_cli_prune_writes_the_repruned_model(unpruned, tmp_path, capsys):
    path, out = tmp_path / "m.json", tmp_path / "p.json"
    unpruned.save(path)
    assert main(["prune", str(path), "--mode", "cv", "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    model = load(out)
    want = reprune(unpruned, mode="cv")
    assert model.tree.to_json() == want.tree.to_json() and model.task.name == "regression"
    assert line == (f"wrote {out}: cv pruning at alpha {want.report['prune']['alpha']:.6g}, "
                    f"{unpruned.tree.n_leaves} -> {want.tree.n_leaves} leaves, cross-validated MSE "
                    f"{want.report['cv']['mse']:.6g}, R^2 {want.report['cv']['r2']:.4f}")
    assert main(["prune", str(path), "--alpha", "0.5", "--out", str(out), "--overwrite", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["prune"]["mode"] == "alpha" and report["leaves"] == load(out).tree.n_leaves
    before = out.read_bytes()
    assert main(["prune", str(path), "--mode", "pessimistic", "--out", str(out), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "pessimistic" in err and len(err.strip().splitlines()) == 1 and out.read_bytes() == before
    assert main(["prune", str(path), "--mode", "none", "--out", str(out)]) == 1  # exists, no --overwrite
    assert "already exists" in capsys.readouterr().err


def test_a_folds_errors_at_each_row_are_its_tree_pruned_at_that_rows_beta(unpruned):
    """What the fit keeps of a fold tree once it lets the tree go (FoldErrors): at every cp-table row, the
    leaves and held-out squared error of the fold pruned at that row's beta, as the pruned tree counts them
    (summed in another order: to 1e-9); at an alpha known before the choice, the pruned tree's own sums."""
    from dasktree.model.prune import fold_alpha
    from dasktree.regress.prune import betas_of, fold_errors, held_out_sse, prune_at

    table, step = unpruned.report["prune"]["cp_table"], unpruned.spec.target.step
    qs = unpruned.report["sums_of_squares"]["folds"]
    betas = betas_of(np.array([r["alpha"] for r in table]))
    alpha = table[len(table) // 2]["alpha"] * 1.5
    for fold, q in zip(unpruned.fold_trees, qs):
        errors = fold_errors(fold, q, step, betas, alpha)
        for row in range(len(table)):
            pruned = prune_at(fold, fold_alpha(table, row), step)
            leaves = [i for i, t in enumerate(pruned.tests) if t is None]
            n, sse = errors.at(row)
            assert n == len(leaves)
            assert sse == pytest.approx(float(q) + float(held_out_sse(pruned, q)[leaves].sum()), rel=1e-9)
        pruned = prune_at(fold, alpha, step)
        leaves = [i for i, t in enumerate(pruned.tests) if t is None]
        assert errors.at(None) == (len(leaves), float(q) + float(held_out_sse(pruned, q)[leaves].sum()))
        assert (errors.rows, errors.sums) == (int(fold.validation[0, 0]), int(fold.validation[0, 1]))


def test_fold_trees_beyond_the_threads_budget_are_made_one_at_a_time(monkeypatch):
    """A cv fit's fold trees become models on threads only while the models made at once fit
    THREADS_BUDGET_MB: trees of a million nodes one at a time, in the calling thread; small ones a thread
    per core (two items meet at a barrier, which one thread alone never passes)."""
    import os
    import threading

    from dasktree.regress import prune

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # two cores, whatever the machine's
    seen = set()

    def alone(i):
        seen.add(threading.get_ident())
        return 2 * i

    assert prune.in_threads(alone, list(range(5)), nodes_each=10**6) == [0, 2, 4, 6, 8]
    assert seen == {threading.get_ident()}
    barrier = threading.Barrier(2, timeout=60)
    seen.clear()

    def together(i):
        seen.add(threading.get_ident())
        if i < 2:
            barrier.wait()
        return i

    assert prune.in_threads(together, list(range(4)), nodes_each=1000) == [0, 1, 2, 3]
    assert len(seen) == 2 and threading.get_ident() not in seen
