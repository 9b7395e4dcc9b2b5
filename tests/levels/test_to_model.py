"""Trees given as columns over their nodes, in any order, become models in breadth-first order: the
arrays' way (:func:`dasktree.levels.to_model.models_of`) against a naive queue of each tree's nodes."""

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dasktree.levels.to_model import _breadth_first, models_of
from dasktree.model.model import ChildLinks, TreeModel
from dasktree.model.prune import tree_shape


@st.composite
def forests(draw):
    """Trees of random arities (0 to 3 children a node), their nodes' columns shuffled together."""
    n_trees = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tree, depth, parent, child = [], [], [], []
    for t in range(n_trees):
        size = draw(st.integers(1, 60))
        base = len(tree)
        tree.append(t), depth.append(0), parent.append(-1), child.append(0)
        open_nodes = [base]
        while open_nodes and len(tree) - base < size:
            node = open_nodes.pop(int(rng.integers(len(open_nodes))))
            for c in range(int(rng.integers(0, 4))):
                tree.append(t), depth.append(depth[node] + 1), parent.append(node), child.append(c)
                open_nodes.append(len(tree) - 1)
    order = rng.permutation(len(tree))
    new = np.empty(len(tree), dtype=np.int64)
    new[order] = np.arange(len(tree))
    columns = [np.asarray(a, dtype=np.int64)[order] for a in (tree, depth, parent, child)]
    columns[2] = np.where(columns[2] >= 0, new[np.maximum(columns[2], 0)], -1)
    return n_trees, *columns


def naive_breadth_first(n_trees, tree, parent, child):
    """Each tree from its root, a queue of nodes, each node's children appended by their index."""
    kids = {i: sorted((int(child[c]), int(c)) for c in np.flatnonzero(parent == i)) for i in range(tree.size)}
    out = []
    for t in range(n_trees):
        queue = [int(np.flatnonzero((tree == t) & (parent < 0))[0])]
        for node in queue:
            queue.extend(c for _, c in kids[node])
        out.append(queue)
    return out


@settings(max_examples=150, deadline=None)
@given(forests())
def test_breadth_first_is_a_queue_of_each_trees_nodes(forest):
    n_trees, tree, depth, parent, child = forest
    order, position = _breadth_first(tree, depth, parent, child, n_trees)
    expected = naive_breadth_first(n_trees, tree, parent, child)
    assert [o.tolist() for o in order] == expected
    for nodes in expected:
        assert position[nodes].tolist() == list(range(len(nodes)))


@settings(max_examples=80, deadline=None)
@given(forests())
def test_models_children_are_the_queues_children(forest):
    n_trees, tree, depth, parent, child = forest
    n = tree.size
    counts = np.arange(2 * n, dtype=np.int64).reshape(n, 2)
    tests = np.empty(n, dtype=object)
    tests[:] = [None] * n
    reasons = np.empty(n, dtype=object)
    reasons[:] = [f"r{i}" for i in range(n)]
    models = models_of(tree, depth, parent, child, counts, counts + 1, tests, reasons, [t > 0 for t in range(n_trees)])
    for t, (model, nodes) in enumerate(zip(models, naive_breadth_first(n_trees, tree, parent, child))):
        at = {node: i for i, node in enumerate(nodes)}
        kids = [[at[c] for _, c in sorted((int(child[c]), int(c)) for c in np.flatnonzero(parent == node))]
                for node in nodes]
        shape = tree_shape(model)  # kept by models_of, from the arrays: the lists are not made for it
        assert model.__dict__["_kids"] is None
        assert [shape.flat[shape.start[i]:shape.start[i + 1]].tolist() for i in range(len(nodes))] == kids
        assert model.children == kids  # made now, the same
        assert model.counts.tolist() == counts[nodes].tolist()
        assert model.leaf_reason == [f"r{node}" for node in nodes]
        assert (model.validation is None) == (t == 0)


def test_children_given_as_links_are_made_once_and_travel():
    kids = [[1, 2], [3, 4], [], [], []]
    sizes = np.array([2, 2, 0, 0, 0], dtype=np.int64)
    linked = TreeModel([None] * 5, ChildLinks(sizes, np.arange(1, 5, dtype=np.int64)), np.ones((5, 2), np.int64),
                       np.array([0, 1, 1, 2, 2]))
    listed = TreeModel([None] * 5, kids, np.ones((5, 2), np.int64), np.array([0, 1, 1, 2, 2]))
    assert [a.tolist() for a in linked.links()] == [a.tolist() for a in listed.links()]
    assert linked.parents().tolist() == listed.parents().tolist()
    again = pickle.loads(pickle.dumps(linked))
    assert again.children == kids and linked.children == kids
    assert linked.children is linked.children  # made once
    linked.children = [[1, 2], [], []]  # given anew: its arrays follow
    assert linked.links()[0].tolist() == [2, 0, 0]
