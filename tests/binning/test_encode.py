"""Encoding a group of parts into blocks of rows, and reordering a block's rows in place."""

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.binning.encode import Encoded, class_codes, encode_blocks, encode_features
from dasktree.binning.spec import bin_spec
from dasktree.binning.summary import summarize
from dasktree.io.schema import resolve_roles


def _table(rng, n):
    x = rng.integers(0, 40, size=n) * 0.5
    x[rng.random(n) < 0.1] = np.nan
    k = rng.choice(np.array(["a", "b", "c"], dtype=object), size=n)
    k[rng.random(n) < 0.1] = None
    c = rng.choice(np.array(["no", "yes"], dtype=object), size=n)
    c[rng.random(n) < 0.15] = None  # rows to drop
    return pa.table({"x": x, "k": pa.array(k, type=pa.string()), "c": pa.array(c, type=pa.string())})


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.lists(st.integers(0, 60), min_size=0, max_size=6),
       max_rows=st.integers(1, 150), repeats=st.sampled_from([0, 1, 3]),
       slack=st.lists(st.integers(-5, 5), min_size=6, max_size=6))
def test_blocks_hold_the_parts_rows_in_order(seed, sizes, max_rows, repeats, slack):
    """encode_blocks gives, block after block, the rows of the parts encoded one by one with the null
    targets dropped; a block holds consecutive parts of at most max_rows counted rows (a larger one
    alone), loads one part at a time in order, and its arrays are contiguous whether the counted
    rows were the part's, fewer (the block grows) or more (it shrinks)."""
    rng = np.random.default_rng(seed)
    tables = [_table(rng, n) for n in sizes]
    whole = pa.concat_tables(tables) if tables else _table(rng, 0)
    reference = _table(np.random.default_rng(0), 300)  # the bins: any data of the schema
    roles = resolve_roles(reference.schema, "c")
    spec = bin_spec(summarize(reference, roles, max_bins=16), roles, max_bins=16, max_categories=10)
    folds = [rng.integers(0, 5, size=(repeats, n)).astype(np.int16) if repeats else None for n in sizes]
    counted = [max(0, n + d) for n, d in zip(sizes, slack)]
    loaded = []

    def load(i):
        def loaded_part():
            loaded.append(i)
            return tables[i], folds[i]
        return loaded_part

    blocks = encode_blocks([(counted[i], load(i)) for i in range(len(sizes))], spec, "c", max_rows=max_rows)
    assert loaded == list(range(len(sizes)))
    runs, total = [], 0
    for i, n in enumerate(counted):
        if not runs or total + n > max_rows:
            runs.append(0)
            total = 0
        runs[-1] += 1
        total += n
    assert len(blocks) == len(runs)
    y = class_codes(whole.column("c"), spec.classes)
    keep = y >= 0
    assert sum(b.n_dropped for b in blocks) == int((~keep).sum())
    assert all(b.codes.flags.c_contiguous and b.part.flags.c_contiguous for b in blocks)
    if not blocks:
        return
    np.testing.assert_array_equal(np.concatenate([b.codes for b in blocks], axis=1),
                                  encode_features(whole, spec)[:, keep])
    np.testing.assert_array_equal(np.concatenate([b.y for b in blocks]), y[keep])
    part = np.concatenate(folds, axis=1)[:, keep] if repeats else np.zeros((1, int(keep.sum())), np.int16)
    np.testing.assert_array_equal(np.concatenate([b.part for b in blocks], axis=1), part)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 200), lines_used=st.integers(0, 3),
       wide=st.booleans())
def test_reorder_moves_every_array_alike_in_place(seed, n, lines_used, wide):
    """Encoded.reorder permutes every line of every array by the order, in the arrays themselves, and
    leaves the start lines no row uses as zeros."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 300 if wide else 200, size=(3, n)).astype(np.uint16 if wide else np.uint8)
    e = Encoded(codes, rng.integers(0, 5, size=n).astype(np.int32), rng.integers(0, 7, size=(2, n)).astype(np.int16))
    e.start = np.zeros((3, n), dtype=np.int32 if wide else np.uint16)
    e.start[:lines_used] = rng.integers(1, 9, size=(lines_used, n))
    before = (e.codes.copy(), e.y.copy(), e.part.copy(), e.start.copy())
    arrays = (e.codes, e.y, e.part, e.start)
    order = rng.permutation(n).astype(np.int64)
    e.reorder(order)
    assert all(a is b for a, b in zip((e.codes, e.y, e.part, e.start), arrays))  # in place
    for old, new in zip(before, arrays):
        np.testing.assert_array_equal(new, old[..., order])
    assert not e.start[lines_used:].any()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60),
       type_=st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]),
       n_classes=st.integers(1, 6), nulls=st.booleans(), chunks=st.integers(1, 3))
def test_integer_labels_get_the_class_codes_arrows_lookup_gives(seed, n, type_, n_classes, nulls, chunks):
    """Integer labels are looked up in the sorted classes: the codes of Arrow's index_in (the twin), -1 for a
    label outside the classes (or null), whatever the label type, the classes' order and their range."""
    from dasktree.binning.encode import class_codes_arrow

    rng = np.random.default_rng(seed)
    high = np.iinfo(np.dtype(type_)).max
    pool = np.unique(np.concatenate([rng.integers(0, 9, 8), [min(high, 2**31 - 1)]]))
    values = rng.choice(pool, n).astype(type_)
    classes = tuple(int(c) for c in rng.permutation(np.unique(np.concatenate([rng.choice(pool, n_classes),
                                                                             rng.integers(300, 400, 1)]))))
    mask = rng.random(n) < 0.2 if nulls else None
    array = pa.array(values, mask=mask)
    cuts = sorted(rng.integers(0, n + 1, chunks - 1).tolist())
    column = pa.chunked_array([array[a:b] for a, b in zip([0, *cuts], [*cuts, n])], type=array.type)
    codes = class_codes(column, classes)
    assert codes.dtype == np.int32
    assert np.array_equal(codes, class_codes_arrow(array, classes))
