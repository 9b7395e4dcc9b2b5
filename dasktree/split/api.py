"""The split search as the other rooms see it: the one module of ``split/`` that a module outside it
imports (``tests/test_layers.py`` checks it).

- :class:`SplitParams`, :class:`AttributeLayout`: a search's parameters and the attributes' place
  in the histogram rows; :data:`CRITERIA`, :data:`NOMINAL_SPLITS`, :data:`SELECTIONS`: their choices.
- :class:`TrainBatch`: the training histograms of a search (totals minus held-out slices).
- :func:`choose`: a batch's choices, every attribute searched or ``params.postpone``'s skipped,
  as :class:`Choices` (the binary threshold tests as numbers, any other test as a candidate);
  ``postpone``'s text read and checked (:func:`parse_postpone`, :func:`check_postpone`,
  :func:`postpone_text`).
- :class:`Test`, :func:`numeric_test`, :func:`nominal_test`, :func:`threshold_tables`: a chosen test,
  tests from a cut or from groups of values, and the code tables of many threshold tests at once.
- :func:`threshold_children`: the children's counts of many threshold tests at once (compiled).
- :func:`fraction_rows`: ``min_weight_fraction_leaf`` as a smallest child in rows.
- ``monotonic_cst`` (:mod:`dasktree.split.monotonic`): its value checked and read
  (:func:`check_monotonic_cst`, :func:`monotonic_text`, :func:`monotonic_layer`, :func:`monotonic_of`),
  a constrained split's children's bounds (:func:`child_bounds`) and a tree's (:func:`tree_bounds`).
- :func:`gini`, :func:`entropy`: a node's impurity from its class counts (pruning and the model's
  reports use the search's own).
- :func:`bins_to_blocks`, :func:`block_opt_p`, :func:`selection_score`: bins merged into blocks, the
  optimal partition of a numeric attribute, and a multi-way test's score (the discretizers reuse them).
- The regression trees' search from a node's sums: :data:`REGRESSION_CRITERIA`,
  :class:`RegressionLayout`, :func:`best_splits` and its :class:`NodeSplits`, the criteria's
  :func:`proxy` and :func:`parent_proxy`.
- :mod:`small_grower` (``small_grower``): small nodes' subtrees grown depth first from their rows, with
  these searches' tests (:func:`~dasktree.split.small_grower.grow_jobs`), and the rows' walk that
  gathers them (:func:`~dasktree.split.small_grower.gather_slots`).
"""

from __future__ import annotations

from . import small_grower
from .binary_kernel import threshold_children
from .blocks import bins_to_blocks
from .choices import Choices
from .criteria import entropy, gini
from .leaf_fraction import fraction_rows
from .monotonic import (MONOTONIC_WHAT, UNBOUNDED, binary_monotonic, check_monotonic_cst, child_bounds, monotonic_layer,
                        monotonic_of, monotonic_text, tree_bounds)
from .multiway import selection_score
from .node_tests import Test, nominal_test, numeric_test, threshold_tables
from .optimal import block_opt_p
from .postpone import check_postpone, parse_postpone, postpone_text
from .postpone_search import choose
from .regression import REGRESSION_CRITERIA, NodeSplits, RegressionLayout, best_splits, parent_proxy, proxy
from .search import CRITERIA, NOMINAL_SPLITS, SELECTIONS, AttributeLayout, SplitParams
from .types import TrainBatch

__all__ = ["AttributeLayout", "CRITERIA", "Choices", "MONOTONIC_WHAT", "NOMINAL_SPLITS", "NodeSplits", "REGRESSION_CRITERIA",
           "UNBOUNDED", "binary_monotonic", "check_monotonic_cst", "child_bounds", "monotonic_layer", "monotonic_of", "monotonic_text",
           "tree_bounds",
           "RegressionLayout", "SELECTIONS", "SplitParams", "Test", "TrainBatch", "best_splits", "bins_to_blocks",
           "block_opt_p", "check_postpone", "choose", "entropy", "fraction_rows", "gini", "nominal_test", "numeric_test",
           "parent_proxy", "parse_postpone", "postpone_text", "proxy", "selection_score", "small_grower",
           "threshold_children", "threshold_tables"]
