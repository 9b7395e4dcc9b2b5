"""The numeric bin-code kernel against ``np.searchsorted`` and a naive count of edges below each value.

The rule under test: the code of ``x`` is ``b`` when ``upper[b - 2] < x <= upper[b - 1]``,
i.e. ``searchsorted(upper, x, side="left") + 1``, and 0 when ``x`` is NaN.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.binning import codes as B
from dasktree.binning.encode import encode_feature
from dasktree.binning.spec import FeatureBins
from dasktree.io.schema import NUMERIC
from dasktree.testing import run_without_numba

MAX = np.finfo(np.float64).max
TINY = np.finfo(np.float64).smallest_subnormal
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, TINY, -TINY, MAX, -MAX, 1.0, -1.0])


def reference(x: np.ndarray, upper: np.ndarray, dtype) -> np.ndarray:
    codes = np.searchsorted(upper, x, side="left") + 1
    codes[np.isnan(x)] = 0
    return codes.astype(dtype)


def naive(x: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Edges strictly below each value, plus one; 0 for NaN (a second, independent twin)."""
    below = (upper[None, :] < x[:, None]).sum(axis=1) + 1
    return np.where(np.isnan(x), 0, below)


def check(x, upper, dtype=np.uint16):
    x = np.asarray(x, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    got = B.numeric_codes(x, upper, dtype)
    want = reference(x, upper, dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == x.shape
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"x={x[bad[:5]].tolist()} got={got[bad[:5]].tolist()} want={want[bad[:5]].tolist()}"
    np.testing.assert_array_equal(B.numeric_codes_numpy(x, upper, dtype), want)
    if x.size * upper.size <= 200_000:
        np.testing.assert_array_equal(naive(x, upper).astype(dtype), want)


def neighbours(v: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.concatenate([v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)])


# ----------------------------------------------------------------- edge sets
any_float = st.floats(allow_nan=False, allow_infinity=True, allow_subnormal=True)
finite = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@st.composite
def tiny_range(draw):
    """Edges a few ulps apart around one value (subnormal widths included)."""
    base = draw(st.sampled_from([0.0, TINY, -3 * TINY, 1.0, -1.0, 1e-310, 1e300, -MAX / 2]) | finite)
    steps = draw(st.lists(st.integers(1, 4), min_size=0, max_size=40))
    edges = [base]
    for s in steps:
        v = edges[-1]
        with np.errstate(over="ignore"):
            for _ in range(s):
                v = np.nextafter(v, np.inf)
        if not np.isfinite(v):
            break
        edges.append(float(v))
    return edges


@st.composite
def clustered(draw):
    """Many edges in one narrow place and a few far away (skewed bucket occupancy)."""
    center = draw(st.sampled_from([0.0, 1.0, 1e-9, -3.5, 1e200]))
    spread = draw(st.sampled_from([1e-300, 1e-12, 1e-3]))
    n = draw(st.integers(2, 300))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    cluster = center + spread * rng.standard_normal(n)
    far = draw(st.lists(st.sampled_from([-MAX, -1e308, -1e6, 1e6, 1e308, MAX, 0.0, -0.0, np.inf, -np.inf]),
                        max_size=4))
    return np.concatenate([cluster, far])


@st.composite
def distributed(draw):
    """Quantile-like edges of common shapes: uniform, lognormal, integer midpoints."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(0, 600))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["uniform", "lognormal", "pareto", "midpoints", "wide"]))
    if kind == "uniform":
        return rng.uniform(-5, 5, n)
    if kind == "lognormal":
        return rng.lognormal(0, 3, n)
    if kind == "pareto":
        return rng.pareto(0.3, n) * draw(st.sampled_from([1.0, -1.0]))
    if kind == "midpoints":
        return np.arange(n) + 0.5
    return rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-300, 300, n)


edge_sets = st.one_of(
    st.lists(any_float, max_size=12),
    st.lists(finite, min_size=2, max_size=60),
    st.lists(st.sampled_from([-MAX, MAX, -1e308, 1e308, 0.0, -0.0, TINY, -TINY]), max_size=8),
    tiny_range(),
    clustered(),
    distributed(),
)


@st.composite
def cases(draw):
    upper = np.unique(np.asarray(draw(edge_sets), dtype=np.float64))  # strictly increasing, -0.0 == 0.0
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    parts = [SPECIAL, neighbours(upper)]
    if upper.size:
        parts.append(rng.choice(upper, 50))  # duplicates of edges
        lo, hi = upper[0], upper[-1]
        if np.isfinite(lo) and np.isfinite(hi):
            u = rng.random(100)
            parts.append(lo * (1 - u) + hi * u)  # inside the range
    parts.append(np.asarray(draw(st.lists(any_float | st.just(float("nan")), max_size=20)), dtype=np.float64))
    x = np.concatenate(parts)
    return rng.permutation(x), upper


@settings(max_examples=300, deadline=None)
@given(case=cases(), dtype=st.sampled_from([np.uint8, np.uint16]))
def test_codes_equal_searchsorted(case, dtype):
    x, upper = case
    check(x, upper, dtype)


@settings(max_examples=60, deadline=None)
@given(upper=st.lists(finite, min_size=0, max_size=3, unique=True), x=st.lists(any_float | st.just(float("nan")),
                                                                                 max_size=30))
def test_zero_one_two_edges(upper, x):
    upper = np.unique(np.asarray(upper, dtype=np.float64))
    check(np.concatenate([np.asarray(x, dtype=np.float64), SPECIAL, neighbours(upper)]), upper)


def test_boundary_rule_in_words():
    upper = np.array([-1.0, 0.0, 2.5])
    x = np.array([np.nan, -np.inf, -1.0, np.nextafter(-1.0, 0), -0.0, 0.0, TINY, 2.5, 3.0, np.inf])
    np.testing.assert_array_equal(B.numeric_codes(x, upper, np.uint8), [0, 1, 1, 2, 2, 2, 3, 3, 4, 4])
    check(x, np.array([-0.0, 1.0]))  # an edge at -0.0 equals 0.0 as well


@pytest.mark.parametrize("upper", [
    [-0.0], [-0.0, 1.0], [-1.0, -0.0, 1.0], [-1e-323, -0.0, TINY], [-1e-323, 0.0, TINY], [-TINY, -0.0, TINY],
    [-2 * TINY, -TINY, -0.0, TINY, 2 * TINY], [-MAX, -0.0, MAX], [-np.inf, -0.0, np.inf],
])
def test_signed_zero_edges(upper):
    """An edge at -0.0 or 0.0 between subnormal neighbours: -0.0 == 0.0 on both sides of the comparison."""
    upper = np.array(upper)
    check(np.concatenate([SPECIAL, neighbours(upper), [-0.0, 0.0] * 5]), upper)


def test_empty_values_and_non_contiguous_input():
    assert B.numeric_codes(np.array([]), np.array([1.0, 2.0]), np.uint8).shape == (0,)
    x = np.linspace(-1, 4, 41)[::2]
    check(x, np.array([0.0, 1.0, 3.0]))
    check(np.arange(10), np.array([2.5, 7.5]))  # integer input is read as float64


@pytest.mark.skipif(B.numba is None, reason="the bucket table is the compiled path")
def test_deep_search_and_many_edges():
    """A bucket holding 40,000 consecutive floats forces the 16-step search; 65,534 edges fill uint16."""
    cluster = 1.0 + np.arange(40_000) * 2.0**-52  # consecutive floats
    upper = np.unique(np.concatenate([cluster, [-1e6, 1e6]]))
    assert B._table(upper).steps == 16
    rng = np.random.default_rng(0)
    x = np.concatenate([neighbours(upper), rng.choice(upper, 5000), 1.0 + 5e-12 * rng.random(5000), SPECIAL])
    check(x, upper)
    upper = np.unique(np.sort(rng.lognormal(0, 2, 200_000))[np.arange(1, 65535) * 3])  # skewed quantiles
    check(np.concatenate([neighbours(upper), rng.lognormal(0, 2, 20_000)]), upper)


def test_encode_feature_numeric_column_with_nulls():
    values = [3.0, None, -0.0, 1.5, float("nan"), 10.0, 0.5]
    column = pa.chunked_array([pa.array(values[:3], pa.float64()), pa.array(values[3:], pa.float64())])
    bins = FeatureBins("v", NUMERIC, np.array([0.0, 1.5, 3.0]), np.array([0.0, 1.0, 2.0, 4.0]))
    codes = encode_feature(column, bins, np.dtype(np.uint8))
    assert codes.dtype == np.uint8
    np.testing.assert_array_equal(codes, [3, 0, 1, 2, 0, 4, 2])


INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(INT_TYPES), data=st.data())
def test_integer_lookup_codes_equal_the_float_codes(dtype, data):
    info = np.iinfo(dtype)
    lo = data.draw(st.integers(max(int(info.min), -2**53), min(int(info.max), 2**53)))
    span = data.draw(st.integers(0, 70_000))
    hi = min(lo + span, int(info.max), 2**53)
    values = np.array(data.draw(st.lists(st.integers(lo, hi), min_size=1, max_size=200)) + [lo, hi], dtype=dtype)
    # edges at integers, between them and outside the values' span (unique, sorted)
    raw = data.draw(st.lists(st.floats(lo - 3.0, hi + 3.0, allow_nan=False), min_size=1, max_size=40))
    upper = np.unique(np.concatenate([np.round(raw[: len(raw) // 2]), np.asarray(raw[len(raw) // 2:]) + 0.5]))
    for code_dtype in (np.uint8, np.uint16):
        got = B.integer_codes(values, upper, code_dtype)
        if hi - lo >= B.LOOKUP_SPAN:
            assert got is None
            continue
        assert got.dtype == code_dtype
        np.testing.assert_array_equal(got, B.numeric_codes(values.astype(np.float64), upper, code_dtype))


def test_integer_column_takes_the_lookup_and_others_fall_back():
    bins = FeatureBins("v", NUMERIC, np.array([1.5, 20.0, 1e6]), np.array([1.0, 2.0, 30.0, 2e6]))
    small = pa.chunked_array([pa.array([1, 2, 40], pa.int16()), pa.array([20, 21], pa.int16())])
    np.testing.assert_array_equal(encode_feature(small, bins, np.dtype(np.uint8)), [1, 2, 3, 2, 3])
    wide = pa.array([0, 3_000_000, 20], pa.int64())  # a span past the lookup table: through float64
    assert B.integer_codes(wide.to_numpy(), bins.upper) is None
    np.testing.assert_array_equal(encode_feature(wide, bins, np.dtype(np.uint8)), [1, 4, 2])
    nulls = pa.array([5, None, 25], pa.int32())  # nulls: through float64, missing is code 0
    np.testing.assert_array_equal(encode_feature(nulls, bins, np.dtype(np.uint8)), [2, 0, 3])


def test_module_works_without_numba():
    code = (
        "import numpy as np\n"
        "from dasktree.binning import codes as B\n"
        "x = np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 0.5, 2.0, np.inf])\n"
        "print(B.kernel_backend(), B.numeric_codes(x, np.array([0.0, 2.0]), np.uint16).tolist(),"
        " B.numeric_codes(x, np.array([]), np.uint8).dtype)\n"
    )
    assert run_without_numba(code) == "numpy [0, 1, 1, 1, 1, 2, 2, 3] uint8"
