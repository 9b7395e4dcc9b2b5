"""``fit_regression(data, ...) -> Model``: the regression fit (a model of the regression task), as :func:`dasktree.fit.fit` is
the classification one, and through the same steps: the parameters validated once
(:func:`dasktree.params.regression.validate_regression`), the input opened with its roles, a runner
where :func:`dasktree.engine.place.open_runner` puts the job, pass 0 (the bins and the target's
range, :mod:`dasktree.binning.target`), the level passes (:func:`dasktree.regress.grow.grow_regression`),
then the trees, ``max_leaf_nodes``, pruning and the report, with no further pass.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Sequence

import numpy as np

from ..binning.spec import bin_spec as make_bin_spec
from ..engine.memory_plan import parse_memory_limit
from ..engine.place import open_runner
from ..engine.spill import spill_record
from ..errors import DataError, ParameterError
from ..fit import open_input
from ..levels.small import report_of as small_report
from ..io.folds import fold_warnings
from ..binning.keys import kept_for_keys
from ..io.sources import DEFAULT_PART_ROWS, FileSource
from ..io.weights import WeightStats, weighting
from ..model.prune import pruned_tree
from ..params.regression import validate_regression
from .checkpoint import RegressionResuming, regression_checkpoint
from .grow import RegressionGrowParams, grow_regression
from ..model.model import Model
from .report import cv_report, fit_report, training_error
from .task import REGRESSION
from .trees import node_squares, tree_models
from . import prune as pruning

__all__ = ["fit_regression"]

#: ``prune="auto"`` without ``cv``: rpart's complexity parameter (see :data:`CP`), chosen on the regression
#: sets (benchmarks/results/regression.md): mean 10-fold CV R^2 above rpart's 1-SE and the grown tree's.
AUTO_WITHOUT_CV = "cp"
#: ``prune="cp"``: rpart's default ``cp``; a split stays when it lowers the whole tree's squared error by
#: at least this fraction of the root's (cost complexity at ``alpha = CP * `` the root's mean squared error).
CP = 0.01


def fit_regression(data, y=None, *, target: str | None = None, features: Sequence[str] | None = None,
                   exclude: Sequence[str] = (), nominal: Sequence[str] = (), key: str | None = None,
                   folds: str | None = None, client=None, scheduler: str | None = None, cache: bool | str = "auto",
                   part_rows: int = DEFAULT_PART_ROWS, storage_options: dict | None = None, progress=False,
                   sample_weight=None, security=None, memory_limit: int | str | None = None,
                   checkpoint: str | None = None, **params) -> Model:
    """Learn a regression tree from ``data`` (the arguments of :func:`dasktree.fit.fit`; ``y`` or the
    ``target`` column holds numbers). ``params``: :data:`dasktree.params.regression.REGRESSION_PARAMS`.
    ``checkpoint``: a directory where every pass's results are saved (:mod:`dasktree.regress.checkpoint`);
    the same fit started again replays them and gives the same model."""
    settings = validate_regression(params)
    started = time.perf_counter()
    limit = parse_memory_limit(memory_limit)
    given = open_input(data, y, {**settings, "repeats": 1}, target=target, features=features, exclude=exclude,
                        nominal=nominal, key=key, folds=folds, part_rows=part_rows, storage_options=storage_options,
                        sample_weight=sample_weight)
    roles = dataclasses.replace(given.roles, regression=True)
    given = dataclasses.replace(given, roles=roles)
    saving = None if checkpoint is None else _checkpoint(checkpoint, given, settings, part_rows,
                                                         dict(features=features, exclude=exclude, nominal=nominal,
                                                              key=key, folds=folds))
    with open_runner(given.source, roles, folds=given.fold_spec, client=client, scheduler=scheduler, cache=cache,
                     progress=progress, security=security, memory_limit=limit) as runner:
        spec, summary = _bins(runner, given, settings)
        if saving is not None:
            saving.check_spec(spec)
        pass0 = time.perf_counter() - started
        k = settings["cv"] or 1
        holdout = np.arange(-1, k if settings["cv"] else 0)
        grow_params = RegressionGrowParams(
            criterion=settings["criterion"], max_depth=settings["max_depth"],
            min_samples_split=settings["min_samples_split"], min_samples_leaf=settings["min_samples_leaf"],
            min_impurity_decrease=float(settings["min_impurity_decrease"]),
            min_weight_fraction_leaf=float(settings["min_weight_fraction_leaf"]),
            max_histogram_mb=min(settings["max_histogram_mb"], getattr(runner, "max_histogram_mb", None) or np.inf),
            node_squares=_mode(settings, holdout.size > 1) == "pessimistic")

        def describe(level: int, nodes: int) -> None:
            runner.progress.describe(level=level, nodes=nodes, rows=int(summary.n_rows),
                                     max_depth=settings["max_depth"])  # `level 3/8`, as a classification fit's

        passes = runner if saving is None else RegressionResuming(runner, saving)
        nodes, levels, blocks = grow_regression(passes, spec, grow_params, holdout=holdout, describe=describe,
                                                rows=int(summary.n_rows))
        passes, workers = runner.passes, runner.workers
        reads = runner.parquet_reads if isinstance(given.source, FileSource) else 0
        spilled = spill_record(runner)
    trees, train_q, fold_qs = tree_models(nodes, holdout.size, blocks, spec)
    grown = trees[0]
    if _mode(settings, holdout.size > 1) == "pessimistic":  # from each node's own sums of squares, kept here only
        trees = [pruned_tree(t, pruning.pessimistic_leaves(t, q))
                 for t, q in zip(trees, node_squares(nodes, holdout.size))]
    if settings["max_leaf_nodes"] is not None:
        trees = [pruning.best_first(t, settings["max_leaf_nodes"], settings["criterion"], spec.target.lo,
                                    spec.target.step) for t in trees]
    tree, fold_trees = trees[0], trees[1:]
    root_qs = [nodes[t].squares[0] if nodes[t].squares else 0 for t in range(holdout.size)]  # each tree's training Q
    prune_report, pruned, pruned_folds = _prune(settings, tree, fold_trees, root_qs, fold_qs, spec.target.step)
    report = fit_report(summary, spec, pruned, passes, train_q)  # depth, nodes, leaves: the tree that predicts
    report["small_nodes"] = small_report(levels)
    report["prune"] = {**prune_report, "leaves_grown": (grown if prune_report["mode"] == "pessimistic" else tree).n_leaves}
    report["sums_of_squares"] = {"training": train_q, "folds": fold_qs}  # exact (fixed point): re-pruning reads them
    tree = pruned
    report["training"] = training_error(tree, train_q, spec.target.step)
    if fold_trees:
        report["cv"] = cv_report(pruned_folds, fold_qs, train_q, tree, spec.target.step)
        short = fold_warnings(given.fold_spec, [f["rows"] for f in report["cv"]["per_fold"]])
        if short:  # saved with the model, and said on stderr by the command (only when there are any)
            report["warnings"] = short
    run = {"parts": len(given.source.parts), "workers": workers, "parquet_reads": reads, **spilled, "levels": levels,
           "seconds": {"pass0": round(pass0, 4), "total": round(time.perf_counter() - started, 4)}}
    saved = {name: settings[name] for name in settings if name not in ("keep_fold_trees",)}
    return Model(spec=dataclasses.replace(spec, weighting=None), target=roles.target, tree=tree, task=REGRESSION,
                 params=saved, report=report, run=run, fold_trees=fold_trees if settings["keep_fold_trees"] else [],
                 full_tree=None if tree is grown else grown)


def _checkpoint(directory, given, settings: dict, part_rows: int, columns: dict):
    """The checkpoint of this fit: what identifies it (data, parameters, columns), to refuse another's."""
    if not isinstance(given.source, FileSource):
        raise ParameterError("checkpoint= is for Parquet datasets (a path or URL): data in memory is "
                             "gone with the process that held it")
    from ..version import __version__

    return regression_checkpoint(directory, {
        "data": given.source.fingerprint(), "params": settings, "version": __version__, "part_rows": part_rows,
        "target": given.roles.target, "weight": given.roles.weight,
        "columns": {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in columns.items()}})


def _bins(runner, given, settings: dict):
    """Pass 0: the summary, then the bins and the target's fixed point; the runner prepared."""
    source, roles = given.source, given.roles
    runner.progress.describe(rows=source.n_rows)
    summary = runner.summary(settings["max_bins"])
    spec = make_bin_spec(summary, roles, max_bins=settings["max_bins"], max_categories=settings["max_categories"],
                         where=source.description)
    if settings["criterion"] == "poisson" and spec.target.lo < 0:
        raise DataError(f"criterion 'poisson' needs a target >= 0; {roles.target!r} goes down to "
                        f"{spec.target.lo} in {source.description}")
    if roles.weight is not None:
        rows = int(summary.n_rows - summary.n_null_target)
        stats = summary.weights or WeightStats({0: 1.0}, {0: rows})
        spec = dataclasses.replace(spec, weighting=weighting(roles.weight, stats, (0,), {0: rows}))
    runner.prepare(spec, settings["cv"] or 1)
    return spec, kept_for_keys(summary, roles, source.schema)


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


def _prune(settings: dict, tree, fold_trees, root_qs: list[int], fold_qs, step: float):
    """The pruning the settings ask for (no pass): its report, the pruned main tree and fold trees
    (pessimistic pruning is done before, from the nodes' sums of squares: here it is reported).
    ``root_qs``: each tree's training sum of squares at its root (the main tree's first)."""
    mode = _mode(settings, bool(fold_trees))
    alpha = settings["ccp_alpha"]
    train_q = root_qs[0]
    if mode in ("cv", "cv-min") and not fold_trees:
        raise ParameterError(f"prune={mode!r} needs the fold trees of cv=k")
    table = pruning.cp_table(tree, fold_trees, train_q, fold_qs, step)
    if mode in ("none", "pessimistic"):
        chosen, fold_at = 0, 0.0
        alpha = 0.0
    elif mode == "alpha":
        rows = [i for i, r in enumerate(table) if r["alpha"] <= alpha]
        chosen, fold_at = (rows[-1] if rows else 0), alpha
    elif mode == "cp":  # rpart's complexity: each tree at CP times its own root's mean squared error
        alpha = CP * pruning.root_mse(tree, train_q, step)
        pruned = pruning.prune_at(tree, alpha, step)
        folds = [pruning.prune_at(f, CP * pruning.root_mse(f, q, step), step) for f, q in zip(fold_trees, root_qs[1:])]
        report = {"mode": mode, "alpha": float(alpha), "fold_alpha": None, "cp": CP, "leaves": pruned.n_leaves,
                  "cp_table": table}
        return report, pruned, folds
    else:
        chosen = pruning.choose_alpha(table, mode)
        alpha, fold_at = table[chosen]["alpha"], pruning.fold_alpha(table, chosen)
    pruned = pruning.prune_at(tree, alpha, step)
    folds = [pruning.prune_at(f, fold_at, step) for f in fold_trees]
    report = {"mode": mode, "alpha": float(alpha), "fold_alpha": None if np.isinf(fold_at) else float(fold_at),
              "leaves": pruned.n_leaves, "cp_table": table}
    return report, pruned, folds
