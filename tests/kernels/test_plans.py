"""PassPlan.root: the one-node plan discretization counts with, equal to a one-tree forest's root plan."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dasktree.levels.forest import Forest
from dasktree.kernels.plans import PassPlan


@pytest.mark.parametrize("n_folds, n_repeats", [(1, 1), (3, 1), (2, 5)])
def test_root_plan_equals_a_new_forests_root_plan(n_folds, n_repeats):
    widths = np.array([3, 256, 2, 17])
    forest = Forest(1, np.array([-1]), n_folds, 3, n_repeats=n_repeats)
    expected = forest.pass_plan([forest.nodes[0]], widths, 3)
    plan = PassPlan.root(widths, 3, n_folds, n_repeats)
    for field in dataclasses.fields(PassPlan):
        got, want = getattr(plan, field.name), getattr(expected, field.name)
        if field.name == "forest_id":
            assert got and got != want  # a plan's own identity, as a new forest's
        elif isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and got.shape == want.shape, field.name
            np.testing.assert_array_equal(got, want, err_msg=field.name)
        else:
            assert got == want, field.name
