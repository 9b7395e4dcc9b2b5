"""A regression fit's report: the data and tree, the training error, and the fold trees' CV error.

Everything comes from exact sums (:mod:`dasktree.regress.prune`): a fold's
held-out sum of squared errors is ``HQ + sum over leaves (m**2 HN - 2 m HS)``
in fixed point, times ``step**2``. Per fold: ``mse``, ``rmse`` and ``r2``
(one minus the SSE over the held-out rows' own sum of squares about their mean,
as :func:`sklearn.metrics.r2_score` on that fold); pooled: the same over every
row (each is held out once). The mean absolute error needs each row's error,
not sums: ``dasktree evaluate`` gives it on any data.
"""

from __future__ import annotations

import numpy as np

from .prune import node_means

__all__ = ["fit_report", "cv_report", "training_error"]


def _r2(sse: float, sst: float) -> float:
    """1 - SSE / SST; for a constant target, 1 when the predictions are exact, else 0 (as r2_score)."""
    return 1.0 - sse / sst if sst > 0 else (1.0 if sse <= 0 else 0.0)


def _sst(n: int, s: int, q: int) -> float:
    """Sum of squares about the mean, exact until the last division: ``(n q - s**2) / n``."""
    return (int(n) * int(q) - int(s) * int(s)) / int(n) if n else 0.0


def fit_report(summary, spec, tree, passes: int, train_q: int) -> dict:
    step = spec.target.step
    n, s = int(tree.counts[0, 0]), int(tree.counts[0, 1])
    sst = _sst(n, s, train_q)
    mean = spec.target.value(s / n) if n else float("nan")
    return {
        "task": "regression",
        "rows": int(summary.n_rows),
        "rows_used": int(summary.n_rows - summary.n_null_target - summary.n_zero_weight),
        "rows_skipped_null_target": int(summary.n_null_target),
        "target": {"mean": float(mean), "std": float(np.sqrt(max(sst, 0.0) / max(1, n)) * step),
                   "min": float(summary.target_range.lo), "max": float(summary.target_range.hi),
                   "resolution": float(step)},
        "features": [{"name": f.name, "kind": f.kind, "bins": f.n_bins,
                      **({"exact": f.exact} if f.kind == "numeric" else {})} for f in spec.features],
        "passes": passes,
        "depth": tree.max_depth,
        "nodes": tree.n_nodes,
        "leaves": tree.n_leaves,
    }


def training_error(tree, train_q: int, step: float) -> dict:
    """The tree's MSE and R^2 on its training rows."""
    leaves = [i for i, t in enumerate(tree.tests) if t is None]
    m = node_means(tree)[leaves]
    n, s = tree.counts[leaves, 0].astype(np.float64), tree.counts[leaves, 1].astype(np.float64)
    sse = float(train_q) + float(np.sum(m * m * n - 2 * m * s))
    total = int(tree.counts[0, 0])
    sst = _sst(total, int(tree.counts[0, 1]), train_q)
    mse = sse * step * step / max(1, total)
    return {"mse": mse, "rmse": float(np.sqrt(max(mse, 0.0))), "r2": _r2(sse, sst)}


def cv_report(folds: list[tuple[int, int, int, int, float]], train_q: int, tree, step: float) -> dict:
    """Per-fold and pooled MSE, RMSE and R^2 of the (pruned) fold trees on their held-out rows, each fold
    given as (held-out rows, their target sum, their sum of squares, leaves, held-out sum of squared errors),
    fixed point (:meth:`dasktree.regress.prune.FoldErrors.at`)."""
    per_fold = []
    sse_all, n_all = 0.0, 0
    for f, (hn, hs, q, leaves, sse) in enumerate(folds):
        sst = _sst(hn, hs, q)
        mse = sse * step * step / max(1, hn)
        per_fold.append({"repeat": 0, "fold": f, "rows": hn, "mse": mse, "rmse": float(np.sqrt(max(mse, 0.0))),
                         "r2": _r2(sse, sst), "leaves": leaves})
        sse_all += sse
        n_all += hn
    sst_all = _sst(int(tree.counts[0, 0]), int(tree.counts[0, 1]), train_q)
    mse = sse_all * step * step / max(1, n_all)
    r2s = [p["r2"] for p in per_fold if p["rows"]] or [float("nan")]  # a fold of no rows has no score
    return {"folds": len(folds), "repeats": 1, "per_fold": per_fold, "mse": mse, "rmse": float(np.sqrt(max(mse, 0.0))),
            "r2": _r2(sse_all, sst_all),
            "r2_mean": float(np.mean(r2s)), "r2_std": float(np.std(r2s))}
