"""Tests of the Agrawal et al. (1993) synthetic database generator."""

from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pandas as pd
import pytest

from dasktree.datasets import (
    ATTRIBUTES,
    TARGET,
    agrawal,
    classify,
    generate,
    write_parquet,
)

pq = pytest.importorskip("pyarrow.parquet")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --------------------------------------------------------------------------
# Hand-built rows against the published rules (class 0 = group A, 1 = group B)
# --------------------------------------------------------------------------

BASE_ROW = dict(
    salary=100000.0,
    commission=0.0,
    age=30,
    elevel=0,
    car=1,
    zipcode=0,
    hvalue=500000.0,
    hyears=10,
    loan=0.0,
)

A, B = 0, 1

# (function, attribute overrides, expected class), read off the paper's /
# MOA's rules, with rows on and just past each threshold.
CASES = [
    # F1: A iff age < 40 or age >= 60
    (1, dict(age=20), A),
    (1, dict(age=39), A),
    (1, dict(age=40), B),
    (1, dict(age=59), B),
    (1, dict(age=60), A),
    (1, dict(age=80), A),
    # F2: salary bands 50-100k (<40), 75-125k (40..59), 25-75k (>=60), closed
    (2, dict(age=39, salary=50000.0), A),
    (2, dict(age=39, salary=49999.99), B),
    (2, dict(age=39, salary=100000.0), A),
    (2, dict(age=39, salary=100000.01), B),
    (2, dict(age=40, salary=75000.0), A),
    (2, dict(age=40, salary=74999.99), B),
    (2, dict(age=59, salary=125000.0), A),
    (2, dict(age=59, salary=125000.01), B),
    (2, dict(age=60, salary=25000.0), A),
    (2, dict(age=60, salary=24999.99), B),
    (2, dict(age=60, salary=75000.0), A),
    (2, dict(age=60, salary=75000.01), B),
    (2, dict(age=60, salary=100000.0), B),
    # F3: elevel in {0,1} (<40), {1,2,3} (40..59), {2,3,4} (>=60)
    (3, dict(age=39, elevel=1), A),
    (3, dict(age=39, elevel=2), B),
    (3, dict(age=40, elevel=0), B),
    (3, dict(age=40, elevel=1), A),
    (3, dict(age=59, elevel=3), A),
    (3, dict(age=59, elevel=4), B),
    (3, dict(age=60, elevel=1), B),
    (3, dict(age=60, elevel=2), A),
    (3, dict(age=80, elevel=4), A),
    # F4: the salary band depends on age and elevel
    (4, dict(age=30, elevel=1, salary=25000.0), A),
    (4, dict(age=30, elevel=1, salary=75000.01), B),
    (4, dict(age=30, elevel=2, salary=25000.0), B),
    (4, dict(age=30, elevel=2, salary=100000.0), A),
    (4, dict(age=50, elevel=3, salary=50000.0), A),
    (4, dict(age=50, elevel=3, salary=49999.99), B),
    (4, dict(age=50, elevel=4, salary=50000.0), B),
    (4, dict(age=50, elevel=4, salary=125000.0), A),
    (4, dict(age=50, elevel=0, salary=75000.0), A),
    (4, dict(age=70, elevel=2, salary=100000.0), A),
    (4, dict(age=70, elevel=1, salary=100000.0), B),
    (4, dict(age=70, elevel=1, salary=25000.0), A),
    # F5: the loan band depends on age and salary (river/skmultiflow compare
    # salary in some bands; the paper and MOA compare loan)
    (5, dict(age=30, salary=50000.0, loan=100000.0), A),
    (5, dict(age=30, salary=50000.0, loan=99999.0), B),
    (5, dict(age=30, salary=100000.0, loan=300000.0), A),
    (5, dict(age=30, salary=49999.0, loan=300000.0), A),
    (5, dict(age=30, salary=49999.0, loan=400000.0), A),
    (5, dict(age=30, salary=49999.0, loan=400001.0), B),
    (5, dict(age=30, salary=49999.0, loan=150000.0), B),
    (5, dict(age=50, salary=75000.0, loan=200000.0), A),
    (5, dict(age=50, salary=75000.0, loan=199999.0), B),
    (5, dict(age=50, salary=125001.0, loan=500000.0), A),
    (5, dict(age=50, salary=125001.0, loan=299999.0), B),
    (5, dict(age=60, salary=75000.0, loan=300000.0), A),
    (5, dict(age=60, salary=75000.0, loan=299999.0), B),
    (5, dict(age=60, salary=75001.0, loan=100000.0), A),
    (5, dict(age=60, salary=75001.0, loan=99999.0), B),
    (5, dict(age=60, salary=75001.0, loan=300001.0), B),
    # F6: as F2 on salary + commission
    (6, dict(age=30, salary=40000.0, commission=10000.0), A),
    (6, dict(age=30, salary=40000.0, commission=9999.0), B),
    (6, dict(age=50, salary=60000.0, commission=65000.0), A),
    (6, dict(age=50, salary=60000.0, commission=65001.0), B),
    (6, dict(age=65, salary=20000.0, commission=5000.0), A),
    (6, dict(age=65, salary=20000.0, commission=55001.0), B),
    (6, dict(age=65, salary=75000.0, commission=0.0), A),
    # F7: A iff 2 (salary + commission) / 3 - loan / 5 - 20000 > 0
    (7, dict(salary=30000.0), B),  # disposable = 0
    (7, dict(salary=30000.75), A),  # disposable = 0.5 (river: > 1, so B)
    (7, dict(salary=20000.0, commission=10000.75), A),
    (7, dict(salary=60000.0, loan=100000.0), B),  # 40000 - 20000 - 20000 = 0
    (7, dict(salary=60000.0, loan=99995.0), A),  # ... = 1
    # F8: A iff 2 (salary + commission) / 3 - 5000 elevel - 20000 > 0
    (8, dict(salary=30000.0, elevel=0), B),
    (8, dict(salary=30000.75, elevel=0), A),
    (8, dict(salary=37500.0, elevel=1), B),
    (8, dict(salary=37500.75, elevel=1), A),
    (8, dict(salary=60000.0, elevel=4), B),
    (8, dict(salary=60000.0, elevel=3), A),
    # F9: A iff 2 (salary + commission) / 3 - 5000 elevel - loan / 5 - 10000 > 0
    (9, dict(salary=30000.0, loan=50000.0), B),
    (9, dict(salary=30000.0, loan=49990.0), A),
    (9, dict(salary=30000.0, elevel=1, loan=25000.0), B),
    (9, dict(salary=30000.0, elevel=1, loan=24990.0), A),
    # F10: equity = hvalue * max(hyears - 20, 0) / 10;
    #      A iff 2 (salary + commission) / 3 - 5000 elevel + equity / 5 - 10000 > 0
    (10, dict(salary=15000.0, hyears=10), B),
    (10, dict(salary=15000.75, hyears=10), A),
    (10, dict(salary=15000.75, hyears=19, hvalue=1e6), A),  # no negative equity
    (10, dict(salary=15000.0, hyears=20, hvalue=1e6), B),  # equity 0 at 20 years
    (10, dict(salary=12000.0, hyears=21, hvalue=100000.0), B),  # 8000 + 2000 - 10000
    (10, dict(salary=12000.0, hyears=21, hvalue=100005.0), A),
    (10, dict(salary=30000.0, elevel=4, hyears=25, hvalue=100000.0), B),
    (10, dict(salary=30000.0, elevel=4, hyears=26, hvalue=100000.0), A),
]


@pytest.mark.parametrize("function", range(1, 11))
def test_hand_built_rows(function):
    cases = [(over, want) for f, over, want in CASES if f == function]
    assert len(cases) >= 4
    rows = pd.DataFrame([{**BASE_ROW, **over} for over, _ in cases])
    got = classify(rows, function)
    assert got.dtype == np.int8
    assert got.tolist() == [want for _, want in cases], cases


def test_classify_accepts_mappings_of_lists_and_needs_only_used_columns():
    assert classify({"age": [39, 40, 59, 60]}, 1).tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match="column 'salary'"):
        classify({"age": [30]}, 2)


# A plain-Python transliteration of MOA's AgrawalGenerator.determineClass,
# row by row, to check the vectorised functions on generated data.


def _moa_class(f, salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan):
    def band(x, lo, hi):
        return lo <= x <= hi

    if f == 1:
        return 0 if (age < 40 or 60 <= age) else 1
    if f == 2:
        if age < 40:
            return 0 if band(salary, 50000, 100000) else 1
        if age < 60:
            return 0 if band(salary, 75000, 125000) else 1
        return 0 if band(salary, 25000, 75000) else 1
    if f == 3:
        if age < 40:
            return 0 if elevel in (0, 1) else 1
        if age < 60:
            return 0 if elevel in (1, 2, 3) else 1
        return 0 if elevel in (2, 3, 4) else 1
    if f == 4:
        if age < 40:
            if elevel in (0, 1):
                return 0 if band(salary, 25000, 75000) else 1
            return 0 if band(salary, 50000, 100000) else 1
        if age < 60:
            if elevel in (1, 2, 3):
                return 0 if band(salary, 50000, 100000) else 1
            return 0 if band(salary, 75000, 125000) else 1
        if elevel in (2, 3, 4):
            return 0 if band(salary, 50000, 100000) else 1
        return 0 if band(salary, 25000, 75000) else 1
    if f == 5:
        if age < 40:
            if band(salary, 50000, 100000):
                return 0 if band(loan, 100000, 300000) else 1
            return 0 if band(loan, 200000, 400000) else 1
        if age < 60:
            if band(salary, 75000, 125000):
                return 0 if band(loan, 200000, 400000) else 1
            return 0 if band(loan, 300000, 500000) else 1
        if band(salary, 25000, 75000):
            return 0 if band(loan, 300000, 500000) else 1
        return 0 if band(loan, 100000, 300000) else 1
    if f == 6:
        total = salary + commission
        if age < 40:
            return 0 if band(total, 50000, 100000) else 1
        if age < 60:
            return 0 if band(total, 75000, 125000) else 1
        return 0 if band(total, 25000, 75000) else 1
    if f == 7:
        disposable = 2.0 * (salary + commission) / 3.0 - loan / 5.0 - 20000.0
    elif f == 8:
        disposable = 2.0 * (salary + commission) / 3.0 - 5000.0 * elevel - 20000.0
    elif f == 9:
        disposable = 2.0 * (salary + commission) / 3.0 - 5000.0 * elevel - loan / 5.0 - 10000.0
    else:
        equity = hvalue * (hyears - 20.0) / 10.0 if hyears >= 20 else 0.0
        disposable = 2.0 * (salary + commission) / 3.0 - 5000.0 * elevel + equity / 5.0 - 10000.0
    return 0 if disposable > 0 else 1


@pytest.mark.parametrize("function", range(1, 11))
def test_generated_class_matches_row_by_row_reference(function):
    frame = generate(1500, function=function, seed=function)
    records = frame[list(ATTRIBUTES)].astype(object).itertuples(index=False, name=None)
    expected = [_moa_class(function, *row) for row in records]
    assert frame[TARGET].tolist() == expected
    assert frame[TARGET].tolist() == classify(frame, function).tolist()
    assert set(expected) == {0, 1}  # each function yields both groups


# --------------------------------------------------------------------------
# Attribute distributions
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample():
    return generate(20000, function=1, seed=123)


def test_columns_and_dtypes(sample):
    assert tuple(agrawal.ATTRIBUTES) == (
        "salary",
        "commission",
        "age",
        "elevel",
        "car",
        "zipcode",
        "hvalue",
        "hyears",
        "loan",
    )
    assert TARGET == "class"
    assert list(sample.columns) == [*ATTRIBUTES, TARGET]
    assert len(sample) == 20000
    assert isinstance(sample.index, pd.RangeIndex)
    for name in ("salary", "commission", "hvalue", "loan"):
        assert sample[name].dtype == np.float64
    for name in ("age", "hyears"):
        assert sample[name].dtype == np.int16
    for name in ("elevel", "car", "zipcode", TARGET):
        assert sample[name].dtype == np.int8
    assert sample.notna().all().all()


def test_attribute_ranges(sample):
    s = sample
    assert s.salary.between(20000, 150000).all()
    assert s.salary.min() < 21000 and s.salary.max() > 149000
    assert s.loan.between(0, 500000).all()
    assert s.loan.min() < 1000 and s.loan.max() > 499000
    assert sorted(s.age.unique()) == list(range(20, 81))
    assert sorted(s.elevel.unique()) == list(range(0, 5))
    assert sorted(s.car.unique()) == list(range(1, 21))
    assert sorted(s.zipcode.unique()) == list(range(0, 9))
    assert sorted(s.hyears.unique()) == list(range(1, 31))
    assert set(s[TARGET].unique()) == {0, 1}


def test_commission_is_zero_iff_salary_at_least_75000(sample):
    s = sample
    rich = s.salary >= 75000
    assert (s.commission[rich] == 0).all()
    assert (s.commission[~rich] > 0).all()
    assert s.commission[~rich].between(10000, 75000).all()
    assert s.commission[~rich].min() < 11000 and s.commission[~rich].max() > 74000


def test_hvalue_range_depends_on_zipcode(sample):
    for zipcode, group in sample.groupby("zipcode"):
        k = 9 - int(zipcode)
        assert group.hvalue.between(k * 50000, k * 150000).all(), zipcode
        # spread over the whole range
        assert group.hvalue.min() < k * 55000 and group.hvalue.max() > k * 145000, zipcode


def test_class_priors_are_those_of_the_functions(sample):
    # F1: group B is 40 <= age < 60, 20 of the 61 ages
    assert abs(sample[TARGET].mean() - 20 / 61) < 0.02


# --------------------------------------------------------------------------
# Seeds and perturbation
# --------------------------------------------------------------------------


def test_deterministic_for_a_seed():
    a = generate(3000, function=4, perturbation=0.1, seed=42)
    b = generate(3000, function=4, perturbation=0.1, seed=42)
    pd.testing.assert_frame_equal(a, b)


def test_different_seeds_differ():
    a = generate(3000, function=4, seed=1)
    b = generate(3000, function=4, seed=2)
    assert not a.salary.equals(b.salary)
    assert not a[TARGET].equals(b[TARGET])


def test_attributes_do_not_depend_on_the_function():
    a = generate(500, function=1, seed=9)
    b = generate(500, function=9, seed=9)
    pd.testing.assert_frame_equal(a[list(ATTRIBUTES)], b[list(ATTRIBUTES)])


def test_zero_rows():
    frame = generate(0, function=10, perturbation=0.5)
    assert len(frame) == 0
    assert list(frame.columns) == [*ATTRIBUTES, TARGET]
    assert frame.dtypes.to_dict() == agrawal.DTYPES


@pytest.mark.parametrize("p", [0.05, 0.3])
def test_perturbation_stays_within_documented_bounds(p):
    n = 20000
    clean = generate(n, function=10, perturbation=0.0, seed=5)
    noisy = generate(n, function=10, perturbation=p, seed=5)
    eps = 1e-6

    # the class is computed before perturbation; categorical columns untouched
    for name in ("elevel", "car", "zipcode", TARGET):
        assert noisy[name].equals(clean[name]), name
    assert noisy.dtypes.equals(clean.dtypes)

    def check(name, width, lo, hi, slack=0.0):
        delta = (noisy[name] - clean[name]).abs()
        assert (delta <= width * p + slack + eps).all(), name
        assert noisy[name].between(lo, hi).all(), name
        assert (delta > 0).mean() > 0.5, name  # values do change
        return delta

    check("salary", 130000, 20000, 150000)
    check("loan", 500000, 0, 500000)
    check("age", 60, 20, 80, slack=0.5)
    check("hyears", 29, 1, 30, slack=0.5)
    k = 9.0 - clean.zipcode.astype(np.float64)
    check("hvalue", k * 100000, 0, agrawal.HVALUE_MAX)

    had = clean.commission > 0
    assert (noisy.commission[~had] == 0).all()
    delta = (noisy.commission - clean.commission)[had].abs()
    assert (delta <= 65000 * p + eps).all()
    assert noisy.commission[had].between(10000, 75000).all()
    assert (delta > 0).mean() > 0.5

    # hvalue keeps its spread (MOA's clip to 135000 would pin ~90 % of it)
    assert (noisy.hvalue == agrawal.HVALUE_MAX).mean() < 0.01
    assert noisy.hvalue.nunique() > n * 0.9


def test_full_perturbation_clips_to_bounds():
    noisy = generate(20000, function=2, perturbation=1.0, seed=3)
    assert noisy.salary.min() == 20000 and noisy.salary.max() == 150000
    assert noisy.loan.min() == 0 and noisy.loan.max() == 500000
    assert noisy.age.min() == 20 and noisy.age.max() == 80
    assert noisy.hyears.min() == 1 and noisy.hyears.max() == 30
    assert noisy.hvalue.min() == 0 and noisy.hvalue.max() <= agrawal.HVALUE_MAX
    nonzero = noisy.commission[noisy.commission > 0]
    assert nonzero.min() == 10000 and nonzero.max() == 75000


# --------------------------------------------------------------------------
# Parquet output
# --------------------------------------------------------------------------


def _read(paths):
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def test_write_parquet_files_rows_and_rerun(tmp_path):
    kwargs = dict(n_files=4, function=5, perturbation=0.05, seed=11, row_group_size=100)
    paths = write_parquet(tmp_path / "a", 1003, **kwargs)
    assert [os.path.basename(p) for p in paths] == [f"part-{i:05d}.parquet" for i in range(4)]
    assert sorted(os.listdir(tmp_path / "a")) == [os.path.basename(p) for p in paths]
    assert [pq.ParquetFile(p).metadata.num_rows for p in paths] == [251, 251, 251, 250]
    assert pq.ParquetFile(paths[0]).metadata.num_row_groups == 3

    data = _read(paths)
    assert len(data) == 1003
    assert list(data.columns) == [*ATTRIBUTES, TARGET]
    assert data.dtypes.to_dict() == agrawal.DTYPES
    assert not data.duplicated(subset=["salary", "loan"]).any()  # files differ

    again = _read(write_parquet(tmp_path / "b", 1003, **kwargs))
    pd.testing.assert_frame_equal(data, again)

    other = _read(write_parquet(tmp_path / "c", 1003, **{**kwargs, "seed": 12}))
    assert not other.salary.equals(data.salary)


def test_write_parquet_refuses_non_empty_directory_unless_overwrite(tmp_path):
    out = tmp_path / "out"
    write_parquet(out, 100, n_files=4, seed=1)
    (out / "README.txt").write_text("keep me")
    before = sorted(os.listdir(out))
    with pytest.raises(ValueError, match=r"^path must be an empty directory unless overwrite=True"):
        write_parquet(out, 100, n_files=2)
    assert sorted(os.listdir(out)) == before

    paths = write_parquet(out, 50, n_files=2, seed=2, overwrite=True)
    assert sorted(os.listdir(out)) == ["README.txt", "part-00000.parquet", "part-00001.parquet"]
    assert (out / "README.txt").read_text() == "keep me"
    assert len(_read(paths)) == 50


def test_write_parquet_more_files_than_rows(tmp_path):
    paths = write_parquet(tmp_path, 2, n_files=3)
    assert [pq.ParquetFile(p).metadata.num_rows for p in paths] == [1, 1, 0]
    assert list(pd.read_parquet(paths[2]).columns) == [*ATTRIBUTES, TARGET]


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    real = pq.write_table
    calls = []

    def failing(table, where, **kwargs):
        calls.append(where)
        if len(calls) == 1:
            return real(table, where, **kwargs)
        with open(where, "wb") as handle:  # a half-written file
            handle.write(b"PAR1")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", failing)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        write_parquet(out, 100, n_files=3)
    assert len(calls) == 2
    assert all(os.path.basename(c).startswith(".part-") for c in calls)
    assert os.listdir(out) == []


# --------------------------------------------------------------------------
# Argument checking
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_rows=-1), r"^n_rows must be an integer >= 0, got -1"),
        (dict(n_rows=2.5), r"^n_rows must be an integer >= 0, got 2\.5"),
        (dict(n_rows=True), r"^n_rows must be an integer >= 0, got True"),
        (dict(function=0), r"^function must be an integer from 1 to 10, got 0"),
        (dict(function=11), r"^function must be an integer from 1 to 10, got 11"),
        (dict(function="2"), r"^function must be an integer from 1 to 10, got '2'"),
        (dict(perturbation=-0.1), r"^perturbation must be a number in \[0, 1\], got -0\.1"),
        (dict(perturbation=1.5), r"^perturbation must be a number in \[0, 1\], got 1\.5"),
        (dict(perturbation=math.nan), r"^perturbation must be a number in \[0, 1\], got nan"),
        (dict(perturbation="x"), r"^perturbation must be a number in \[0, 1\], got 'x'"),
        (dict(seed=-1), r"^seed must be a non-negative integer, got -1"),
        (dict(seed=0.5), r"^seed must be a non-negative integer, got 0\.5"),
    ],
)
def test_generate_rejects_bad_arguments(kwargs, message):
    kwargs = {"n_rows": 10, **kwargs}
    n_rows = kwargs.pop("n_rows")
    with pytest.raises(ValueError, match=message):
        generate(n_rows, **kwargs)


def test_numpy_integers_are_accepted():
    frame = generate(
        np.int64(5), function=np.int8(3), perturbation=np.float32(0.25), seed=np.uint8(1)
    )
    assert len(frame) == 5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_rows=-5), r"^n_rows must be"),
        (dict(n_files=0), r"^n_files must be an integer >= 1, got 0"),
        (dict(function=12), r"^function must be an integer from 1 to 10, got 12"),
        (dict(perturbation=2), r"^perturbation must be a number in \[0, 1\], got 2"),
        (dict(seed=-3), r"^seed must be a non-negative integer, got -3"),
        (dict(row_group_size=0), r"^row_group_size must be None or an integer >= 1, got 0"),
        (dict(overwrite="yes"), r"^overwrite must be True or False, got 'yes'"),
    ],
)
def test_write_parquet_rejects_bad_arguments(tmp_path, kwargs, message):
    out = tmp_path / "out"
    kwargs = {"n_rows": 10, **kwargs}
    n_rows = kwargs.pop("n_rows")
    with pytest.raises(ValueError, match=message):
        write_parquet(out, n_rows, **kwargs)
    assert not out.exists()  # checked before anything is created


def test_write_parquet_rejects_a_file_as_path(tmp_path):
    target = tmp_path / "file.parquet"
    target.write_bytes(b"")
    with pytest.raises(ValueError, match=r"^path must be a directory"):
        write_parquet(target, 10)


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def test_make_agrawal_cli(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location(
        "make_agrawal", os.path.join(ROOT, "benchmarks", "make_agrawal.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "out"
    argv = [str(out), "--rows", "1000", "--files", "3", "--function", "2", "--perturbation", "0.05"]
    assert module.main(argv) == 0
    printed = capsys.readouterr().out
    assert "1,000 rows" in printed and "3 files" in printed and "bytes" in printed
    assert len(_read(sorted(str(p) for p in out.iterdir()))) == 1000
    with pytest.raises(SystemExit) as exit_info:
        module.main([str(out), "--rows", "10"])
    assert exit_info.value.code == 2
    assert "overwrite" in capsys.readouterr().err
