"""The units of the optimal-split programs (dasktree.split.unit_kernels) against their references.

The compiled extraction of bins and blocks must give exactly the arrays of
bins_to_blocks (001, Definition 2) and of ``counts[nonempty]``, with the total
numpy's ``sum`` gives, for integer and non-integer counts; so must the plain
Python loops and the numpy fallback, in this process and in one without numba.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split import compiled as C
from dasktree.split import optimal_kernels as K
from dasktree.split import unit_kernels as U
from dasktree.split.blocks import bins_to_blocks
from dasktree.split.optimal import kernel_backend
from dasktree.testing import run_without_numba


def numba_wanted() -> bool:
    try:
        import numba
    except ImportError:
        return False
    return not (numba.config.DISABLE_JIT or os.environ.get("DASKTREE_DISABLE_NUMBA"))


def variants() -> dict:
    """The units extraction as compiled (when numba is in use), plain Python loops and numpy."""
    out = {"python": U.units_loops, "numpy": U.units_numpy}
    if K.loaded_kernels()["backend"] == "numba":
        out["numba"] = K.loaded_kernels()["units"]
    return out


def expected_units(counts: np.ndarray, on_blocks: bool):
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    nonempty = np.flatnonzero(counts.sum(axis=1) > 0)
    if on_blocks:
        blocks = bins_to_blocks(counts)
        units, last_bin = np.ascontiguousarray(blocks.counts, dtype=np.float64), blocks.last_bin
    else:
        units, last_bin = counts[nonempty], nonempty
    return units, last_bin, nonempty.size, float(units.sum()), bool(np.all(units == np.floor(units)))


@st.composite
def histograms(draw):
    """Up to 40 bins (empty, uniform, mixed) of 1-4 classes, sometimes a long uniform run
    (beyond numpy's 8- and 128-term summation blocks), integer or not."""
    n_classes = draw(st.integers(1, 4))
    rows = []
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(("empty", "uniform", "uniform", "mixed")))
        row = [0] * n_classes
        if kind == "uniform":
            row[draw(st.integers(0, n_classes - 1))] = draw(st.integers(1, 9))
        elif kind == "mixed":
            row = draw(st.lists(st.integers(0, 3), min_size=n_classes, max_size=n_classes))
        rows.append(row)
    counts = np.array(rows, dtype=np.int64).reshape(len(rows), n_classes)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):  # a run of one class, empty bins inside, at a random place
        length = draw(st.sampled_from((3, 9, 20, 150, 300)))
        run = np.zeros((length, n_classes), dtype=np.int64)
        run[:, draw(st.integers(0, n_classes - 1))] = rng.integers(0, 6, length)
        at = draw(st.integers(0, counts.shape[0]))
        counts = np.concatenate([counts[:at], run, counts[at:]])
    scale = draw(st.sampled_from(("int", "uint8", "three quarters", "random", "huge")))
    if scale == "uint8":
        return counts.astype(np.uint8)
    if scale == "three quarters":
        return counts * 0.75
    if scale == "random":  # non-integer weights of every magnitude
        return counts * rng.random(counts.shape) * 10.0 ** rng.integers(-3, 9, counts.shape)
    if scale == "huge":
        return counts * 1e6
    return counts


@settings(max_examples=300, deadline=None)
@given(counts=histograms(), on_blocks=st.booleans())
def test_units_equal_bins_to_blocks_bit_for_bit(counts, on_blocks):
    units, last_bin, n_nonempty, total, integral = expected_units(counts, on_blocks)
    as_float = np.ascontiguousarray(counts, dtype=np.float64)
    for name, f in variants().items():
        status, got, got_last, got_n, got_total, got_integral = f(as_float, on_blocks)
        assert status == 0, name
        assert got.dtype == np.float64 and got.shape == units.shape, name
        assert got.tobytes() == units.tobytes(), (name, got, units)
        assert got_last.dtype == np.int64 and got_last.tolist() == last_bin.tolist(), name
        assert got_n == n_nonempty and got_integral == integral, name
        assert np.float64(got_total).tobytes() == np.float64(total).tobytes(), (name, got_total, total)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.floats(-1e12, 1e12, allow_nan=False, allow_infinity=False) | st.sampled_from((0.0, -0.0, 1e-9)),
        max_size=40,
    ),
    length=st.sampled_from((0, 7, 8, 9, 127, 128, 129, 255, 256, 300, 1000, 1031)),
    seed=st.integers(0, 2**32 - 1),
)
def test_pairwise_sum_is_numpys_sum(values, length, seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([np.array(values, dtype=np.float64),
                        rng.standard_normal(length) * 10.0 ** rng.integers(-8, 12, length)])
    assert np.float64(0.0 + C.pairwise_sum(x, 0, x.size)).tobytes() == np.sum(x).tobytes()
    if x.size:  # np.add.reduceat of a segment: its first value plus the pairwise sum of the rest
        segment = x[0] + C.pairwise_sum(x, 1, x.size - 1)
        assert np.float64(segment).tobytes() == np.add.reduceat(x, [0])[0].tobytes()


def test_bad_values_are_reported_not_extracted():
    for f in variants().values():
        for on_blocks in (True, False):
            assert f(np.array([[1.0, 0.0], [np.nan, 2.0]]), on_blocks)[0] == U.NOT_FINITE
            assert f(np.array([[1.0, np.inf]]), on_blocks)[0] == U.NOT_FINITE
            assert f(np.array([[1.0, 0.0], [-1.0, 2.0]]), on_blocks)[0] == U.NEGATIVE
            status, units, last_bin, n_nonempty, total, _ = f(np.zeros((3, 2)), on_blocks)
            assert status == 0 and units.shape == (0, 2) and last_bin.size == 0
            assert n_nonempty == 0 and total == 0.0


def test_read_back_twins_agree():
    rng = np.random.default_rng(3)
    kernels = K.loaded_kernels()
    for _ in range(50):
        counts = rng.integers(0, 3, size=(int(rng.integers(2, 40)), 2)).astype(np.float64)
        _, units, last_bin, _, total, _ = U.units_numpy(counts, True)
        if units.shape[0] < 2:
            continue
        arity = min(5, units.shape[0])
        _, L, _ = K._table2_numpy(units, arity, 1, True, 1e-9 * total, np.zeros(0))
        np.testing.assert_array_equal(kernels["cuts"](L, last_bin, arity), U.cuts_loops(L, last_bin, arity))
        _, start, argtop, _ = K._tse_numpy(units, arity)
        for a, b in zip(kernels["tse_cuts"](start, argtop, last_bin, arity),
                        U.tse_cuts_loops(start, argtop, last_bin, arity)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(not numba_wanted(), reason="numba is not installed or is disabled")
def test_compiled_kernels_are_in_use_when_numba_imports():
    """A kernel that fails to compile falls back to numpy silently: this catches it."""
    from numba.core.dispatcher import Dispatcher

    from dasktree.split.multiway_kernel import multiway_kernel_available

    assert kernel_backend() == "numba"
    for name in ("units", "table2", "cuts", "tse", "tse_cuts"):
        assert isinstance(K.loaded_kernels()[name], Dispatcher), name
    assert multiway_kernel_available()


FIXED = [
    [[3, 0], [0, 0], [2, 0], [1, 2], [0, 4], [0, 1], [5, 0]],
    [[0.5, 0], [0.25, 0], [0.25, 0], [0, 1.5], [1.1, 0.3]],
    [[1], [0], [2], [4]],
    [[0, 0, 0], [1, 0, 2], [1, 0, 2], [0, 3, 0], [0, 3, 0], [0, 0, 1]],
]


def test_numpy_fallback_without_numba_gives_the_same_units():
    code = (
        "import json\n"
        "import numpy as np\n"
        "from dasktree.split import optimal_kernels as K\n"
        f"fixed = {FIXED!r}\n"
        "out = [K.loaded_kernels()['backend']]\n"
        "for counts in fixed:\n"
        "    for on_blocks in (True, False):\n"
        "        s, u, l, n, t, i = K.loaded_kernels()['units'](np.asarray(counts, dtype=float), on_blocks)\n"
        "        out.append([int(s), u.tolist(), l.tolist(), int(n), float(t).hex(), bool(i)])\n"
        "print(json.dumps(out))\n"
    )
    out = json.loads(run_without_numba(code))
    assert out.pop(0) == "numpy"
    for counts in FIXED:
        for on_blocks in (True, False):
            units, last_bin, n_nonempty, total, integral = expected_units(np.asarray(counts, float), on_blocks)
            assert out.pop(0) == [0, units.tolist(), last_bin.tolist(), n_nonempty, total.hex(), integral]
