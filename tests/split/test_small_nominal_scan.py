"""The small-node grower's nominal subset search is the level search's, bit for bit.

:func:`dasktree.split.small_scans.nominal_class_scan` searches one nominal attribute at one node from
the node's rows; the level search (:func:`dasktree.split.search.nominal_binary_columns`, and its
reference :func:`~dasktree.split.search.nominal_binary`) searches the node's histogram with numpy. On
small drawn nodes (2 and more classes, missing codes, categories above and below
``exhaustive_categories``, weights, held-out rows, ``min_samples_leaf``, each criterion) both choose
the same subset, default child and child sizes, with the same gain to the bit. A naive twin (every
subset of the present categories, plainly) checks the 2-class order's claim: its best gain is the
best of all subsets.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.split.binary_kernel import log2_table
from dasktree.split.search import SplitParams, nominal_binary, nominal_binary_columns, node_impurity
from dasktree.split.small_scans import nominal_class_scan

pytest.importorskip("numba")


@st.composite
def nodes(draw):
    n = draw(st.integers(2, 120))
    n_classes = draw(st.sampled_from([2, 2, 3, 4, 7]))
    width = draw(st.integers(2, 16))  # codes 0 (missing) .. width - 1
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    used = rng.choice(np.arange(1, width), size=draw(st.integers(1, width - 1)), replace=False)
    codes = rng.choice(used, size=n)
    codes[rng.random(n) < draw(st.sampled_from([0.0, 0.0, 0.15, 0.5]))] = 0
    y = rng.integers(0, draw(st.integers(1, n_classes)), size=n)  # some classes may be absent
    weight = rng.integers(1, 4, size=n) if draw(st.booleans()) else None
    held = rng.random(n) < draw(st.sampled_from([0.0, 0.3]))
    params = SplitParams(criterion=draw(st.sampled_from(["gini", "entropy", "gain_ratio"])),
                         min_samples_leaf=draw(st.sampled_from([1, 1, 2, 5])),
                         exhaustive_categories=draw(st.sampled_from([10, 10, 2, 4])))
    return codes, y, weight, held, n_classes, width, params


def histogram(codes, y, weight, held, n_classes, width) -> np.ndarray:
    """The node's training counts (width, n_classes): what the level pass counts."""
    h = np.zeros((width, n_classes), dtype=np.int64)
    w = np.ones(codes.size, dtype=np.int64) if weight is None else weight
    np.add.at(h, (codes[~held], y[~held]), w[~held])
    return h


def scan(codes, y, weight, held, n_classes, width, params, parent, size, log2):
    """``nominal_class_scan`` of the node's rows: (found, gain, default, child 0's size, side)."""
    n = codes.size
    result = np.zeros(4)
    side = np.full(width, -1, dtype=np.int64)
    found = nominal_class_scan(
        codes.astype(np.uint16), np.arange(n, dtype=np.int64), 0, n, held, y.astype(np.int64),
        np.zeros(0, np.int64) if weight is None else weight.astype(np.int64), n_classes,
        np.zeros(n_classes, np.int64), np.zeros((width, n_classes), np.int64), np.zeros(width, np.bool_),
        np.zeros(width, np.int64), parent, size, params.min_samples_leaf, params.exhaustive_categories, result,
        side, params.criterion != "gini", log2, np.zeros(max(n_classes, 2)))
    return found, result, side


@settings(max_examples=400, deadline=None)
@given(nodes())
def test_the_grower_nominal_scan_is_the_level_search(node):
    codes, y, weight, held, n_classes, width, params = node
    h = histogram(codes, y, weight, held, n_classes, width)
    total = h.sum(axis=0)
    n = float(total.sum())
    if n == 0:
        return
    parent = float(node_impurity(total[None], params.impurity_name)[0])
    log2 = log2_table(n) if params.criterion != "gini" else np.zeros(1)
    found, result, side = scan(codes, y, weight, held, n_classes, width, params, parent, n, log2)
    reference = nominal_binary(h, 0, parent, n, params)
    column = nominal_binary_columns({0: h[None]}, np.array([parent]), np.array([n]), params)[0]
    assert found == (reference is not None) == np.isfinite(column.gains[0])
    if not found:
        return
    test, gain, children = reference
    batched = column[0]
    assert result[0] == gain == batched[1]  # the same float
    assert batched[0] == test and batched[0].groups == test.groups
    assert int(result[2]) == test.default
    assert int(result[3]) == int(children[0].sum())
    present = np.flatnonzero(h[1:].sum(axis=1) > 0) + 1
    assert np.array_equal(side[present], test.bin_children[present])
    absent = np.setdiff1d(np.arange(1, width), present)
    assert (side[absent] == -1).all()


def naive_best(h: np.ndarray, min_leaf: int, parent: float, n: float, name: str) -> float:
    """The best gain of every binary partition of the present categories (missing values none),
    plainly: a partition and its mirror once."""
    present = np.flatnonzero(h[1:].sum(axis=1) > 0) + 1
    best = -np.inf
    for size in range(1, present.size):
        for left in itertools.combinations(present.tolist(), size):
            l_counts = h[list(left)].sum(axis=0)
            r_counts = h[present].sum(axis=0) - l_counts
            if l_counts.sum() < min_leaf or r_counts.sum() < min_leaf:
                continue
            weighted = sum(c.sum() * float(node_impurity(c[None], name)[0]) for c in (l_counts, r_counts))
            best = max(best, parent - weighted / n)
    return best


@settings(max_examples=150, deadline=None)
@given(nodes())
def test_two_classes_order_finds_the_best_subset(node):
    """With two classes, no missing value and no least leaf size, the prefixes of the categories ordered
    by the second class's proportion hold the best of every subset (Breiman et al. 1984), gini and
    entropy."""
    codes, y, weight, held, _, width, params = node
    codes = np.where(codes == 0, 1, codes)
    params = dataclasses.replace(params, min_samples_leaf=1)  # (a leaf's least size may exclude every prefix)
    h = histogram(codes, y % 2, weight, held, 2, width)
    n = float(h.sum())
    if n == 0:
        return
    name = params.impurity_name
    parent = float(node_impurity(h.sum(axis=0)[None], name)[0])
    found, result, _ = scan(codes, y % 2, weight, held, 2, width, params, parent, n,
                            log2_table(n) if name != "gini" else np.zeros(1))
    best = naive_best(h, params.min_samples_leaf, parent, n, name)
    assert found == np.isfinite(best)
    if found:
        assert result[0] == pytest.approx(best, rel=1e-9, abs=1e-12)


def test_more_classes_than_exhaustive_categories_take_each_class_order():
    """Three classes, 12 categories (beyond 10): each class's order's prefixes, a later class's only
    when strictly better; 4 categories: every subset."""
    rng = np.random.default_rng(3)
    for width, exhaustive in ((13, 10), (5, 10), (5, 3)):
        codes = rng.integers(1, width, size=300)
        y = (codes * 7 + rng.integers(0, 2, size=300)) % 3
        params = SplitParams(criterion="entropy", exhaustive_categories=exhaustive)
        h = histogram(codes, y, None, np.zeros(300, bool), 3, width)
        parent = float(node_impurity(h.sum(axis=0)[None], "entropy")[0])
        found, result, side = scan(codes, y, None, np.zeros(300, bool), 3, width, params, parent, 300.0,
                                   log2_table(300.0))
        test, gain, _ = nominal_binary(h, 0, parent, 300.0, params)
        assert found and result[0] == gain and np.array_equal(side[1:], test.bin_children[1:])
