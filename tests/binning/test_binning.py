"""Pass 0: summaries merge exactly and in any order; bins follow their stated rule."""

import functools
import subprocess
import sys

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.binning.encode import encode_features
from dasktree.binning.spec import OTHER, bin_spec
from dasktree.binning.summary import merge, merge_all, midpoints, summarize
from dasktree.io.schema import resolve_roles


def _summaries(values, labels, n_parts, max_bins, seed=0):
    table = pa.table({"x": values, "c": pa.array(np.asarray(labels).astype(str))})
    roles = resolve_roles(table.schema, "c")
    bounds = np.linspace(0, len(values), n_parts + 1).astype(int)
    parts = [summarize(table.slice(a, b - a), roles, max_bins=max_bins) for a, b in zip(bounds[:-1], bounds[1:])]
    return roles, parts


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 1000), n_parts=st.integers(1, 7), distinct=st.integers(2, 400),
       max_bins=st.sampled_from([8, 32, 255]))
def test_bin_spec_does_not_depend_on_partitioning_or_merge_order(seed, n_parts, distinct, max_bins):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, distinct, size=600) * 0.37 - 20
    values[rng.random(600) < 0.1] = np.nan
    labels = rng.integers(0, 2, size=600)
    roles, parts = _summaries(values, labels, n_parts, max_bins)
    _, whole = _summaries(values, labels, 1, max_bins)
    forward = merge_all(parts)
    backward = merge_all(parts[::-1])
    tree = parts[0] if len(parts) == 1 else merge(merge_all(parts[: len(parts) // 2]), merge_all(parts[len(parts) // 2:]))
    pairwise = functools.reduce(merge, parts[::-1])  # two by two, as a tree reduction of tasks merges
    specs = [bin_spec(s, roles, max_bins=max_bins, max_categories=10)
             for s in (forward, backward, tree, pairwise, whole[0])]
    for spec in specs[1:]:
        assert spec.to_json() == specs[0].to_json()


def test_few_distinct_values_get_exact_bins_at_sklearn_midpoints():
    values = np.array([3.0, 1.0, 2.0, 2.0, 10.0, np.nan])
    roles, parts = _summaries(values, [0, 1, 0, 1, 0, 1], 2, 255)
    spec = bin_spec(merge_all(parts), roles, max_bins=255, max_categories=10)
    f = spec.features[0]
    assert f.exact
    np.testing.assert_array_equal(f.values, [1.0, 2.0, 3.0, 10.0])
    np.testing.assert_array_equal(f.upper, [1.5, 2.5, 6.5])
    codes = encode_features(pa.table({"x": values}), spec)[0]
    # bin b holds upper[b-2] < x <= upper[b-1]; 0 is missing
    np.testing.assert_array_equal(codes, [3, 1, 2, 2, 4, 0])


def test_midpoint_never_equals_the_upper_value():
    a = np.nextafter(1.0, 2.0)
    np.testing.assert_array_equal(midpoints(np.array([1.0, a])), [1.0])


def test_many_distinct_values_get_approximate_quantile_bins():
    rng = np.random.default_rng(0)
    values = rng.lognormal(size=20000)
    roles, parts = _summaries(values, rng.integers(0, 2, 20000), 4, 16)
    f = bin_spec(merge_all(parts), roles, max_bins=16, max_categories=10).features[0]
    assert not f.exact
    assert 12 <= f.n_bins <= 16
    codes = encode_features(pa.table({"x": values}), bin_spec(merge_all(parts), roles, max_bins=16, max_categories=10))[0]
    shares = np.bincount(codes, minlength=f.n_bins + 1)[1:] / values.size
    assert np.all(np.abs(shares - 1 / f.n_bins) < 0.02)  # grid resolution is 1/4096 relative
    assert set(f.upper) <= set(values)  # edges are data values


def test_rare_categories_share_other_and_unseen_fall_there():
    names = ["a"] * 50 + ["b"] * 40 + ["c"] * 30 + ["d"] * 2 + ["e"] * 1
    table = pa.table({"k": names, "c": ["x", "y"] * (len(names) // 2) + ["x"]})
    roles = resolve_roles(table.schema, "c")
    spec = bin_spec(summarize(table, roles, max_bins=255), roles, max_bins=255, max_categories=4)
    assert spec.features[0].categories == ("a", "b", "c", OTHER)
    codes = encode_features(pa.table({"k": ["a", "d", "zzz", None]}), spec)[0]
    np.testing.assert_array_equal(codes, [1, 4, 4, 0])


def test_kernels_import_without_dask():
    code = (
        "import sys\n"
        "for m in ('dask', 'distributed'): sys.modules[m] = None\n"
        "import dasktree, dasktree.kernels.histogram, dasktree.split.search, dasktree.binning, dasktree.levels, dasktree.levels.grow\n"
        "from dasktree.fit import fit\n"
        "import pandas as pd\n"
        "m = fit(pd.DataFrame({'a': [1, 2, 3, 4], 'y': [0, 0, 1, 1]}), target='y')\n"
        "assert m.report['training_accuracy'] == 1.0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), span=st.sampled_from([1, 3, 200, 70_000]), low=st.integers(-(2**40), 2**40),
       max_bins=st.sampled_from([4, 255]))
def test_an_integer_column_counted_by_bincount_is_sketched_as_by_sorting(seed, span, low, max_bins):
    """The bincount of whole numbers in a small range gives the sketch numpy.unique gives (the naive twin);
    a range too wide for it falls back to sorting."""
    from dasktree.binning.summary import sketch_numeric, sketch_numeric_sorted

    rng = np.random.default_rng(seed)
    values = (low + rng.integers(0, span, size=500)).astype(np.float64)
    values[rng.random(500) < 0.05] = np.nan
    fast, naive = sketch_numeric(values, max_bins, integral=True), sketch_numeric_sorted(values, max_bins)
    assert fast.exact == naive.exact
    for name in ("keys", "counts", "maxes"):
        a, b = getattr(fast, name), getattr(naive, name)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.sampled_from([50, 3000]), max_bins=st.sampled_from([4, 32, 255]),
       shape=st.sampled_from(["normal", "lognormal", "zeros", "wide", "few", "whole", "whole and wide", "whole but one"]))
def test_a_float_column_counted_on_the_grid_without_sorting_is_sketched_as_by_sorting(seed, n, max_bins, shape):
    """The grid counted by bincount (ranked exponents) gives the sketch of sorting every value (the naive
    twin), and merged sketches the sketch of the merged values, whatever the spread of exponents."""
    from dasktree.binning.summary import merge_numeric, sketch_numeric, sketch_numeric_sorted

    rng = np.random.default_rng(seed)
    values = {"normal": rng.normal(size=n), "lognormal": rng.lognormal(0, 3, size=n),
              "zeros": np.where(rng.random(n) < 0.5, 0.0, rng.uniform(1e4, 7.5e4, n)) * rng.choice([1, -1], n),
              "wide": rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n),
              "few": rng.integers(0, 7, n) * 0.25,
              # whole numbers in a float column: counted by bincount within a small range (pixels, counts)
              "whole": rng.integers(-300, 300, n).astype(np.float64),
              "whole and wide": rng.integers(-(2**20), 2**20, n).astype(np.float64),
              "whole but one": np.append(rng.integers(0, 17, n - 1), 0.5)}[shape]
    values[rng.random(n) < 0.05] = np.nan
    values[rng.random(n) < 0.05] = -0.0

    def same(a, b):
        assert a.exact == b.exact
        for name in ("keys", "counts", "maxes"):
            x, y = getattr(a, name), getattr(b, name)
            assert (x is None) == (y is None)
            if x is not None:
                assert x.dtype == y.dtype and np.array_equal(x, y)

    same(sketch_numeric(values, max_bins), sketch_numeric_sorted(values, max_bins))
    halves = [sketch_numeric(values[: n // 3], max_bins), sketch_numeric(values[n // 3:], max_bins)]
    same(merge_numeric(halves, max_bins), sketch_numeric_sorted(values, max_bins))
