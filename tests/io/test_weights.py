"""Row weights: pass 0's exact statistics and the part-by-part rule against the plain rule on arrays."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.errors import DataError, InputError, ParameterError
from dasktree.io.weights import (
    MAX_MULTIPLICITY,
    MAX_ROWS,
    merge_weight_stats,
    multiplicities,
    weight_stats,
    weight_values,
    weighting,
)


def _by_parts(w, y, cuts, class_weight=None):
    """Multiplicities as a fit computes them: stats per part, merged, the rule, then part by part."""
    labels = pa.array(y)
    bounds = [0, *cuts, len(w)]
    stats = merge_weight_stats([weight_stats(w[a:b][w[a:b] > 0], labels[a:b].filter(pa.array(w[a:b] > 0)),
                                             int((w[a:b] == 0).sum())) for a, b in zip(bounds, bounds[1:])])
    classes = tuple(sorted(set(y.tolist())))
    counts = {c: int((y == c).sum()) for c in classes}
    rule = weighting("w", stats, classes, counts, class_weight)
    codes = np.searchsorted(np.array(classes), y)
    return rule, np.concatenate([rule.multiplicities(w[a:b], codes[a:b]) for a, b in zip(bounds, bounds[1:])])


weights = st.one_of(
    st.lists(st.integers(0, 9), min_size=2, max_size=60).map(lambda v: np.array(v, dtype=np.float64)),
    st.lists(st.floats(0, 1e6, allow_subnormal=False), min_size=2, max_size=60).map(np.array),
)


@settings(max_examples=150, deadline=None)
@given(w=weights, seed=st.integers(0, 1000), balanced=st.booleans())
def test_the_rule_from_parts_is_the_rule_on_the_whole_array(w, seed, balanced):
    rng = np.random.default_rng(seed)
    y = rng.choice(np.array(["a", "b", "c"]), size=w.size)
    if not (w > 0).any():
        w[0] = 1.0
    cuts = sorted(rng.choice(np.arange(1, w.size), size=min(3, w.size - 1), replace=False).tolist())
    class_weight = "balanced" if balanced else None
    plain = multiplicities(w, y, class_weight)
    try:
        rule, parts = _by_parts(w, y, cuts, class_weight)
    except DataError:  # refused only when the rows that count are of fewer than two classes
        assert np.unique(y[plain > 0]).size < 2
        return
    np.testing.assert_array_equal(parts, plain)
    if rule.integer:
        codes = np.searchsorted(np.unique(y), y)
        assert rule.shift == 0 and (w * np.asarray(rule.factors)[codes] == parts).all()
    else:
        assert MAX_MULTIPLICITY // 2 <= parts.max() <= MAX_MULTIPLICITY  # the heaviest: in (128, 256], rounded


def test_integer_weights_are_multiplicities_and_others_fixed_point():
    y = np.array(["a", "b", "a", "b"])
    rule, m = _by_parts(np.array([1.0, 3.0, 0.0, 2.0]), y, [2])
    assert rule.integer and m.tolist() == [1, 3, 0, 2]
    rule, m = _by_parts(np.array([0.5, 1.5, 0.25, 0.75]), y, [1])
    assert not rule.integer and rule.shift == 7 and m.tolist() == [64, 192, 32, 96]  # 1.5 * 2**7 <= 256
    # integer weights whose sum passes int32 are scaled too
    rule, m = _by_parts(np.array([2.0**31, 1.0, 2.0**30, 0.0]), np.array(["a", "b", "b", "a"]), [2])
    assert not rule.integer and m.tolist() == [256, 0, 128, 0]
    assert merge_weight_stats([weight_stats(np.array([2.0**31 - 1]), pa.array(["a"])),
                               weight_stats(np.array([1.0]), pa.array(["b"]))]).sums is None
    assert MAX_ROWS == 2**31 - 1


def test_class_weights_multiply_the_rows_weights():
    y = np.array(["a", "b", "b", "b"])
    rule, m = _by_parts(np.array([1.0, 1.0, 2.0, 1.0]), y, [1], {"a": 3})
    assert rule.integer and m.tolist() == [3, 1, 2, 1]
    rule, m = _by_parts(np.ones(4), y, [2], "balanced")  # 4 / (2 * 1) and 4 / (2 * 3)
    assert rule.factors == (2.0, 4 / 6) and m.tolist() == [256, 85, 85, 85]
    with pytest.raises(ParameterError, match="class_weight names 'z', which is not a class"):
        _by_parts(np.ones(4), y, [2], {"z": 2})
    with pytest.raises(ParameterError, match=r"class_weight\['a'\] must be a finite number >= 0"):
        _by_parts(np.ones(4), y, [2], {"a": -1})
    with pytest.raises(InputError, match="sum to zero"):
        _by_parts(np.ones(4), y, [2], {"a": 0, "b": 0})


def test_a_weight_column_is_checked_row_by_row():
    with pytest.raises(DataError, match=r"weight column 'w' is -2 at row 1 of part-3.parquet: weights must be"):
        weight_values(pa.array([1.0, -2.0]), "w", "part-3.parquet")
    with pytest.raises(DataError, match=r"weight column 'w' is null at row 2"):
        weight_values(pa.array([1, 2, None]), "w", "")
    with pytest.raises(DataError, match=r"is inf at row 0"):
        weight_values(pa.array([float("inf")]), "w", "")
    np.testing.assert_array_equal(weight_values(pa.array([1, 0, 7], pa.uint8()), "w", ""), [1.0, 0.0, 7.0])
