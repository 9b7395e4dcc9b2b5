"""Fold parts: the compiled fold of a row hash equals the vectorised splitmix64 formula, and a row's
folds follow its content (or its key), not its place: the same whatever the parts, the order, the types."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.errors import DataError
from dasktree.io.folds import _GOLDEN, FoldSpec, folds_of_hashes, mix64
from dasktree.io.row_hash import row_hash
from dasktree.io.schema import resolve_roles
from dasktree.io.sources import Part


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 50), repeats=st.integers(1, 6), seed=st.integers(0, 2**40),
       hashes=st.lists(st.integers(0, 2**64 - 1), max_size=300))
def test_compiled_folds_equal_the_numpy_formula(k, repeats, seed, hashes):
    hashes = np.array(hashes, dtype=np.uint64)
    folds = folds_of_hashes(hashes, k, seed, repeats)
    expected = np.empty((repeats, hashes.size), dtype=np.int16)
    for j in range(repeats):
        with np.errstate(over="ignore"):
            salt = mix64(np.array([seed], dtype=np.uint64) * _GOLDEN + np.uint64(j + 1))[0]
        expected[j] = (mix64(hashes ^ salt) % np.uint64(k)).astype(np.int16)
    assert folds.dtype == np.int16
    np.testing.assert_array_equal(folds, expected)
    assert hashes.size == 0 or (folds.min() >= 0 and folds.max() < k)


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "x": pa.array(np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n).round(1))),
        "k": pa.array(rng.integers(0, 5, n), pa.int32()),
        "colour": pa.array(rng.choice(["red", "green", "blue"], n)).dictionary_encode(),
        "label": pa.array(rng.choice(["a", "b"], n)),
        "ignored": pa.array(np.arange(n)),
    })


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 400), seed=st.integers(0, 1000), k=st.integers(2, 10), repeats=st.integers(1, 3),
       data=st.data())
def test_permuting_and_repartitioning_the_rows_does_not_move_a_rows_folds(n, seed, k, repeats, data):
    table = _table(n, seed)
    roles = resolve_roles(table.schema, "label", exclude=["ignored"])
    spec = FoldSpec(k, repeats, seed).hashing(roles)
    whole = spec.parts_of(table, Part(0, "a.parquet", 0, n))
    order = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=5)))
    shuffled = table.take(order).select(data.draw(st.permutations(table.column_names)))
    pieces = [shuffled.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n])]
    got = [spec.parts_of(p, Part(i, f"part-{i}.parquet", int(a), p.num_rows))
           for i, (p, a) in enumerate(zip(pieces, [0, *cuts]))]
    np.testing.assert_array_equal(np.concatenate(got, axis=1) if got else whole[:, :0], whole[:, order])
    # the spec without the fit's roles hashes every column read but the key and folds columns
    read = table.select([*roles.features, roles.target])
    np.testing.assert_array_equal(FoldSpec(k, repeats, seed).parts_of(read, Part(0, "t", 0, n)), whole)


def test_duplicates_share_their_folds_and_ignored_columns_do_not_count():
    table = _table(3000, 4)
    roles = resolve_roles(table.schema, "label", exclude=["ignored"])
    parts = FoldSpec(10, 3, 1).hashing(roles).parts_of(table, Part(0, "t", 0, table.num_rows))
    groups = {}  # rows by their content ("ignored" differs on every row)
    for i, row in enumerate(zip(*(table.column(c).to_pylist() for c in ("x", "k", "colour", "label")))):
        groups.setdefault(repr(row), []).append(i)
    assert sum(len(rows) > 1 for rows in groups.values()) > 100
    for rows in groups.values():
        assert (parts[:, rows] == parts[:, rows[:1]]).all()
    # and distinct rows spread over every fold, about evenly
    assert np.bincount(parts[0], minlength=10).min() > 0.6 * table.num_rows / 10


def test_the_weight_column_is_part_of_a_rows_content():
    table = _table(500, 2).append_column("w", pa.array(np.full(500, 2.0)))
    plain = FoldSpec(5).hashing(resolve_roles(table.schema, "label", exclude=["ignored", "w"]))
    weighted = FoldSpec(5).hashing(resolve_roles(table.schema, "label", exclude=["ignored"], weight="w"))
    assert weighted.content == ("x", "k", "colour", "label", "w")
    a, b = (s.parts_of(table, Part(0, "t", 0, 500)) for s in (plain, weighted))
    assert (a != b).any()  # the weight is part of the row
    np.testing.assert_array_equal(b, FoldSpec(5).parts_of(table.drop(["ignored"]), Part(0, "t", 0, 500)))


def test_a_key_column_gives_the_folds_by_its_value_alone():
    table = pa.table({"id": pa.array([5, 6, 5, 7], pa.int64()), "x": [1.0, 2.0, 3.0, 4.0], "y": ["a", "b", "a", "b"]})
    spec = FoldSpec(3, 2, 9, key="id")
    parts = spec.parts_of(table, Part(0, "t", 0, 4))
    np.testing.assert_array_equal(parts[:, 0], parts[:, 2])  # the same key, other content
    as_int32 = table.set_column(0, "id", table.column("id").cast(pa.int32()))
    np.testing.assert_array_equal(spec.parts_of(as_int32, Part(0, "t", 0, 4)), parts)
    np.testing.assert_array_equal(parts, folds_of_hashes(row_hash(table, ["id"]), 3, 9, 2))


@pytest.mark.parametrize("values", [pa.array([1, None, 3]), pa.array([1.0, float("nan"), 3.0]),
                                    pa.array(["a", None, "c"])])
def test_a_key_column_with_a_missing_value_is_refused(values):
    table = pa.table({"id": values, "y": ["a", "b", "a"]})
    with pytest.raises(DataError, match="key column 'id' has null values in part-3.parquet: every row needs a key"):
        FoldSpec(3, key="id").parts_of(table, Part(0, "part-3.parquet", 0, 3))
