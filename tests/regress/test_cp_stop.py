"""A regression fit pruned at cp grows only until that pruning must cut (:mod:`dasktree.regress.grow`).

The pruned tree must be the one growing on gives (the grown tree stops early by design): each fit is
made pruned at cp, in the level passes and with small nodes grown in memory, and compared with the
same data grown whole (``prune="none"``) and pruned at the same alpha. Hypothesis draws small data
with ties, missing values, a category, weights, and the parameters that change what a node decides.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.cli import main
from dasktree.errors import ParameterError
from dasktree.levels.small import small_node_rows
from dasktree.model.model import load
from dasktree.regress.fitting import CP_ROWS
from dasktree.regress.reprune import reprune
from dasktree.split.api import small_grower as kernel
from dasktree.testing.data import regression_frame
from small_frames import small_frame


def _grown_bytes(model) -> str:
    return json.dumps({"bins": model.spec.to_json(), "trees": [model.grown_tree.to_json()]
                       + [t.to_json() for t in model.fold_trees]}, sort_keys=True)


def _check_against_whole(stopped, whole, weighted: bool = False) -> None:
    """``stopped`` (pruned at cp, grown until it must cut) against ``whole`` (grown on, prune="none").
    ``weighted``: row weights, whose root count (cp's rows) is known only once counted: grown whole."""
    if weighted:
        assert "grown_to_alpha" not in stopped.report["prune"] and "cp" not in stopped.grown_tree.leaf_reason
        assert stopped.tree.to_json() == reprune(whole, stopped.report["prune"]["alpha"]).tree.to_json()
        return
    floor = stopped.report["prune"]["grown_to_alpha"]
    assert floor == stopped.report["prune"]["alpha"]
    # cp is CP_ROWS over the tree's rows: a split must lower the error by CP_ROWS rows' worth of the root's MSE
    assert stopped.report["prune"]["cp"] == CP_ROWS / stopped.tree.counts[0, 0]
    want = reprune(whole, floor)
    assert stopped.tree.to_json() == want.tree.to_json()  # every byte of the pruned tree
    assert stopped.grown_tree.n_nodes <= whole.grown_tree.n_nodes
    assert "cp" not in stopped.tree.leaf_reason
    # the cp table: from the floor on, the whole tree's rows (as floats from other sums: to 1e-9)
    table = stopped.report["prune"]["cp_table"]
    assert table[0]["alpha"] == floor and table[0]["leaves"] == stopped.tree.n_leaves
    rows = [r for r in whole.report["prune"]["cp_table"] if r["alpha"] > floor * (1 + 1e-9)]
    assert [r["leaves"] for r in table[1:]] == [r["leaves"] for r in rows]
    for got, row in zip(table[1:], rows):
        for key in ("alpha", "train_mse", "cv_error", "cv_se"):
            if row[key] is None:
                assert got[key] is None
            else:
                assert got[key] == pytest.approx(row[key], rel=1e-9, abs=1e-12)


@st.composite
def cases(draw):
    n = draw(st.integers(10, 300))
    frame, y, nominal = small_frame(draw, n, classify=False)
    params = dict(
        cv=draw(st.sampled_from([None, None, 3])),
        criterion=draw(st.sampled_from(["squared_error", "friedman_mse"])),
        min_samples_leaf=draw(st.sampled_from([1, 1, 3])),
        min_samples_split=draw(st.sampled_from([2, 5])),
        max_depth=draw(st.sampled_from([None, None, 4])),
        max_bins=draw(st.sampled_from([4, 16, 255])),
    )
    weight = np.random.default_rng(n).integers(1, 4, size=n) if draw(st.booleans()) else None
    return frame, y, nominal, params, weight, draw(st.sampled_from([None, 7, 40]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_pruned_at_cp_as_grown_whole_and_pruned(case):
    frame, y, nominal, params, weight, rows = case

    def fit(prune):
        return dasktree.DaskTreeRegressor(prune=prune, keep_fold_trees=True, **params).fit(
            frame, y, sample_weight=weight, nominal=nominal).model_

    with small_node_rows(rows):
        gathered = fit("cp")
    with small_node_rows(0):
        level_wise = fit("cp")
        whole = fit("none")
    assert _grown_bytes(gathered) == _grown_bytes(level_wise)  # the same stop in memory and in the passes
    _check_against_whole(level_wise, whole, weight is not None)
    _check_against_whole(gathered, whole, weight is not None)


def test_the_default_stops_and_prunes_as_grown_whole():
    """The suite's regression frame, default parameters (prune="auto": cp without cv): the grown tree
    is a fraction of the whole one, in fewer passes, and the pruned tree the same."""
    frame = regression_frame(3000)
    X, y = frame.drop(columns="y"), frame["y"]
    with small_node_rows(0):
        stopped = dasktree.DaskTreeRegressor().fit(X, y).model_
        whole = dasktree.DaskTreeRegressor(prune="none").fit(X, y).model_
    _check_against_whole(stopped, whole)
    assert stopped.grown_tree.n_nodes * 20 < whole.grown_tree.n_nodes
    assert stopped.report["passes"] < whole.report["passes"]
    assert "cp" in stopped.grown_tree.leaf_reason
    # growing on is asked for: max_leaf_nodes chooses best first among the whole tree's splits
    capped = dasktree.DaskTreeRegressor(max_leaf_nodes=6).fit(X, y).model_
    assert "grown_to_alpha" not in capped.report["prune"] and "cp" not in capped.grown_tree.leaf_reason
    # nor with monotonic_cst: pruning reads the clipped values, which the stop's bound does not bound
    constraint = [1] + [0] * (X.shape[1] - 1)
    bounded = dasktree.DaskTreeRegressor(monotonic_cst=constraint).fit(X, y).model_
    bounded_whole = dasktree.DaskTreeRegressor(monotonic_cst=constraint, prune="none").fit(X, y).model_
    assert "grown_to_alpha" not in bounded.report["prune"] and "cp" not in bounded.grown_tree.leaf_reason
    assert bounded.grown_tree.n_nodes == bounded_whole.grown_tree.n_nodes


def test_the_stop_is_below_cp_times_the_roots_error():
    """The compiled bound and limit, against exact integers: ``sse_bound`` is at least the exact sum of
    squared errors, ``cp_limit`` at most ``cp`` times it."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        q = rng.integers(0, 2**30, size=int(rng.integers(1, 50)))
        w = rng.integers(1, 4, size=q.size)
        n, s = int(w.sum()), int((w * q).sum())
        hi, lo = q >> 15, q & ((1 << 15) - 1)
        pieces = [int((w * hi * hi).sum()), int((w * hi * lo).sum()), int((w * lo * lo).sum())]
        exact_q = (pieces[0] << 30) + (pieces[1] << 16) + pieces[2]
        assert exact_q == int((w * q.astype(object) ** 2).sum())
        sse_n = exact_q * n - s * s  # the exact sum of squared errors, times n
        assert kernel.sse_bound(n, s, *pieces) * n >= sse_n * (1 - 1e-15)
        limit = kernel.cp_limit(n, s, *pieces, 0.01)
        assert limit * n <= 0.01 * sse_n and (sse_n == 0 or limit > 0)


@pytest.fixture(scope="module")
def stopped_model():
    frame = regression_frame(1500)
    return dasktree.DaskTreeRegressor().fit(frame.drop(columns="y"), frame["y"]).model_


def test_reprune_to_a_smaller_alpha_is_refused_and_to_a_larger_one_works(stopped_model):
    floor = stopped_model.report["prune"]["grown_to_alpha"]
    with pytest.raises(ParameterError, match="prunes to that alpha or a larger one, not to alpha"):
        reprune(stopped_model, floor / 2)
    with pytest.raises(ParameterError, match="not to no pruning"):
        reprune(stopped_model, mode="none")
    larger = stopped_model.report["prune"]["cp_table"][-2]["alpha"]
    again = reprune(stopped_model, larger)
    assert again.tree.n_leaves < stopped_model.tree.n_leaves and again.report["prune"]["grown_to_alpha"] == floor
    assert reprune(stopped_model, floor).tree.to_json() == stopped_model.tree.to_json()


def test_show_and_the_cli_say_where_growth_stopped(stopped_model, tmp_path, capsys):
    path = tmp_path / "m.json"
    stopped_model.save(path)
    assert main(["show", str(path), "--format", "cp"]) == 0
    out = capsys.readouterr().out
    assert "grown only until pruning at alpha" in out
    assert main(["show", str(path), "--format", "report"]) == 0
    assert "grown only until pruning at alpha" in capsys.readouterr().out
    before = path.read_bytes()
    assert main(["prune", str(path), "--mode", "none", "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "prunes to that alpha or a larger one" in err
    assert path.read_bytes() == before and not (tmp_path / "p.json").exists()
    assert load(path).report["prune"]["grown_to_alpha"] == stopped_model.report["prune"]["grown_to_alpha"]
