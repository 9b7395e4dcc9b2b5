"""The split search as the layers above it see it: the one module of ``split/`` that
:mod:`dasktree.forest` imports.

- :class:`SplitParams`, :class:`AttributeLayout`: a search's parameters and the attributes' place
  in the histogram rows.
- :class:`TrainBatch`: the training histograms of a search (totals minus held-out slices).
- :func:`choose`: a batch's choices, every attribute searched or ``params.postpone``'s skipped,
  as :class:`Choices` (the binary threshold tests as numbers, any other test as a candidate).
- :class:`Test`, :func:`numeric_test`, :func:`threshold_tables`: a chosen test, a threshold test from
  its cut, and the code tables of many threshold tests at once.
- :func:`threshold_children`: the children's counts of many threshold tests at once (compiled).
- :mod:`small_grower` (``small_grower``): small nodes' subtrees grown depth first from their rows, with
  these searches' tests (:func:`~dasktree.split.small_grower.grow_jobs`), and the rows' walk that
  gathers them (:func:`~dasktree.split.small_grower.gather_slots`).
"""

from __future__ import annotations

from . import small_grower
from .binary_kernel import threshold_children
from .choices import Choices
from .node_tests import Test, numeric_test, threshold_tables
from .postponed import choose
from .search import AttributeLayout, SplitParams
from .types import TrainBatch

__all__ = ["AttributeLayout", "Choices", "SplitParams", "Test", "TrainBatch", "choose", "numeric_test",
           "small_grower", "threshold_children", "threshold_tables"]
