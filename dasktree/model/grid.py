"""A grid's table and its choice, in scikit-learn's shape: no pass, only the fold trees' held-out counts.

Every setting of a grid has its main tree and fold trees in one forest
(:mod:`dasktree.levels.settings`), each pruned as the setting says
(:mod:`dasktree.model.pruning`). Split ``i``'s score of a setting is the
accuracy of its fold tree ``i`` on the part it held out (:mod:`dasktree.model.report`),
the score :class:`~sklearn.model_selection.GridSearchCV` computes for the same
setting and split. :func:`grid_table` lays the scores out as ``cv_results_``
(mean, standard deviation and rank computed as scikit-learn computes them) and
chooses the setting as ``refit`` says.

The chosen setting's mean score is optimistic: the same folds chose it, and
the best of many noisy estimates is biased upwards. Nested cross-validation
(outer folds each choosing on inner folds) estimates the whole procedure; it
is not grown here, since a tree of it holds out two parts (its outer and
inner fold) where the forest's trees hold out one.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import numpy as np

from ..errors import ParameterError
from .model import Model

__all__ = ["grid_table", "best_index", "check_refit", "OPTIMISTIC", "cv_results", "grid_model", "GridResults",
           "TowardsFirst"]

OPTIMISTIC = ("best_score is optimistic: the same folds scored every setting and chose this one; "
              "nested cross-validation (not grown by dasktree: a nested tree holds out two parts) "
              "would estimate the choice too")


class TowardsFirst:
    """``refit`` by the 1-SE rule leaning towards the grid's first setting: the setting of best mean CV
    accuracy (the first of them on a tie) when its mean beats the first setting's by more than its
    standard error (the sample deviation of its split scores over the square root of their number),
    else the first setting. A fold of no rows (NaN) is left out of a setting's mean and deviation.

    ``param_grid={"criterion": ["gain_ratio", "gini", "entropy"], "prune": ["pessimistic"]}`` with
    ``refit=TowardsFirst("gain_ratio")`` is the choice measured for ``cv=k`` on the accuracy suite
    (``benchmarks/results/accuracy.md``: better than the default and than ``cv=10`` alone, but at up
    to 9x ``cv=10``'s time on its largest set, so ``cv`` does not grow it unasked). The report's
    ``grid["refit"]`` names the rule."""

    def __init__(self, first: str):
        self.rule = f"1-SE towards {first}"

    def __call__(self, results: dict) -> int:
        splits = sorted((k for k in results if k.startswith("split") and k.endswith("_test_score")),
                        key=lambda k: int(k[5:-11]))
        scores = np.column_stack([np.asarray(results[k], dtype=np.float64) for k in splits])
        values = [row[~np.isnan(row)] for row in scores]
        means = np.array([float(np.mean(v)) if v.size else -np.inf for v in values])
        best = int(np.argmax(means))
        v = values[best]
        se = float(np.std(v, ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0
        return best if means[best] > means[0] + se else 0

    def __repr__(self) -> str:
        return self.rule


def check_refit(refit) -> None:
    """``refit``: True (the least rank, scikit-learn's default) or a callable of ``cv_results_``."""
    if refit is not True and not callable(refit):
        raise ParameterError(f"refit must be True or a callable taking cv_results_ and returning an index, "
                             f"got {refit!r}")


def _ranks(means: np.ndarray) -> np.ndarray:
    """scikit-learn's ``rank_test_score``: ``rankdata(-means, method="min")``, NaN ranked last."""
    if np.isnan(means).all():
        return np.ones(means.size, dtype=np.int32)
    filled = np.nan_to_num(means, nan=np.nanmin(means) - 1)
    return (1 + (filled[None, :] > filled[:, None]).sum(axis=1)).astype(np.int32)


def grid_table(settings: list[dict[str, Any]], split_scores: list[list[float]], leaves: list[int]) -> dict[str, Any]:
    """The grid's ``cv_results_`` as JSON-ready lists: ``params``, ``param_<name>``,
    ``split{i}_test_score``, ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (as
    scikit-learn computes them), and per setting its tree's ``leaves``. A function of the data
    and parameters alone (the model saves it); the seconds are the run's."""
    scores = np.asarray(split_scores, dtype=np.float64).reshape(len(settings), -1)  # None (a fold of no rows): NaN
    scored = ~np.isnan(scores)
    counted = np.maximum(scored.sum(axis=1), 1)
    means = np.where(scored, scores, 0.0).sum(axis=1) / counted
    means[~scored.any(axis=1)] = np.nan
    stds = np.sqrt(np.where(scored, (scores - means[:, None]) ** 2, 0.0).sum(axis=1) / counted)
    names = sorted({k for s in settings for k in s})
    table: dict[str, Any] = {"params": [dict(s) for s in settings]}
    for name in names:
        table[f"param_{name}"] = [s.get(name) for s in settings]
    for i in range(scores.shape[1]):
        table[f"split{i}_test_score"] = [None if np.isnan(v) else v for v in scores[:, i].tolist()]
    table.update({"mean_test_score": means.tolist(), "std_test_score": stds.tolist(),
                  "rank_test_score": _ranks(means).tolist(), "leaves": list(leaves)})
    return table


def cv_results(table: dict[str, Any]) -> dict[str, Any]:
    """A table of :func:`grid_table` (or read back from a model) with numpy columns, as
    :attr:`sklearn.model_selection.GridSearchCV.cv_results_` has them."""
    out: dict[str, Any] = {}
    for key, column in table.items():
        if key == "params":
            out[key] = [dict(p) for p in column]
        elif key.startswith("split") or key in ("mean_test_score", "std_test_score"):
            out[key] = np.asarray(column, dtype=np.float64)  # a fold of no rows (None): NaN, as scikit-learn's
        elif key.startswith("param_"):
            out[key] = np.ma.MaskedArray(np.asarray(column, dtype=object), mask=[v is None for v in column])
        else:
            out[key] = np.asarray(column)
    return out


def best_index(table: dict[str, Any], refit: Callable | bool = True) -> int:
    """The chosen setting: the first of least rank (scikit-learn's ``refit=True``), or ``refit(cv_results_)``."""
    if refit is True:
        return int(np.argmin(table["rank_test_score"]))
    index = refit(cv_results(table))
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < len(table["params"]):
        raise ParameterError(f"refit returned {index!r}, not the index of a setting (0..{len(table['params']) - 1})")
    return int(index)


def grid_model(grid, build: Callable[[int, dict, bool], Model], refit, started: float) -> Model:
    """The chosen setting's model, its report holding the grid (``report["grid"]``).

    ``grid`` is a :class:`~dasktree.levels.settings.Grid`; ``build(g, params, chosen)`` gives the
    model of growth ``g``'s trees pruned as ``params`` say, with its CV report (no pass: the trees
    are grown), in full only when ``chosen`` (else without the pooled metrics and fold trees: the
    table needs only each fold's accuracy). Each setting's split scores are its fold trees'
    held-out accuracies, in fold order."""
    scores, leaves, seconds = [], [], []
    for i, params in enumerate(grid.params):
        began = time.perf_counter()
        model = build(grid.growth_of[i], params, False)
        seconds.append(time.perf_counter() - began)
        scores.append([f["accuracy"] for f in model.report["cv"]["per_fold"]])
        leaves.append(model.tree.n_leaves)
    table = grid_table(list(grid.settings), scores, leaves)
    best = best_index(table, refit)
    model = build(grid.growth_of[best], grid.params[best], True)
    report = dict(model.report)
    report["grid"] = {
        "cv_results": table,
        "best_index": best,
        "best_params": dict(grid.settings[best]),
        "best_score": table["mean_test_score"][best],
        "refit": "least rank" if refit is True else getattr(refit, "rule", "callable"),
        "settings": len(grid.settings),
        "growths": len(grid.growths),
        "trees": grid.n_trees,
        "note": OPTIMISTIC,
    }
    run = dict(model.run)  # how this run went, not saved: the trees' time is the forest's, shared by all
    run["seconds"] = {**run["seconds"], "total": round(time.perf_counter() - started, 4)}
    run["grid_prune_seconds"] = [round(s, 6) for s in seconds]
    return dataclasses.replace(model, report=report, run=run)


class GridResults:
    """:class:`~sklearn.model_selection.GridSearchCV`'s attributes of an estimator fitted with a grid
    (its ``model_.report["grid"]``); an estimator fitted without one has none of them."""

    def _grid(self) -> dict:
        grid = (getattr(self, "model_", None) and self.model_.report.get("grid")) or None
        if grid is None:
            raise AttributeError("fitted without param_grid: there is no grid search result")
        return grid

    @property
    def cv_results_(self) -> dict:
        """scikit-learn's table; ``prune_seconds``: each setting's pruning and report (its trees grew
        in the one forest, whose time is ``run_["seconds"]``)."""
        out = cv_results(self._grid()["cv_results"])
        seconds = (getattr(self, "run_", None) or {}).get("grid_prune_seconds")
        if seconds is not None and len(seconds) == len(out["params"]):
            out["prune_seconds"] = np.asarray(seconds)
        return out

    @property
    def best_params_(self) -> dict:
        return dict(self._grid()["best_params"])

    @property
    def best_score_(self) -> float:
        return float(self._grid()["best_score"])

    @property
    def best_index_(self) -> int:
        return int(self._grid()["best_index"])
