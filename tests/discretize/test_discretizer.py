"""The Discretizer end to end: the four cases of 003, partition independence, transform, JSON, CLI, binning=.

The kernels themselves are tested in test_discretize_methods.py; here every
case goes through ``Discretizer.fit`` (pass 0, one histogram pass, a task per
attribute) on pandas frames, Parquet datasets and a real 2-process cluster.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dasktree
from dasktree import DaskTreeClassifier, Discretizer
from dasktree.discretize import DISCRETIZERS
from dasktree.discretize.discretizer import interval_labels
from dasktree.discretize.refine import REFINING_METHODS
from dasktree.testing import write_dataset

# --------------------------------------------------------------------------
# data: the four cases of 003 (as its F# script builds them) and noise
# --------------------------------------------------------------------------


def single(rng):
    return pd.DataFrame({"x": rng.random(100), "y": np.zeros(100, dtype=int)})


def separate(rng):
    return pd.DataFrame({"x": np.concatenate([rng.random(100), rng.random(100) + 1.0]),
                         "y": np.repeat([0, 1], 100)})


def mixture(rng):
    x = np.concatenate([rng.random(100), rng.random(100) + 0.5, rng.random(100) + 1.0, rng.random(100) + 1.5])
    y = np.concatenate([rng.integers(0, 2, 100), rng.integers(1, 3, 100), rng.integers(2, 4, 100),
                        rng.integers(3, 5, 100)])
    return pd.DataFrame({"x": x, "y": y})


def alternating(_rng):
    i = np.arange(101)
    return pd.DataFrame({"x": i.astype(float), "y": i % 2})


def noisy(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"u": rng.random(n), "k": rng.integers(0, 50, n), "g": rng.normal(size=n),
                         "y": rng.integers(0, 2, n)})


def mixed(n=3000, seed=0):
    """Numeric columns (one with more distinct values than max_bins), nominal, constant, missing; 3 classes."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = rng.integers(0, 30, n)
    colour = rng.choice(["red", "green", "blue"], n)
    score = a + (b > 20) - (colour == "red") + rng.normal(scale=0.7, size=n)
    frame = pd.DataFrame({
        "a": a, "b": b.astype(np.int32), "colour": colour, "const": 7.0,
        "y": np.where(score > 0.8, "hi", np.where(score > -0.5, "mid", "lo")),
    })
    frame.loc[rng.random(n) < 0.05, "a"] = np.nan
    return frame


SUPERVISED = ["mdlp", "distance"]


# --------------------------------------------------------------------------
# the four cases of 003, through the API
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", SUPERVISED)
@pytest.mark.parametrize("seed", [0, 1])
def test_single_class_gives_no_cut(method, seed):
    d = Discretizer(method).fit(single(np.random.default_rng(seed)), target="y")
    assert d.cut_points_ == {"x": []}
    assert d.report_["columns"]["x"]["intervals"] == 1
    assert d.report_["passes"] == 2


@pytest.mark.parametrize("method", SUPERVISED)
@pytest.mark.parametrize("seed", [0, 1])
def test_separate_classes_give_one_cut_in_the_gap(method, seed):
    frame = separate(np.random.default_rng(seed))
    [t] = Discretizer(method).fit(frame, target="y").cut_points_["x"]
    assert frame.x[frame.y == 0].max() < t < frame.x[frame.y == 1].min()
    assert abs(t - 1.0) < 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixture_mdlp_cuts_near_half_one_one_and_a_half_two(seed):
    cuts = Discretizer("mdlp").fit(mixture(np.random.default_rng(seed)), target="y").cut_points_["x"]
    np.testing.assert_allclose(cuts, [0.5, 1.0, 1.5, 2.0], atol=0.1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixture_distance_cuts_near_one_and_one_and_a_half(seed):
    # The normalized distance stops earlier than mdlp on overlapping classes
    # (see methods.distance and test_discretize_methods): the inner two cuts.
    cuts = Discretizer("distance").fit(mixture(np.random.default_rng(seed)), target="y").cut_points_["x"]
    np.testing.assert_allclose(cuts, [1.0, 1.5], atol=0.1)


@pytest.mark.parametrize("method", SUPERVISED)
def test_alternating_classes_give_no_cut(method):
    assert Discretizer(method).fit(alternating(None), target="y").cut_points_ == {"x": []}


@pytest.mark.parametrize("method", SUPERVISED)
@pytest.mark.parametrize("seed", range(3))
def test_class_independent_noise_gives_no_cut(method, seed):
    d = Discretizer(method).fit(noisy(seed=seed), target="y")
    assert d.cut_points_ == {"u": [], "k": [], "g": []}


# --------------------------------------------------------------------------
# mdlp on raw values, by a direct recursive implementation
# --------------------------------------------------------------------------


def _ent(labels) -> float:
    n = len(labels)
    return -sum(c / n * math.log2(c / n) for c in Counter(labels).values()) if n else 0.0


def nicest_midpoint(lo: float, hi: float) -> float:
    """The discretizer's cut between ``lo`` and ``hi``, by brute force in decimals: of ``lo / 2 + hi / 2``
    and its two neighbouring floats, those strictly between ``lo`` and ``hi`` and no farther from the exact
    midpoint than it, the one of the shortest repr (itself on a tie)."""
    from decimal import Decimal, getcontext

    getcontext().prec = 2000
    m = lo / 2.0 + hi / 2.0
    if m == hi or not (lo < m < hi):
        return lo if m == hi else m
    exact = (Decimal(lo) + Decimal(hi)) / 2
    near = [c for c in (float(np.nextafter(m, -np.inf)), float(np.nextafter(m, np.inf)))
            if lo < c < hi and abs(Decimal(c) - exact) <= abs(Decimal(m) - exact)]
    return min([m, *near], key=lambda c: len(repr(c)))


def naive_mdlp(x, y) -> list[float]:
    """Fayyad & Irani on raw examples: sort, try every cut between distinct values, recurse.

    Returns the cut points midway in the gaps (:func:`nicest_midpoint`).
    """
    cuts = []

    def recurse(examples):
        n = len(examples)
        distinct = sorted({v for v, _ in examples})
        if len(distinct) < 2:
            return
        labels = [c for _, c in examples]
        best = None
        for lo, hi in zip(distinct[:-1], distinct[1:]):
            s1 = [c for v, c in examples if v <= lo]
            s2 = [c for v, c in examples if v > lo]
            cost = len(s1) * _ent(s1) + len(s2) * _ent(s2)
            if best is None or cost < best[0] - 1e-9 * (1 + n * math.log2(n + 1)):
                best = (cost, lo, hi, s1, s2)
        cost, lo, hi, s1, s2 = best
        ent = _ent(labels)
        k, k1, k2 = len(set(labels)), len(set(s1)), len(set(s2))
        delta = math.log2(3**k - 2) - (k * ent - k1 * _ent(s1) - k2 * _ent(s2))
        if n * ent - cost > math.log2(n - 1) + delta + 1e-9 * (1 + n * math.log2(n + 1)):
            cuts.append(nicest_midpoint(lo, hi))
            recurse([e for e in examples if e[0] <= lo])
            recurse([e for e in examples if e[0] > lo])

    recurse(sorted(zip(x.tolist(), y.tolist())))
    return sorted(cuts)


@pytest.mark.parametrize("seed", range(6))
def test_mdlp_equals_a_naive_recursive_implementation_on_raw_values(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    x = np.round(rng.normal(size=n) * 3, 1)  # repeated values: mixed and uniform bins
    y = (x + rng.normal(scale=1.5, size=n) > 0).astype(int) + (x > 2.5)
    d = Discretizer("mdlp").fit(pd.DataFrame({"x": x, "y": y}), target="y")
    assert d.cut_points_["x"] == naive_mdlp(x, y)


# --------------------------------------------------------------------------
# partition independence: 1 vs 16 files, pandas vs Parquet, on a real cluster
# --------------------------------------------------------------------------


@pytest.mark.cluster
@pytest.mark.parametrize("method", DISCRETIZERS)
def test_same_cut_points_for_1_and_16_files_and_for_pandas(tmp_path, cluster_client, method):
    frame = mixed()
    one = write_dataset(frame, tmp_path / "one", n_files=1)
    many = write_dataset(frame, tmp_path / "many", n_files=16, row_group_size=50)
    # max_bins below a's distinct values: a's candidates are quantile edges of the fixed grid
    d_pandas = Discretizer(method, max_bins=64).fit(frame, target="y")
    d_one = Discretizer(method, max_bins=64, client=cluster_client).fit(one, target="y")
    d_many = Discretizer(method, max_bins=64, client=cluster_client).fit(many, target="y")
    assert d_pandas.cut_points_ == d_one.cut_points_ == d_many.cut_points_
    assert set(d_pandas.cut_points_) == {"a", "b"}
    assert d_pandas.report_["columns"]["a"]["exact"] is False and d_pandas.report_["columns"]["b"]["exact"] is True
    assert d_many.run_["parts"] == 16 and d_many.run_["workers"] == 2
    refined = method in REFINING_METHODS  # a's quantile bins hold rows of both classes: refined in one more pass
    assert d_many.report_["passes"] == 2 + refined
    assert d_many.report_["refined"]["columns"] == (["a"] if refined else [])
    assert d_many.report_["refined"] == d_pandas.report_["refined"]
    if method in ("mdlp", "chimerge", "equal_width", "equal_frequency"):
        assert d_pandas.cut_points_["a"] and d_pandas.cut_points_["b"]


@pytest.mark.cluster
def test_dask_dataframe_gives_the_same_cuts_and_transform(cluster_client):
    import dask.dataframe as dd

    frame = mixed()
    ddf = dd.from_pandas(frame, npartitions=5)
    d = Discretizer("mdlp", client=cluster_client).fit(ddf, target="y")
    ref = Discretizer("mdlp").fit(frame, target="y")
    assert d.cut_points_ == ref.cut_points_
    for labels in (False, True):  # partitions have indexes not starting at 0
        lazy = d.transform(ddf, labels=labels)
        assert isinstance(lazy, dd.DataFrame)
        pd.testing.assert_frame_equal(lazy.compute(scheduler="sync"),
                                      ref.transform(ddf.compute(scheduler="sync"), labels=labels))


@pytest.mark.cluster
def test_dask_x_and_y_of_one_parquet_frame_give_the_same_cuts(cluster_client, tmp_path):
    """The README's pattern: ``X = ddf.drop(...)``, ``y = ddf[...]``, partitioned differently by dask."""
    import dask.dataframe as dd

    frame = mixed()
    ddf = dd.read_parquet(write_dataset(frame, tmp_path / "data", n_files=6))
    X, y = ddf.drop(columns=["y"]), ddf["y"]
    assert X.optimize().npartitions != y.optimize().npartitions
    d = Discretizer("mdlp", client=cluster_client).fit(X, y)
    assert d.cut_points_ == Discretizer("mdlp").fit(frame, target="y").cut_points_


# --------------------------------------------------------------------------
# transform
# --------------------------------------------------------------------------


def test_report_names_passed_through_columns():
    frame = mixed().assign(flag=lambda f: f.b > 10, gone=np.nan, extra=1.5)
    d = Discretizer().fit(frame, target="y", exclude=["extra"])
    assert list(d.cut_points_) == ["a", "b"]
    assert d.passed_through_ == {"colour": "nominal", "const": "constant", "flag": "nominal", "gone": "all missing"}
    columns = d.report_["columns"]
    assert columns["y"] == {"status": "passed through", "reason": "target"}
    assert columns["extra"] == {"status": "passed through", "reason": "not a feature"}
    assert columns["a"]["status"] == "discretized" and columns["a"]["missing"] == int(frame.a.isna().sum())
    counts = np.asarray(columns["b"]["interval_counts"])
    assert counts.shape == (len(d.cut_points_["b"]) + 1, 3) and counts.sum() == len(frame)
    out = d.transform(frame)
    for name in ("colour", "const", "flag", "gone", "extra", "y"):
        pd.testing.assert_series_equal(out[name], frame[name])


def test_codes_follow_x_le_t_and_missing_stays_missing():
    d = Discretizer().fit(mixed(), target="y")
    t = d.cut_points_["b"]
    probe = pd.DataFrame({"a": [np.nan, -10.0, 10.0, np.nan], "b": [t[0], t[0] + 1e-9, t[-1] + 1, np.nan],
                          "colour": "red", "const": 7.0, "y": "hi"})
    out = d.transform(probe)
    assert str(out.b.dtype) == "Int32" and out.b.tolist()[:3] == [0, 1, len(t)] and out.b.isna().tolist()[3]
    assert out.a.isna().tolist() == [True, False, False, True]
    assert out.a[1] == 0 and out.a[2] == len(d.cut_points_["a"])
    labelled = d.transform(probe.set_index(pd.Index([10, 3, 7, 1])), labels=True)  # the index is kept
    names = interval_labels(t)
    assert labelled.index.tolist() == [10, 3, 7, 1]
    assert labelled.b.tolist()[:3] == [names[0], names[1], names[-1]] and labelled.b.isna().tolist()[3]


def test_interval_labels():
    assert interval_labels([]) == ["(-inf, inf)"]
    assert interval_labels([1.5, 2.0]) == ["(-inf, 1.5]", "(1.5, 2]", "(2, inf)"]
    assert interval_labels([-0.0, 0.1 + 0.2]) == ["(-inf, 0]", "(0, 0.30000000000000004]", "(0.30000000000000004, inf)"]
    assert interval_labels([1.0000001, 1.0000002]) == ["(-inf, 1.0000001]", "(1.0000001, 1.0000002]",
                                                      "(1.0000002, inf)"]
    # a label names its interval exactly: 191306.9 is above the cut 191306.71, and its label says so
    assert interval_labels([191306.71]) == ["(-inf, 191306.71]", "(191306.71, inf)"]


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=5, unique=True))
def test_interval_labels_read_back_as_the_cut_points(cuts):
    cuts = sorted(cuts)
    labels = interval_labels(cuts)
    read = [float(label[1:].split(",")[0]) for label in labels[1:]]
    assert read == [float(c) for c in cuts]


def test_numpy_input_and_fit_transform():
    frame = separate(np.random.default_rng(0))
    X = frame[["x"]].to_numpy()
    d = Discretizer()
    out = d.fit_transform(X, frame.y.to_numpy())
    assert list(out.columns) == ["x0"] and out.x0.tolist() == (frame.x > d.cut_points_["x0"][0]).astype(int).tolist()


def test_parquet_path_transform_in_memory(tmp_path):
    frame = mixed()
    path = write_dataset(frame, tmp_path / "data", n_files=3)
    d = Discretizer(scheduler="threads").fit(path, target="y")
    pd.testing.assert_frame_equal(d.transform(path), d.transform(frame))


# --------------------------------------------------------------------------
# save / load
# --------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path):
    frame = mixed()
    d = Discretizer("chimerge", significance=0.01, max_bins=128).fit(frame, target="y")
    path = tmp_path / "cuts.json"
    d.save(path)
    text = path.read_text()
    assert json.loads(text)["format"] == "dasktree.discretizer"
    assert [p.name for p in tmp_path.iterdir()] == ["cuts.json"]  # no temporary left
    back = Discretizer.load(path)
    assert back.cut_points_ == d.cut_points_ and back.passed_through_ == d.passed_through_
    assert back.get_params() == d.get_params() and back.report_ == d.report_
    pd.testing.assert_frame_equal(back.transform(frame, labels=True), d.transform(frame, labels=True))
    assert back.target_ == "y" and list(back.classes_) == ["hi", "lo", "mid"]


def test_bad_discretizer_files(tmp_path):
    bad = tmp_path / "d.json"
    bad.write_text('{"format": "dasktree.model"}')
    with pytest.raises(dasktree.DataError, match="not a dasktree discretizer"):
        Discretizer.load(bad)
    bad.write_text("{nope")
    with pytest.raises(dasktree.DataError, match="not a JSON discretizer file"):
        Discretizer.load(bad)
    d = Discretizer().fit(mixed(), target="y").to_json()
    d["cut_points"]["a"] = [2.0, 1.0]
    bad.write_text(json.dumps(d))
    with pytest.raises(dasktree.DataError, match="finite and increasing"):
        Discretizer.load(bad)
    with pytest.raises(dasktree.InputError, match="no such discretizer file"):
        Discretizer.load(tmp_path / "missing.json")


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "kmeans"}, "method must be one of .* got 'kmeans'"),
    ({"n_intervals": 4}, "n_intervals must be None for method 'mdlp'"),
    ({"method": "equal_width", "n_intervals": 0}, "n_intervals must be an integer >= 1 or None, got 0"),
    ({"method": "chimerge", "significance": 1.5}, r"significance must be a number in the open interval \(0, 1\), got 1.5"),
    ({"max_bins": 1}, r"max_bins must be an integer in 2..65535, got 1"),
    ({"method": "optimal", "max_arity": 1}, r"max_arity must be an integer in 2..64, got 1"),
    ({"method": "optimal", "n_intervals": 100}, "n_intervals must be at most 64 for method 'optimal', got 100"),
])
def test_bad_parameters_name_parameter_expectation_and_value(kwargs, message):
    with pytest.raises(dasktree.InputError, match=message):
        Discretizer(**kwargs).fit(mixed(), target="y")


def test_bad_data(tmp_path):
    frame = mixed()
    with pytest.raises(dasktree.InputError, match="target column 'label' not found"):
        Discretizer().fit(frame, target="label")
    with pytest.raises(dasktree.InputError, match="no target"):
        Discretizer().fit(frame)
    with pytest.raises(dasktree.DataError, match="column 'a' has infinite values"):
        Discretizer().fit(frame.assign(a=np.inf), target="y")
    with pytest.raises(dasktree.DataError, match="has no rows"):
        Discretizer().fit(frame.iloc[:0], target="y")
    with pytest.raises(dasktree.DataError, match="every row .* has a null target"):
        Discretizer().fit(frame.assign(y=pd.array([None] * len(frame), dtype="string")), target="y")
    with pytest.raises(dasktree.InputError, match="no such file or directory"):
        Discretizer(scheduler="threads").fit(str(tmp_path / "nope"), target="y")
    with pytest.raises(dasktree.InputError, match="not fitted"):
        Discretizer().transform(frame)
    d = Discretizer().fit(frame, target="y")
    with pytest.raises(dasktree.DataError, match="column 'b' that the discretizer was fitted on is missing"):
        d.transform(frame.drop(columns="b"))
    with pytest.raises(dasktree.InputError, match="labels must be True or False"):
        d.transform(frame, labels="yes")
    with pytest.raises(dasktree.InputError, match="out= is for dataset inputs"):
        d.transform(frame, out=str(tmp_path / "o"))


def test_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    import dasktree.discretize.transform as module  # where each part is written

    path = write_dataset(mixed(), tmp_path / "data", n_files=4)
    d = Discretizer(scheduler="threads").fit(path, target="y")
    real = module.transform_table

    def fail_on_part_2(table, cut_points, *, labels=False, where=""):
        if where.endswith("part-00002.parquet"):
            raise dasktree.DataError("disk full")
        return real(table, cut_points, labels=labels, where=where)

    monkeypatch.setattr(module, "transform_table", fail_on_part_2)
    (tmp_path / "out").mkdir()
    with pytest.raises(dasktree.DataError, match="disk full"):
        d.transform(path, out=str(tmp_path / "out" / "disc"))
    assert os.listdir(tmp_path / "out") == []
    monkeypatch.undo()
    files = d.transform(path, out=str(tmp_path / "out" / "disc"))
    assert len(files) == 4 and sorted(os.listdir(tmp_path / "out")) == ["disc"]
    with pytest.raises(dasktree.InputError, match="already exists"):
        d.transform(path, out=str(tmp_path / "out" / "disc"))


# --------------------------------------------------------------------------
# binning= on the learner
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", DISCRETIZERS)
def test_binning_tree_thresholds_are_discretizer_cut_points(method):
    frame = mixed(n=4000)
    clf = DaskTreeClassifier(max_depth=4, binning=method, max_bins=128, prune=None).fit(frame, target="y")
    cuts = Discretizer(method, max_bins=128).fit(frame, target="y").cut_points_
    thresholds = [(clf.model_.features[t.attribute], th) for t in clf.tree_.tests
                  if t is not None and t.kind == "numeric" for th in t.thresholds]
    assert thresholds, "the tree makes numeric tests"
    for name, th in thresholds:
        assert th in cuts[name], (name, th, cuts[name])
    bins = {f.name: f for f in clf.model_.spec.features}
    assert bins["a"].upper.tolist() == cuts["a"] and bins["b"].upper.tolist() == cuts["b"]
    # pass 0, the discretization pass (and the refinement of a's bins), the levels
    assert clf.report_["passes"] == clf.report_["depth"] + 2 + (method in REFINING_METHODS)
    assert clf.model_.params["binning"] == method


def test_binning_tree_is_grown_on_the_interval_codes():
    # The runner caches codes after a pass: the tree's passes must not read the fine bins' codes.
    frame = mixed(n=4000)
    clf = DaskTreeClassifier(max_depth=5, binning="mdlp", max_bins=128).fit(frame, target="y")
    assert clf.score(frame.drop(columns="y"), frame.y) == pytest.approx(clf.report_["training_accuracy"])
    counts = clf.tree_.counts
    for i, test in enumerate(clf.tree_.tests):  # children's counts add up to the parent's
        if test is not None:
            np.testing.assert_array_equal(counts[clf.tree_.children[i]].sum(axis=0), counts[i])


@pytest.mark.cluster
def test_binning_on_a_cluster_equals_in_process(tmp_path, cluster_client):
    frame = mixed(n=4000).assign(id=np.arange(4000))  # key=id: the same folds in memory and in files
    data = write_dataset(frame, tmp_path / "data", n_files=4)
    local = dasktree.fit(frame, target="y", max_depth=4, binning="mdlp", cv=3, key="id")
    for cache in (True, False):
        remote = dasktree.fit(data, target="y", max_depth=4, binning="mdlp", cv=3, key="id",
                              client=cluster_client, cache=cache)
        assert remote.dumps() == local.dumps()


def test_binning_with_cross_validation_and_validation():
    frame = mixed(n=2000)
    clf = DaskTreeClassifier(max_depth=3, binning="mdlp", cv=3).fit(frame, target="y")
    assert 0.5 < clf.cv_report_["accuracy_mean"] <= 1.0
    repeated = DaskTreeClassifier(max_depth=3, binning="mdlp", cv=2, repeats=2).fit(frame, target="y")
    assert repeated.model_.spec.to_json() == clf.model_.spec.to_json()  # the bins see every row once
    with pytest.raises(dasktree.InputError, match="binning must be one of .* got 'kmeans'"):
        DaskTreeClassifier(binning="kmeans").fit(frame, target="y")
    model = dasktree.fit(frame, target="y", max_depth=2)
    with pytest.raises(dasktree.InputError, match="bin_spec= gives the bins"):
        dasktree.fit(frame, target="y", bin_spec=model.spec, binning="mdlp")


# --------------------------------------------------------------------------
# the CLI: discretize, then a tree on the discretized data
# --------------------------------------------------------------------------


def _cli(*args):
    """The command's ``main`` in this process (:func:`~dasktree.testing.processes.run_command`)."""
    from dasktree.testing.processes import run_command

    return run_command(*args)


@pytest.mark.cluster
def test_cli_discretize_then_fit(tmp_path):
    frame = mixed(n=4000)
    data = write_dataset(frame, tmp_path / "data", n_files=3)
    out = tmp_path / "disc"
    run = _cli("discretize", data, "--target", "y", "--method", "mdlp", "--out", str(out), "--json",
               "--scheduler", "threads")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert sorted(os.listdir(out)) == ["_discretizer.json", "part-00000.parquet", "part-00001.parquet",
                                       "part-00002.parquet"]
    assert report["run"]["passes"] == 4  # pass 0, the histogram pass, the refinement, the write
    table = pq.read_table(out).to_pandas()
    assert len(table) == len(frame) and list(table.columns) == list(frame.columns)
    assert str(table.b.dtype) == "int32" and table.colour.tolist() == frame.colour.tolist()
    saved = Discretizer.load(out / "_discretizer.json")
    assert saved.cut_points_ == report["cut_points"] == Discretizer().fit(frame, target="y").cut_points_

    model = tmp_path / "model.json"
    fit = _cli("fit", str(out), "--target", "y", "--out", str(model), "--max-depth", "4", "--json",
               "--scheduler", "threads")
    assert fit.returncode == 0, fit.stderr
    assert json.loads(fit.stdout)["report"]["rows_used"] == len(frame)

    labelled = _cli("discretize", data, "--target", "y", "--labels", "--method", "chimerge", "--out",
                    str(tmp_path / "labels"), "--quiet", "--scheduler", "threads")
    assert labelled.returncode == 0, labelled.stderr
    assert "columns discretized by chimerge" in labelled.stdout
    labels = pq.read_table(tmp_path / "labels").to_pandas()
    assert set(labels.b) <= set(interval_labels(Discretizer.load(tmp_path / "labels" / "_discretizer.json")
                                                .cut_points_["b"]))

    again = _cli("discretize", data, "--target", "y", "--out", str(out), "--quiet", "--scheduler", "threads")
    assert again.returncode == 1 and "already exists" in again.stderr
    bad = _cli("discretize", data, "--target", "nope", "--out", str(tmp_path / "x"), "--quiet",
               "--scheduler", "threads")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1
    assert "target column 'nope' not found" in bad.stderr and not (tmp_path / "x").exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]
    usage = _cli("discretize", data, "--target", "y", "--out", str(tmp_path / "x"), "--method", "kmeans")
    assert usage.returncode == 2

    binned = _cli("fit", data, "--target", "y", "--out", str(tmp_path / "binned.json"), "--binning", "mdlp",
                  "--max-depth", "3", "--json", "--scheduler", "threads")
    assert binned.returncode == 0, binned.stderr
    assert json.loads(binned.stdout)["report"]["passes"] == json.loads(binned.stdout)["report"]["depth"] + 3


# --------------------------------------------------------------------------
# ChiMerge's threshold without scipy
# --------------------------------------------------------------------------


def test_chi2_quantile_matches_scipy():
    from scipy.stats import chi2

    from dasktree.discretize.stats import chi2_isf

    for df in [*range(1, 40), 99, 500]:
        for alpha in (1e-9, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.5, 0.9, 0.99):
            assert chi2_isf(alpha, df) == pytest.approx(chi2.isf(alpha, df), rel=1e-10)
    with pytest.raises(dasktree.InputError, match="alpha must be a float in the open interval"):
        chi2_isf(0.0, 3)


# --------------------------------------------------------------------------
# the cut midway: the float of the shortest decimal; a continuous target refused
# --------------------------------------------------------------------------


def test_a_cut_midway_between_two_values_is_the_shortest_decimal_of_the_nearest_floats():
    """3.3 / 2 + 3.4 / 2 is 3.3499999999999996, as near the exact midpoint as 3.35: the cut (and its
    label) is 3.35; the rows fall in the same intervals."""
    x = np.array([3.3] * 20 + [3.4] * 20)
    y = np.array([0] * 20 + [1] * 20)
    for method in ("mdlp", "optimal"):
        d = Discretizer(method).fit(pd.DataFrame({"x": x, "y": y}), target="y")
        assert d.cut_points_["x"] == [3.35], method
        assert interval_labels(d.cut_points_["x"]) == ["(-inf, 3.35]", "(3.35, inf)"]
        np.testing.assert_array_equal(d.transform(pd.DataFrame({"x": x, "y": y}))["x"].to_numpy(), y)


@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6))
def test_shortest_midpoints_stay_between_and_as_near(a, b):
    from fractions import Fraction

    from dasktree.binning.summary import midpoints
    from dasktree.discretize.refine import shortest_midpoints

    if a == b:
        return
    a, b = min(a, b), max(a, b)
    [t] = shortest_midpoints(np.array([a]), np.array([b])).tolist()
    [m] = midpoints(np.array([a, b])).tolist()
    assert t == nicest_midpoint(a, b)
    assert a <= t < b and len(repr(t)) <= len(repr(m))
    exact = (Fraction(a) + Fraction(b)) / 2
    assert abs(Fraction(t) - exact) <= abs(Fraction(m) - exact)


def _continuous(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=600)
    price = np.round(50 + 10 * x + rng.normal(size=600), 1)  # a float target of a few hundred values
    assert len(np.unique(price)) > 100
    frame = pd.DataFrame({"x": x, "price": price})
    frame.to_parquet(tmp_path / "prices.parquet")
    return frame


def test_a_continuous_target_is_refused_by_the_supervised_methods(tmp_path, capsys):
    from dasktree.cli import main
    from dasktree.errors import ParameterError

    frame = _continuous(tmp_path)
    with pytest.raises(ParameterError, match=r"target 'price' looks continuous \(double with \d+ distinct values\)"):
        Discretizer("mdlp").fit(frame, target="price")
    code = main(["discretize", str(tmp_path / "prices.parquet"), "--target", "price", "--out", str(tmp_path / "out"),
                 "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "looks continuous" in err[0] and "equal_width" in err[0]
    assert not (tmp_path / "out").exists()
    # the unsupervised methods do not read the target: they cut as asked
    d = Discretizer("equal_width", n_intervals=4).fit(frame, target="price")
    assert len(d.cut_points_["x"]) == 3
    # a float class column of few values is classes
    labelled = frame.assign(price=(frame["price"] > 50).astype(float))
    assert Discretizer("mdlp").fit(labelled, target="price").cut_points_["x"]
