"""Pruning a saved regression model again, without a pass (``dasktree prune`` of a regression model).

The model keeps its grown tree (``full_tree`` when pruned) and the fit's cp table
(``report["prune"]["cp_table"]``, :func:`dasktree.regress.prune.cp_table`): the table is a
function of the grown tree and the fold trees alone, so it stands whatever the pruning, and its
CV MSE per subtree chooses alpha for ``cv`` and ``cv-min`` even when the fold trees were not kept.
The choice is the fit's (:func:`dasktree.regress.fitting._prune`), on the tree the fit pruned (the
grown tree, or with ``max_leaf_nodes`` its best-first subtree, taken again): "none" that tree, an alpha
``T(alpha)``, "cv" / "cv-min" the row :func:`~dasktree.model.prune.choose_alpha` picks, the fold
trees pruned at CART's ``beta`` (:func:`~dasktree.model.prune.fold_alpha`). A model pruned at cp grew
only until that pruning must cut (``report["prune"]["grown_to_alpha"]``, :mod:`dasktree.regress.grow`):
it re-prunes to that alpha or a larger one (its cp table starts there); a smaller one, or "none", is
refused with one line.

The training error (``report["training"]``) and the CV report follow the new tree. With the fold trees kept it is counted again on them, pruned
alike and read as the fit reads them (:func:`dasktree.regress.prune.fold_errors`, :func:`dasktree.regress.report.cv_report`). That needs each fold's held-out sum of squares
``HQ`` and the training one, which the model does not store: they are recovered from the saved
report (a fold's ``HQ`` from its MSE less its old leaves' part, the training one from the target's
standard deviation), so the figures agree with a fit pruned that way to about 1e-12, not to the
bit. Without fold trees the report is the cp table's row of the tree: its CV MSE, RMSE and R^2
(``estimated_from: "cp table"``), no per-fold figures.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import InputError, ParameterError
from ..model.prune import choose_alpha, fold_alpha
from ..params.regression import REGRESSION_PRUNE
from ..model.model import Model
from .prune import best_first, betas_of, fold_errors, held_out_sse, prune_at
from .report import cv_report, training_error

__all__ = ["reprune", "MODES"]

MODES = tuple(m for m in REGRESSION_PRUNE if m != "auto")
"""What ``mode`` may be: "cv" (1-SE rule), "cv-min", "none"; or an alpha instead."""


def _check(mode, alpha) -> None:
    if (mode is None) == (alpha is None):
        raise ParameterError("give the alpha to prune at, or a mode (cv, cv-min, none), not both")
    if mode is not None and mode not in MODES:
        why = (" (M5's pessimistic estimate reads every node's sum of squares, which a model file does not "
               "keep: fit with prune='pessimistic')") if mode == "pessimistic" else ""
        raise ParameterError(f"a regression tree prunes with mode one of {list(MODES)} or an alpha, got {mode!r}{why}")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number))
                              or not math.isfinite(alpha) or alpha < 0):
        raise ParameterError(f"alpha must be a finite number >= 0, got {alpha!r}")


def reprune(model: Model, alpha: float | None = None, *, mode: str | None = None) -> Model:
    """``model`` pruned anew from its grown tree at ``alpha``, or as ``mode`` says ("cv", "cv-min", "none")."""
    _check(mode, alpha)
    info = model.report.get("prune") or {}
    table = info.get("cp_table")
    if not table:
        raise InputError("the model's report has no cp table to prune by: fit it again with this dasktree")
    has_cv = table[0].get("cv_error") is not None
    if mode in ("cv", "cv-min") and not has_cv:
        raise InputError(f"mode {mode!r} chooses alpha by cross-validation, and this model was fitted without it: "
                         "fit with cv=k (CLI: --cv K), or prune at an alpha")
    floor = info.get("grown_to_alpha")  # grown only until pruning at cp must cut: nothing smaller is known
    if floor is not None and (mode == "none" or alpha is not None and alpha < floor):
        asked = "no pruning" if mode == "none" else f"alpha {alpha:.6g}"
        raise ParameterError(f"this model grew only until pruning at its cp (alpha {floor:.6g}) must cut, so it "
                             f"prunes to that alpha or a larger one, not to {asked}: fit it with prune='none' "
                             "(CLI: --prune none) or cv=k to keep the whole tree")
    grown, step = model.grown_tree, model.spec.target.step
    base = grown  # the tree the cp table is of: with max_leaf_nodes, the best-first subtree the fit took
    if model.params.get("max_leaf_nodes") is not None:
        base = best_first(grown, int(model.params["max_leaf_nodes"]), model.params.get("criterion", "squared_error"),
                          model.spec.target.lo, step)
    row = None  # the cp table's row whose beta prunes the fold trees (None: fold_at)
    if alpha is not None:
        mode, fold_at = "alpha", float(alpha)
    elif mode == "none":
        alpha, fold_at = 0.0, 0.0
    else:
        row = choose_alpha(table, mode)
        alpha, fold_at = table[row]["alpha"], fold_alpha(table, row)
    tree = prune_at(base, alpha, step)
    report = dict(model.report)
    report.update({"prune": {"mode": mode, "alpha": float(alpha), "fold_alpha": None if math.isinf(fold_at) else fold_at,
                             "leaves": tree.n_leaves, "cp_table": table, "leaves_grown": base.n_leaves,
                             **({} if floor is None else {"grown_to_alpha": floor})}})
    report.update({"depth": tree.max_depth, "nodes": tree.n_nodes, "leaves": tree.n_leaves})
    train_q, fold_qs = _squares(model)
    report["training"] = training_error(tree, train_q, step)
    old_cv = model.report.get("cv")
    if old_cv and model.fold_trees and old_cv.get("per_fold"):  # as the fit reads them: at a row's beta or an alpha
        betas = betas_of(np.array([r["alpha"] for r in table], dtype=np.float64))
        errors = [fold_errors(f, q, step, betas, None if row is not None else fold_at)
                  for f, q in zip(model.fold_trees, fold_qs)]
        report["cv"] = cv_report([(e.rows, e.sums, e.q, *e.at(row)) for e in errors], train_q, tree, step)
    elif old_cv:
        report["cv"] = _from_cp_table(model, table, tree.n_leaves, int(old_cv["folds"]))
    pruned = tree.n_nodes != grown.n_nodes
    return dataclasses.replace(model, tree=tree, full_tree=grown if pruned else None, report=report)


def _squares(model: Model) -> tuple[int, list[int]]:
    """The training sum of squares ``Q`` and each fold's held-out ``HQ`` (fixed point): as the fit kept
    them (``report["sums_of_squares"]``), else (a model saved before it kept them) from the report: ``HQ = SSE / step**2 - sum over the old leaves of (m**2 HN - 2 m HS)`` with
    ``SSE = mse * HN``, and ``Q = n * (std / step)**2 + S**2 / n``."""
    saved = model.report.get("sums_of_squares")
    if saved:  # kept by the fit, exact
        return int(saved["training"]), [int(q) for q in saved["folds"]]
    step = model.spec.target.step
    old_at = (model.report.get("prune") or {}).get("fold_alpha")
    old_at = math.inf if old_at is None else float(old_at)
    qs = []
    for fold, figures in zip(model.fold_trees, (model.report.get("cv") or {}).get("per_fold") or []):
        old = prune_at(fold, old_at, step)
        leaves = [i for i, t in enumerate(old.tests) if t is None]
        sse = float(figures["mse"]) * int(fold.validation[0, 0]) / (step * step)
        qs.append(round(sse - float(held_out_sse(old, 0)[leaves].sum())))
    n, s = int(model.tree.counts[0, 0]), int(model.tree.counts[0, 1])
    std = float(model.report["target"]["std"]) / step
    train_q = round(n * std * std) + (s * s) // max(1, n)
    return train_q, qs


def _from_cp_table(model: Model, table: list[dict], leaves: int, k: int) -> dict:
    """The CV report of a tree re-pruned without fold trees: its cp table row's CV MSE. A tree with more
    leaves than the table's first row (the grown tree, when a split of no decrease made it larger than
    its subtree at alpha 0, whose predictions are the same) reads that first row: the first row with at
    most its leaves."""
    row = next((r for r in table if r["leaves"] <= leaves), table[-1])
    mse = float(row["cv_error"])
    variance = float(model.report["target"]["std"]) ** 2
    return {"folds": k, "repeats": 1, "estimated_from": "cp table", "per_fold": [], "mse": mse, "rmse": math.sqrt(max(mse, 0.0)),
            "r2": 1.0 - mse / variance if variance > 0 else 0.0, "r2_mean": None, "r2_std": None}

