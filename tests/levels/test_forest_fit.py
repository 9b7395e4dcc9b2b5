"""A forest grown in the same passes: each member equals a single tree grown on its bag (the rows
weighted by their multiplicities), searches only its feature sample, and the out-of-bag estimate
equals a naive recount; the model file round-trips; bad parameters get one line."""

import numpy as np
import pyarrow as pa
import pytest

import dasktree
from dasktree.errors import ParameterError
from dasktree.levels.sampling import child_key, feature_mask, resolve_max_features
from dasktree.io.bagging import multiplicities_naive
from dasktree.io.row_hash import row_hash
from dasktree.model.forest_model import ForestModel, load_forest
from dasktree.testing import mixed_frame

FRAME = mixed_frame(1500, seed=5)
FEATURES = [c for c in FRAME.columns if c != "label"]


def _bags(frame, n, seed):
    hashes = row_hash(pa.Table.from_pandas(frame, preserve_index=False), [*FEATURES, "label"])
    return multiplicities_naive(hashes, seed, n, 1.0)


@pytest.fixture(scope="module")
def forest():
    return dasktree.fit_forest(FRAME, target="label", n_estimators=4, max_features=None, random_state=3,
                               max_depth=5, oob_score=True)


def test_each_member_is_the_tree_grown_on_its_bag(forest):
    assert sum(level["derived"] for level in forest.run["levels"]) > 0  # larger children derived, member by member
    bags = _bags(FRAME, 4, 3)
    for t, member in enumerate(forest.members):
        single = dasktree.fit(FRAME, target="label", sample_weight=bags[t].astype(np.float64), bin_spec=forest.spec,
                              max_depth=5, prune="none").tree
        assert [None if x is None else x.to_json() for x in member.tests] == \
            [None if x is None else x.to_json() for x in single.tests]
        np.testing.assert_array_equal(member.counts, single.counts)
        assert member.children == single.children


def test_node_groups_under_a_small_histogram_budget_give_the_same_members(forest):
    grouped = dasktree.fit_forest(FRAME, target="label", n_estimators=4, max_features=None, random_state=3,
                                  max_depth=5, max_histogram_mb=0.05)
    assert max(level["groups"] for level in grouped.run["levels"]) > 1
    assert [m.to_json() for m in grouped.members] == [m.to_json() for m in forest.members]


def test_each_member_searches_only_its_feature_sample():
    k = resolve_max_features("sqrt", len(FEATURES))
    model = dasktree.fit_forest(FRAME, target="label", n_estimators=6, random_state=9, max_depth=6)
    assert model.params["max_features_per_node"] == k < len(FEATURES)
    splits = 0
    for t, member in enumerate(model.members):
        keys = {0: 0}
        for i, test in enumerate(member.tests):
            for j, child in enumerate(member.children[i]):
                keys[child] = child_key(keys[i], j)
            if test is not None:
                splits += 1
                assert feature_mask(9, [t], [keys[i]], len(FEATURES), k)[test.attribute, 0]
    assert splits > 6


def test_oob_equals_a_naive_recount(forest):
    bags = _bags(FRAME, 4, 3)
    table = pa.Table.from_pandas(FRAME[FEATURES], preserve_index=False)
    votes = np.zeros((len(FRAME), len(forest.classes)))
    for t, member in enumerate(forest.members):  # each member on its own, through the single tree's prediction
        proba = dasktree.Model(spec=forest.spec, target="label", tree=member).predict_proba_table(table)
        votes += (bags[t] == 0)[:, None] * proba
    n_out = (bags == 0).sum(axis=0)
    scored = n_out > 0
    y = np.searchsorted(np.asarray(forest.classes), FRAME["label"].to_numpy())
    expected = float(np.mean(np.argmax(votes[scored], axis=1) == y[scored]))
    assert forest.report["oob_rows"] == int(scored.sum())
    assert forest.report["oob_score"] == pytest.approx(expected, abs=1e-12)
    got = forest.run["oob_decision_function"]
    np.testing.assert_allclose(got[scored], votes[scored] / n_out[scored, None])
    assert np.isnan(got[~scored]).all()


def test_the_forest_file_round_trips(forest, tmp_path):
    path = tmp_path / "forest.json"
    forest.save(path)
    again = load_forest(path)
    assert again.dumps() == forest.dumps()
    table = pa.Table.from_pandas(FRAME[FEATURES], preserve_index=False)
    np.testing.assert_array_equal(again.predict_proba_table(table), forest.predict_proba_table(table))
    mean = np.mean([dasktree.Model(spec=forest.spec, target="label", tree=m).predict_proba_table(table)
                    for m in forest.members], axis=0)
    np.testing.assert_allclose(forest.predict_proba_table(table), mean)


def test_a_tree_file_is_no_forest(tmp_path):
    from dasktree.errors import DataError

    path = tmp_path / "tree.json"
    dasktree.fit(FRAME, target="label", max_depth=2).save(path)
    with pytest.raises(DataError, match="not a dasktree forest"):
        load_forest(path)
    assert isinstance(ForestModel.from_json(dasktree.fit_forest(FRAME, target="label", n_estimators=2,
                                                                max_depth=1).to_json()), ForestModel)


@pytest.mark.parametrize("params,message", [
    (dict(n_estimators=0), "n_estimators must be"),
    (dict(max_features="half"), "max_features must be"),
    (dict(max_samples=1.5), "max_samples must be"),
    (dict(oob_score=True, bootstrap=False), "oob_score=True needs bootstrap=True"),
    (dict(cv=5), "cv is not for forests"),
    (dict(prune="cv"), "prune is not for forests"),
])
def test_bad_parameters_get_one_line(params, message):
    with pytest.raises(ParameterError, match=message):
        dasktree.fit_forest(FRAME, target="label", **params)
