"""Cross-validated accuracy from the forest's own counts, and the pruning it chooses: no extra pass.

Fold tree ``t`` held out part ``t``; the part-``t`` counts at its leaves are
exactly its validation rows (004, Section 2.2.2). Each leaf predicts the class
its training counts favour, so the validation counts give, per fold, the
correct predictions and the confusion matrix; pooled over the folds, the
leaves' held-out counts with the leaves' class probabilities give precision,
recall, F1, balanced accuracy, log-loss and ROC AUC (:mod:`dasktree.model.metrics`).
A pruned model's report is re-counted on its fold trees pruned the same way
(:mod:`dasktree.model.pruning`).
"""

from __future__ import annotations

import numpy as np

from .metrics import cv_leaf_table, leaf_metrics
from .model import TreeModel

__all__ = ["fold_scores", "cv_report"]


def fold_scores(tree: TreeModel) -> tuple[int, int, np.ndarray]:
    """(correct, rows, confusion[true, predicted]) of one fold tree on its held-out part."""
    n_classes = tree.counts.shape[1]
    confusion = np.zeros((n_classes, n_classes), dtype=np.int64)
    if tree.validation is None:
        raise ValueError("not a fold tree: it has no validation counts")
    leaves = np.asarray([i for i, test in enumerate(tree.tests) if test is None], dtype=np.intp)
    predicted = np.argmax(tree.value[leaves], axis=1)  # each leaf's class, ties to the first as argmax
    for c in range(n_classes):
        confusion[:, c] = tree.validation[leaves[predicted == c]].sum(axis=0)
    return int(np.trace(confusion)), int(confusion.sum()), confusion


def cv_report(fold_trees: list[TreeModel], k: int, repeats: int, classes, distinct_tests: list[float],
              metrics: bool = True) -> dict:
    """Per-fold and pooled accuracy, their mean and spread, the pooled confusion matrix, and (with
    ``metrics``) the pooled metrics of :func:`~dasktree.model.metrics.leaf_metrics`."""
    per_fold = []
    pooled = np.zeros((len(classes), len(classes)), dtype=np.int64)
    for t, tree in enumerate(fold_trees):
        correct, rows, confusion = fold_scores(tree)
        pooled += confusion
        per_fold.append({"repeat": t // k, "fold": t % k, "rows": rows, "correct": correct,
                         "accuracy": correct / rows if rows else None,  # a fold with no rows: no score
                         "leaves": tree.n_leaves, "depth": tree.max_depth})
    accuracies = np.array([f["accuracy"] for f in per_fold if f["rows"]])
    per_repeat = []
    for r in range(repeats):
        folds = [f for f in per_fold if f["repeat"] == r]
        rows = sum(f["rows"] for f in folds)
        correct = sum(f["correct"] for f in folds)
        per_repeat.append(correct / rows if rows else None)
    return {
        "folds": k,
        "repeats": repeats,
        "accuracy_mean": float(accuracies.mean()) if accuracies.size else float("nan"),
        "accuracy_std": float(accuracies.std()) if accuracies.size else float("nan"),
        "accuracy_pooled": float(np.trace(pooled) / pooled.sum()) if pooled.sum() else float("nan"),
        "accuracy_per_repeat": per_repeat,
        "per_fold": per_fold,
        "confusion_matrix": {"classes": [str(c) for c in classes], "rows_true_columns_predicted": pooled.tolist()},
        "metrics": leaf_metrics(*cv_leaf_table(fold_trees), classes) if fold_trees and metrics else {},
        "distinct_tests_per_level": distinct_tests,
    }
