"""A bagged forest's rows gathered once (:class:`dasktree.levels.small.BagRows`): its members grown one
after another from the shared rows, in chunks of members, give the members gathered as memberships and
the level-wise members, byte for byte; the root of every member is then one gathered node.

Each fit is made three ways: the runner's own (in process: the rows once), ``gathering_once(False)``
(a row's codes copied per member, as a cluster gathers) and ``small_node_rows(0)`` (level-wise).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dasktree
from dasktree.levels.small import gathering_once, moving_rows, small_node_rows
from gathering import small_nodes_of
from small_frames import small_frame


def three_ways(fit, rows=None) -> tuple:
    """(gathered once, gathered as memberships, level-wise) fits of ``fit()``; ``rows``: the gathering
    budget (None: the fit's own)."""
    with small_node_rows(rows):
        once = fit()
        with gathering_once(False):
            memberships = fit()
    with small_node_rows(0):
        level_wise = fit()
    return once, memberships, level_wise


def members_of(model) -> list:
    return [m.to_json() for m in model.members]


@st.composite
def bagged_cases(draw):
    n = draw(st.integers(40, 300))
    classify = draw(st.booleans())
    frame, y, nominal = small_frame(draw, n, classify)
    frame["label"] = y
    params = dict(
        n_estimators=draw(st.integers(9, 24)), random_state=draw(st.integers(0, 50)),
        max_features=draw(st.sampled_from([None, "sqrt", 1, 0.5])),
        min_samples_leaf=draw(st.sampled_from([1, 1, 3])), max_bins=draw(st.sampled_from([4, 16, 255])),
        bootstrap=draw(st.booleans()), max_depth=draw(st.sampled_from([None, 9, 12])),
    )
    if params["bootstrap"]:
        params["max_samples"] = draw(st.sampled_from([None, 0.5]))
    if classify:
        params["criterion"] = draw(st.sampled_from(["gini", "entropy", "gain_ratio"]))
    weight = None
    if draw(st.booleans()):
        weight = np.random.default_rng(n).integers(1, 4, size=n).astype(float)
    return frame, nominal, classify, params, weight, draw(st.sampled_from([None, 30]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bagged_cases(), st.sampled_from([None, 1, 7]))
def test_members_grown_from_rows_gathered_once_are_the_level_wise_members(case, move):
    """Each member's jobs from the shared rows (its tree walked over them, its bag's multiplicities
    times the weights as its rows' weights; their data moved as the nodes of at least ``move`` rows
    split), several members to a chunk (9 to 24 members: more than the runner's chunks), give the
    members gathered as memberships and level-wise, byte for byte: both tasks, nominal columns,
    weights, max_samples, without bootstrap, gathered at the root or deep."""
    frame, nominal, classify, params, weight, rows = case
    fit_of = dasktree.fit_forest if classify else dasktree.fit_forest_regression

    def fit():
        with moving_rows(move):
            return fit_of(frame, target="label", nominal=nominal, sample_weight=weight, **params)

    once, memberships, level_wise = three_ways(fit, rows)
    assert small_nodes_of(level_wise) == 0
    assert members_of(once) == members_of(memberships) == members_of(level_wise)
    assert once.report["leaves"] == level_wise.report["leaves"]


def agrawal_frame(rows: int) -> pd.DataFrame:
    from dasktree.datasets.agrawal import generate

    return generate(rows, function=2, perturbation=0.05, seed=3)


def test_a_bagged_forests_root_is_gathered_once_in_one_pass():
    """In process the members' root is one gathered node: its rows once (not once per member), the
    whole forest in one pass after the summary, 30 members in chunks of several; the members are the
    level-wise ones. Gathered as memberships, the same root would cost a copy of the rows per member,
    over the in-process budget here, and the first levels stay level passes."""
    frame = agrawal_frame(20_000)

    def fit():
        return dasktree.fit_forest(frame, target="class", n_estimators=30, max_depth=12, random_state=0)

    once, memberships, level_wise = three_ways(fit)
    [root] = [lv for lv in once.run["levels"] if lv["small_nodes"]]
    assert (root["level"], root["small_nodes"], once.report["passes"]) == (0, 1, 2)
    assert root["rows_gathered"] <= len(frame)
    assert memberships.report["passes"] > once.report["passes"]
    assert members_of(once) == members_of(memberships) == members_of(level_wise)


@pytest.fixture
def parquet(tmp_path):
    from dasktree.testing.data import write_dataset

    return write_dataset(agrawal_frame(3000), tmp_path / "data", n_files=3, row_group_size=400)


def test_a_streamed_forest_gathers_its_rows_once(parquet):
    """Out of core (every pass streams the pieces) the rows are gathered once too, a piece at a time:
    the cached fit's members and the level-wise ones."""
    def fit(cache):
        return dasktree.fit_forest(parquet, target="class", n_estimators=12, max_depth=10, random_state=1,
                                   cache=cache, scheduler="inprocess")

    streamed = fit(False)
    with small_node_rows(0):
        level_wise = fit(False)
    assert streamed.report["passes"] == 2
    assert members_of(streamed) == members_of(level_wise) == members_of(fit(True))


def grower_bins(widths: np.ndarray, rng) -> tuple[list, list]:
    """Each attribute's bins as a bin spec keeps them: one value per bin (``width - 1``, increasing, unevenly
    spaced, so a centred cut across empty bins depends on them) and the ``width - 2`` edges between them."""
    values = [np.cumsum(rng.uniform(0.1, 10.0, size=w - 1)) for w in widths]
    return [(v[:-1] + v[1:]) / 2 for v in values], values


@st.composite
def grower_cases(draw):
    """Jobs of rows of their own for the grower: codes, classes or fixed-point targets, weights."""
    n_jobs = draw(st.integers(1, 3))
    sizes = [draw(st.integers(0, 120)) for _ in range(n_jobs)]
    n = sum(sizes)
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    d = draw(st.integers(1, 4))
    widths = np.asarray([draw(st.sampled_from([3, 6, 18])) for _ in range(d)], dtype=np.int64)
    codes = np.stack([rng.integers(0, w, size=n) for w in widths]).astype(np.uint8)
    classify = draw(st.booleans())
    y = rng.integers(0, 3, size=n).astype(np.int32) if classify else rng.integers(-2**20, 2**20, size=n)
    weight = rng.integers(1, 4, size=n).astype(np.int64) if draw(st.booleans()) else None
    return codes, y, weight, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), widths, classify, rng


@settings(max_examples=200, deadline=None)
@given(grower_cases(), st.integers(1, 40))
def test_the_grower_moving_own_rows_grows_the_same_nodes(case, move):
    """The grower moving its own rows' data as nodes of at least ``move`` rows split (``own``) makes the
    nodes it makes reading them where they are, and reading them twice makes the same nodes: a node's
    statistics and scans do not depend on where its rows' data lie. The bins are a bin spec's (one value
    per bin): with one value fewer, a centred cut up to the last bin read past the values' end, and what
    lay there chose among cuts of equal gain (grow_jobs now refuses such bins)."""
    from dasktree.split import small_grower as kernel

    codes, y, weight, start, widths, classify, rng = case
    n = codes.shape[1]
    d = codes.shape[0]
    upper, values = grower_bins(widths, rng)
    settings_ = dict(offsets=np.concatenate([[0], np.cumsum(widths)[:-1]]), widths=widths,
                     numeric=np.ones(d, dtype=bool), upper=upper, values=values,
                     n_classes=3 if classify else 0, criterion=kernel.GINI if classify else kernel.SQUARED_ERROR,
                     max_depth=int(rng.integers(2, 9)), n_sampled=int(rng.integers(0, d + 1)),
                     job_key=rng.integers(0, 2**63, size=start.size - 1).astype(np.uint64),
                     job_salt=rng.integers(0, 2**63, size=start.size - 1).astype(np.uint64))
    task = kernel.CLASSIFY if classify else kernel.REGRESS
    depth = np.zeros(start.size - 1, dtype=np.int64)

    def grow(own):
        data = (codes.copy(), y.copy(), None if weight is None else weight.copy())
        return kernel.grow_jobs(task, *data, np.arange(n, dtype=np.int64), np.zeros(n, dtype=bool), start, depth,
                                own=own, **settings_)

    read, moved, again = grow(0), grow(move), grow(0)
    assert read.keys() == moved.keys() == again.keys()
    for name in read:
        np.testing.assert_array_equal(read[name], again[name], err_msg=name)
        np.testing.assert_array_equal(read[name], moved[name], err_msg=name)
