"""A regression forest grown in the same passes: each member equals the regression tree grown on its
bag (the rows weighted by their multiplicities), searches only its feature sample, the out-of-bag
R^2 equals a naive recount, the prediction is the members' mean leaf mean, the file round-trips,
the same forest from one file, seven files or pandas."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.errors import ParameterError
from dasktree.levels.sampling import child_key, feature_mask
from dasktree.forest_fit import fit_forest_regression
from dasktree.regress.forest import exact_sum
from dasktree.io.bagging import multiplicities_naive
from dasktree.io.row_hash import row_hash
from dasktree.model.forest_model import load_forest
from dasktree import fit_regression

N = 1200
_rng = np.random.default_rng(0)
FRAME = pd.DataFrame({"a": _rng.integers(0, 40, N).astype(float), "b": _rng.integers(0, 30, N).astype(float),
                      "c": _rng.choice(list("xyzw"), N), "d": _rng.normal(size=N).round(1)})
FRAME["y"] = FRAME.a * 0.5 + np.sin(FRAME.b) + (FRAME.c == "x") * 3 + _rng.normal(0, 0.3, N)
FEATURES = ["a", "b", "c", "d"]


def _bags(n, seed):
    return multiplicities_naive(row_hash(pa.Table.from_pandas(FRAME, preserve_index=False), [*FEATURES, "y"]),
                                seed, n, 1.0)


@pytest.fixture(scope="module")
def forest():
    return fit_forest_regression(FRAME, target="y", n_estimators=3, random_state=3, max_depth=4, oob_score=True)


def _tests(tree):
    return [None if x is None else x.to_json() for x in tree.tests]


def test_each_member_is_the_regression_tree_grown_on_its_bag(forest):
    assert forest.params["max_features_per_node"] == len(FEATURES)  # default 1.0, as RandomForestRegressor
    bags = _bags(3, 3)
    for t, member in enumerate(forest.members):
        single = fit_regression(FRAME, target="y", sample_weight=bags[t].astype(np.float64), max_depth=4,
                                prune="none").tree
        assert _tests(member) == _tests(single)
        np.testing.assert_array_equal(member.counts, single.counts)
        assert member.children == single.children


def test_each_member_searches_only_its_feature_sample():
    model = fit_forest_regression(FRAME, target="y", n_estimators=5, random_state=9, max_depth=5, max_features=2)
    assert model.params["max_features_per_node"] == 2
    splits = 0
    for t, member in enumerate(model.members):
        keys = {0: 0}
        for i, test in enumerate(member.tests):
            for j, child in enumerate(member.children[i]):
                keys[child] = child_key(keys[i], j)
            if test is not None:
                splits += 1
                assert feature_mask(9, [t], [keys[i]], len(FEATURES), 2)[test.attribute, 0]
    assert splits > 5


def test_prediction_is_the_members_mean_and_oob_r2_a_naive_recount(forest):
    bags = _bags(3, 3)
    table = pa.Table.from_pandas(FRAME[FEATURES], preserve_index=False)
    each = np.stack([dasktree.Model(spec=forest.spec, target="y", tree=m, task=forest.task).predict_values(table)
                     for m in forest.members])
    np.testing.assert_allclose(forest.predict_values(table), each.mean(axis=0), rtol=1e-12)
    out = bags == 0
    n_out = out.sum(axis=0)
    scored = n_out > 0
    oob = (out * each).sum(axis=0)[scored] / n_out[scored]
    y = FRAME["y"].to_numpy()[scored]
    expected = 1 - ((y - oob) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert forest.report["oob_rows"] == int(scored.sum())
    assert forest.report["oob_score"] == pytest.approx(expected, abs=1e-9)
    got = forest.run["oob_prediction"]
    np.testing.assert_allclose(got[scored], oob, rtol=1e-12)
    assert np.isnan(got[~scored]).all()


def test_importances_average_the_members(forest):
    got = forest.feature_importances()
    assert got.sum() == pytest.approx(1.0) and got[0] > 0.5  # "a" carries most of the signal


def test_the_forest_file_round_trips(forest, tmp_path):
    path = tmp_path / "forest.json"
    forest.save(path)
    again = load_forest(path)
    assert again.task is forest.task
    assert again.dumps() == forest.dumps()
    table = pa.Table.from_pandas(FRAME[FEATURES], preserve_index=False)
    np.testing.assert_array_equal(again.predict_values(table), forest.predict_values(table))


def test_same_forest_from_one_file_seven_files_and_pandas(forest, tmp_path):
    table = pa.Table.from_pandas(FRAME, preserve_index=False)
    pq.write_table(table, tmp_path / "one.parquet")
    many = tmp_path / "many"
    many.mkdir()
    for i, lo in enumerate(range(0, N, -(-N // 7))):
        pq.write_table(table.slice(lo, -(-N // 7)), many / f"p{i}.parquet")
    kwargs = dict(target="y", n_estimators=3, random_state=3, max_depth=4)
    base = fit_forest_regression(FRAME, **kwargs).dumps()
    assert fit_forest_regression(str(tmp_path / "one.parquet"), **kwargs).dumps() == base
    assert fit_forest_regression(str(many), part_rows=150, **kwargs).dumps() == base


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e300, max_value=1e300),
                max_size=40), st.integers(1, 5))
def test_exact_sums_add_in_any_grouping(values, pieces):
    from fractions import Fraction

    x = np.asarray(values, dtype=np.float64)
    whole = exact_sum(x)
    assert Fraction(whole, 1 << 1074) == sum((Fraction(v) for v in values), Fraction(0))
    assert sum(exact_sum(p) for p in np.array_split(x, pieces)) == whole


@pytest.mark.parametrize("params, message", [
    (dict(cv=5), "cv is not for forests"),
    (dict(max_leaf_nodes=5), "max_leaf_nodes is not for forests"),
    (dict(oob_score=True, bootstrap=False), "needs bootstrap=True"),
    (dict(criterion="gini"), "criterion"),
])
def test_bad_parameters_get_one_line(params, message):
    with pytest.raises(ParameterError, match=message) as info:
        fit_forest_regression(FRAME, target="y", n_estimators=2, **params)
    assert "\n" not in str(info.value)
