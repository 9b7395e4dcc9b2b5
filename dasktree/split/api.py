"""The split search as the layers above it see it: the one module of ``split/`` that
:mod:`dasktree.forest` imports.

- :class:`SplitParams`, :class:`AttributeLayout`: a search's parameters and the attributes' place
  in the histogram rows.
- :class:`TrainBatch`: the training histograms of a search (totals minus held-out slices).
- :func:`choose`: a batch's choices, every attribute searched or ``params.postpone``'s skipped,
  as :class:`Choices` (the binary threshold tests as numbers, any other test as a candidate).
- :class:`Test`, :func:`threshold_tables`: a chosen test, and the code tables of many threshold
  tests at once.
- :func:`threshold_children`: the children's counts of many threshold tests at once (compiled).
"""

from __future__ import annotations

from .binary_kernel import threshold_children
from .choices import Choices
from .node_tests import Test, threshold_tables
from .postponed import choose
from .search import AttributeLayout, SplitParams
from .types import TrainBatch

__all__ = ["AttributeLayout", "Choices", "SplitParams", "Test", "TrainBatch", "choose", "threshold_children",
           "threshold_tables"]
