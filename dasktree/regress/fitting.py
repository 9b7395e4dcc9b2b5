"""What a regression fit does its own way, as :func:`dasktree.fit.fit_validated` (``task="regression"``) asks:
its parameters (:func:`dasktree.params.regression.validate_regression`), the rows' weights and the target's
range after pass 0 (:mod:`dasktree.binning.target`), then the level passes
(:func:`dasktree.regress.grow.grow_regression`), the trees, ``max_leaf_nodes``, pruning and the report,
with no further pass.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..engine.spill import spill_record
from ..errors import DataError, ParameterError
from ..gc_pause import collector_paused
from ..io.folds import fold_warnings
from ..io.sources import FileSource
from ..io.weights import WeightStats, weighting
from ..levels.small import report_of as small_report
from ..model.model import Model
from ..model.prune import pruned_tree
from ..params.regression import validate_regression
from . import prune as pruning
from .grow import grow_params, grow_regression
from .report import cv_report, fit_report, training_error
from .task import REGRESSION
from .trees import node_squares, tree_models

__all__ = ["RegressionFit", "REGRESSION_FIT", "AUTO_WITHOUT_CV", "CP_ROWS", "cp_of"]

#: ``prune="auto"`` without ``cv``: a complexity parameter of the rows (see :data:`CP_ROWS`), chosen on the
#: regression sets and a large generated set (benchmarks/results/regression.md).
AUTO_WITHOUT_CV = "cp"
#: ``prune="cp"``: a split stays when it lowers the tree's squared error by at least ``CP_ROWS`` rows' worth
#: of the root's mean squared error: rpart's ``cp`` at ``CP_ROWS / n`` for a tree of ``n`` rows (cost
#: complexity at ``alpha = cp(n) *`` the root's mean squared error, :func:`cp_of`). rpart's fixed ``cp = 0.01``
#: asks each split for 1% of the root's error whatever the rows, and at 500,000 rows keeps 8 leaves where
#: the data supports hundreds. Such a fit grows its main tree only as far as that pruning can reach (as
#: rpart grows to its ``cp``): the model's grown tree stops there, its cp table starts at that alpha
#: (``report["prune"]["grown_to_alpha"]``), and it re-prunes to that alpha or a larger one only
#: (:func:`dasktree.regress.reprune.reprune`).
CP_ROWS = 5


def cp_of(rows: int) -> float:
    """``prune="cp"``'s complexity parameter for a tree of ``rows`` rows (weighted: its root's count):
    ``CP_ROWS / rows``."""
    return CP_ROWS / max(int(rows), 1)

_CLASSIFICATION_ONLY = {"class_weight": None, "param_grid": None, "refit": True}  # fit's, left at these here


class RegressionFit:
    """A regression fit's own steps (the pipeline is :func:`dasktree.fit.fit_validated`)."""

    task = REGRESSION

    @staticmethod
    def validate(values: dict) -> dict:
        """The regression parameters checked; a classification tree's argument given is named."""
        return validate_regression({k: v for k, v in values.items()
                                    if k not in _CLASSIFICATION_ONLY or v is not _CLASSIFICATION_ONLY[k]})

    @staticmethod
    def folds(settings: dict) -> tuple[int | None, int]:
        return settings["cv"], 1

    @staticmethod
    def saved(settings: dict) -> dict:
        """What the model keeps as its parameters (and a checkpoint is valid for)."""
        return {name: settings[name] for name in settings if name != "keep_fold_trees"}

    @staticmethod
    def grid(settings: dict, given, bin_spec):
        if bin_spec is not None:
            raise ParameterError("bin_spec= is for classification trees: a regression tree makes its own bins")
        return None

    @staticmethod
    def weighed(spec, summary, roles, source, settings: dict):
        """The bins with the rows' weights (one class, 0), once the target's range suits the criterion."""
        if settings["criterion"] == "poisson" and spec.target.lo < 0:
            raise DataError(f"criterion 'poisson' needs a target >= 0; {roles.target!r} goes down to "
                            f"{spec.target.lo} in {source.description}")
        if roles.weight is None:
            return spec
        rows = int(summary.n_rows - summary.n_null_target)
        stats = summary.weights or WeightStats({0: 1.0}, {0: rows})
        return dataclasses.replace(spec, weighting=weighting(roles.weight, stats, (0,), {0: rows}))

    @staticmethod
    def refined(runner, spec, settings: dict, bin_spec, k: int, repeats: int):
        return spec

    @staticmethod
    def grow_model(runner, passes, given, settings: dict, grid, spec, summary, started: float) -> Model:
        """The level passes of the main and fold trees, then the trees pruned as the settings say and
        the report, with no pass of their own."""
        pass0 = time.perf_counter() - started
        k = settings["cv"] or 1
        holdout = np.arange(-1, k if settings["cv"] else 0)
        mode = _mode(settings, holdout.size > 1)
        params = grow_params(settings, runner, spec, node_squares=mode == "pessimistic")
        # pruned at cp: grown only until that pruning must cut; not with max_leaf_nodes (its best-first
        # choice reads the whole tree) nor monotonic_cst (pruning reads clipped values, whose squared error
        # the stop's bound on the node's own sums does not bound), nor with row weights (the cp of the
        # root's weighted count is known only once it is counted)
        stop = cp_of(summary.n_rows - summary.n_null_target) if (
            mode == "cp" and settings["max_leaf_nodes"] is None and params.monotonic is None
            and given.roles.weight is None) else 0.0
        params = dataclasses.replace(params, cp=stop)

        def describe(level: int, nodes: int, rows: int) -> None:  # the rows of the data, as before each level
            runner.progress.describe(level=level, nodes=nodes, rows=int(summary.n_rows),
                                     max_depth=settings["max_depth"])  # `level 3/8`, as a classification fit's

        forest, levels = grow_regression(passes, spec, params, holdout=holdout, describe=describe,
                                                rows=int(summary.n_rows))
        run = {"parts": len(given.source.parts), "workers": runner.workers,
               "parquet_reads": runner.parquet_reads if isinstance(given.source, FileSource) else 0,
               **spill_record(runner), "levels": levels}
        with collector_paused():  # the trees' lists and the pruned copies: no cycles, nothing to collect
            return _finish(runner, given, settings, spec, summary, started, pass0, run, (forest, levels),
                           holdout, mode, stop, params.monotonic)


def _finish(runner, given, settings: dict, spec, summary, started: float, pass0: float, run: dict, grown_nodes,
            holdout: np.ndarray, mode: str, stop: float, monotonic: tuple | None) -> Model:
    """The grown trees (``grown_nodes``: the level loop's forest, with the blocks grown in memory, and its report)
    as models, pruned as the settings say, and the report (no pass)."""
    forest, levels = grown_nodes
    trees, train_q, fold_qs = tree_models(forest)
    for t in trees if monotonic is not None else ():  # their values clipped from here on (reports)
        t.monotonic = np.asarray(monotonic, dtype=np.int8)
    grown = trees[0]
    if mode == "pessimistic":  # from each node's own sums of squares, here only
        trees = [pruned_tree(t, pruning.pessimistic_leaves(t, q))
                 for t, q in zip(trees, node_squares(forest))]
    if settings["max_leaf_nodes"] is not None:
        trees = [pruning.best_first(t, settings["max_leaf_nodes"], settings["criterion"], spec.target.lo,
                                    spec.target.step) for t in trees]
    tree, fold_trees = trees[0], trees[1:]
    root_qs = [node.squares[0] if node.squares else 0 for node in forest.nodes[:holdout.size]]  # trees' training Q
    prune_report, pruned, pruned_folds = _prune(settings, tree, fold_trees, root_qs, fold_qs, spec.target.step,
                                                stopped=stop > 0)
    report = fit_report(summary, spec, pruned, runner.passes, train_q)  # depth, nodes, leaves: the pruned tree's
    report["small_nodes"] = small_report(levels)
    before = grown if prune_report["mode"] == "pessimistic" else tree
    report["prune"] = {**prune_report, "leaves_grown": before.n_leaves}
    report["sums_of_squares"] = {"training": train_q, "folds": fold_qs}  # exact (fixed point): re-pruning reads
    tree = pruned
    report["training"] = training_error(tree, train_q, spec.target.step)
    if fold_trees:
        report["cv"] = cv_report(pruned_folds, fold_qs, train_q, tree, spec.target.step)
        short = fold_warnings(given.fold_spec, [f["rows"] for f in report["cv"]["per_fold"]])
        if short:  # saved with the model, and said on stderr by the command (only when there are any)
            report["warnings"] = short
    return Model(spec=dataclasses.replace(spec, weighting=None), target=given.roles.target, tree=tree,
                 task=REGRESSION,
                 params=RegressionFit.saved(settings), report=report, run={**run, "seconds": {
                     "pass0": round(pass0, 4), "total": round(time.perf_counter() - started, 4)}},
                 fold_trees=fold_trees if settings["keep_fold_trees"] else [],
                 full_tree=None if tree is grown else grown)


REGRESSION_FIT = RegressionFit()


def _mode(settings: dict, with_folds: bool) -> str:
    """The pruning the settings ask for: "alpha", "none", "pessimistic", "cv" or "cv-min"."""
    mode = settings["prune"]
    if settings["ccp_alpha"] is not None:
        return "alpha"
    if mode in (None, "none"):
        return "none"
    if mode == "auto":
        return "cv-min" if with_folds else AUTO_WITHOUT_CV
    return mode


def _prune(settings: dict, tree, fold_trees, root_qs: list[int], fold_qs, step: float, stopped: bool = False):
    """The pruning the settings ask for (no pass): its report, the pruned main tree and fold trees
    (pessimistic pruning is done before, from the nodes' sums of squares: here it is reported).
    ``root_qs``: each tree's training sum of squares at its root (the main tree's first). ``stopped``:
    the main tree grew only until pruning at cp must cut (:mod:`dasktree.regress.grow`): its cp table
    starts at that alpha (``grown_to_alpha``), the subtrees below it unknown."""
    mode = _mode(settings, bool(fold_trees))
    alpha = settings["ccp_alpha"]
    train_q = root_qs[0]
    if mode in ("cv", "cv-min") and not fold_trees:
        raise ParameterError(f"prune={mode!r} needs the fold trees of cv=k")
    if mode == "cp":  # rpart's complexity, cp_of(its rows): each tree at that times its own root's mean squared error
        cp = cp_of(tree.counts[0, 0])
        alpha = cp * pruning.root_mse(tree, train_q, step)
        table = pruning.cp_table(tree, fold_trees, train_q, fold_qs, step, floor=alpha if stopped else None)
        pruned = pruning.prune_at(tree, alpha, step)
        folds = [pruning.prune_at(f, cp_of(f.counts[0, 0]) * pruning.root_mse(f, q, step), step)
                 for f, q in zip(fold_trees, root_qs[1:])]
        report = {"mode": mode, "alpha": float(alpha), "fold_alpha": None, "cp": cp, "cp_rows": CP_ROWS,
                  "leaves": pruned.n_leaves, "cp_table": table}
        if stopped:
            report["grown_to_alpha"] = float(alpha)
        return report, pruned, folds
    table = pruning.cp_table(tree, fold_trees, train_q, fold_qs, step)
    if mode in ("none", "pessimistic"):
        chosen, fold_at = 0, 0.0
        alpha = 0.0
    elif mode == "alpha":
        rows = [i for i, r in enumerate(table) if r["alpha"] <= alpha]
        chosen, fold_at = (rows[-1] if rows else 0), alpha
    else:
        chosen = pruning.choose_alpha(table, mode)
        alpha, fold_at = table[chosen]["alpha"], pruning.fold_alpha(table, chosen)
    pruned = pruning.prune_at(tree, alpha, step)
    folds = [pruning.prune_at(f, fold_at, step) for f in fold_trees]
    report = {"mode": mode, "alpha": float(alpha), "fold_alpha": None if np.isinf(fold_at) else float(fold_at),
              "leaves": pruned.n_leaves, "cp_table": table}
    return report, pruned, folds
