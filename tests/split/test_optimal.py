"""Optimal multi-way numeric splits: Bin-Opt, Block-Opt, Block-Opt-P, one-pass TSE.

The reference is a naive enumeration of every partition of the non-empty bins
into k intervals, costed with dasktree.split.criteria.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split import compiled as C
from dasktree.split import optimal as O
from dasktree.split import optimal_kernels as K
from dasktree.split.blocks import bins_to_blocks
from dasktree.split.criteria import weighted_impurity
from dasktree.split.optimal import (
    METHODS,
    OptimalPartitions,
    bin_opt,
    block_opt,
    block_opt_p,
    optimal_partitions,
    tse_opt,
)
from dasktree.testing import run_without_numba

DP_METHODS = {"bin_opt": bin_opt, "block_opt": block_opt, "block_opt_p": block_opt_p}
INF = math.inf


# ---------------------------------------------------------------------------
# naive reference
# ---------------------------------------------------------------------------


def interval_cost(counts: np.ndarray, criterion: str) -> float:
    if criterion == "tse":
        return float(counts.sum() - counts.max())
    return float(weighted_impurity(counts, criterion))


def cost_of_cuts(counts: np.ndarray, cuts, criterion: str) -> float:
    """Cost of the split at ``cuts`` (cut j: bins <= j go left); every interval non-empty."""
    edges = [-1, *cuts, counts.shape[0] - 1]
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        part = counts[a + 1 : b + 1].sum(axis=0)
        assert part.sum() > 0, f"empty interval in cuts {cuts}"
        total += interval_cost(part, criterion)
    return total


def brute_force(counts: np.ndarray, max_arity: int, criterion: str) -> list[float]:
    """Optimal cost of every k = 0 .. max_arity by enumerating all partitions."""
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    v = nonempty.size
    # W[a][b]: cost of the interval of non-empty bins a .. b-1 (and the empty bins inside)
    W = [[0.0] * (v + 1) for _ in range(v + 1)]
    for a in range(v):
        for b in range(a + 1, v + 1):
            part = counts[nonempty[a] : nonempty[b - 1] + 1].sum(axis=0)
            W[a][b] = interval_cost(part, criterion)
    out = [INF] * (max_arity + 1)
    out[1] = interval_cost(counts.sum(axis=0), criterion)  # no split (0 for no example)
    for k in range(2, min(max_arity, v) + 1):
        best = INF
        for combo in itertools.combinations(range(1, v), k - 1):
            bounds = (0, *combo, v)
            total = 0.0
            for a, b in zip(bounds[:-1], bounds[1:]):
                total += W[a][b]
            best = min(best, total)
        out[k] = best
    return out


def close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


# ---------------------------------------------------------------------------
# random histograms: up to 12 bins (some empty), up to 4 classes
# ---------------------------------------------------------------------------


@st.composite
def histograms(draw, max_bins: int = 12, max_classes: int = 4):
    n_classes = draw(st.integers(1, max_classes))
    n_bins = draw(st.integers(1, max_bins))
    rows = []
    for _ in range(n_bins):
        kind = draw(st.sampled_from(("empty", "uniform", "uniform", "mixed", "mixed")))
        row = [0] * n_classes
        if kind == "uniform":
            row[draw(st.integers(0, min(1, n_classes - 1)) | st.integers(0, n_classes - 1))] = (
                draw(st.integers(1, 4))
            )
        elif kind == "mixed":
            row = draw(st.lists(st.integers(0, 3), min_size=n_classes, max_size=n_classes))
        rows.append(row)
    counts = np.array(rows, dtype=np.int64)
    if draw(st.integers(0, 5)) == 0:  # sometimes non-integer counts (weights)
        return counts * 0.75
    return counts


# ---------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------


def check_result(r: OptimalPartitions, counts, max_arity: int, criterion: str, reference):
    assert isinstance(r, OptimalPartitions)
    assert r.cost.shape == (max_arity + 1,) and r.cost.dtype == np.float64
    assert len(r.cuts) == max_arity + 1
    assert r.cost[0] == INF and r.cuts[0] == () and r.cuts[1] == ()
    n_bins = counts.shape[0]
    for k in range(1, max_arity + 1):
        assert close(float(r.cost[k]), reference[k]), (k, r.cost[k], reference[k])
        if k == 1 or math.isinf(reference[k]):
            assert r.cuts[k] == ()
            continue
        cuts = r.cuts[k]
        assert len(cuts) == k - 1
        assert all(isinstance(c, int) for c in cuts)
        assert list(cuts) == sorted(set(cuts))
        assert all(0 <= c < n_bins - 1 for c in cuts)
        assert close(cost_of_cuts(counts, cuts, criterion), float(r.cost[k])), (k, cuts)


@pytest.mark.parametrize("criterion", ["entropy", "gini", "tse"])
@settings(max_examples=120, deadline=None)
@given(counts=histograms(), max_arity=st.integers(2, 6))
def test_dp_methods_match_brute_force(criterion, counts, max_arity):
    reference = brute_force(counts, max_arity, criterion)
    results = {
        name: f(counts, max_arity=max_arity, criterion=criterion)
        for name, f in DP_METHODS.items()
    }
    for r in results.values():
        check_result(r, counts, max_arity, criterion, reference)

    blocks = bins_to_blocks(counts)
    boundary = set(blocks.boundary_points.tolist())
    for name in ("block_opt", "block_opt_p"):
        for k in range(2, max_arity + 1):
            cuts = set(results[name].cuts[k])
            if k <= blocks.n_blocks:
                assert cuts <= boundary, (name, k, cuts, boundary)
            elif cuts:  # more intervals than blocks: every boundary point is used
                assert boundary <= cuts, (name, k, cuts, boundary)

    # Block-Opt-P is Block-Opt with pruning: the very same floats and cuts
    np.testing.assert_array_equal(results["block_opt_p"].cost, results["block_opt"].cost)
    assert results["block_opt_p"].cuts == results["block_opt"].cuts
    assert (
        results["block_opt_p"].evaluations
        <= results["block_opt"].evaluations
        <= results["bin_opt"].evaluations
    )


@settings(max_examples=150, deadline=None)
@given(counts=histograms(), max_arity=st.integers(2, 6))
def test_tse_one_pass_matches_brute_force(counts, max_arity):
    reference = brute_force(counts, max_arity, "tse")
    r = tse_opt(counts, max_arity=max_arity)
    check_result(r, counts, max_arity, "tse", reference)
    blocks = bins_to_blocks(counts)
    boundary = set(blocks.boundary_points.tolist())
    for k in range(2, min(max_arity, blocks.n_blocks) + 1):
        assert set(r.cuts[k]) <= boundary
    np.testing.assert_allclose(
        r.cost, block_opt_p(counts, max_arity=max_arity, criterion="tse").cost, rtol=1e-12
    )


def kernel_variants():
    """The scalar Table 2 loop as plain Python, the numpy version, and the
    compiled one when numba is in use."""
    variants = {"python": K.table2_loops, "numpy": K._table2_numpy}
    kernels = K.loaded_kernels()
    if kernels["backend"] == "numba":
        variants["numba"] = kernels["table2"]
    return variants


@settings(max_examples=100, deadline=None)
@given(
    counts=histograms(),
    max_arity=st.integers(2, 6),
    criterion=st.sampled_from(["entropy", "gini", "tse"]),
    prune=st.booleans(),
)
def test_kernels_agree_bit_for_bit(counts, max_arity, criterion, prune):
    units = np.ascontiguousarray(bins_to_blocks(counts).counts, dtype=np.float64)
    if units.shape[0] == 0:
        return
    crit = O._CRITERION_CODE[criterion]
    arity = min(max_arity, units.shape[0])
    margin = O.PRUNE_MARGIN * float(units.sum())
    table = C.units_log2_table(units, crit)
    outs = {
        name: f(units, arity, crit, prune, margin, table)
        for name, f in kernel_variants().items()
    }
    P, L, ev = outs.pop("numpy")
    for name, (P2, L2, ev2) in outs.items():
        # exact: the log2 values come from the shared table (or no log2 at all)
        if criterion != "entropy" or table.shape[0] > 0:
            np.testing.assert_array_equal(P2, P, err_msg=name)
            np.testing.assert_array_equal(L2, L, err_msg=name)
        else:  # each kernel's own log2: equal up to rounding
            np.testing.assert_allclose(P2, P, rtol=1e-12, err_msg=name)
        assert ev2 == ev

    tse_variants = {"python": K._tse_loops, "numpy": K._tse_numpy}
    if K.loaded_kernels()["backend"] == "numba":
        tse_variants["numba"] = K.loaded_kernels()["tse"]
    ref = K._tse_numpy(units, arity)
    for name, f in tse_variants.items():
        got = f(units, arity)
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b, err_msg=name)


# ---------------------------------------------------------------------------
# hand-worked examples
# ---------------------------------------------------------------------------


def test_hand_worked_gini_with_an_empty_bin():
    # bins 0, 2: class 0 (one block, bin 1 empty); bin 3: class 1; bin 4: mixed.
    # Blocks [2,0] [0,1] [1,1], boundary points 2 and 3.
    counts = np.array([[1, 0], [0, 0], [1, 0], [0, 1], [1, 1]])
    expected_cost = [INF, 12 / 5, 4 / 3, 1.0, 1.0, INF]
    # k=2: [2,0] | [1,2]: 0 + 4/3 (the other boundary point: 4/3 + 1).
    # k=3: all three blocks: 0 + 0 + 1.
    # k=4 > 3 blocks: cut the uniform block too (between bins 0 and 2), same cost.
    # k=5: only 4 non-empty bins: impossible.
    expected_cuts = ((), (), (2,), (2, 3), (0, 2, 3), ())
    for name, f in DP_METHODS.items():
        r = f(counts, max_arity=5, criterion="gini")
        np.testing.assert_allclose(r.cost, expected_cost, rtol=1e-15, err_msg=name)
        assert r.cuts == expected_cuts, name
    # evaluations (Table 2, line 9), line 4 limits k to max_arity - 1 before the last unit:
    # bins (4 units): i=2: 1, i=3: 2+1, i=4: 3+2+1 -> 10; blocks (3 units): 1 + (2+1) -> 4
    assert bin_opt(counts, max_arity=5, criterion="gini").evaluations == 10
    assert block_opt(counts, max_arity=5, criterion="gini").evaluations == 4
    assert block_opt_p(counts, max_arity=5, criterion="gini").evaluations == 4
    r = tse_opt(counts, max_arity=5)
    np.testing.assert_array_equal(r.cost, [INF, 2, 1, 1, 1, INF])
    assert r.cuts == expected_cuts


def test_hand_worked_pruning_and_ties():
    # five blocks b1..b5; gini, g(a, b) = 2ab / (a + b)
    counts = np.array([[0, 1], [2, 2], [0, 1], [2, 0], [0, 1]])
    expected_cost = [INF, 40 / 9, 4.0, 8 / 3, 2.4]
    # k=2: cuts after bin 0, 2 or 3 all cost 4: the rightmost wins.
    # k=4: (0,2,3) and (1,2,3) both cost 2.4: rightmost last cut, then rightmost again.
    expected_cuts = ((), (), (3,), (2, 3), (1, 2, 3))
    results = {name: f(counts, max_arity=4, criterion="gini") for name, f in DP_METHODS.items()}
    for name, r in results.items():
        np.testing.assert_allclose(r.cost, expected_cost, rtol=1e-15, err_msg=name)
        assert r.cuts == expected_cuts, name
    # Block-Opt: i=2: 1, i=3: 2+1, i=4: 3+2, i=5 (k up to 4): 4+3+2 -> 18.
    # Block-Opt-P: at i=4, k=3 the prefix "best 2-split of b1..b2" (cost 2) extended by
    # b3 u b4 (cost 4/3) gives 10/3 >= P[4,2] = 8/3: pruned (Theorem 2), so at i=5 the
    # k=3 scan skips it: 17.
    assert results["bin_opt"].evaluations == 18
    assert results["block_opt"].evaluations == 18
    assert results["block_opt_p"].evaluations == 17


def test_exact_tie_with_the_unsplit_prefix_is_not_pruned():
    # Two mixed blocks with the same distribution: every 2-split costs exactly what
    # no split costs (4 bits). Table 2 as printed (prune on current >= rejectlevel)
    # would prune the only candidate and report no 2-split at all.
    for f in DP_METHODS.values():
        r = f([[1, 1], [1, 1]], max_arity=3, criterion="entropy")
        assert r.cost.tolist() == [INF, 4.0, 4.0, INF]
        assert r.cuts == ((), (), (0,), ())


def test_hand_worked_entropy():
    counts = np.array([[3, 0], [0, 0], [0, 3], [1, 1]])
    for f in DP_METHODS.values():
        r = f(counts, max_arity=3, criterion="entropy")
        # no split: 8 examples, 4 and 4: 8 bits; [3,0] | [1,4]: 5 H(1/5); all blocks: 2 bits
        h = -(0.2 * math.log2(0.2) + 0.8 * math.log2(0.8))
        np.testing.assert_allclose(r.cost, [INF, 8.0, 5 * h, 2.0], rtol=1e-12)
        assert r.cuts == ((), (), (0,), (0, 2))
    information_gain = (8.0 - optimal_partitions(counts, max_arity=3).cost[3]) / 8
    assert information_gain == pytest.approx(0.75)


def test_all_empty_and_single_bin():
    for f in METHODS.values():
        crit = "tse" if f is tse_opt else "entropy"
        r = f(np.zeros((3, 2)), max_arity=3, criterion=crit)
        assert r.cost.tolist() == [INF, 0.0, INF, INF]
        assert r.cuts == ((), (), (), ()) and r.evaluations == 0
        r = f([[0, 0], [2, 1], [0, 0]], max_arity=2, criterion=crit)
        assert r.cost[2] == INF and r.cuts[2] == ()
        assert r.cost[1] == pytest.approx(interval_cost(np.array([2, 1]), crit))


def test_one_uniform_block_over_several_bins():
    # one block, three non-empty bins: splits into 2 or 3 intervals are possible and free
    counts = [[1, 0], [0, 0], [2, 0], [5, 0]]
    for name, f in METHODS.items():
        crit = "tse" if name == "tse_opt" else "gini"
        r = f(counts, max_arity=4, criterion=crit)
        assert r.cost.tolist() == [INF, 0.0, 0.0, 0.0, INF], name
        assert r.cuts[2] == (2,) and r.cuts[3] == (0, 2), name


def test_dispatch_and_result_object():
    counts = np.array([[4, 0], [1, 3], [0, 5], [2, 2]])
    assert set(METHODS) == {"bin_opt", "block_opt", "block_opt_p", "tse_opt"}
    default = optimal_partitions(counts)
    direct = block_opt_p(counts, max_arity=O.DEFAULT_MAX_ARITY, criterion="entropy")
    np.testing.assert_array_equal(default.cost, direct.cost)
    assert default.cuts == direct.cuts and default.evaluations == direct.evaluations
    for name in ("bin_opt", "block_opt"):
        r = optimal_partitions(counts, max_arity=3, criterion="gini", method=name)
        np.testing.assert_array_equal(
            r.cost, METHODS[name](counts, max_arity=3, criterion="gini").cost
        )
    r = optimal_partitions(counts, max_arity=3, criterion="tse", method="tse_opt")
    assert r.cost.tolist() == [INF, 7.0, 3.0, 3.0]
    # frozen, read-only, and repeatable bit for bit
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.evaluations = 0  # type: ignore[misc]
    with pytest.raises(ValueError):
        r.cost[1] = 0.0
    again = optimal_partitions(counts, max_arity=3, criterion="tse", method="tse_opt")
    assert again.cost.tobytes() == r.cost.tobytes() and again.cuts == r.cuts


def test_module_works_without_numba():
    code = (
        "from dasktree.split import optimal as O\n"
        "r = O.block_opt_p([[3, 0], [1, 2], [0, 4], [2, 2], [5, 0]], max_arity=4, criterion='entropy')\n"
        "t = O.tse_opt([[3, 0], [1, 2], [0, 4], [2, 2], [5, 0]], max_arity=4)\n"
        "print(O.kernel_backend(), r.cost.tolist(), r.cuts, r.evaluations, t.cost.tolist(), t.cuts)\n"
    )
    out = run_without_numba(code).split(" ", 1)
    assert out[0] == "numpy"
    counts = [[3, 0], [1, 2], [0, 4], [2, 2], [5, 0]]
    r = block_opt_p(counts, max_arity=4, criterion="entropy")
    t = tse_opt(counts, max_arity=4)
    assert out[1].strip() == f"{r.cost.tolist()} {r.cuts} {r.evaluations} {t.cost.tolist()} {t.cuts}"


def test_larger_input_pruning_saves_evaluations():
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 4, size=(300, 3))
    counts[rng.random(300) < 0.2] = 0
    results = {
        name: f(counts, max_arity=6, criterion="entropy") for name, f in DP_METHODS.items()
    }
    np.testing.assert_array_equal(results["block_opt_p"].cost, results["block_opt"].cost)
    assert results["block_opt_p"].cuts == results["block_opt"].cuts
    np.testing.assert_allclose(results["bin_opt"].cost, results["block_opt"].cost, rtol=1e-12)
    assert results["block_opt_p"].evaluations < results["block_opt"].evaluations
    assert results["block_opt"].evaluations <= results["bin_opt"].evaluations


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "counts, match",
    [
        (np.zeros(3), r"counts must be a 2-D array.*got shape \(3,\)"),
        (np.zeros((2, 2, 2)), r"counts must be a 2-D array.*got shape \(2, 2, 2\)"),
        (np.zeros((3, 0)), r"counts must have at least one class column.*got shape \(3, 0\)"),
        ([[1, 0], [-1, 2]], r"counts must be non-negative; got -1 at bin 1, class 0"),
        ([[1, 0], [np.nan, 2]], r"counts must be finite; got nan at bin 1, class 0"),
        ([[1, np.inf]], r"counts must be finite; got inf at bin 0, class 1"),
        ([["a", "b"]], r"counts must hold integer or float class counts; got dtype <U1"),
    ],
)
def test_bad_counts(counts, match):
    for name, f in METHODS.items():
        crit = "tse" if name == "tse_opt" else "entropy"
        with pytest.raises(ValueError, match=match):
            f(counts, max_arity=3, criterion=crit)
    with pytest.raises(ValueError, match=match):
        optimal_partitions(counts)


@pytest.mark.parametrize("max_arity", [1, 0, -3, 2.5, True, "3", None])
def test_bad_max_arity(max_arity):
    with pytest.raises(ValueError, match=r"max_arity must be an integer >= 2; got "):
        optimal_partitions([[1, 0], [0, 1]], max_arity=max_arity)
    with pytest.raises(ValueError, match=r"max_arity must be an integer >= 2; got "):
        tse_opt([[1, 0], [0, 1]], max_arity=max_arity)


def test_bad_criterion_and_method():
    with pytest.raises(
        ValueError, match=r"criterion must be one of \['entropy', 'gini', 'tse'\]; got 'gain'"
    ):
        optimal_partitions([[1, 0]], criterion="gain")
    with pytest.raises(ValueError, match=r"criterion must be one of .*; got 'Gini'"):
        block_opt([[1, 0]], max_arity=2, criterion="Gini")
    with pytest.raises(
        ValueError,
        match=r"method must be one of \['bin_opt', 'block_opt', 'block_opt_p', 'tse_opt'\]; "
        r"got 'blockopt'",
    ):
        optimal_partitions([[1, 0]], method="blockopt")
    with pytest.raises(ValueError, match=r"criterion must be 'tse' for method 'tse_opt'.*got 'entropy'"):
        optimal_partitions([[1, 0]], method="tse_opt")
    assert np.array_equal(
        np.asarray(optimal_partitions(np.array([[1, 0]], dtype=np.uint8)).cost[:2]),
        [INF, 0.0],
    )


def test_the_log2_table_grown_in_steps_is_numpys_log2_chunk_by_chunk(monkeypatch):
    """The per-process table is the same whichever sizes grew it, and each entry is numpy's log2 of
    its integer as one chunk's call computes it (entry 0 is 0)."""
    chunk = C._LOG2_CHUNK
    monkeypatch.setattr(C, "_LOG2_CACHE", np.zeros(0))
    for total in (3.0, chunk + 5.0, 3 * chunk - 1.0, 3 * chunk + 1.0):  # grown in steps
        stepped = C.log2_table_for(total, True, 0)
        assert stepped.shape[0] > total and stepped.flags.writeable and stepped.dtype == np.float64
    monkeypatch.setattr(C, "_LOG2_CACHE", np.zeros(0))
    at_once = C.log2_table_for(3 * chunk + 1.0, True, 0)
    assert at_once.tobytes() == stepped.tobytes()
    expected = np.concatenate([[0.0], np.log2(np.arange(1, chunk, dtype=np.float64))]
                              + [np.log2(np.arange(k * chunk, (k + 1) * chunk, dtype=np.float64)) for k in (1, 2, 3)])
    assert stepped.tobytes() == expected.tobytes()
    assert C.log2_table_for(C.LOG2_TABLE_MAX + 1.0, True, 0).shape == (0,)  # beyond the table: none
    assert C.log2_table_for(10.0, False, 0).shape == (0,)  # units that are not integers: none


def test_the_log2_table_grows_without_holding_it_twice(monkeypatch):
    """Growing the table to its largest size holds the table and one chunk, not its chunks and their
    concatenation (64 MB at ``LOG2_TABLE_MAX`` rows of a root where 32 MB is the table)."""
    import tracemalloc

    monkeypatch.setattr(C, "_LOG2_CACHE", np.zeros(0))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        table = C.log2_table_for(64 * C._LOG2_CHUNK - 1.0, True, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert table.nbytes <= peak < table.nbytes * 1.25
