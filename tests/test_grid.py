"""A grid of settings grown in the same passes (dasktree.levels.settings, dasktree.model.grid).

On data whose bins do not depend on the split (few distinct values per column, each in every
training split) and the same splits, every split score of the grid is scikit-learn's
``GridSearchCV(DaskTreeClassifier(), grid, cv=splits)``'s, exactly, and the choice agrees; each
setting's trees are the trees a plain fit with that setting grows; the table and the chosen model
are the same bytes whatever the partitioning or runner.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.errors import ParameterError
from dasktree.levels.settings import expand_grid
from dasktree.testing import write_dataset

GRID = [
    {"criterion": ["gini", "entropy", "gain_ratio"], "min_samples_leaf": [1, 4],
     "nominal_split": ["binary", "multiway"], "prune": ["none", "pessimistic"]},
    {"max_arity": [3], "selection": ["gain_ratio", "balanced_gain"], "ccp_alpha": [0.0, 0.01],
     "criterion": ["entropy"]},
]


def _frame(n: int = 360, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Integer columns of 6 to 9 values (one with missing values), a nominal column of 5
    categories, 3 classes: with ``n`` rows every value and class is in every training split."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.integers(0, 9, n), rng.integers(0, 6, n), rng.integers(0, 7, n).astype(float)
    colour = rng.choice(["red", "green", "blue", "grey", "pink"], n)
    score = a - b + (colour == "red") * 3 + np.where(np.isnan(c), 0, c) / 2 + rng.normal(scale=2.0, size=n)
    c[rng.random(n) < 0.08] = np.nan
    y = np.where(score > 5, "high", np.where(score > 1, "mid", "low"))
    return pd.DataFrame({"a": a, "b": b, "c": c, "colour": colour}), y


def test_every_split_score_is_grid_search_cvs_exactly():
    X, y = _frame()
    splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    for _, test in splits:  # the premise: every value present in every training split
        train = np.setdiff1d(np.arange(len(y)), test)
        for col in X:
            assert set(X[col].iloc[train].astype(str)) == set(X[col].astype(str))
    ours = DaskTreeClassifier(cv=splits, param_grid=GRID).fit(X, y)
    peer = GridSearchCV(DaskTreeClassifier(), GRID, cv=splits).fit(X, y)
    n = len(peer.cv_results_["params"])
    assert ours.cv_results_["params"] == peer.cv_results_["params"]
    for i in range(len(splits)):
        key = f"split{i}_test_score"
        assert ours.cv_results_[key].tolist() == peer.cv_results_[key].tolist(), key
    for key in ("mean_test_score", "std_test_score", "rank_test_score"):
        assert ours.cv_results_[key].tolist() == peer.cv_results_[key].tolist(), key
    assert ours.best_params_ == peer.best_params_
    assert ours.best_index_ == peer.best_index_ and ours.best_score_ == peer.best_score_
    assert len(set(ours.cv_results_["mean_test_score"].tolist())) > 3  # the settings differ (no vacuous match)
    # the refit: the chosen setting's tree is the one GridSearchCV refits on all rows
    assert ours.model_.tree.to_json() == peer.best_estimator_.model_.tree.to_json()
    assert ours.cv_results_["leaves"].shape == (n,) and ours.cv_results_["prune_seconds"].shape == (n,)


def _weighted(n: int = 500):
    X, y = _frame(n, seed=4)
    weights = np.random.default_rng(1).choice([0.5, 1.0, 2.0, 3.25], n)
    return X, y, weights


@pytest.mark.parametrize("cv,repeats", [(3, 1), (2, 2)])
def test_each_setting_is_the_plain_fit_with_that_setting(cv, repeats):
    """Node for node (main tree grown and pruned) and fold for fold (its CV report), with weights,
    missing values, a nominal column and repeats; pruning by CV included."""
    X, y, w = _weighted()
    grid = {"criterion": ["gini", "gain_ratio"], "min_samples_leaf": [1, 6], "max_arity": [2, 3],
            "prune": ["none", "cv", "cv-min", "pessimistic"]}
    settings = expand_grid(grid)
    picked = [0, 5, 10, 15, 19, 22, 31]
    for i in picked:
        chosen = dasktree.fit(X, y, sample_weight=w, cv=cv, repeats=repeats, param_grid=grid,
                              refit=lambda results, i=i: i, nominal=[])
        plain = dasktree.fit(X, y, sample_weight=w, cv=cv, repeats=repeats, **settings[i])
        assert chosen.report["grid"]["best_params"] == settings[i]
        assert chosen.params == plain.params
        assert chosen.grown_tree.to_json() == plain.grown_tree.to_json()
        assert chosen.tree.to_json() == plain.tree.to_json()
        forest_wide = "distinct_tests_per_level"  # the forest's, which the grid's settings share
        assert {**chosen.report["cv"], forest_wide: None} == {**plain.report["cv"], forest_wide: None}
        table = chosen.report["grid"]["cv_results"]
        assert [table[f"split{k}_test_score"][i] for k in range(cv * repeats)] == \
            [f["accuracy"] for f in plain.report["cv"]["per_fold"]]


def test_settings_share_the_forests_nodes():
    """A grid costs its distinct nodes: far fewer than its settings' separate forests."""
    X, y, _ = _weighted()
    grid = {"criterion": ["gini", "entropy"], "min_samples_leaf": [1, 2], "prune": ["none", "cv-min"]}
    model = dasktree.fit(X, y, cv=3, param_grid=grid)
    alone = sum(dasktree.fit(X, y, cv=3, **s).report["forest_nodes"] for s in expand_grid(grid)[::2])
    assert model.report["grid"]["growths"] == 4 and model.report["grid"]["trees"] == 16
    assert model.report["forest_nodes"] < alone


def _text(clf) -> str:
    return clf.model_.dumps()


@pytest.mark.cluster
def test_table_and_model_are_the_same_bytes_across_partitionings_and_runners(tmp_path, cluster_client):
    X, y = _frame(600, seed=2)
    frame = X.assign(label=y, id=np.arange(len(y)))  # the folds hash the key, not the rows' content
    params = dict(cv=3, param_grid={"criterion": ["gini", "gain_ratio"], "min_samples_leaf": [1, 5],
                                    "prune": ["cv-min", "pessimistic"]})
    reference = None
    for n_files in (1, 4):
        path = write_dataset(frame, tmp_path / f"d{n_files}", n_files=n_files, row_group_size=70)
        for client in (None, cluster_client):
            clf = DaskTreeClassifier(client=client, **params).fit(path, target="label", key="id", exclude=["id"])
            assert clf.run_["parts"] >= n_files
            reference = reference or _text(clf)
            assert _text(clf) == reference, f"{n_files} files, client {client} differ"
    grid = json.loads(reference)["report"]["grid"]
    assert len(grid["cv_results"]["params"]) == 8


def test_bad_grids_are_one_line_before_any_pass():
    X, y = _frame(60)
    with pytest.raises(ParameterError, match="give cv=k"):
        dasktree.fit(X, y, param_grid={"criterion": ["gini"]})
    with pytest.raises(ParameterError, match="not a grid parameter"):
        dasktree.fit(X, y, cv=3, param_grid={"max_depth": [2, 3]})
    with pytest.raises(ParameterError, match="non-empty list"):
        dasktree.fit(X, y, cv=3, param_grid={"criterion": "gini"})
    with pytest.raises(ParameterError, match="criterion must be one of"):
        dasktree.fit(X, y, cv=3, param_grid={"criterion": ["gini", "log_loss"]})
    with pytest.raises(ParameterError, match="not both"):
        dasktree.fit(X, y, cv=3, param_grid={"prune": ["cv"], "ccp_alpha": [0.1]})
    with pytest.raises(ParameterError, match="refit must be"):
        dasktree.fit(X, y, cv=3, param_grid={"criterion": ["gini"]}, refit="accuracy")


def test_a_fit_without_a_grid_has_no_grid_results():
    X, y = _frame(120)
    clf = DaskTreeClassifier(cv=3).fit(X, y)
    assert "grid" not in clf.model_.report and not hasattr(clf, "best_params_")


def _cli(*args):
    from dasktree.testing.processes import run_command

    return run_command(*args)


def test_the_command_fits_a_grid_and_shows_its_table(tmp_path):
    """The command's ``main`` in this process (:func:`~dasktree.testing.processes.run_command`): what
    it fits, shows and refuses."""
    X, y = _frame(300, seed=3)
    data = write_dataset(X.assign(label=y, id=np.arange(len(y))), tmp_path / "data", n_files=2)
    out = tmp_path / "m.json"
    fit = _cli("fit", data, "--target", "label", "--key", "id", "--exclude", "id", "--out", str(out), "--cv", "3",
               "--grid", "criterion=gini,gain_ratio", "--grid", "min-samples-leaf=1,5", "--grid",
               "prune=pessimistic,cv-min", "--json")
    assert fit.returncode == 0, fit.stderr
    grid = json.loads(fit.stdout)["report"]["grid"]
    assert len(grid["cv_results"]["params"]) == 8 and "optimistic" in grid["note"]
    again = dasktree.fit(data, target="label", key="id", exclude=["id"], cv=3,
                         param_grid={"criterion": ["gini", "gain_ratio"], "min_samples_leaf": [1, 5],
                                     "prune": ["pessimistic", "cv-min"]})
    assert json.loads(out.read_text())["report"] == json.loads(again.dumps())["report"]
    shown = _cli("show", str(out), "--format", "grid")
    assert shown.returncode == 0 and "optimistic" in shown.stdout
    best = grid["best_params"]
    picture = _cli("plot", str(out), "--grid", "--out", str(tmp_path / "grid.png"))
    assert picture.returncode == 0, picture.stderr
    assert (tmp_path / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = _cli("show", str(out), "--format", "report")
    assert report.returncode == 0 and "grid (8 settings" in report.stdout and "optimistic" in report.stdout
    assert shown.stdout.splitlines()[4].startswith("*    1") and f"criterion={best['criterion']}" in shown.stdout
    (tmp_path / "g.json").write_text(json.dumps([{"criterion": ["entropy"]}, {"max_arity": [3]}]))
    from_file = _cli("fit", data, "--target", "label", "--out", str(tmp_path / "f.json"), "--cv", "3",
                     "--grid", str(tmp_path / "g.json"), "--quiet")
    assert from_file.returncode == 0, from_file.stderr
    for args, code, needle in (((), 2, "give cv=k"), (("--cv", "3", "--grid", "max_arity=2,y"), 2, "not an integer"),
                               (("--cv", "3", "--grid", str(tmp_path / "none.json")), 1, "no such file")):
        bad = _cli("fit", data, "--target", "label", "--out", str(tmp_path / "x.json"), *args,
                   *(() if args else ("--grid", "criterion=gini")))
        assert bad.returncode == code and needle in bad.stderr and "Traceback" not in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.json").exists()
    plain = _cli("fit", data, "--target", "label", "--out", str(tmp_path / "p.json"), "--quiet")
    assert plain.returncode == 0
    no_grid = _cli("show", str(tmp_path / "p.json"), "--format", "grid")
    assert no_grid.returncode == 1 and "without a grid" in no_grid.stderr
    no_picture = _cli("plot", str(tmp_path / "p.json"), "--grid", "--out", str(tmp_path / "p.svg"))
    assert no_picture.returncode == 1 and "without a grid" in no_picture.stderr and not (tmp_path / "p.svg").exists()


def test_settings_that_grow_alike_share_their_trees():
    """Pruning grows nothing, nor does a selection of binary tests: one growth, one main tree + folds."""
    X, y = _frame(150)
    model = dasktree.fit(X, y, cv=3, param_grid={"selection": ["gain_ratio", "distance"],
                                                 "prune": ["none", "pessimistic", "cv"]})
    grid = model.report["grid"]
    assert (grid["settings"], grid["growths"], grid["trees"]) == (6, 1, 4)
    table = grid["cv_results"]
    assert table["params"][0]["prune"] == table["params"][1]["prune"]  # ParameterGrid: selection varies fastest
    assert table["mean_test_score"][0] == table["mean_test_score"][1]  # the same trees, pruned alike
