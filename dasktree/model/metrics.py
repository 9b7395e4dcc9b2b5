"""Evaluation beyond accuracy, from leaf counts: per-class precision, recall, F1, balanced accuracy,
log-loss and (two classes) ROC AUC, computed by :mod:`sklearn.metrics`.

A tree gives every row that reaches a leaf the same class probabilities
(the leaf's training distribution). So the evaluation of a tree on any rows
is a function of one table: the rows of each true class at each leaf
(``counts[leaf, class]``). For cross-validation that table is the fold trees'
validation counts (each fold tree's leaves count its held-out rows, pooled
over the folds and repeats); for ``dasktree evaluate`` it is summed over the
parts of a dataset on the workers. Each nonzero cell becomes one weighted
sample (true class, the leaf's probabilities, weight = count) and scikit-learn's
metrics take ``sample_weight``: the same numbers as on the rows one by one,
from a table of at most ``leaves x classes`` cells.

A forest's rows share no leaf, but the rows given equal probabilities are one
weighted sample all the same: :func:`proba_class_counts` groups a part's rows
by their probabilities and :func:`merge_proba_counts` merges the parts' groups
(the same table whatever the parts), which :func:`leaf_metrics` takes as it
takes leaves (at most one group per row).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["leaf_metrics", "classification_metrics", "cv_leaf_table", "format_metrics", "leaf_class_counts",
           "labelled_rows", "proba_class_counts", "merge_proba_counts", "class_report"]


def _number(x) -> float | None:
    """A JSON-safe float: None where a metric is undefined (NaN)."""
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def classification_metrics(y: np.ndarray, proba: np.ndarray, classes, sample_weight=None) -> dict:
    """Metrics of predictions ``proba`` (rows x classes) for true class codes ``y``.

    The predicted class is the most probable (ties to the first, as the
    model's own predictions). Returns accuracy, balanced accuracy, log-loss,
    ROC AUC (two classes, both present; else None), and per class precision,
    recall, F1 and support (rows, or summed weights).
    """
    with warnings.catch_warnings():  # a class absent from y_true is expected on small or skewed data
        warnings.simplefilter("ignore", UserWarning)
        return _metrics(y, proba, classes, sample_weight)


def _metrics(y, proba, classes, sample_weight) -> dict:
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        log_loss,
        precision_recall_fscore_support,
        roc_auc_score,
    )

    labels = list(range(len(classes)))
    y = np.asarray(y, dtype=np.int64)
    predicted = np.argmax(proba, axis=1)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    rows = float(sample_weight.sum()) if sample_weight is not None else float(len(y))
    if rows == 0:
        return {"rows": 0}
    precision, recall, f1, support = precision_recall_fscore_support(
        y, predicted, labels=labels, sample_weight=sample_weight, zero_division=0.0)
    present = np.unique(y)
    auc = None
    if len(classes) == 2 and present.size == 2:
        auc = _number(roc_auc_score(y, proba[:, 1], sample_weight=sample_weight))
    return {
        "rows": int(rows) if rows == int(rows) else rows,
        "accuracy": _number(accuracy_score(y, predicted, sample_weight=sample_weight)),
        "balanced_accuracy": _number(balanced_accuracy_score(y, predicted, sample_weight=sample_weight)),
        "log_loss": _number(log_loss(y, proba, labels=labels, sample_weight=sample_weight)),
        "roc_auc": auc,
        "per_class": [
            {"class": str(c), "precision": _number(precision[i]), "recall": _number(recall[i]),
             "f1": _number(f1[i]), "support": int(support[i]) if sample_weight is None or
             float(support[i]).is_integer() else float(support[i])}
            for i, c in enumerate(classes)
        ],
    }


def leaf_metrics(counts: np.ndarray, proba: np.ndarray, classes) -> dict:
    """Metrics of rows given as ``counts[leaf, true class]`` with each leaf's probabilities ``proba[leaf]``.

    Parameters
    ----------
    counts : (n_leaves, n_classes) integer
        Rows of each true class that reach each leaf.
    proba : (n_leaves, n_classes) float
        The class probabilities each leaf predicts.
    """
    counts = np.asarray(counts)
    leaf, true = np.nonzero(counts)
    return classification_metrics(true, np.asarray(proba)[leaf], classes, sample_weight=counts[leaf, true])


def cv_leaf_table(fold_trees) -> tuple[np.ndarray, np.ndarray]:
    """The held-out rows of every fold tree's leaves, stacked: (counts, proba), one row per leaf."""
    counts, proba = [], []
    for tree in fold_trees:
        leaves = [i for i, test in enumerate(tree.tests) if test is None]
        counts.append(tree.validation[leaves])
        proba.append(tree.value[leaves])
    return np.concatenate(counts), np.concatenate(proba)


def format_metrics(metrics: dict) -> str:
    """A readable table of :func:`dasktree.metrics.classification_metrics`' result."""
    if not metrics.get("rows"):
        return "no labelled rows\n"
    if "mse" in metrics:  # a regression model's (dasktree.regress.metrics)
        names = ("mse", "rmse", "mae", "r2", "max_error")
        return "".join(f"{n.replace('_', ' '):>20} {metrics[n]:.6g}\n" for n in names) + f"{'rows':>20} {metrics['rows']:g}\n"
    lines = [f"{'class':>12} {'precision':>9} {'recall':>9} {'f1':>9} {'support':>9}"]
    for c in metrics["per_class"]:
        lines.append(f"{c['class']:>12} {_f(c['precision'])} {_f(c['recall'])} {_f(c['f1'])} {c['support']:>9}")
    lines.append("")
    for name in ("accuracy", "balanced_accuracy", "log_loss", "roc_auc"):
        if metrics.get(name) is not None:
            lines.append(f"{name.replace('_', ' '):>20} {metrics[name]:.4f}")
    lines.append(f"{'rows':>20} {metrics['rows']}")
    return "\n".join(lines) + "\n"


def _f(x) -> str:
    return f"{'-':>9}" if x is None else f"{x:9.4f}"


def labelled_rows(model, table, target: str, where: str = "data",
                  weight: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``table``'s class codes of column ``target`` in the model's classes (-1: no label), which rows have
    a label, and column ``weight``'s values (None without one); a label the model never saw is a
    :class:`~dasktree.errors.DataError` naming it."""
    import pandas as pd

    from ..errors import DataError
    from ..io.weights import weight_values

    labels = table.column(target).to_pandas()
    codes = pd.Categorical(labels, categories=list(model.classes)).codes.astype(np.int64)
    unknown = (codes < 0) & labels.notna().to_numpy()
    if unknown.any():
        raise DataError(f"{where}: label {labels[unknown].iloc[0]!r} of column {target!r} is not a class of "
                        f"the model ({list(model.classes)})")
    w = None if weight is None else weight_values(table.column(weight), weight, where)
    return codes, codes >= 0, w


def leaf_class_counts(model, table, target: str, where: str = "data",
                      weight: str | None = None) -> tuple[np.ndarray, int]:
    """``counts[node, class]`` of ``table``'s labelled rows at the model's nodes (int64; float64 sums
    of column ``weight``'s values when given), and the rows without a label."""
    codes, keep, w = labelled_rows(model, table, target, where, weight)
    leaves = model.leaves(table)
    if w is None:
        counts = np.zeros((model.tree.n_nodes, len(model.classes)), dtype=np.int64)
        np.add.at(counts, (leaves[keep], codes[keep]), 1)
    else:
        counts = np.zeros((model.tree.n_nodes, len(model.classes)), dtype=np.float64)
        np.add.at(counts, (leaves[keep], codes[keep]), w[keep])
    return counts, int((~keep).sum())


def proba_class_counts(proba: np.ndarray, codes: np.ndarray, n_classes: int,
                       weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by the probabilities predicted for them: (each distinct row of ``proba``, sorted,
    (groups, n_classes); ``counts[group, true class]``, int64, or float64 sums of ``weight``). The
    groups stand where a tree's leaves stand for :func:`leaf_metrics` (a forest's rows share no leaf,
    but the rows of equal probabilities are one weighted sample), and :func:`merge_proba_counts`
    merges parts' groups: the same table whatever the parts."""
    proba = np.ascontiguousarray(proba, dtype=np.float64).reshape(len(codes), n_classes)
    groups, inverse = np.unique(proba, axis=0, return_inverse=True)
    counts = np.zeros((len(groups), n_classes), dtype=np.int64 if weight is None else np.float64)
    np.add.at(counts, (inverse.reshape(-1), codes), 1 if weight is None else weight)
    return groups, counts


def merge_proba_counts(parts: list[tuple[np.ndarray, np.ndarray]], n_classes: int,
                       weighted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The groups of :func:`proba_class_counts` of several parts as one: equal probabilities' counts added."""
    dtype = np.float64 if weighted else np.int64
    if not parts:
        return np.zeros((0, n_classes)), np.zeros((0, n_classes), dtype=dtype)
    proba = np.concatenate([p for p, _ in parts]).reshape(-1, n_classes)
    counts = np.concatenate([c for _, c in parts]).astype(dtype).reshape(-1, n_classes)
    groups, inverse = np.unique(proba, axis=0, return_inverse=True)
    merged = np.zeros((len(groups), n_classes), dtype=dtype)
    np.add.at(merged, inverse.reshape(-1), counts)
    return groups, merged


def class_report(counts: np.ndarray, proba: np.ndarray, predicted: np.ndarray, classes, skipped: int) -> dict:
    """:func:`leaf_metrics` of ``counts[group, true class]`` and each group's ``proba``, with the rows
    skipped (no label) and the confusion matrix of each group's ``predicted`` class."""
    report = leaf_metrics(counts, proba, classes)
    confusion = np.zeros((len(classes),) * 2, dtype=counts.dtype)
    for c in range(len(classes)):
        confusion[:, c] = counts[predicted == c].sum(axis=0)
    report["rows_skipped_null_target"] = skipped
    report["confusion_matrix"] = {"classes": [str(c) for c in classes],
                                  "rows_true_columns_predicted": confusion.tolist()}
    return report
