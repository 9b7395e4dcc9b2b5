"""A node group's search, brute force: every (node, tree) pair's training histogram made
explicitly (the node's total minus the part the tree holds out), searched alone with
:func:`~dasktree.split.search.best_split`, and its children counted slice by slice, against
the columns :func:`~dasktree.levels.level_search.search_group` writes in one batch."""

import numpy as np
import pytest

import dasktree
import dasktree.levels.level_search
from dasktree.levels.level_search import leaf_reasons, search_group
from dasktree.split.choices import best_split
from dasktree.testing import mixed_frame


def captured_levels(monkeypatch, frame, target, **params):
    """Every level's (histogram, requests, context, packed results) of an in-process fit."""
    seen = []

    def capture(hist, requests, context):
        packed = search_group(hist, requests, context)
        seen.append((hist.copy(), list(requests), context, packed))
        return packed

    monkeypatch.setattr(dasktree.levels.level_search, "search_group", capture)
    dasktree.fit(frame, target=target, **params)
    return seen


def _node_slices(hist, request, context):
    """{part: its slice, "total": the node's total histogram}: (total_bins, C) each."""
    cells = int(context.layout.widths.sum()) * context.n_classes
    slices = hist[request.base:request.base + request.n_slices * cells].reshape(request.n_slices, -1, context.n_classes)
    out = {part: slices[int(request.rest) + j] for j, part in enumerate(request.parts)}
    in_total = [slices[0]] if request.rest else []
    out["total"] = sum(in_total + [out[p] for p in request.parts if p < context.n_folds])
    return out


def _class_counts(h, context):
    a = int(np.argmin(context.layout.widths))
    o = int(context.layout.offsets[a])
    return h[o:o + int(context.layout.widths[a])].sum(axis=0)


def _children_of(h, test, context):
    """(arity, C): the rows of ``h`` each child of ``test`` gets."""
    o, w = int(context.layout.offsets[test.attribute]), int(context.layout.widths[test.attribute])
    return np.stack([h[o:o + w][test.bin_children == c].sum(axis=0) for c in range(test.arity)])


@pytest.mark.parametrize("params", [
    dict(max_depth=5, cv=3, repeats=2, seed=2),  # two repetitions: parts outside the total
    dict(max_depth=4, cv=4, max_arity=4, criterion="entropy"),  # multi-way numeric tests
    dict(max_depth=4, cv=5, criterion="gain_ratio", nominal_split="multiway"),
    dict(max_depth=5, cv=10, min_samples_leaf=4, seed=5),
])
def test_each_pair_gets_the_test_its_own_training_histogram_gives(monkeypatch, params):
    levels = captured_levels(monkeypatch, mixed_frame(2500, seed=4), "label", max_bins=24, **params)
    n_parts = params["cv"] * params.get("repeats", 1)
    decided = threshold = other = 0
    for hist, requests, context, packed in levels:
        assert packed.nodes.tolist() == [r.node for r in requests]
        for i, request in enumerate(requests):
            slices = _node_slices(hist, request, context)
            expected_counts = np.zeros((n_parts + 1, context.n_classes), dtype=np.int64)
            for part in request.parts:
                expected_counts[part] = _class_counts(slices[part], context)
            expected_counts[n_parts] = _class_counts(slices["total"], context)
            np.testing.assert_array_equal(packed.counts[i], expected_counts)
            pairs = np.flatnonzero(packed.pair_result == i)
            assert sorted(packed.pair_tree[pairs].tolist()) == sorted(request.trees)
            for d in pairs.tolist():
                tree, choice = int(packed.pair_tree[d]), int(packed.pair_choice[d])
                held = int(context.holdout[tree])
                train = slices["total"] - (slices[held] if held in slices else 0)
                [reason] = leaf_reasons(_class_counts(train, context)[None], context.min_samples_split,
                                        context.split.min_samples_leaf)
                candidate = None if reason else best_split(train, context.layout, context.split)
                if candidate is None:
                    assert choice == -1 and packed.reasons[d] == (reason or "no_split")
                    continue
                assert choice >= 0 and packed.reasons[d] == ""
                lo, hi = packed.bin_start[choice], packed.bin_start[choice + 1]
                assert int(packed.attribute[choice]) == candidate.test.attribute
                np.testing.assert_array_equal(packed.bin_children[lo:hi], candidate.test.bin_children)
                assert (packed.kind[choice], int(packed.default[choice]), packed.thresholds[choice],
                        packed.groups[choice]) == (candidate.test.kind, candidate.test.default,
                                                   candidate.test.thresholds, candidate.test.groups)
                assert (packed.gain[choice], packed.score[choice]) == (candidate.gain, candidate.score)
                a0, a1 = packed.arity_start[choice], packed.arity_start[choice + 1]
                assert a1 - a0 == candidate.test.arity
                np.testing.assert_array_equal(packed.train_children[a0:a1], _children_of(train, candidate.test,
                                                                                          context))
                per_part = np.zeros((candidate.test.arity, n_parts + 1, context.n_classes), dtype=np.int64)
                for part in request.parts:
                    per_part[:, part] = _children_of(slices[part], candidate.test, context)
                per_part[:, n_parts] = _children_of(slices["total"], candidate.test, context)
                np.testing.assert_array_equal(packed.children[a0:a1], per_part)
                decided += 1
                binary_numeric = candidate.test.kind == "numeric" and candidate.test.arity == 2
                threshold, other = threshold + binary_numeric, other + (not binary_numeric)
    assert decided > 50 and threshold > 0
    if params.get("max_arity", 2) > 2 or params.get("nominal_split") == "multiway":
        assert other > 0
