"""A level's search results, packed, pickled and joined, change the forest as object-by-object code did.

Search tasks write their results as columns (:mod:`dasktree.levels.level_search`), the
client joins a level's chunks (:func:`~dasktree.levels.results.concat`) and
:func:`dasktree.levels.grow._apply` turns the columns into branches, children and
leaves. The reference here is the apply it replaced, on the unpacked objects.
"""

import copy
import dataclasses
import pickle
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import dasktree.levels.grow as grow
from dasktree.binning.spec import bin_spec
from dasktree.engine.local_runner import LocalRunner
from dasktree.levels.forest import Forest, Node
from dasktree.levels.grow import GrowParams
from dasktree.levels.level_search import leaf_reasons
from dasktree.levels.results import PackedResults, concat
from dasktree.io.folds import FoldSpec
from dasktree.io.schema import resolve_roles
from dasktree.io.sources import open_source
from dasktree.split import node_tests
from dasktree.split.search import Candidate, SplitParams
from dasktree.testing.forests import set_tests


# The results as objects, as the search wrote them before its columns: the reference view here.
@dataclass
class TreeDecision:
    """One tree's decision at a node, as an object: its candidate and children counts, or a leaf's reason."""

    candidate: Candidate | None
    child_counts: np.ndarray | None  # (arity, n_parts + 1, n_classes): parts, then the total
    reason: str = ""


@dataclass
class NodeResult:
    """A node's counts and its trees' decisions, as objects (what :func:`pack` packs)."""

    node: int
    counts: np.ndarray  # (n_parts + 1, n_classes): parts, then the total
    decisions: dict[int, TreeDecision]


def pack(results: list[NodeResult], n_parts: int, n_classes: int) -> PackedResults:
    """The columns of ``results``; a chosen test shared by several trees is stored once."""
    pair_result, pair_tree, pair_choice, reasons = [], [], [], []
    chosen: list[TreeDecision] = []
    index_of: dict[tuple[int, int], int] = {}  # (id of the candidate, id of the children counts)
    for i, result in enumerate(results):
        for tree, decision in result.decisions.items():
            pair_result.append(i)
            pair_tree.append(tree)
            reasons.append(decision.reason)
            if decision.candidate is None:
                pair_choice.append(-1)
                continue
            key = (id(decision.candidate), id(decision.child_counts))
            if key not in index_of:
                index_of[key] = len(chosen)
                chosen.append(decision)
            pair_choice.append(index_of[key])
    tests = [d.candidate.test for d in chosen]
    arities = [t.arity for t in tests]
    return PackedResults(
        nodes=np.asarray([r.node for r in results], dtype=np.int64),
        counts=(np.stack([r.counts for r in results]) if results
                else np.zeros((0, n_parts + 1, n_classes), dtype=np.int64)),
        pair_result=np.asarray(pair_result, dtype=np.int64),
        pair_tree=np.asarray(pair_tree, dtype=np.int64),
        pair_choice=np.asarray(pair_choice, dtype=np.int64),
        reasons=tuple(reasons),
        attribute=np.asarray([t.attribute for t in tests], dtype=np.int64),
        kind=tuple(t.kind for t in tests),
        default=np.asarray([t.default for t in tests], dtype=np.int64),
        thresholds=tuple(t.thresholds for t in tests),
        groups=tuple(t.groups for t in tests),
        gain=np.asarray([d.candidate.gain for d in chosen], dtype=np.float64),
        score=np.asarray([d.candidate.score for d in chosen], dtype=np.float64),
        bin_children=(np.concatenate([t.bin_children for t in tests]) if tests else np.zeros(0, dtype=np.int16)),
        bin_start=np.concatenate([[0], np.cumsum([t.bin_children.size for t in tests], dtype=np.int64)]),
        cut=np.asarray([t.cut for t in tests], dtype=np.int64),
        train_children=(np.concatenate([d.candidate.child_counts for d in chosen]) if chosen
                        else np.zeros((0, n_classes), dtype=np.int64)),
        children=(np.concatenate([d.child_counts for d in chosen]) if chosen
                  else np.zeros((0, n_parts + 1, n_classes), dtype=np.int64)),
        arity_start=np.concatenate([[0], np.cumsum(arities, dtype=np.int64)]),
    )



def _unpack(packed: PackedResults) -> list[NodeResult]:
    """The :class:`NodeResult` s that :func:`pack` was given, equal field for field."""
    bin_start, arity_start = packed.bin_start.tolist(), packed.arity_start.tolist()
    gain, score = packed.gain.tolist(), packed.score.tolist()
    attribute, default = packed.attribute.tolist(), packed.default.tolist()
    chosen: list[tuple[Candidate, np.ndarray]] = []
    for k in range(len(packed.kind)):
        test = node_tests.Test(attribute[k], packed.kind[k], packed.bin_children[bin_start[k]:bin_start[k + 1]],
                    default[k], packed.thresholds[k], packed.groups[k])
        lo, hi = arity_start[k], arity_start[k + 1]
        candidate = Candidate(test, gain[k], score[k], packed.train_children[lo:hi])
        chosen.append((candidate, packed.children[lo:hi]))
    results = [NodeResult(node, packed.counts[i], {}) for i, node in enumerate(packed.nodes.tolist())]
    for i, tree, choice, reason in zip(packed.pair_result.tolist(), packed.pair_tree.tolist(),
                                       packed.pair_choice.tolist(), packed.reasons):
        results[i].decisions[tree] = TreeDecision(*(chosen[choice] if choice >= 0 else (None, None)), reason)
    return results


def _reference_apply(forest: Forest, results: list[NodeResult], params: GrowParams,
           level: int) -> tuple[int, list[int], list[Node]]:
    """The object-by-object apply that grow._apply replaced: a node's decisions one at a time."""
    proposals: list[tuple[float, int, int, TreeDecision]] = []
    all_sizes = forest.train_sizes(np.stack([r.counts for r in results])).tolist() if results else []
    for result, sizes in zip(results, all_sizes):  # sizes: training rows of every tree at the node
        node = forest.nodes[result.node]
        node.counts = result.counts
        if node.id == 0:
            forest.root_size = np.asarray(sizes, dtype=np.int64)
        root_size = forest.root_size
        for tree, decision in sorted(result.decisions.items()):
            if decision.candidate is None:
                forest.set_leaf(node, tree, decision.reason)
                continue
            weighted = float(sizes[tree]) / float(root_size[tree]) * decision.candidate.gain
            if weighted + grow.EPSILON < params.min_impurity_decrease:
                forest.set_leaf(node, tree, "min_impurity_decrease")
                continue
            proposals.append((weighted, node.id, tree, decision))
    by_accepted_node: dict[int, dict[int, TreeDecision]] = {}
    if params.max_leaf_nodes is not None:
        leaves = grow._leaf_counts(forest)
        for weighted, node_id, tree, decision in sorted(proposals, key=lambda p: (-p[0], p[1], p[2])):
            extra = decision.candidate.test.arity - 1
            if leaves[tree] + extra <= params.max_leaf_nodes:
                leaves[tree] += extra
                by_accepted_node.setdefault(node_id, {})[tree] = decision
            else:
                forest.set_leaf(forest.nodes[node_id], tree, "max_leaf_nodes")
    else:
        for _, node_id, tree, decision in proposals:
            by_accepted_node.setdefault(node_id, {})[tree] = decision
    splits = 0
    tests_per_node: list[int] = []
    created: list[Node] = []
    for node_id in sorted(by_accepted_node):
        node = forest.nodes[node_id]
        decided = by_accepted_node[node_id]
        tests = {t: d.candidate.test for t, d in decided.items()}
        child_counts = {t: d.child_counts for t, d in decided.items()}
        children = set_tests(forest, node, tests, child_counts)
        tests_per_node.append(len(node.branches))
        splits += len(node.branches)
        created += children
    if params.max_depth is not None and level + 1 >= params.max_depth:
        reasons = ["max_depth"] * sum(len(child.trees) for child in created)
    elif created:  # every (child, tree) pair at once
        pair_child = [k for k, child in enumerate(created) for _ in child.trees]
        pair_tree = [t for child in created for t in child.trees]
        train = forest.train_counts_of(np.stack([child.counts for child in created])[pair_child], pair_tree)
        reasons = leaf_reasons(train, params.min_samples_split, params.split.min_samples_leaf)
    first = 0
    for child in created:
        forest.set_leaves(child, child.trees, reasons[first:first + len(child.trees)])
        first += len(child.trees)
    return splits, tests_per_node, created




def _same_forest(a: Forest, b: Forest) -> None:
    assert len(a.nodes) == len(b.nodes)
    np.testing.assert_array_equal(a.root_size, b.root_size)
    for x, y in zip(a.nodes, b.nodes):
        assert (x.id, x.depth, x.trees, x.leaf_trees, x.branch_index) == (y.id, y.depth, y.trees, y.leaf_trees,
                                                                          y.branch_index)
        assert x.leaf_reason == y.leaf_reason
        np.testing.assert_array_equal(x.counts, y.counts)
        assert [(p.trees, p.test, p.children) for p in x.branches] == [(q.trees, q.test, q.children)
                                                                       for q in y.branches]
        for p, q in zip(x.branches, y.branches):
            assert (p.test.kind, p.test.default, p.test.thresholds, p.test.groups) == \
                   (q.test.kind, q.test.default, q.test.thresholds, q.test.groups)
    for arrays in zip(a._flat.arrays(len(a.nodes)), b._flat.arrays(len(b.nodes))):
        np.testing.assert_array_equal(*arrays)


class _ChunkingRunner(LocalRunner):
    """Each level's results cut into three chunks, packed and pickled apart, then joined (as from a
    cluster). Each node's decisions are put in reverse order first: the apply must not read the
    order of a node's pairs (the search writes them in tree order, objects had leaves first)."""

    decisions = 0

    def level_pass(self, plan, requests, context, label):
        results = _unpack(super().level_pass(plan, requests, context, label))
        for result in results:
            result.decisions = dict(reversed(list(result.decisions.items())))
        n_parts = context.n_folds * context.n_repeats
        cuts = [0, len(results) // 3, 2 * len(results) // 3, len(results)]
        chunks = [pickle.loads(pickle.dumps(pack(results[a:b], n_parts, context.n_classes), protocol=5))
                  for a, b in zip(cuts, cuts[1:])]
        self.decisions += sum(len(r.decisions) for r in results)
        return concat(chunks, n_parts, context.n_classes)


def _frame(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rng.integers(0, 40, size=n).astype(float)
    z[rng.random(n) < 0.05] = np.nan
    colour = rng.choice(["red", "green", "blue", "grey"], size=n)
    label = ((x > 0.3) ^ (colour == "red") ^ (z > 25)) | (rng.random(n) < 0.25)
    return pd.DataFrame({"x": x, "z": z, "colour": colour, "label": np.where(label, "yes", "no")})


@pytest.mark.parametrize("max_arity, nominal_split, max_leaf_nodes, min_impurity_decrease", [
    (2, "binary", None, 0.0), (3, "multiway", None, 0.0), (2, "binary", 12, 0.0), (3, "multiway", 9, 0.002),
])
def test_the_packed_apply_grows_the_forest_the_reference_grows(monkeypatch, max_arity, nominal_split,
                                                               max_leaf_nodes, min_impurity_decrease):
    applied = grow._apply
    levels = []

    def checked(forest, packed, params, level):
        twin = copy.deepcopy(forest)
        expected = _reference_apply(twin, _unpack(packed), params, level)
        got = applied(forest, packed, params, level)
        assert got[:2] == expected[:2]
        assert [c.id for c in got[2]] == [c.id for c in expected[2]]
        _same_forest(forest, twin)
        levels.append(level)
        return got

    monkeypatch.setattr(grow, "_apply", checked)
    source, target = open_source(_frame(), target="label")
    folds = FoldSpec(5, repeats=2, seed=3)
    roles = resolve_roles(source.schema, target, extra=folds.columns, where="frame")
    runner = _ChunkingRunner(source, roles, folds=folds)
    spec = bin_spec(runner.summary(64), roles, max_bins=64, max_categories=10)
    runner.prepare(spec, folds.k)
    params = GrowParams(max_depth=5, max_leaf_nodes=max_leaf_nodes,
                        min_impurity_decrease=min_impurity_decrease,
                        split=SplitParams(max_arity=max_arity, nominal_split=nominal_split, min_samples_leaf=3))
    forest, _ = grow.grow(runner, spec, params, n_trees=11, holdout=np.arange(-1, 10), n_folds=5, n_repeats=2)
    assert runner.decisions > 50 and len(levels) >= 3
    reasons = {r for node in forest.nodes for r in node.leaf_reason.values()}
    if max_leaf_nodes is None:
        kinds = {b.test.kind for node in forest.nodes for b in node.branches}
        assert kinds == {"numeric", "nominal"}
        assert any(b.test.arity > 2 for node in forest.nodes for b in node.branches) == (max_arity > 2)
        assert "max_depth" in reasons
    else:
        assert "max_leaf_nodes" in reasons
    if min_impurity_decrease:
        assert "min_impurity_decrease" in reasons
    assert any(len(node.branches) > 1 for node in forest.nodes)  # bifurcations
    assert any(len(b.trees) > 1 for node in forest.nodes for b in node.branches)  # shared branches
    # the arity tests_of gives its tests is the one their code tables have
    assert all(b.test.arity == int(b.test.bin_children.max()) + 1 == len(b.children)
               for node in forest.nodes for b in node.branches)
    # and so is the cut (the client routes by it without reading the table)
    assert all(b.test.cut == dataclasses.replace(b.test).cut for node in forest.nodes for b in node.branches)
    assert any(b.test.cut >= 0 for node in forest.nodes for b in node.branches)
    assert any(b.test.cut < 0 for node in forest.nodes for b in node.branches)


def test_an_empty_chunk_packs_and_joins():
    empty = pickle.loads(pickle.dumps(pack([], 10, 3)))
    assert _unpack(empty) == []
    assert _unpack(concat([empty, empty], 10, 3)) == []
    no_chunks = concat([], 10, 3)  # PackedResults.empty: the columns pack gives no results
    for field in dataclasses.fields(empty):
        a, b = getattr(empty, field.name), getattr(no_chunks, field.name)
        if isinstance(a, np.ndarray):
            assert (a.shape, a.dtype) == (b.shape, b.dtype) and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name
