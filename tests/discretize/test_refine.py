"""The refinement (dasktree.discretize.refine): its kernel against a naive twin, and exactness:
a method on refined quantile bins cuts exactly where it cuts on the raw values (and where Weka does)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree import DaskTreeClassifier, Discretizer
from dasktree.binning.codes import numeric_codes_numpy
from dasktree.binning.summary import midpoints, numeric_edges, sketch_numeric
from dasktree.discretize.jobs import check_method_params, cut_indices
from dasktree.discretize.refine import (
    REFINING_METHODS,
    Refined,
    RefinePlan,
    merge_refined,
    refine_plan,
    refine_values,
    refined_rows,
)
from dasktree.testing import write_dataset


# --------------------------------------------------------------------------
# the kernel and its naive twin
# --------------------------------------------------------------------------


def refine_values_naive(values, codes, y, weight, plan, n_classes):
    """Row by row, with a dict: the distinct values of the refined bins, the smallest value of the low bins."""
    counts, low, rows = {}, np.full(plan.refine.size, np.inf), 0
    for i, (v, c) in enumerate(zip(values, codes)):
        if c == 0:
            continue
        b = int(c) - 1
        if plan.refine[b]:
            rows += 1
            counts.setdefault(float(v) + 0.0, np.zeros(n_classes, np.int64))[y[i]] += 1 if weight is None else weight[i]
        if plan.low[b]:
            low[b] = min(low[b], float(v))
    keys = sorted(counts)
    return Refined(np.asarray(keys, dtype=np.float64),
                   np.asarray([counts[k] for k in keys], dtype=np.int64).reshape(len(keys), n_classes), low, rows)


@st.composite
def part_rows(draw):
    n = draw(st.integers(0, 60))
    n_classes = draw(st.integers(1, 3))
    pool = draw(st.lists(st.floats(-5, 5, allow_nan=False, width=16), min_size=1, max_size=12))
    values = np.asarray(draw(st.lists(st.sampled_from(pool + [np.nan, -0.0]), min_size=n, max_size=n)), dtype=np.float64)
    y = np.asarray(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)), dtype=np.int32)
    weight = None if draw(st.booleans()) else np.asarray(
        draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=np.float64)
    upper = np.unique(np.asarray(draw(st.lists(st.floats(-5, 5, allow_nan=False, width=16), max_size=5))))
    n_bins = upper.size + 1
    refine = np.asarray(draw(st.lists(st.booleans(), min_size=n_bins, max_size=n_bins)))
    low = np.asarray(draw(st.lists(st.booleans(), min_size=n_bins, max_size=n_bins)))
    return values, y, weight, RefinePlan("x", upper, refine, low), n_classes


def assert_same(a: Refined, b: Refined):
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.low, b.low)
    assert a.rows == b.rows


@settings(max_examples=200, deadline=None)
@given(part_rows(), st.integers(1, 4))
def test_refine_values_equals_its_naive_twin_and_parts_merge_in_any_grouping(case, n_parts):
    values, y, weight, plan, n_classes = case
    codes = numeric_codes_numpy(values, plan.upper, np.int32)
    whole = refine_values(values, codes, y, weight, plan, n_classes)
    assert_same(whole, refine_values_naive(values, codes, y, weight, plan, n_classes))
    cuts = np.linspace(0, values.size, n_parts + 1).astype(int)
    pieces = [refine_values(values[a:b], codes[a:b], y[a:b], None if weight is None else weight[a:b], plan, n_classes)
              for a, b in zip(cuts[:-1], cuts[1:])]
    assert_same(merge_refined(pieces), whole)
    assert_same(merge_refined(pieces[::-1]), whole)


# --------------------------------------------------------------------------
# exactness: refined quantile bins give the cuts of exact bins
# --------------------------------------------------------------------------



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

def exact_cut_points(x, y, n_classes, method, params):
    distinct, inverse = np.unique(x, return_inverse=True)
    counts = np.bincount(inverse * n_classes + y, minlength=distinct.size * n_classes).reshape(-1, n_classes)
    cuts = cut_indices(counts, distinct, method, params)
    return np.array([nicest_midpoint(float(distinct[c]), float(distinct[c + 1])) for c in cuts])


def refined_cut_points(x, y, n_classes, method, params, max_bins):
    """Pass 0's quantile bins, the histogram, the refinement of all rows as one part, the method."""
    upper, high, exact = numeric_edges(sketch_numeric(x, max_bins), max_bins)
    codes = numeric_codes_numpy(x, upper, np.int32)
    counts = np.bincount((codes - 1) * n_classes + y, minlength=high.size * n_classes).reshape(-1, n_classes)
    if exact:  # the discretizer's exact bins: cut midway between the values (jobs.cut_attribute)
        cuts = cut_indices(counts, high, method, params)
        return np.array([nicest_midpoint(float(high[c]), float(high[c + 1])) for c in cuts]), None
    plan = refine_plan("x", counts, upper)
    if plan is None:
        return upper[cut_indices(counts, high, method, params)], None
    rows = refined_rows(counts, high, plan, refine_values(x, codes, y, None, plan, n_classes))
    return rows.cut_points(cut_indices(rows.counts, None, method, params)), plan


@st.composite
def labelled_column(draw):
    n = draw(st.integers(2, 400))
    n_classes = draw(st.integers(2, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["continuous", "ties", "separable"]))
    if kind == "ties":
        x = rng.integers(0, draw(st.integers(2, 200)), n).astype(np.float64) / 4
    else:
        x = rng.normal(size=n)
    noise = draw(st.floats(0.0, 1.0))
    score = x + noise * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int32)
    if kind == "separable":
        y = (x > np.median(x)).astype(np.int32)
    return x, y, n_classes


@settings(max_examples=120, deadline=None)
@given(labelled_column(), st.sampled_from(REFINING_METHODS), st.sampled_from([2, 3, 8, 32]))
def test_refined_quantile_bins_give_the_exact_cuts(case, method, max_bins):
    x, y, n_classes = case
    params = check_method_params(method)
    exact = exact_cut_points(x, y, n_classes, method, params)
    refined, _ = refined_cut_points(x, y, n_classes, method, params, max_bins)
    np.testing.assert_array_equal(refined, exact)


def test_uniform_bins_are_not_refined_and_their_smallest_values_place_the_cuts():
    x = np.arange(1000, dtype=np.float64)
    y = (x >= 500).astype(np.int32) ^ (x == 700)  # one row of the other class inside the upper run
    refined, plan = refined_cut_points(x, y, 2, "mdlp", {}, 16)
    assert plan is not None and 0 < plan.refine.sum() <= 2  # only the bin holding row 700 (and no uniform bin)
    np.testing.assert_array_equal(refined, exact_cut_points(x, y, 2, "mdlp", {}))
    assert 499.5 in refined.tolist()


# --------------------------------------------------------------------------
# end to end: the Discretizer and the learner's binning=
# --------------------------------------------------------------------------


def frame(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    u = rng.random(n)
    k = rng.integers(0, 3000, n).astype(np.float64) / 8
    score = x + 2 * (u > 0.7) + 0.6 * rng.normal(size=n)
    y = np.where(score > 1.0, "hi", np.where(score > -0.3, "mid", "lo"))
    out = pd.DataFrame({"x": x, "u": u, "k": k, "y": y})
    out.loc[rng.random(n) < 0.03, "x"] = np.nan
    return out


@pytest.mark.parametrize("method", REFINING_METHODS)
def test_discretizer_at_small_max_bins_equals_exact_bins_and_reports_the_refinement(method):
    data = frame()
    small = Discretizer(method, max_bins=16).fit(data, target="y")
    exact = Discretizer(method, max_bins=65535).fit(data, target="y")
    assert small.cut_points_ == exact.cut_points_
    assert any(small.cut_points_.values())
    refined = small.report_["refined"]
    assert refined["columns"] == ["x", "u", "k"] and small.report_["passes"] == 3
    assert 0 < refined["values"] <= refined["rows"] <= 3 * len(data)  # summed over the columns
    assert small.report_["columns"]["x"]["refined"]["rows"] <= len(data) - data.x.isna().sum()
    assert exact.report_["refined"]["columns"] == [] and exact.report_["passes"] == 2


def test_chimerge_is_not_refined():
    d = Discretizer("chimerge", max_bins=16).fit(frame(), target="y")
    assert d.report_["refined"]["columns"] == [] and d.report_["passes"] == 2


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_binning_mdlp_tree_uses_the_exact_cuts_with_row_weights_too(class_weight):
    data = frame(3000, seed=1)
    coarse = DaskTreeClassifier(max_depth=3, binning="mdlp", max_bins=16, class_weight=class_weight).fit(
        data, target="y")
    fine = DaskTreeClassifier(max_depth=3, binning="mdlp", max_bins=4096, class_weight=class_weight).fit(
        data, target="y")
    for a, b in zip(coarse.model_.spec.features, fine.model_.spec.features):
        assert a.upper.tolist() == b.upper.tolist(), a.name
    if class_weight is None:
        cuts = Discretizer("mdlp").fit(data, target="y").cut_points_
        assert {f.name: f.upper.tolist() for f in coarse.model_.spec.features} == cuts
    assert coarse.report_["passes"] == fine.report_["passes"] + 1


@pytest.mark.cluster
def test_refinement_on_a_cluster_equals_in_process(tmp_path, cluster_client):
    data = frame()
    path = write_dataset(data, tmp_path / "d", n_files=5, row_group_size=500)
    local = Discretizer("mdlp", max_bins=16).fit(data, target="y")
    remote = Discretizer("mdlp", max_bins=16, client=cluster_client).fit(path, target="y")
    assert remote.cut_points_ == local.cut_points_
    assert remote.report_["refined"] == local.report_["refined"] and remote.report_["passes"] == 3
    import dask.dataframe as dd

    lazy = Discretizer("mdlp", max_bins=16, client=cluster_client).fit(dd.from_pandas(data, npartitions=4),
                                                                     target="y")
    assert lazy.cut_points_ == local.cut_points_ and lazy.report_["refined"] == local.report_["refined"]


# --------------------------------------------------------------------------
# Weka's cut points
# --------------------------------------------------------------------------


def _weka():
    from benchmarks import weka_mdlp

    why = weka_mdlp.missing()
    if why:
        pytest.skip(why)
    return weka_mdlp


@pytest.mark.parametrize("name", ["wide", "segment"])
def test_the_same_cut_points_as_weka_at_small_max_bins(name):
    weka_mdlp = _weka()
    if name == "wide":
        data = frame(4000, seed=3)
        X, y = data.drop(columns="y"), data.y.to_numpy()
    else:
        from benchmarks import public_data

        loaded = public_data.load(public_data.by_name("segment"))
        X = loaded.X.drop(columns=loaded.nominal)
        y = loaded.y
    reference = weka_mdlp.weka_cuts(X, y)
    ours = Discretizer("mdlp", max_bins=32).fit(X.assign(_class=y), target="_class").cut_points_
    assert ours.keys() <= reference.keys()
    assert any(len(ours[c]) > 1 for c in ours)
    for column in ours:
        assert weka_mdlp.agree(ours[column], reference[column]), (column, ours[column], reference[column])
