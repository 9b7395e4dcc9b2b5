"""Permutation importances on a forest's out-of-bag rows: equal to a naive twin (each member's own
prediction of the shuffled rows, raw values shuffled before encoding), the baseline the fit's
out-of-bag score, the same whatever the row order or the files, kept in the model file and shown."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from dasktree import DaskForestClassifier, DaskForestRegressor
from dasktree.cli import main
from dasktree.errors import InputError, ParameterError
from dasktree.forest_estimator import load_forest_estimator
from dasktree.io.bagging import multiplicities_naive
from dasktree.io.sources import frame_to_table
from dasktree.testing import mixed_frame, write_dataset
from dasktree.testing.data import regression_frame

FRAME = mixed_frame(900, seed=4)
RFRAME = regression_frame(800, seed=5)


def naive_importances(forest, table: pa.Table, bag, n_repeats: int, random_state: int) -> np.ndarray:
    """Each row's out-of-bag members from the numpy bag draw; each member's prediction of the rows
    from its own tree (:meth:`member_model`); rows in the canonical order by a Python sort; a
    feature's raw values shuffled, then encoded again."""
    from dasktree.binning.encode import class_codes, encode_features

    classes = forest.task.predicts_classes
    hashes = bag.row_hashes(table)
    left_out = multiplicities_naive(hashes, bag.seed, bag.n_members, bag.mean) == 0
    column = table.column(forest.target)
    y = class_codes(column, forest.spec.classes) if classes else \
        np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    valid = y >= 0 if classes else np.isfinite(y)
    keep = np.flatnonzero(valid & left_out.any(axis=0))
    codes = encode_features(table, forest.spec)
    order = sorted(keep, key=lambda i: (int(hashes[i]), *codes[:, i].tolist(), y[i]))
    table, y, left_out = table.take(pa.array(order)), y[order], left_out[:, order]

    def score(t: pa.Table) -> float:
        members = [forest.member_model(m) for m in range(forest.n_members)]
        if classes:
            outputs = sum(left_out[m][:, None] * members[m].predict_proba_table(t) for m in range(len(members)))
            return float(np.mean(np.argmax(outputs / left_out.sum(axis=0)[:, None], axis=1) == y))
        outputs = sum(left_out[m] * members[m].predict_values(t) for m in range(len(members))) / left_out.sum(axis=0)
        return 1.0 - float(np.sum((y - outputs) ** 2)) / float(np.sum((y - y.mean()) ** 2))

    baseline = score(table)
    out = np.zeros((len(forest.features), n_repeats))
    for r in range(n_repeats):
        p = np.random.default_rng([random_state, r]).permutation(len(order))
        for j, name in enumerate(forest.features):
            shuffled = table.set_column(table.schema.get_field_index(name), name, table.column(name).take(pa.array(p)))
            out[j, r] = baseline - score(shuffled)
    return out


def _bag(est, table_rows: int, positional: bool):
    from dasktree.io.bagging import BagSpec
    from dasktree.params.forest import bag_mean

    model = est.model_
    return BagSpec(model.params["n_estimators"], model.params["random_state"],
                   bag_mean(model.params["max_samples"], table_rows), True,
                   content=(*model.features, model.target), positional=positional)


def test_the_importances_are_the_naive_twins_and_the_baseline_the_oob_score():
    X, y = FRAME.drop(columns=["label"]), FRAME["label"]
    est = DaskForestClassifier(n_estimators=6, max_depth=5, oob_score=True, random_state=2).fit(X, y)
    result = est.oob_permutation_importance(X, y, n_repeats=3, random_state=9)
    assert result.baseline == est.oob_score_
    assert result.importances.shape == (4, 3)
    table = frame_to_table(X.assign(**{est.model_.target: y}))
    expected = naive_importances(est.model_, table, _bag(est, len(X), True), 3, 9)
    np.testing.assert_allclose(result.importances, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.importances_mean, result.importances.mean(axis=1))
    assert result.importances_mean[list(X.columns).index("x")] > 0.05  # the label follows x above all


def test_a_regression_forests_importances_are_the_naive_twins_and_its_baseline_the_oob_r2():
    X, y = RFRAME.drop(columns=["y"]), RFRAME["y"]
    est = DaskForestRegressor(n_estimators=5, max_depth=5, oob_score=True, random_state=1).fit(X, y)
    result = est.oob_permutation_importance(X, y, n_repeats=2, random_state=3)
    assert result.baseline == pytest.approx(est.oob_score_, rel=1e-12)
    table = frame_to_table(X.assign(**{est.model_.target: y.to_numpy()}))
    expected = naive_importances(est.model_, table, _bag(est, len(X), True), 2, 3)
    np.testing.assert_allclose(result.importances, expected, rtol=1e-9, atol=1e-12)


def test_the_same_importances_whatever_the_row_order_the_files_or_the_input_form(tmp_path):
    params = dict(n_estimators=5, max_depth=4, oob_score=True, random_state=6)
    X, y = FRAME.drop(columns=["label"]), FRAME["label"]
    first = DaskForestClassifier(**params).fit(X, y).oob_permutation_importance(X, y, n_repeats=2)
    shuffled = FRAME.sample(frac=1.0, random_state=1).reset_index(drop=True)
    Xs, ys = shuffled.drop(columns=["label"]), shuffled["label"]
    again = DaskForestClassifier(**params).fit(Xs, ys).oob_permutation_importance(Xs, ys, n_repeats=2)
    np.testing.assert_array_equal(again.importances, first.importances)
    one = write_dataset(FRAME, tmp_path / "one", n_files=1)
    seven = write_dataset(FRAME, tmp_path / "seven", n_files=7)
    by_files = []
    for data in (one, seven):
        est = DaskForestClassifier(**params).fit(data, target="label")
        by_files.append(est.oob_permutation_importance(data, target="label", n_repeats=2).importances)
    np.testing.assert_array_equal(by_files[0], by_files[1])
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(FRAME, npartitions=3)
    est = DaskForestClassifier(**params).fit(frame, target="label")
    np.testing.assert_array_equal(est.oob_permutation_importance(frame, target="label", n_repeats=2).importances,
                                  by_files[0])


def test_the_importances_are_kept_in_the_file_and_shown(tmp_path, capsys):
    X, y = FRAME.drop(columns=["label"]), FRAME["label"]
    est = DaskForestClassifier(n_estimators=4, max_depth=4, oob_score=True, random_state=2).fit(X, y)
    result = est.oob_permutation_importance(X, y, n_repeats=2, random_state=1)
    est.save(tmp_path / "forest.json")
    kept = load_forest_estimator(tmp_path / "forest.json").report_["oob_permutation_importance"]
    assert kept["importances"] == result.importances.tolist() and kept["random_state"] == 1
    assert main(["show", str(tmp_path / "forest.json"), "--format", "report"]) == 0
    out = capsys.readouterr().out
    assert "permutation importances on the out-of-bag rows (accuracy lost" in out
    for i, name in enumerate(est.feature_names_in_):
        assert f"  {name:<24} {result.importances_mean[i]:>9.4f} {result.importances_std[i]:>9.4f}" in out
    assert main(["show", str(tmp_path / "forest.json")]) == 0
    assert "by permutation on the out-of-bag rows (accuracy lost)" in capsys.readouterr().out


def test_other_rows_bad_repeats_and_no_bags_are_refused():
    X, y = FRAME.drop(columns=["label"]), FRAME["label"]
    est = DaskForestClassifier(n_estimators=4, max_depth=3, oob_score=True, random_state=2).fit(X, y)
    with pytest.raises(InputError, match="the forest was fit on 900"):
        est.oob_permutation_importance(X.iloc[:500], y.iloc[:500])
    other = mixed_frame(900, seed=99)
    with pytest.raises(InputError, match="give the rows the forest was fit on"):
        est.oob_permutation_importance(other.drop(columns=["label"]), other["label"])
    with pytest.raises(ParameterError, match="n_repeats must be an int >= 1"):
        est.oob_permutation_importance(X, y, n_repeats=0)
    plain = DaskForestClassifier(n_estimators=3, max_depth=3, bootstrap=False).fit(X, y)
    with pytest.raises(ParameterError, match="without bootstrap"):
        plain.oob_permutation_importance(X, y)


def test_unfitted_is_not_fitted_error():
    from dasktree.fitted import NotFittedError

    with pytest.raises(NotFittedError):
        DaskForestClassifier().oob_permutation_importance(pd.DataFrame({"a": [1.0]}), [0])


def test_fit_oob_permutation_keeps_the_estimators_importances_in_the_file(tmp_path, capsys):
    from dasktree.model.forest_model import load_forest

    data = write_dataset(FRAME, tmp_path / "data", n_files=2)
    out = tmp_path / "forest.json"
    assert main(["fit", data, "--target", "label", "--trees", "4", "--max-depth", "4", "--oob",
                 "--oob-permutation", "2", "--random-state", "5", "--out", str(out)]) == 0
    assert "by permutation 'x' matters most (accuracy" in "".join(capsys.readouterr())
    kept = load_forest(out).report["oob_permutation_importance"]
    est = DaskForestClassifier(n_estimators=4, max_depth=4, oob_score=True, random_state=5).fit(data, target="label")
    expected = est.oob_permutation_importance(data, target="label", n_repeats=2, random_state=5)
    assert kept["importances"] == expected.importances.tolist()
    assert main(["fit", data, "--target", "label", "--trees", "4", "--no-bootstrap", "--oob-permutation", "2",
                 "--out", str(tmp_path / "no.json"), "--quiet"]) == 2
    assert "no row is out of a member's bag" in capsys.readouterr().err
