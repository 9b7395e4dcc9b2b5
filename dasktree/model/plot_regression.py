"""``dasktree plot MODEL --cv`` for a regression tree: its cross-validation as a picture.

Two panels, as far as the model holds them: the held-out MSE of every fold tree (bars, the pooled
MSE as a line), and rpart's ``plotcp`` for ``anova``: the cross-validated MSE of every subtree of
the grown tree's weakest-link sequence with one standard error bars, against ``alpha`` (bottom
axis, the largest first as rpart's ``cp``) and the leaves (top axis), the ``min + 1 SE`` line the
1-SE rule reads, and the chosen subtree in red. The figures are the model's
``report["cv"]`` and ``report["prune"]["cp_table"]`` (:mod:`dasktree.regress.report`,
:func:`dasktree.regress.prune.cp_table`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .model import Model
from .plot import _pyplot, _save, fold_panel

__all__ = ["plot_cv_regression"]

MAX_TICKS = 12


def plot_cv_regression(model: Model, out: str, ext: str) -> None:
    """Draw the model's CV MSE per fold and against the pruning sequence into ``out`` (``ext``: svg or png)."""
    cv = model.report.get("cv")
    if not cv:
        raise InputError("--cv: the model has no cross-validation report: fit it with --cv K")
    table = [row for row in (model.report.get("prune") or {}).get("cp_table") or [] if row.get("cv_error") is not None]
    folds = cv.get("per_fold") or []  # none when re-pruned without fold trees (the cp table's estimate)
    panels = bool(folds) + bool(table)
    if not panels:
        raise InputError("--cv: the model keeps no per-fold MSE nor CV MSE in its cp table")
    plt = _pyplot()
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    if folds:
        fold_panel(axes[0][0], [f["mse"] for f in folds], [str(f["fold"]) for f in folds], cv["mse"],
                   f"pooled MSE {cv['mse']:.4g} (R^2 {cv['r2']:.4f})", "fold", "held-out MSE",
                   f"{cv['folds']}-fold cross-validation", gid="fold-mse")
    if table:
        _cp_panel(axes[0][panels - 1], table, model.tree.n_leaves)
    _save(fig, out, ext)


def _cp_panel(ax, table: list[dict], leaves_now: int) -> None:
    """rpart's plotcp: x is the row of the sequence, the largest alpha (fewest leaves) on the left."""
    rows = sorted(table, key=lambda row: row["leaves"])
    x = np.arange(len(rows))
    error = np.array([row["cv_error"] for row in rows])
    se = np.array([row.get("cv_se") or 0.0 for row in rows])
    ax.errorbar(x, error, yerr=se, marker="o", markersize=3, capsize=3, linewidth=1, gid="cv-mse")
    best = int(np.argmin(error))
    ax.axhline(error[best] + se[best], color="black", linestyle=":", linewidth=1, label="min + 1 SE")
    chosen = next((k for k, row in enumerate(rows) if row["leaves"] == leaves_now), None)
    if chosen is not None:  # drawn over the error bars, larger, so it is never hidden
        ax.plot([chosen], [error[chosen]], "o", color="tab:red", markersize=9, markeredgecolor="black", zorder=10,
                label="chosen", gid="chosen")
    ticks = x[np.unique(np.linspace(0, len(rows) - 1, min(MAX_TICKS, len(rows))).round().astype(int))]
    ax.set_xticks(ticks, [f"{rows[k]['alpha']:.3g}" for k in ticks], fontsize=7, rotation=45)
    ax.set_xlabel("alpha")
    top = ax.twiny()
    top.set_xlim(ax.get_xlim())
    top.set_xticks(ticks, [str(rows[k]["leaves"]) for k in ticks], fontsize=7)
    top.set_xlabel("leaves")
    ax.set_ylabel("CV MSE")
    ax.set_title("cost-complexity pruning", pad=28)
    ax.legend(fontsize=8)
