"""The grown subtrees as the forest keeps them (:class:`dasktree.levels.attach.GrownBlock`)."""

from __future__ import annotations

import numpy as np
import pytest

import dasktree
from dasktree.levels import attach as attaching
from dasktree.testing.data import regression_frame


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_grown_block_owns_its_columns_in_narrow_types(monkeypatch, task):
    """A block keeps copies, not views: a view of the grower's output kept its whole room (twice the rows,
    a regression's ten statistics a node) for every grown node of a deep fit."""
    blocks = []

    def kept(store, *args):
        made = real(store, *args)
        blocks.append(store.grown[-1])
        return made

    real = attaching.attach
    monkeypatch.setattr(attaching, "attach", kept)
    frame = regression_frame(3000, seed=2)
    y = frame.pop("y")
    if task == "classification":
        dasktree.DaskTreeClassifier(cv=3).fit(frame, (y > y.median()).astype(int), nominal=["colour"])
    else:
        dasktree.DaskTreeRegressor(cv=3).fit(frame, y, nominal=["colour"])
    assert blocks
    for block in blocks:
        for name, column in vars(block).items():
            assert column.base is None, name
        assert (block.job.dtype, block.parent.dtype, block.child.dtype, block.depth.dtype, block.reasons.dtype) == (
            np.int32, np.int32, np.int8, np.int16, np.int8)
