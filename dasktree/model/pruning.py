"""Pruning a fitted model, without a pass: its grown tree, its fold trees and its CV report.

:func:`apply_pruning` prunes the grown tree by cost complexity (at an alpha, or
one chosen from the fold trees' held-out counts) or by C4.5's pessimistic rule
(:mod:`dasktree.model.prune` has the algorithms) and re-counts the CV report on
the fold trees pruned the same way, so the report estimates the pruned tree.
The model keeps its grown tree, so :func:`prune_model` prunes it again. Its cp table
(``report["prune"]["cp_table"]``) holds the CV error of every subtree of the grown tree's
sequence, counted by the fit on the fold trees: "cv" and "cv-min" choose from it when the fold
trees were not kept (as a regression tree's re-pruning does, :mod:`dasktree.regress.reprune`),
the same alpha and tree as with them; the CV report is then the table's row of the tree.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ParameterError
from .model import Model, TreeModel
from .report import cv_report

__all__ = ["PRUNE_MODES", "check_prune", "resolve_prune", "apply_pruning", "prune_model", "pruned_fold_trees",
           "cp_rows", "path_impurities"]


PRUNE_MODES = ("auto", "cv", "cv-min", "pessimistic", "none")
"""``prune=``: "auto" is "cv-min" with ``cv`` given, else "pessimistic"; None means "none"."""


def _finite(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def _pessimistic(tree: TreeModel, confidence: float, unit: float) -> np.ndarray:
    """C4.5's leaves of ``tree``, counting the errors of what it predicts (clipped under monotonic_cst)."""
    from . import prune as cc

    return cc.pessimistic_leaves(cc.tree_shape(tree), tree.counts, confidence, unit, value=cc.predicted_value(tree))


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
                  confidence: float = 0.25, metrics: bool = True) -> Model:
    """``model`` with its grown tree pruned (and its CV report re-estimated on fold trees pruned alike).

    The grown tree stays in the model (``full_tree``), so pruning again needs no pass.
    Writes ``report["prune"]``: mode, alpha, the cp table, the alpha the fold
    trees were pruned at (``fold_alpha``; None: to their root) and the leaves. Without ``metrics``
    the CV report's pooled metrics are left out (a grid's settings not chosen).
    """
    import dataclasses

    from . import prune as cc

    check_prune(mode, alpha, confidence)
    if alpha is None and mode is None:
        raise ParameterError("give the alpha to prune at, or a mode (cv, cv-min, pessimistic, none)")
    mode = resolve_prune(mode, alpha, bool(model.fold_trees))
    saved = (model.report.get("prune") or {}).get("cp_table") or []
    if mode in ("cv", "cv-min") and not model.fold_trees and not any(r.get("cv_error") is not None for r in saved):
        raise InputError(f"prune={mode!r} chooses alpha by cross-validation, and this model was fitted without it: "
                         "fit with cv=k (CLI: --cv K), or prune with an alpha, or 'pessimistic'")
    criterion = model.params.get("criterion", "gini")
    repeats = int(model.params.get("repeats", 1) or 1)
    grown, folds = model.grown_tree, model.fold_trees
    paths = (cc.weakest_link(cc.tree_shape(grown), grown.counts, criterion),
             [cc.weakest_link(cc.tree_shape(f), f.counts, criterion) for f in folds])
    unit = count_unit(model)
    table = cc.cp_table(grown, folds, criterion, repeats, paths=paths, unit=unit)
    if not folds:  # the CV columns the fit counted with its fold trees: the same sequence, so the same rows
        table = _with_cv_columns(table, saved)
        if mode in ("cv", "cv-min") and any(row["cv_error"] is None for row in table):
            raise InputError("the model's cp table does not match its grown tree (a subtree has no CV error): "
                             "fit it again, or keep its fold trees (keep_fold_trees=True)")
    fold_at: float | None = None
    if mode in ("cv", "cv-min"):
        row = cc.choose_alpha(table, mode)
        alpha, fold_at = table[row]["alpha"], cc.fold_alpha(table, row)
    elif mode == "alpha":
        fold_at = float(alpha)
    if mode == "pessimistic":
        tree = cc.pruned_tree(grown, _pessimistic(grown, confidence, unit))
        pruned_folds = [cc.pruned_tree(f, _pessimistic(f, confidence, unit)) for f in folds]
    elif mode == "none":
        tree, pruned_folds = grown, folds
    else:
        tree = cc.pruned_tree(grown, cc.leaves_at(paths[0], float(alpha)))
        pruned_folds = [cc.pruned_tree(f, cc.leaves_at(p, fold_at)) for f, p in zip(folds, paths[1])]
    report = dict(model.report)
    leaves = [i for i, t in enumerate(tree.tests) if t is None]
    rows = max(1, int(tree.counts[0].sum())) if tree.n_nodes else 1
    predicted = np.argmax(tree.value[leaves], axis=1)  # the class each leaf predicts (clipped under monotonic_cst)
    report.update({
        "depth": tree.max_depth, "nodes": tree.n_nodes, "leaves": tree.n_leaves,
        "training_accuracy": float(tree.counts[leaves, predicted].sum() / rows),
        "prune": {"mode": mode, "alpha": None if alpha is None else float(alpha), "cp_table": table,
                  "fold_alpha": _finite(fold_at), "confidence": float(confidence) if mode == "pessimistic" else None,
                  "leaves": tree.n_leaves, "leaves_grown": grown.n_leaves},
    })
    old_cv = model.report.get("cv")
    if old_cv is not None and folds:
        report["cv"] = cv_report(pruned_folds, int(old_cv["folds"]), int(old_cv["repeats"]), model.classes,
                                 old_cv.get("distinct_tests_per_level", []), metrics)
    elif old_cv is not None:  # no fold trees to re-count: the cp table's row of this tree, or no estimate
        report.pop("cv")
        estimate = None if mode == "pessimistic" else cv_from_cp_table(old_cv, table, tree.n_leaves)
        if estimate is not None:
            report["cv"] = estimate
        else:
            report["prune"]["cv_note"] = ("no cross-validated estimate of this tree: it is not a subtree of the "
                                          "cp table and the fold trees were not kept (fit with keep_fold_trees=True)")
    pruned = tree.n_nodes != grown.n_nodes
    return dataclasses.replace(model, tree=tree, full_tree=grown if pruned else None, report=report)


def _with_cv_columns(table: list[dict], counted: list[dict]) -> list[dict]:
    """``table`` (without fold trees) with ``cv_error`` and ``cv_se`` of the rows of ``counted`` of as many
    leaves (leaves fall strictly along the weakest-link sequence, so they name a row)."""
    by_leaves = {row["leaves"]: row for row in counted if row.get("cv_error") is not None}
    out = []
    for row in table:
        old = by_leaves.get(row["leaves"])
        out.append(row if old is None else {**row, "cv_error": old["cv_error"], "cv_se": old.get("cv_se")})
    return out


def cv_from_cp_table(old_cv: dict, table: list[dict], leaves: int) -> dict | None:
    """The CV report of a re-pruned tree without fold trees: its cp table row's CV error as the pooled
    accuracy (``estimated_from: "cp table"``), no per-fold figures; None when no row has ``leaves``."""
    row = next((r for r in table if r["leaves"] == leaves and r.get("cv_error") is not None), None)
    if row is None:
        return None
    return {"folds": old_cv["folds"], "repeats": old_cv["repeats"], "estimated_from": "cp table",
            "accuracy_mean": None, "accuracy_std": None, "accuracy_pooled": 1.0 - row["cv_error"],
            "accuracy_se": row.get("cv_se"), "accuracy_per_repeat": [], "per_fold": [], "confusion_matrix": None,
            "metrics": {}, "distinct_tests_per_level": old_cv.get("distinct_tests_per_level", [])}


def cp_rows(model: Model) -> list[dict]:
    """The model's cp table; a model saved before pruning existed gets it computed now (no pass)."""
    from . import prune as cc

    table = (model.report.get("prune") or {}).get("cp_table")
    if table is None:
        table = cc.cp_table(model.grown_tree, model.fold_trees, model.params.get("criterion", "gini"),
                            int(model.params.get("repeats", 1) or 1), unit=count_unit(model))
    return table


def count_unit(model: Model) -> float:
    """The rows one count of the model stands for: 1, or ``2**-shift`` when fixed-point weights
    scaled them (:mod:`dasktree.io.weights`); pruning's statistics are in rows, so scale-free."""
    return 2.0 ** -(model.report.get("weights") or {}).get("shift", 0)


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
            out.append(cc.pruned_tree(f, _pessimistic(f, info["confidence"], count_unit(model))))
        else:
            at = np.inf if info.get("fold_alpha") is None else info["fold_alpha"]
            out.append(cc.pruned_tree(f, cc.leaves_at(cc.weakest_link(cc.tree_shape(f), f.counts, criterion), at)))
    return out


def prune_model(model: Model, alpha: float | None = None, *, mode: str | None = None,
                confidence: float = 0.25) -> Model:
    """``model`` pruned anew from its grown tree, without a pass over the data.

    ``alpha``: cost-complexity pruning at that alpha (the main tree and, for
    the CV report, every fold tree). Or ``mode``: "cv" (1-SE rule), "cv-min",
    "pessimistic" (C4.5, ``confidence``) or "none". See :mod:`dasktree.model.prune`.
    """
    return apply_pruning(model, alpha=alpha, mode=mode, confidence=confidence)


def path_impurities(children, risk: np.ndarray, path) -> np.ndarray:
    """The total risk of the tree's leaves before the first collapse of ``path`` and after each
    (scikit-learn's ``cost_complexity_pruning_path(...).impurities``, of ``ccp_alphas = [0,
    *path.step_alphas]``): each collapse of node ``t`` adds ``R(t) - R(T_t)`` to ``t`` and its ancestors'
    branch risks, as scikit-learn's ``_cost_complexity_prune`` does."""
    from .prune import path_risks, shape_of

    shape = shape_of(children)
    return path_risks(shape.parent, shape.internal, np.asarray(risk, dtype=np.float64),
                      np.asarray(path.step_nodes, dtype=np.int64))
