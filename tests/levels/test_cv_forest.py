"""Cross-validation grown in the same passes (Blockeel & Struyf): the forest of fold trees.

Each fold tree equals, node for node and count for count, the tree the single-tree
learner grows on that fold's training rows alone (with the same bins); the
cross-validated accuracy equals those trees' accuracy on their held-out rows.
"""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dasktree
from dasktree import DaskTreeClassifier
from dasktree.datasets import agrawal
from dasktree.io.folds import FoldSpec
from dasktree.testing import hooks
from dasktree.io.sources import Part
from dasktree.testing import mixed_frame, write_dataset


def _folds(frame, k, repeats, seed, key=None):
    spec = FoldSpec(k, repeats, seed, key)
    return spec.parts_of(pa.Table.from_pandas(frame, preserve_index=False), Part(0, "table", 0, len(frame)))


def _nodes(tree_json):
    return [{k: v for k, v in node.items() if k != "validation"} for node in tree_json["nodes"]]


def _datasets():
    a = agrawal.generate(3000, function=7, perturbation=0.05, seed=11)
    return {"agrawal-f7": (a, "class"), "mixed": (mixed_frame(2500, seed=5), "label")}


DATA = _datasets()


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("cv,repeats,depth,seed", [(2, 1, 4, 0), (5, 1, 3, 1), (10, 1, 5, 2), (2, 3, 3, 3),
                                                    (5, 3, 4, 4)])
def test_each_fold_tree_equals_a_tree_grown_on_its_training_rows(name, cv, repeats, depth, seed):
    frame, target = DATA[name]
    params = dict(max_depth=depth, criterion="entropy", max_bins=32, min_samples_leaf=3, prune=None)  # grown trees
    clf = DaskTreeClassifier(cv=cv, repeats=repeats, seed=seed, keep_fold_trees=True, **params).fit(frame, target=target)
    folds = _folds(frame, cv, repeats, seed)
    assert len(clf.model_.fold_trees) == cv * repeats
    report = clf.cv_report_
    for t, fold_tree in enumerate(clf.model_.fold_trees):
        r, f = divmod(t, cv)
        train = frame[folds[r] != f]
        held = frame[folds[r] == f]
        alone = dasktree.fit(train, target=target, bin_spec=clf.model_.spec, **params)
        assert _nodes(fold_tree.to_json()) == _nodes(alone.tree.to_json()), f"fold tree {t} differs"
        # its validation counts are its held-out rows, and its accuracy theirs
        assert fold_tree.validation[0].sum() == len(held)
        predicted = np.asarray(alone.classes)[alone.predict_codes(pa.Table.from_pandas(held, preserve_index=False))]
        accuracy = float(np.mean(predicted == held[target].to_numpy()))
        assert report["per_fold"][t]["accuracy"] == pytest.approx(accuracy, abs=1e-15)
        assert report["per_fold"][t]["rows"] == len(held)
    per_fold = np.array([f["accuracy"] for f in report["per_fold"]])
    assert report["accuracy_mean"] == pytest.approx(per_fold.mean())
    assert report["accuracy_std"] == pytest.approx(per_fold.std())
    confusion = np.array(report["confusion_matrix"]["rows_true_columns_predicted"])
    assert confusion.sum() == len(frame) * repeats
    # the main tree is the ordinary fit, untouched by the folds
    plain = DaskTreeClassifier(**params).fit(frame, target=target)
    assert _nodes(clf.model_.tree.to_json()) == _nodes(plain.model_.tree.to_json())


def test_cv_adds_no_pass():
    frame, target = DATA["agrawal-f7"]
    plain = DaskTreeClassifier(max_depth=6).fit(frame, target=target)
    ten = DaskTreeClassifier(max_depth=6, cv=10, keep_fold_trees=True).fit(frame, target=target)
    deepest = max(t.max_depth for t in ten.model_.fold_trees + [ten.model_.tree])
    assert ten.report_["passes"] == deepest + 1 == plain.report_["passes"]


def test_nodes_are_shared_until_the_trees_differ():
    rng = np.random.default_rng(0)
    n = 4000
    strong = rng.normal(size=n)
    frame = pd.DataFrame({"strong": strong, "noise": rng.normal(size=n)})
    y = (strong > 0).astype(int)
    clf = DaskTreeClassifier(max_depth=1, cv=5, keep_fold_trees=True).fit(frame, y)
    roots = {(t.tests[0].attribute, t.tests[0].thresholds) for t in clf.model_.fold_trees}
    assert len(roots) == 1  # every fold picks the same root test...
    assert clf.report_["forest_nodes"] == 3  # ...so the forest is one root with two shared children
    assert clf.cv_report_["distinct_tests_per_level"] == [1.0]
    # two equally good features, each a noisy copy of the class: folds disagree, the forest bifurcates
    # each flips the class of a different 20% of the rows: exactly tied on all rows, not on every fold
    order = rng.permutation(n)
    a, b = y.copy(), y.copy()
    a[order[:800]] ^= 1
    b[order[800:1600]] ^= 1
    # eight distinct rows, which the content hash would put in at most eight folds: folds by a key column
    tied = pd.DataFrame({"a": a.astype(float), "b": b.astype(float), "id": np.arange(n)})
    forked = DaskTreeClassifier(max_depth=1, cv=10, keep_fold_trees=True).fit(tied, y, key="id")
    chosen = {t.tests[0].attribute for t in forked.model_.fold_trees}
    assert chosen == {0, 1}
    assert forked.cv_report_["distinct_tests_per_level"][0] == 2.0
    assert forked.report_["forest_nodes"] == 1 + 2 * 2


@pytest.mark.cluster
def test_folds_and_forest_are_bit_identical_across_partitions_and_schedulers(tmp_path, cluster_client):
    frame, target = DATA["mixed"]
    frame = frame.assign(row_id=np.arange(len(frame)) * 7 + 3)
    params = dict(max_depth=4, cv=5, repeats=2, seed=9, keep_fold_trees=True)
    # the same files read as 1, 4 or 13 parts: a row's folds follow its content, not its place
    path = write_dataset(frame, tmp_path / "one", n_files=1, row_group_size=200)
    texts = set()
    for part_rows in (10_000, 700, 200):
        model = dasktree.fit(path, target=target, exclude=["row_id"], part_rows=part_rows, client=cluster_client,
                             **params)
        assert sum(level["derived"] for level in model.run["levels"]) > 0  # histogram subtraction at work
        texts.add(model.dumps())
    texts.add(dasktree.fit(path, target=target, exclude=["row_id"], part_rows=200, scheduler="threads",
                           **params).dumps())
    assert len(texts) == 1
    # files laid out differently: a key column keeps the folds, and the in-memory fit agrees
    keyed = set()
    for n_files in (1, 4, 13):
        p = write_dataset(frame, tmp_path / f"keyed-{n_files}", n_files=n_files)
        keyed.add(dasktree.fit(p, target=target, key="row_id", client=cluster_client, **params).dumps())
    keyed.add(dasktree.fit(frame, target=target, key="row_id", **params).dumps())
    assert len(keyed) == 1


def test_user_folds_column_and_errors():
    frame, target = DATA["mixed"]
    frame = frame.assign(fold=np.arange(len(frame)) % 4)
    clf = DaskTreeClassifier(max_depth=3, cv=4).fit(frame, target=target, folds="fold")
    assert [f["rows"] for f in clf.cv_report_["per_fold"]] == [625] * 4
    assert "fold" not in clf.feature_names_in_
    with pytest.raises(dasktree.DataError, match="folds column 'fold' must hold integers 0..2"):
        DaskTreeClassifier(max_depth=3, cv=3).fit(frame, target=target, folds="fold")
    with pytest.raises(dasktree.InputError, match="needs cv"):
        DaskTreeClassifier(repeats=3).fit(frame, target=target)
    with pytest.raises(dasktree.InputError, match="cv must be an integer >= 2"):
        DaskTreeClassifier(cv=1).fit(frame, target=target)


def test_fold_trees_predict_and_survive_json(tmp_path):
    frame, target = DATA["mixed"]
    clf = DaskTreeClassifier(max_depth=4, cv=3, keep_fold_trees=True).fit(frame, target=target)
    clf.save(tmp_path / "m.json")
    loaded = dasktree.load(tmp_path / "m.json")
    assert loaded.cv_report_ == clf.cv_report_
    for ours, theirs in zip(clf.fold_trees_, loaded.fold_trees_):
        np.testing.assert_array_equal(ours.predict_proba(frame), theirs.predict_proba(frame))


def test_only_fold_grows_the_same_tree_as_the_forest():
    frame, target = DATA["agrawal-f7"]
    forest = dasktree.fit(frame, target=target, max_depth=4, cv=5, repeats=2, seed=1, keep_fold_trees=True)
    for t in (0, 3, 7):
        with hooks.grow_only_fold(t):
            alone = dasktree.fit(frame, target=target, max_depth=4, cv=5, repeats=2, seed=1, prune=None)
        assert alone.tree.to_json() == forest.fold_trees[t].to_json()
    with pytest.raises(dasktree.InputError, match="only_fold must be in 0..cv"), hooks.grow_only_fold(5):
        dasktree.fit(frame, target=target, cv=5)


def test_a_level_is_applied_with_the_collector_off(monkeypatch):
    """The client applies each level's decisions (thousands of new nodes, no cycles) with no
    automatic collection, and the collector is back on after the fit."""
    import gc

    import dasktree.levels.grow as grow

    applied, states = grow._apply, []

    def watched(*args):
        states.append(gc.isenabled())
        return applied(*args)

    monkeypatch.setattr(grow, "_apply", watched)
    frame, target = DATA["agrawal-f7"]
    assert gc.isenabled()
    dasktree.fit(frame, target=target, max_depth=3, cv=3)
    assert states and not any(states)
    assert gc.isenabled()


def test_a_fit_freezes_the_older_objects_only_while_it_grows():
    """The cyclic collector skips the objects older than the fit while it grows, and the
    process's own gc.freeze() is left as it was."""
    import gc

    frame, target = DATA["agrawal-f7"]
    seen = []
    callback = lambda phase, info: seen.append(gc.get_freeze_count()) if phase == "start" else None  # noqa: E731
    gc.callbacks.append(callback)
    try:
        dasktree.fit(frame, target=target, max_depth=4, cv=3)
        gc.collect()
    finally:
        gc.callbacks.remove(callback)
    assert gc.get_freeze_count() == 0
    assert max(seen, default=0) > 0  # some collection ran with the older objects frozen
    assert seen[-1] == 0  # and none after the fit
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        dasktree.fit(frame, target=target, max_depth=4, cv=3)
        assert gc.get_freeze_count() > frozen // 2  # not unfrozen by the fit (some frozen objects may die)
    finally:
        gc.unfreeze()
