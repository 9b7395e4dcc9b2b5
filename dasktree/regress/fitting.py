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
from ..levels.attach import by_tree, let_go
from ..levels.small import report_of as small_report
from ..model.model import Model
from ..model.prune import pruned_tree
from ..params.regression import validate_regression
from . import prune as pruning
from .grow import grow_params, grow_regression
from .report import cv_report, fit_report, training_error
from .task import REGRESSION
from ..levels.to_model import tree_model
from .trees import node_squares, root_squares

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
    as models, pruned as the settings say, and the report (no pass). A fold tree is a model only while its
    pruning sequence is taken (:func:`dasktree.regress.prune.fold_path`; its CV errors at the main tree's betas
    follow from that), unless ``keep_fold_trees``, and each tree lets go of its grown blocks once its model is
    made: the fold trees of a deep tree are most of a fit's nodes."""
    forest, levels = grown_nodes
    step = spec.target.step
    train_qs, fold_qs = root_squares(forest)
    train_q = train_qs[0]
    squares = node_squares(forest) if mode == "pessimistic" else None

    def model(t: int):  # tree t as a model, shaped as the settings shape every tree before its pruning
        with collector_paused():  # hundreds of thousands of lists and tests, no cycles: nothing to collect
            out = tree_model(forest, t)
        if monotonic is not None:  # its values clipped from here on (reports)
            out.monotonic = np.asarray(monotonic, dtype=np.int8)
        return out

    def shaped(t: int, tree):
        if mode == "pessimistic":  # from each node's own sums of squares, here only
            tree = pruned_tree(tree, pruning.pessimistic_leaves(tree, squares[t]))
        if settings["max_leaf_nodes"] is not None:
            tree = pruning.best_first(tree, settings["max_leaf_nodes"], settings["criterion"], spec.target.lo, step)
        return tree

    n_folds = holdout.size - 1
    if mode in ("cv", "cv-min") and not n_folds:
        raise ParameterError(f"prune={mode!r} needs the fold trees of cv=k")
    by_tree(forest)  # each tree's grown blocks apart: each lets go of its own once its model is made

    def fold(t: int):  # fold tree t's pruning sequence and held-out errors; the tree itself only if kept
        made = model(t)
        let_go(forest, t)
        f = shaped(t, made)
        at = (cp_of(f.counts[0, 0]) * pruning.root_mse(f, train_qs[t], step) if mode == "cp"
              else None if mode in ("cv", "cv-min") else 0.0 if mode in ("none", "pessimistic")
              else settings["ccp_alpha"])
        return pruning.fold_path(f, fold_qs[t - 1], step, at), f if settings["keep_fold_trees"] else None

    # the fold trees first, each kept as its pruning sequence (FoldPath, 20 bytes a node) once its blocks
    # are let go: the main tree's model is then made beside those, not beside every fold tree's blocks
    each = forest.distinct_nodes() // max(1, forest.n_trees)  # a tree's nodes, about
    folded = pruning.in_threads(fold, list(range(1, n_folds + 1)), nodes_each=each)
    grown = model(0)
    let_go(forest, 0)
    tree = shaped(0, grown)
    alpha = settings["ccp_alpha"]
    if mode == "cp":  # rpart's complexity, cp_of(its rows): each tree at that times its own root's mean squared error
        alpha = cp_of(tree.counts[0, 0]) * pruning.root_mse(tree, train_q, step)
    alphas = pruning.table_alphas(tree, step, floor=alpha if mode == "cp" and stop > 0 else None)
    betas = pruning.betas_of(alphas)
    errors = [path.errors(betas) for path, _ in folded]
    fold_trees = [f for _, f in folded] if settings["keep_fold_trees"] else []
    del folded  # the sequences are read: let go before the cp table's rows are made
    prune_report, pruned, row = _prune(settings, mode, tree, alpha, alphas, errors, train_q, step, stopped=stop > 0)
    report = fit_report(summary, spec, pruned, runner.passes, train_q)  # depth, nodes, leaves: the pruned tree's
    report["small_nodes"] = small_report(levels)
    before = grown if prune_report["mode"] == "pessimistic" else tree
    report["prune"] = {**prune_report, "leaves_grown": before.n_leaves}
    report["sums_of_squares"] = {"training": train_q, "folds": fold_qs}  # exact (fixed point): re-pruning reads
    report["training"] = training_error(pruned, train_q, step)
    if errors:
        report["cv"] = cv_report([(e.rows, e.sums, e.q, *e.at(row)) for e in errors], train_q, pruned, step)
        short = fold_warnings(given.fold_spec, [f["rows"] for f in report["cv"]["per_fold"]])
        if short:  # saved with the model, and said on stderr by the command (only when there are any)
            report["warnings"] = short
    return Model(spec=dataclasses.replace(spec, weighting=None), target=given.roles.target, tree=pruned,
                 task=REGRESSION,
                 params=RegressionFit.saved(settings), report=report, run={**run, "seconds": {
                     "pass0": round(pass0, 4), "total": round(time.perf_counter() - started, 4)}},
                 fold_trees=fold_trees,
                 full_tree=None if pruned is grown else grown)


def _prune(settings: dict, mode: str, tree, alpha: float | None, alphas: np.ndarray, folds: list,
           train_q: int, step: float, stopped: bool = False) -> tuple[dict, object, int | None]:
    """The pruning the settings ask for (no pass): its report, the pruned main tree, and the cp table's row
    whose beta the fold trees' CV report reads (None: each fold's fixed alpha, :class:`~dasktree.regress.
    prune.FoldErrors`). Pessimistic pruning is done before, from the nodes' sums of squares: here it is
    reported. ``alpha``: the given one, or ``prune="cp"``'s; ``stopped``: the main tree grew only until pruning
    at cp must cut (:mod:`dasktree.regress.grow`): its cp table starts at that alpha (``grown_to_alpha``)."""
    table = pruning.cp_table(tree, alphas, folds, train_q, step)
    if mode == "cp":
        report = {"mode": mode, "alpha": float(alpha), "fold_alpha": None, "cp": cp_of(tree.counts[0, 0]),
                  "cp_rows": CP_ROWS, "leaves": 0, "cp_table": table}
        if stopped:
            report["grown_to_alpha"] = float(alpha)
        pruned = pruning.prune_at(tree, alpha, step)
        report["leaves"] = pruned.n_leaves
        return report, pruned, None
    row = None
    if mode in ("none", "pessimistic"):
        alpha, fold_at = 0.0, 0.0
    elif mode == "alpha":
        fold_at = alpha
    else:
        row = pruning.choose_alpha(table, mode)
        alpha, fold_at = table[row]["alpha"], pruning.fold_alpha(table, row)
    pruned = pruning.prune_at(tree, alpha, step)
    report = {"mode": mode, "alpha": float(alpha), "fold_alpha": None if np.isinf(fold_at) else float(fold_at),
              "leaves": pruned.n_leaves, "cp_table": table}
    return report, pruned, row


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
