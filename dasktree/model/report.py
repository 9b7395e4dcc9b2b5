"""Cross-validated accuracy from the forest's own counts, and the pruning it chooses: no extra pass.

Fold tree ``t`` held out part ``t``; the part-``t`` counts at its leaves are
exactly its validation rows (004, Section 2.2.2). Each leaf predicts the class
its training counts favour, so the validation counts give, per fold, the
correct predictions and the confusion matrix; pooled over the folds, the
leaves' held-out counts with the leaves' class probabilities give precision,
recall, F1, balanced accuracy, log-loss and ROC AUC (:mod:`dasktree.model.metrics`).
:func:`apply_pruning` prunes a model's grown tree (:mod:`dasktree.model.prune`)
and re-counts its CV report on the fold trees pruned the same way, so the
report estimates the pruned tree.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ParameterError
from .metrics import cv_leaf_table, leaf_metrics
from .model import Model, TreeModel

__all__ = ["fold_scores", "cv_report", "PRUNE_MODES", "check_prune", "resolve_prune", "apply_pruning",
           "pruned_fold_trees", "cp_rows"]


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


def cv_report(fold_trees: list[TreeModel], k: int, repeats: int, classes, distinct_tests: list[float]) -> dict:
    """Per-fold and pooled accuracy, their mean and spread, the pooled confusion matrix."""
    per_fold = []
    pooled = np.zeros((len(classes), len(classes)), dtype=np.int64)
    for t, tree in enumerate(fold_trees):
        correct, rows, confusion = fold_scores(tree)
        pooled += confusion
        per_fold.append({"repeat": t // k, "fold": t % k, "rows": rows, "correct": correct,
                         "accuracy": correct / rows if rows else float("nan"),
                         "leaves": tree.n_leaves, "depth": tree.max_depth})
    accuracies = np.array([f["accuracy"] for f in per_fold if f["rows"]])
    per_repeat = []
    for r in range(repeats):
        folds = [f for f in per_fold if f["repeat"] == r]
        rows = sum(f["rows"] for f in folds)
        correct = sum(f["correct"] for f in folds)
        per_repeat.append(correct / rows if rows else float("nan"))
    return {
        "folds": k,
        "repeats": repeats,
        "accuracy_mean": float(accuracies.mean()) if accuracies.size else float("nan"),
        "accuracy_std": float(accuracies.std()) if accuracies.size else float("nan"),
        "accuracy_pooled": float(np.trace(pooled) / pooled.sum()) if pooled.sum() else float("nan"),
        "accuracy_per_repeat": per_repeat,
        "per_fold": per_fold,
        "confusion_matrix": {"classes": [str(c) for c in classes], "rows_true_columns_predicted": pooled.tolist()},
        "metrics": leaf_metrics(*cv_leaf_table(fold_trees), classes) if fold_trees else {},
        "distinct_tests_per_level": distinct_tests,
    }


# ---------------------------------------------------------------- pruning the model

PRUNE_MODES = ("auto", "cv", "cv-min", "pessimistic", "none")
"""``prune=``: "auto" is "cv-min" with ``cv`` given, else "pessimistic"; None means "none"."""


def _finite(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def check_prune(mode, alpha, confidence) -> None:
    """Bad pruning arguments, before any work: one line naming the value."""
    if mode is not None and mode not in PRUNE_MODES:
        raise ParameterError(f"prune must be one of {[*PRUNE_MODES, None]}, got {mode!r}")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number))
                              or not np.isfinite(alpha) or alpha < 0):
        raise ParameterError(f"ccp_alpha must be a finite number >= 0 or None, got {alpha!r}")
    if alpha is not None and mode not in (None, "auto"):
        raise ParameterError(f"give prune= or ccp_alpha=, not both (got prune={mode!r}, ccp_alpha={alpha!r})")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.number)) \
            or not 0 < confidence < 1:
        raise ParameterError(f"confidence must be a number in (0, 1) (C4.5's CF), got {confidence!r}")


def resolve_prune(mode, alpha, has_folds: bool) -> str:
    """The pruning mode a fit uses: "alpha" with ``ccp_alpha``; "auto" is "cv-min" with folds, else "pessimistic".

    Why (``benchmarks/prune.py``): with fold trees, the least CV error was the
    more accurate choice than the 1-SE rule on every group of its datasets,
    still with far smaller trees than the grown ones; without them, C4.5's
    pruning needs nothing more, while CV pruning would need a forest grown
    for it, several times the work of the fit.
    """
    if alpha is not None:
        return "alpha"
    if mode is None:
        return "none"
    if mode == "auto":
        return "cv-min" if has_folds else "pessimistic"
    return mode


def apply_pruning(model: Model, *, alpha: float | None = None, mode: str | None = None,
                  confidence: float = 0.25) -> Model:
    """``model`` with its grown tree pruned (and its CV report re-estimated on fold trees pruned alike).

    The grown tree stays in the model (``full_tree``), so pruning again needs no pass.
    Writes ``report["prune"]``: mode, alpha, the cp table, the alpha the fold
    trees were pruned at (``fold_alpha``; None: to their root) and the leaves.
    """
    import dataclasses

    from . import prune as cc

    check_prune(mode, alpha, confidence)
    if alpha is None and mode is None:
        raise ParameterError("give the alpha to prune at, or a mode (cv, cv-min, pessimistic, none)")
    mode = resolve_prune(mode, alpha, bool(model.fold_trees))
    if mode in ("cv", "cv-min") and not model.fold_trees:
        raise InputError(f"prune={mode!r} needs the cross-validation fold trees: fit with cv=k "
                         "(or prune with an alpha, or 'pessimistic')")
    criterion = model.params.get("criterion", "gini")
    repeats = int(model.params.get("repeats", 1) or 1)
    grown, folds = model.grown_tree, model.fold_trees
    paths = (cc.weakest_link(grown.children, grown.counts, criterion),
             [cc.weakest_link(f.children, f.counts, criterion) for f in folds])
    table = cc.cp_table(grown, folds, criterion, repeats, paths=paths)
    fold_at: float | None = None
    if mode in ("cv", "cv-min"):
        row = cc.choose_alpha(table, mode)
        alpha, fold_at = table[row]["alpha"], cc.fold_alpha(table, row)
    elif mode == "alpha":
        fold_at = float(alpha)
    if mode == "pessimistic":
        tree = cc.pruned_tree(grown, cc.pessimistic_leaves(grown.children, grown.counts, confidence))
        pruned_folds = [cc.pruned_tree(f, cc.pessimistic_leaves(f.children, f.counts, confidence)) for f in folds]
    elif mode == "none":
        tree, pruned_folds = grown, folds
    else:
        tree = cc.pruned_tree(grown, cc.leaves_at(paths[0], float(alpha)))
        pruned_folds = [cc.pruned_tree(f, cc.leaves_at(p, fold_at)) for f, p in zip(folds, paths[1])]
    report = dict(model.report)
    leaves = [i for i, t in enumerate(tree.tests) if t is None]
    rows = max(1, int(tree.counts[0].sum())) if tree.n_nodes else 1
    report.update({
        "depth": tree.max_depth, "nodes": tree.n_nodes, "leaves": tree.n_leaves,
        "training_accuracy": float(tree.counts[leaves].max(axis=1).sum() / rows),
        "prune": {"mode": mode, "alpha": None if alpha is None else float(alpha), "cp_table": table,
                  "fold_alpha": _finite(fold_at), "confidence": float(confidence) if mode == "pessimistic" else None,
                  "leaves": tree.n_leaves, "leaves_grown": grown.n_leaves},
    })
    old_cv = model.report.get("cv")
    if old_cv is not None and folds:
        report["cv"] = cv_report(pruned_folds, int(old_cv["folds"]), int(old_cv["repeats"]), model.classes,
                                 old_cv.get("distinct_tests_per_level", []))
    pruned = tree.n_nodes != grown.n_nodes
    return dataclasses.replace(model, tree=tree, full_tree=grown if pruned else None, report=report)


def cp_rows(model: Model) -> list[dict]:
    """The model's cp table; a model saved before pruning existed gets it computed now (no pass)."""
    from . import prune as cc

    table = (model.report.get("prune") or {}).get("cp_table")
    if table is None:
        table = cc.cp_table(model.grown_tree, model.fold_trees, model.params.get("criterion", "gini"),
                            int(model.params.get("repeats", 1) or 1))
    return table


def pruned_fold_trees(model: Model) -> list[TreeModel]:
    """The model's fold trees pruned as its ``report["prune"]`` says (as its CV report counts them)."""
    from . import prune as cc

    info = model.report.get("prune") or {"mode": "none"}
    criterion = model.params.get("criterion", "gini")
    out = []
    for f in model.fold_trees:
        if info["mode"] == "none":
            out.append(f)
        elif info["mode"] == "pessimistic":
            out.append(cc.pruned_tree(f, cc.pessimistic_leaves(f.children, f.counts, info["confidence"])))
        else:
            at = np.inf if info.get("fold_alpha") is None else info["fold_alpha"]
            out.append(cc.pruned_tree(f, cc.leaves_at(cc.weakest_link(f.children, f.counts, criterion), at)))
    return out
