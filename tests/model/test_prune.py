"""The pruning kernels (:mod:`dasktree.model.prune`) against brute force, a naive twin, scikit-learn and C4.5.

Trees here are plain arrays (children, counts) as in a TreeModel: no Dask, no forest.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier

from dasktree.model.prune import (
    _added_errors,
    c45_added_errors,
    cp_table,
    choose_alpha,
    leaf_counts_at,
    leaf_errors,
    leaves_at,
    node_risk,
    pessimistic_leaves,
    positions_at,
    shape_of,
    sums_at,
    weakest_link,
)


# ---------------------------------------------------------------- random small trees

@st.composite
def trees(draw, max_internal=7, n_classes=3):
    """A random tree in breadth-first order: arities 2..4, leaf counts 0..12 per class."""
    children = [[]]
    frontier = [0]
    n_internal = draw(st.integers(1, max_internal))
    made = 0
    while frontier and made < n_internal:
        node = frontier.pop(draw(st.integers(0, len(frontier) - 1)))
        arity = draw(st.integers(2, 4))
        kids = list(range(len(children), len(children) + arity))
        children[node] = kids
        children.extend([] for _ in kids)
        frontier.extend(kids)
        made += 1
    children = _bfs(children)
    counts = np.zeros((len(children), n_classes), dtype=np.int64)
    for i in range(len(children) - 1, -1, -1):
        if children[i]:
            counts[i] = counts[children[i]].sum(axis=0)
        else:
            counts[i] = draw(st.lists(st.integers(0, 12), min_size=n_classes, max_size=n_classes))
    if counts[0].sum() == 0:
        counts[len(children) - 1, 0] = 1
        for i in range(len(children) - 1, -1, -1):
            if children[i]:
                counts[i] = counts[children[i]].sum(axis=0)
    return children, counts


def _bfs(children):
    order = [0]
    for i in order:
        order.extend(children[i])
    new = {old: k for k, old in enumerate(order)}
    return [[new[c] for c in children[old]] for old in order]


def _prunings(children, node=0):
    """Every subtree rooted at ``node``: the sets of its leaves."""
    if not children[node]:
        return [frozenset([node])]
    options = [frozenset([node])]
    for combo in itertools.product(*[_prunings(children, c) for c in children[node]]):
        options.append(frozenset().union(*combo))
    return options


def _naive_path(children, counts, criterion):
    """scikit-learn's loop: every step scans all candidates, collapses the least (first on ties)."""
    risk = node_risk(counts, criterion)
    current = {i for i, k in enumerate(children) if k}
    alphas = []

    def leaves_below(i):
        if not children[i] or i not in current:
            return [i]
        return [x for c in children[i] for x in leaves_below(c)]

    def inside(i):
        stack, out = [i], []
        while stack:
            j = stack.pop()
            out.append(j)
            if j in current:
                stack.extend(children[j])
        return out

    while 0 in current:
        best, node = math.inf, -1
        for i in sorted(current):
            below = leaves_below(i)
            a = (risk[i] - risk[below].sum()) / (len(below) - 1)
            if a < best:
                best, node = a, i
        alphas.append(best)
        for j in inside(node):
            current.discard(j)
    return np.array(alphas)


@settings(max_examples=150, deadline=None)
@given(trees(), st.sampled_from(["gini", "entropy"]))
def test_weakest_link_matches_the_naive_loop(tree, criterion):
    children, counts = tree
    path = weakest_link(children, counts, criterion)
    naive = _naive_path(children, counts, criterion)
    assert np.allclose(np.sort(path.step_alphas), np.sort(naive), rtol=1e-9, atol=1e-12)


def _eager_steps(children, risk):
    """The collapse order with every ancestor's alpha recomputed at each collapse from the same running
    sums as the kernel keeps (so the same floats), the least (alpha, node) taken by a scan."""
    n = len(children)
    parent = [-1] * n
    for i, kids in enumerate(children):
        for c in kids:
            parent[c] = i
    internal = [bool(k) for k in children]
    branch = [0.0 if internal[i] else float(risk[i]) for i in range(n)]
    leaves = [0 if internal[i] else 1 for i in range(n)]
    for i in range(n - 1, 0, -1):
        branch[parent[i]] += branch[i]
        leaves[parent[i]] += leaves[i]
    alpha = {i: (risk[i] - branch[i]) / (leaves[i] - 1) if leaves[i] > 1 else 0.0 for i in range(n) if internal[i]}
    steps, alphas = [], []
    while alpha:
        node = min(alpha, key=lambda i: (alpha[i], i))
        steps.append(node)
        alphas.append(alpha.pop(node))
        stack = list(children[node])
        while stack:  # the branch below leaves the tree
            c = stack.pop()
            if alpha.pop(c, None) is not None or not internal[c]:
                stack.extend(children[c])
        removed, diff = leaves[node] - 1, risk[node] - branch[node]
        branch[node], leaves[node] = float(risk[node]), 1
        anc = parent[node]
        while anc >= 0:
            leaves[anc] -= removed
            branch[anc] += diff
            alpha[anc] = (risk[anc] - branch[anc]) / (leaves[anc] - 1) if leaves[anc] > 1 else 0.0
            anc = parent[anc]
    return steps, alphas


@settings(max_examples=200, deadline=None)
@given(trees(max_internal=12, n_classes=2), st.sampled_from(["gini", "entropy"]))
def test_the_heaps_lazy_keys_collapse_as_moving_every_ancestor(tree, criterion):
    """The kernel leaves a raised ancestor's key where it is until it comes to the top; the order (ties
    to the lower node, small counts make many) and the floats are those of moving every ancestor at once."""
    children, counts = tree
    path = weakest_link(children, counts, criterion)
    steps, alphas = _eager_steps(children, node_risk(counts, criterion))
    assert path.step_nodes.tolist() == steps
    assert path.step_alphas.tolist() == alphas


@settings(max_examples=120, deadline=None)
@given(trees(max_internal=5), st.sampled_from(["gini", "entropy"]))
def test_subtree_minimises_cost_complexity_with_fewest_leaves(tree, criterion):
    """T(alpha) minimises R(T) + alpha |leaves(T)| over ALL prunings; among minimisers it is the smallest."""
    children, counts = tree
    path = weakest_link(children, counts, criterion)
    risk = node_risk(counts, criterion)
    options = _prunings(children)
    alphas = path.alphas
    probes = np.concatenate([alphas, (alphas[1:] + alphas[:-1]) / 2, [alphas[-1] * 2 + 1]])
    for alpha in probes:
        mask = leaves_at(path, alpha)
        ours = frozenset(np.flatnonzero(mask).tolist())
        assert ours in options  # a pruning of the tree: its leaves cover the root exactly once
        cost = lambda leaves: risk[list(leaves)].sum() + alpha * len(leaves)  # noqa: E731
        best = min(cost(o) for o in options)
        assert cost(ours) <= best + 1e-9
        fewest = min(len(o) for o in options if cost(o) <= best + 1e-9)
        # between the critical alphas the minimiser is unique; within the cost tolerance of one
        # (a critical alpha of 5.6e-17 where rounding of equal risks leaves 0) it is not
        if not np.isclose(alpha, alphas, rtol=0, atol=1e-9).any():
            assert len(ours) == fewest
        assert sums_at(path, np.ones(len(children), dtype=np.int64), np.array([alpha]))[0] == len(ours)


@settings(max_examples=80, deadline=None)
@given(trees())
def test_sums_at_equal_sums_over_the_leaves(tree):
    children, counts = tree
    path = weakest_link(children, counts, "gini")
    errors = leaf_errors(children, counts)
    probes = np.unique(np.concatenate([path.alphas, path.alphas * 1.5, [0.0, np.inf]]))
    direct = [errors[leaves_at(path, a)].sum() for a in probes]
    assert sums_at(path, errors, probes).tolist() == direct



@settings(max_examples=80, deadline=None)
@given(trees(), st.lists(st.floats(0, 1e-9, allow_subnormal=False), max_size=6))
def test_leaf_counts_and_shared_positions_equal_the_sums_of_ones(tree, jitter):
    """Counting the leaves (``leaf_counts_at``) and summing with the positions found once (``positions_at``,
    as the CV errors of a fold take two columns over the same betas) give :func:`sums_at`'s numbers, at the
    sequence's alphas and between them, ``inf`` included."""
    children, counts = tree
    path = weakest_link(children, counts, "gini")
    probes = np.unique(np.concatenate([path.alphas, path.alphas + np.asarray(jitter + [0.0]).max(), [np.inf]]))
    ones = np.ones(len(children), dtype=np.int64)
    errors = leaf_errors(children, counts).astype(np.float64) / 7.0
    at = positions_at(path, probes)
    assert leaf_counts_at(path, probes, at).tolist() == sums_at(path, ones, probes).tolist()
    assert leaf_counts_at(path, probes).tolist() == [int(leaves_at(path, a).sum()) for a in probes]
    assert sums_at(path, errors, probes, at).tolist() == sums_at(path, errors, probes).tolist()

def test_leaf_class_ties_go_to_the_first_class_and_empty_nodes_take_their_parents():
    children = [[1, 2], [], []]
    counts = np.array([[3, 3], [0, 0], [3, 3]])
    # node 1 has no rows: it predicts its parent's class (0, the first of a tie); 3 errors at node 2
    assert leaf_errors(children, counts).tolist() == [3, 0, 3]
    held = np.array([[2, 5], [1, 1], [1, 4]])
    assert leaf_errors(children, counts, held).tolist() == [5, 1, 4]


# ---------------------------------------------------------------- scikit-learn's path

def _sklearn_arrays(sk):
    t = sk.tree_
    order = [0]
    for i in order:
        if t.children_left[i] != -1:
            order += [t.children_left[i], t.children_right[i]]
    index = {o: k for k, o in enumerate(order)}
    children = [[index[t.children_left[o]], index[t.children_right[o]]] if t.children_left[o] != -1 else []
                for o in order]
    counts = np.rint(t.value[order, 0, :] * t.weighted_n_node_samples[order, None]).astype(np.int64)
    return children, counts


@pytest.mark.parametrize("loader", [datasets.load_iris, datasets.load_wine, datasets.load_breast_cancer,
                                    datasets.load_digits])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_path_of_sklearns_own_tree_equals_its_pruning_path(loader, criterion):
    X, y = loader(return_X_y=True)
    sk = DecisionTreeClassifier(criterion=criterion, random_state=0).fit(X, y)
    children, counts = _sklearn_arrays(sk)
    path = weakest_link(children, counts, criterion)
    theirs = sk.cost_complexity_pruning_path(X, y).ccp_alphas
    assert theirs[0] == 0.0
    assert np.allclose(np.sort(path.step_alphas), np.sort(theirs[1:]), rtol=1e-9, atol=1e-15)
    alphas = path.alphas
    for alpha in ((alphas[1:] + alphas[:-1]) / 2)[:: max(1, len(alphas) // 8)]:
        pruned = DecisionTreeClassifier(criterion=criterion, random_state=0, ccp_alpha=alpha).fit(X, y)
        assert pruned.get_n_leaves() == leaves_at(path, alpha).sum()


# ---------------------------------------------------------------- CV choice

def test_one_se_rule_and_minimum():
    table = [{"alpha": 0.0, "cv_error": 0.30, "cv_se": 0.02}, {"alpha": 0.1, "cv_error": 0.20, "cv_se": 0.02},
             {"alpha": 0.2, "cv_error": 0.21, "cv_se": 0.02}, {"alpha": 0.3, "cv_error": 0.23, "cv_se": 0.02},
             {"alpha": 0.4, "cv_error": 0.40, "cv_se": 0.02}]
    assert choose_alpha(table, "cv-min") == 1
    tied = [{**row, "cv_error": 0.20} if row["alpha"] == 0.2 else row for row in table]
    assert choose_alpha(tied, "cv-min") == 2  # of equal errors, the smaller tree
    assert choose_alpha(table, "cv") == 2  # 0.21 <= 0.20 + 0.02 < 0.23


def test_cp_table_counts_held_out_errors_at_the_geometric_means():
    class T:  # a TreeModel's arrays
        def __init__(self, children, counts, validation=None):
            self.children, self.counts, self.validation = children, np.asarray(counts), validation

    main = T([[1, 2], [], []], [[10, 10], [9, 1], [1, 9]])
    fold = T([[1, 2], [], []], [[5, 5], [5, 0], [0, 5]], np.array([[4, 6], [1, 3], [3, 3]]))
    table = cp_table(main, [fold], "gini")
    assert [r["leaves"] for r in table] == [2, 1]
    assert table[0]["train_error"] == pytest.approx(2 / 20) and table[1]["train_error"] == pytest.approx(10 / 20)
    # beta_0 = 0: the fold tree whole: leaf 1 says class 0 (3 wrong), leaf 2 class 1 (3 wrong)
    assert table[0]["cv_error"] == pytest.approx(6 / 10)
    assert table[0]["cv_se"] == pytest.approx(math.sqrt(0.6 * 0.4 / 10))
    # beta_1 = inf: the root alone says class 0 (ties to the first): 6 wrong
    assert table[1]["cv_error"] == pytest.approx(6 / 10)


# ---------------------------------------------------------------- C4.5's pessimistic pruning

def test_c45_upper_limits_reproduce_quinlans_example():
    """C4.5 (Quinlan 1993, Section 4.2): the 'education spending' subtree of the congressional votes.

    Leaves (N=6, E=0), (N=9, E=0), (N=1, E=0): U_25%(0, N) = 1 - 0.25 ** (1 / N), so
    6 * 0.206 + 9 * 0.143 + 1 * 0.750 = 3.273 predicted errors; the node itself (N=16, E=1):
    16 * U_25%(1, 16) = 16 * 0.157 = 2.512 < 3.273, so the subtree becomes a leaf.
    """
    assert c45_added_errors(6, 0) / 6 == pytest.approx(1 - 0.25 ** (1 / 6)) == pytest.approx(0.206, abs=5e-4)
    assert c45_added_errors(9, 0) / 9 == pytest.approx(0.143, abs=5e-4)
    assert c45_added_errors(1, 0) / 1 == pytest.approx(0.750)
    # E = 1: C4.5's normal approximation with continuity correction, z = 0.6925 at CF = 0.25
    z2 = (0.84 + (0.25 - 0.84) * (0.25 - 0.20) / 0.20) ** 2
    pr = (1.5 + z2 / 2 + math.sqrt(z2 * (1.5 * (1 - 1.5 / 16) + z2 / 4))) / (16 + z2)
    assert (1 + c45_added_errors(16, 1)) / 16 == pytest.approx(pr) == pytest.approx(0.157, abs=5e-4)
    children = [[1, 2, 3], [], [], []]
    counts = np.array([[15, 1], [6, 0], [9, 0], [0, 1]])
    assert pessimistic_leaves(children, counts).tolist() == [True, True, True, True]
    # a stricter confidence keeps it? no: lower CF means larger upper limits at the leaves too;
    # a subtree that does separate many rows is kept
    counts = np.array([[40, 40], [40, 0], [0, 40], [0, 0]])
    assert pessimistic_leaves(children, counts).tolist() == [False, True, True, True]


def test_pessimistic_replacement_is_bottom_up():
    # node 1's leaves are replaced first (pure but tiny); then the root compares with the pruned branch
    children = [[1, 2], [3, 4], [], [], []]
    counts = np.array([[30, 12], [3, 2], [27, 10], [2, 1], [1, 1]])
    leaves = pessimistic_leaves(children, counts)
    assert leaves[1] and leaves[0]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.floats(0, 500), st.sampled_from([0.05, 0.1, 0.25, 0.4, 0.6]))
def test_added_errors_on_arrays_match_the_scalar_rule(n, e, cf):
    e = min(e, n)
    assert _added_errors(np.array([n]), np.array([e]), cf)[0] == pytest.approx(c45_added_errors(n, e, cf),
                                                                               rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------- the tree's shape as arrays: naive twins

def _naive_pessimistic(children, counts, confidence=0.25):
    """C4.5's replacement as a loop over the children lists (the compiled one's twin)."""
    errors = leaf_errors(children, counts)
    estimate = errors + _added_errors(np.asarray(counts).sum(axis=1), errors, confidence)
    is_leaf = np.array([len(k) == 0 for k in children], dtype=bool)
    branch = estimate.tolist()
    for i in np.flatnonzero(~is_leaf)[::-1].tolist():
        below = sum(branch[c] for c in children[i])
        if estimate[i] <= below + 0.1:
            is_leaf[i] = True
        else:
            branch[i] = below
    return is_leaf


def _naive_pruned(tree, leaves):
    """The pruned tree by a walk of the kept nodes over the lists (the array version's twin)."""
    keep = [0]
    for i in keep:
        if not leaves[i] and tree.tests[i] is not None:
            keep.extend(tree.children[i])
    keep.sort()
    index = {old: new for new, old in enumerate(keep)}
    tests, children, reasons = [], [], []
    for old in keep:
        cut = bool(leaves[old]) or tree.tests[old] is None
        tests.append(None if cut else tree.tests[old])
        children.append([] if cut else [index[c] for c in tree.children[old]])
        reason = tree.leaf_reason[old] if old < len(tree.leaf_reason) else ""
        reasons.append(("pruned" if tree.tests[old] is not None else reason) if cut else "")
    return tests, children, reasons, np.asarray(keep)


def _tree_model(children, counts, validation=None):
    from dasktree.model.model import TreeModel

    depth = np.zeros(len(children), dtype=np.int64)
    for i, kids in enumerate(children):
        depth[kids] = depth[i] + 1
    tests = [f"test {i}" if kids else None for i, kids in enumerate(children)]  # any object stands for a test
    reasons = ["" if kids else ("pure" if i % 2 else "no_split") for i, kids in enumerate(children)]
    return TreeModel(tests, children, np.asarray(counts), depth, validation, reasons)


@settings(max_examples=150, deadline=None)
@given(trees(), st.sampled_from([0.1, 0.25, 0.6]))
def test_compiled_pessimistic_replacement_equals_the_loop(tree, cf):
    children, counts = tree
    assert pessimistic_leaves(children, counts, cf).tolist() == _naive_pessimistic(children, counts, cf).tolist()


@settings(max_examples=150, deadline=None)
@given(trees(), st.data())
def test_pruned_tree_from_arrays_equals_the_walk_over_lists(tree, data):
    from dasktree.model.prune import pruned_tree, tree_shape

    children, counts = tree
    model = _tree_model(children, counts, validation=np.asarray(counts)[:, ::-1].copy())
    leaves = np.array(data.draw(st.lists(st.booleans(), min_size=len(children), max_size=len(children))))
    pruned = pruned_tree(model, leaves)
    tests, kids, reasons, keep = _naive_pruned(model, leaves)
    assert (pruned.tests, pruned.children, pruned.leaf_reason) == (tests, kids, reasons)
    assert pruned.counts.tolist() == model.counts[keep].tolist()
    assert pruned.validation.tolist() == model.validation[keep].tolist()
    assert pruned.depth.tolist() == model.depth[keep].tolist()
    # the shape kept with the pruned tree is the one its lists give
    kept, fresh = tree_shape(pruned), shape_of(pruned.children)
    assert all(np.array_equal(getattr(kept, f), getattr(fresh, f)) for f in ("parent", "start", "flat"))


@settings(max_examples=100, deadline=None)
@given(trees(), st.sampled_from(["gini", "entropy"]))
def test_path_risks_equal_the_loop_over_ancestors(tree, criterion):
    from dasktree.model.pruning import path_impurities

    children, counts = tree
    risk = node_risk(counts, criterion)
    path = weakest_link(children, counts, criterion)
    parent = shape_of(children).parent
    branch = [0.0 if kids else float(r) for kids, r in zip(children, risk)]
    for i in range(len(children) - 1, 0, -1):
        branch[parent[i]] += branch[i]
    expected = [branch[0]]
    for node in path.step_nodes.tolist():
        diff = risk[node] - branch[node]
        while node >= 0:
            branch[node] += diff
            node = parent[node]
        expected.append(branch[0])
    assert path_impurities(children, risk, path).tolist() == expected


def test_a_tree_edited_in_place_gets_its_shape_again():
    from dasktree.model.prune import tree_shape

    model = _tree_model([[1, 2], [], []], [[2, 1], [2, 0], [0, 1]])
    assert tree_shape(model).flat.tolist() == [1, 2]
    model.children = [[1, 2], [3, 4], [], [], []]
    assert tree_shape(model).parent.tolist() == [-1, 0, 0, 1, 1]
