"""Checkpoints of a regression fit: every pass's results saved, replayed when the fit starts again.

The directory, its identity check and its atomic writes are
:class:`dasktree.engine.checkpoint.Checkpoint`'s; a regression pass's results
(the slots' sums, node cells and chosen tests, :func:`dasktree.regress.grow.search_slots`)
are saved as plain arrays (no pickle). The trees are a function of these results
alone, so a fit started again with the same data and parameters replays the
saved passes instead of reading the data, and gives the same model bit for bit.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..engine.checkpoint import Checkpoint, say_resumed
from ..split.regression import NodeSplits

__all__ = ["regression_checkpoint", "RegressionResuming"]

_SPLIT_ARRAYS = ("gain", "attribute", "cut", "default", "children")


def _to_arrays(result) -> dict:
    sums, cells, splits = result
    tables = [np.zeros(0, np.int16) if t is None else np.asarray(t, np.int16) for t in splits.tables]
    return {"sums": sums, "cells": cells, **{name: getattr(splits, name) for name in _SPLIT_ARRAYS},
            "table_sizes": np.array([t.size if s is not None else -1 for t, s in zip(tables, splits.tables)],
                                    dtype=np.int64),
            "tables": np.concatenate(tables) if tables else np.zeros(0, np.int16)}


def _from_arrays(arrays: dict):
    sizes = arrays["table_sizes"]
    flat = arrays["tables"]
    tables, start = [], 0
    for n in sizes.tolist():
        tables.append(None if n < 0 else flat[start:start + n].copy())
        start += max(n, 0)
    splits = NodeSplits(**{name: arrays[name] for name in _SPLIT_ARRAYS}, tables=tables)
    return arrays["sums"], arrays["cells"], splits


def regression_checkpoint(directory, identity: dict) -> Checkpoint:
    return Checkpoint(directory, {**identity, "task": "regression"}, to_arrays=_to_arrays, from_arrays=_from_arrays)


class RegressionResuming:
    """A runner whose passes come from a checkpoint while it has them, then from ``runner``; every
    pass the runner makes is saved. The grow loop sees the same results either way."""

    def __init__(self, runner, checkpoint: Checkpoint):
        self.runner, self.checkpoint = runner, checkpoint
        self._replay = deque(checkpoint.saved)
        self._number = 0

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        self._number += 1
        if self._replay:
            self.runner.passes += 1  # the pass was made, before the client was lost
            return [self._replay.popleft()]
        say_resumed(self.runner, self.checkpoint, self._number, label)
        [result] = self.runner.apply_pass(plan, func, chunks, label, **kwargs)
        self.checkpoint.save_pass(self._number, result)
        return [result]
