"""Postponing in a fit: children search again, fold trees stay standalone trees, the report counts it."""

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.testing import hooks
from dasktree.datasets import agrawal
from dasktree.io.folds import FoldSpec
from dasktree.io.sources import Part
from dasktree.testing import mixed_frame
from dasktree.testing.processes import run_command


def _nodes(tree_json):
    return [{k: v for k, v in node.items() if k != "validation"} for node in tree_json["nodes"]]


def _staircase(n=400, seed=0):
    """``a`` (two values) splits off class 0; inside ``a == 1`` the class is ``b > 0.5``. At the root
    ``b`` has many boundary points (its class alternates with ``a``), at the child ``a == 1`` two blocks."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = rng.permutation(n) / n
    return pd.DataFrame({"a": a.astype(float), "b": b, "y": ((a == 1) & (b > 0.5)).astype(int)})


def test_a_postponed_attribute_is_searched_again_at_the_children():
    frame = _staircase()
    model = dasktree.fit(frame, target="y", postpone=("rank", 0.5), criterion="entropy")
    nodes = model.tree.to_json()["nodes"]
    levels = model.run["levels"]
    # the root searches a (2 blocks) and postpones b (many): one of each
    assert (levels[0]["searches"], levels[0]["postponed"]) == (1, 1)
    # at the child a == 1, a is constant (not ranked) and b has two blocks: both searched, b chosen
    tests = [model.spec.features[node["test"]["attribute"]].name for node in nodes if "test" in node]
    assert tests == ["a", "b"]
    assert levels[1]["postponed"] == 0 and levels[1]["searches"] >= 2
    assert model.report["training_accuracy"] == 1.0
    assert model.params["postpone"] == "rank:0.5"


def _folds(frame, k, repeats, seed):
    spec = FoldSpec(k, repeats, seed, None)
    return spec.parts_of(pa.Table.from_pandas(frame, preserve_index=False), Part(0, "table", 0, len(frame)))


DATA = {"agrawal-f7": (agrawal.generate(2000, function=7, perturbation=0.05, seed=11), "class"),
        "mixed": (mixed_frame(1500, seed=5), "label")}


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("postpone,max_arity", [(("rank", 0.5), 2), (("relative", 0.7), 2), ("analytic", 4),
                                                (("ratio", 0.1), 3)])
def test_fold_trees_with_postponing_equal_trees_grown_on_their_folds(name, postpone, max_arity):
    frame, target = DATA[name]
    params = dict(max_depth=4, criterion="entropy", max_bins=32, min_samples_leaf=3, postpone=postpone,
                  max_arity=max_arity, prune=None)  # the grown trees
    cv, repeats, seed = 2, 2, 3
    model = dasktree.fit(frame, target=target, cv=cv, repeats=repeats, seed=seed, keep_fold_trees=True, **params)
    assert sum(level["postponed"] for level in model.run["levels"]) > 0
    folds = _folds(frame, cv, repeats, seed)
    for t, fold_tree in enumerate(model.fold_trees):
        r, f = divmod(t, cv)
        alone = dasktree.fit(frame[folds[r] != f], target=target, bin_spec=model.spec, **params)
        assert _nodes(fold_tree.to_json()) == _nodes(alone.tree.to_json()), f"fold tree {t} differs"
    with hooks.grow_only_fold(1):
        only = dasktree.fit(frame, target=target, cv=cv, repeats=repeats, seed=seed, **params)
    assert only.tree.to_json() == model.fold_trees[1].to_json()


@pytest.mark.parametrize("max_arity", [2, 5])
def test_analytic_postponing_grows_the_same_tree_with_fewer_searches(max_arity):
    frame, target = DATA["agrawal-f7"]
    params = dict(max_depth=5, criterion="entropy", max_arity=max_arity, cv=2)
    plain = dasktree.fit(frame, target=target, keep_fold_trees=True, **params)
    postponed = dasktree.fit(frame, target=target, postpone="analytic", keep_fold_trees=True, **params)
    assert postponed.tree.to_json() == plain.tree.to_json()
    assert [t.to_json() for t in postponed.fold_trees] == [t.to_json() for t in plain.fold_trees]
    made = [(level["searches"], level["postponed"]) for level in postponed.run["levels"]]
    assert [s + p for s, p in made] == [level["searches"] for level in plain.run["levels"]]
    assert sum(p for _, p in made) > 0
    assert all(level["postponed"] == 0 for level in plain.run["levels"])
    assert all(level["search_seconds"] > 0 for level in plain.run["levels"] if level["searches"])


def test_bad_postpone_values_are_refused_with_one_line():
    frame, target = DATA["mixed"]
    for bad, message in [(("rank", 0), "0 < t <= 1"), ("often", "postpone must be"),
                         (("ratio", 2.0), "0 < t <= 1")]:
        with pytest.raises(dasktree.InputError, match=message):
            dasktree.fit(frame, target=target, postpone=bad)
    with pytest.raises(dasktree.InputError, match="criterion='gain_ratio'"):
        DaskTreeClassifier(criterion="gain_ratio", postpone="analytic").fit(frame, target=target)


def test_the_estimator_and_the_cli_take_postpone(tmp_path):
    frame = _staircase()
    clf = DaskTreeClassifier(postpone=("rank", 0.5), criterion="entropy").fit(frame, target="y")
    assert clf.get_params()["postpone"] == ("rank", 0.5)
    assert clf.run_["levels"][0]["postponed"] == 1
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    out = tmp_path / "model.json"
    done = run_command("fit", str(path), "--target", "y", "--out", str(out),
                           "--postpone", "rank:0.5", "--criterion", "entropy", "--scheduler", "threads",
                           "--quiet")
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["params"]["postpone"] == "rank:0.5"
    bad = run_command("fit", str(path), "--target", "y", "--out",
                          str(tmp_path / "bad.json"), "--postpone", "rank:2", "--quiet")
    assert bad.returncode not in (0, 3) and len(bad.stderr.strip().splitlines()) == 1 and "0 < t <= 1" in bad.stderr


@pytest.mark.cluster
@pytest.mark.parametrize("cache", [True, False])
def test_postponing_on_a_cluster_gives_the_in_memory_model(tmp_path, cluster_client, cache):
    """The workers postpone on their own counts: the model is the in-process one, bit for bit, and the
    searches made and postponed add up the same."""
    from dasktree.testing import write_dataset

    frame, target = DATA["agrawal-f7"]
    frame = frame.assign(malignant=np.random.default_rng(0).random(len(frame)))
    params = dict(max_depth=5, criterion="entropy", max_arity=3, postpone=("rank", 0.5))
    reference = dasktree.fit(frame, target=target, **params)
    path = write_dataset(frame, tmp_path / "data", n_files=3, row_group_size=400)
    model = dasktree.fit(path, target=target, client=cluster_client, cache=cache, **params)
    assert model.dumps() == reference.dumps()
    counts = [(level["searches"], level["postponed"]) for level in model.run["levels"]]
    assert counts == [(level["searches"], level["postponed"]) for level in reference.run["levels"]]
    assert sum(p for _, p in counts) > 0
