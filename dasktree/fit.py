"""The functional core of both tasks: ``fit(data, ..., task=) -> Model``. The estimators and the CLI call it.

A short pipeline of named steps: the parameters validated once, the input opened as parts with its
column roles (:func:`open_input`), a runner where :func:`dasktree.engine.place.open_runner` puts the
job, pass 0 and the bin spec (:func:`_bins`), the level passes (saved to and replayed from a checkpoint,
:mod:`dasktree.engine.checkpoint`), the model, its fit report and pruning. What a task does its own way
is its fit object's (:data:`FITS`): :class:`ClassificationFit` (:func:`dasktree.levels.grow.grow`,
:func:`_model_of`, :func:`_prune`) or :class:`dasktree.regress.fitting.RegressionFit`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from .binning.spec import BinSpec
from .binning.spec import bin_spec as make_bin_spec
from .engine.checkpoint import Checkpoint, Resuming
from .engine.memory_plan import parse_memory_limit
from .engine.progress import Progress
from .engine.place import open_runner
from .engine.spill import spill_record
from .errors import InputError, ParameterError
from .levels.grow import grow
from .levels.settings import Grid
from .levels.small import report_of as small_report
from .levels.to_model import tree_model
from . import hook_points
from .gc_pause import collector_paused
from .io.folds import FoldSpec, fold_warnings
from .binning.keys import kept_for_keys, key_like_columns, key_warnings
from .io.schema import Roles, resolve_roles
from .io.sources import DEFAULT_PART_ROWS, FileSource, Source, TableSource, open_source
from .model.model import Model
from .model.pruning import apply_pruning, resolve_prune
from .model.report import cv_report
from .model.task import CLASSIFICATION, Task, task_named
from .params import Settings, defaults, validate
from .io.weights import WeightStats, check_sample_weight, weighting
from .regress.fitting import REGRESSION_FIT

__all__ = ["fit", "fit_regression", "fit_validated", "fit_of", "ClassificationFit", "FITS", "DEFAULTS"]

DEFAULTS = defaults()
"""The defaults of the learning parameters the model keeps (:mod:`dasktree.params.declared`)."""


def fit(
    data,
    y=None,
    *,
    task: str | Task = "classification",
    target: str | None = None,
    features: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    nominal: Sequence[str] = (),
    key: str | None = None,
    folds: str | None = None,
    bin_spec: BinSpec | None = None,
    client=None,
    scheduler: str | None = None,
    cache: bool | str = "auto",
    part_rows: int = DEFAULT_PART_ROWS,
    storage_options: dict | None = None,
    progress: bool | Progress = False,
    sample_weight=None,
    class_weight=None,
    keep_fold_trees: bool = False,
    checkpoint: str | None = None,
    param_grid=None,
    refit=True,
    security=None,
    memory_limit: int | str | None = None,
    **params,
) -> Model:
    """Learn a decision tree from ``data``: a classification tree, or with ``task="regression"`` a
    regression tree (:func:`fit_regression`).

    Parameters
    ----------
    data : str, path, list of paths, dasktree.CSV, pandas DataFrame, dask DataFrame or ndarray
        A Parquet file, directory, glob or fsspec URL; the same of CSV files (``*.csv`` / ``*.tsv``,
        compressed or not, or any wrapped in :class:`dasktree.CSV` with its types and options); or data
        in memory.
    y : array-like, optional
        Class labels (a regression tree's numbers) for in-memory ``data`` (else name a column with ``target``).
    task : "classification", "regression" or a task (:mod:`dasktree.model.task`)
        What the tree predicts: class labels, or numbers (their parameters:
        :data:`dasktree.params.regression.REGRESSION_PARAMS`; ``class_weight``, ``bin_spec``,
        ``param_grid`` and ``refit`` are classification's alone).
    target : str
        The class (or number) column of ``data``.
    features, exclude, nominal : list of str
        Feature columns (default: all but the target), columns to leave out,
        and numeric columns to treat as nominal.
    key : str, optional
        With ``cv``: a column whose values key the rows for the fold hash
        (default: the row's content, its values in the columns the fit uses).
    folds : str, optional
        With ``cv=k``: a column of integer folds ``0..k-1`` given by the user.
    bin_spec : BinSpec, optional
        Use these bins (e.g. another model's ``spec``) instead of pass 0's.
        Not with ``binning=`` other than "quantile".
    client, scheduler
        A ``distributed.Client``, or ``"inprocess"``, ``"processes"``,
        ``"threads"`` or an address. Without either: the ``distributed``
        client already active in this process, if any; else in this process on
        a thread per core, for in-memory data, dask collections and a dataset
        whose tables and codes fit in a quarter of this machine's memory; a
        larger dataset, or one with ``cache=False``, on a ``LocalCluster``
        started (and closed) for the fit (:mod:`dasktree.engine.place`).
    cache : bool or "auto"
        Keep the encoded data on the workers between passes ("auto": when it
        takes at most a quarter of the cluster's memory; a worker without a
        memory limit counts its host's memory, shared among the workers
        there). With it, when the
        tables pass 0 reads fit as well (tables and codes within a quarter of
        the memory), they stay on the workers for the first level pass to
        encode: Parquet is read once (``run_["parquet_reads"]``). Cached, the
        level passes are calls on one Dask actor per worker
        (:mod:`dasktree.engine.part_holders`), not task graphs; a ``client`` made with
        ``direct_to_workers=True`` sends them without the scheduler in between.
    part_rows : int
        Parquet row groups of a file are gathered into parts of about this many rows.
    storage_options : dict, optional
        fsspec options for a path or URL (credentials, ``client_kwargs``...).
    sample_weight : str, or array-like of shape (n_rows,), optional
        Row weights: a numeric column of ``data`` (any input; a dataset's or
        dask DataFrame's only way), or an array beside in-memory data. Each
        row counts as a whole number of rows (:mod:`dasktree.io.weights`:
        integer weights as they are, others in fixed point), so the counts
        stay exact integers and the model the same whatever the
        partitioning; a row of weight 0 is left out.
    class_weight : dict, "balanced" or None
        Each class's rows weigh this much more (times ``sample_weight``);
        "balanced": ``n / (n_classes * n_c)`` as scikit-learn's.
    keep_fold_trees : bool
        Keep the ``cv`` fold trees in the model (``Model.fold_trees``). The
        CV report is computed from them either way.
    checkpoint : str or path, optional
        A directory where every level pass's results are saved
        (:mod:`dasktree.engine.checkpoint`); the same fit started again continues
        from the last saved pass and gives the same model, bit for bit. A
        checkpoint of other data or parameters is refused. Parquet datasets
        only; remove the directory once the model is saved
        (:func:`dasktree.engine.checkpoint.remove_checkpoint`; the CLI does).
    param_grid : dict or list of dicts, optional
        With ``cv``: a grid of settings (scikit-learn's ``GridSearchCV`` shape) over ``criterion``,
        ``min_samples_leaf``, ``nominal_split``, ``max_arity``, ``selection`` (grown: each distinct
        growth's main tree and fold trees are trees of ONE forest, sharing nodes until they choose
        different tests, so the grid costs no extra pass) and ``prune``, ``confidence``,
        ``ccp_alpha`` (read off the grown trees). The model is the chosen setting's, its report's
        ``grid`` the table (:mod:`dasktree.model.grid`, :mod:`dasktree.levels.settings`).
    refit : True or callable
        How the setting is chosen: the least rank of the mean CV accuracy (True), or
        ``refit(cv_results)`` returning a setting's index, as in scikit-learn.
    security : distributed.security.Security, str or dict, optional
        TLS for a ``scheduler`` at ``tls://``: a ``Security``, a directory of
        ``deploy/make-certs.sh`` or ``{"ca_file":, "cert":, "key":}`` paths
        (default: dask's ``distributed.comm.tls.*`` settings); see
        :mod:`dasktree.engine.tls`.
    memory_limit : int or str, optional
        Bytes (or ``"1GB"``, ``"512MB"``) a fit in this process plans against (default: this
        machine's memory): the codes stay in memory when tables and codes fit in a quarter
        of it, else every pass streams the Parquet row groups on a pool of threads
        (:mod:`dasktree.engine.stream_runner`) with its histograms counted in node groups
        that fit; :class:`~dasktree.errors.ParameterError` when not one node's do.
    **params
        Learning parameters, declared in :mod:`dasktree.params.declared` (the
        estimator's docstring lists them). ``binning`` (default
        "quantile": exact bins up to ``max_bins`` distinct values, else
        quantile bins) may name a discretization method of
        :class:`dasktree.Discretizer` ("mdlp", "distance", "chimerge",
        "equal_width", "equal_frequency", "optimal", each with its default
        parameters): after pass 0, ONE more histogram pass cuts every numeric
        attribute's pass-0 bins into the method's intervals (global
        discretization), and the tree grows on those intervals as its bins;
        its thresholds are the method's cut points.
        ``prune`` (default "auto": "cv-min" with ``cv``, else "pessimistic"),
        ``ccp_alpha`` and ``confidence`` prune the grown tree after the last
        pass, with no pass of their own (:mod:`dasktree.model.prune`,
        :func:`dasktree.model.pruning.apply_pruning`); the model keeps the grown
        tree too, and the CV report counts the fold trees pruned alike.
    """
    fitting = fit_of(task)
    settings = fitting.validate({**params, "class_weight": class_weight, "keep_fold_trees": keep_fold_trees,
                                 "param_grid": param_grid, "refit": refit})
    return fit_validated(data, y, settings, task=fitting.task, target=target, features=features, exclude=exclude,
                         nominal=nominal, key=key, folds=folds, bin_spec=bin_spec, client=client, scheduler=scheduler,
                         cache=cache, part_rows=part_rows, storage_options=storage_options, progress=progress,
                         sample_weight=sample_weight, checkpoint=checkpoint, security=security,
                         memory_limit=memory_limit)


def fit_regression(data, y=None, **options) -> Model:
    """Learn a regression tree from ``data``: :func:`fit` with ``task="regression"`` (its arguments; ``y``
    or the ``target`` column holds numbers; the parameters are
    :data:`dasktree.params.regression.REGRESSION_PARAMS`)."""
    return fit(data, y, task="regression", **options)


@dataclass(frozen=True)
class _Input:
    """The opened input: its parts, its column roles and the fold hash (None without ``cv``)."""

    source: Source
    roles: Roles
    fold_spec: FoldSpec | None
    only_fold: int | None


def fit_validated(data, y, settings, *, task: str | Task = CLASSIFICATION, target: str | None = None,
                  features: Sequence[str] | None = None, exclude: Sequence[str] = (), nominal: Sequence[str] = (),
                  key: str | None = None, folds: str | None = None, bin_spec: BinSpec | None = None, client=None,
                  scheduler: str | None = None, cache: bool | str = "auto", part_rows: int = DEFAULT_PART_ROWS,
                  storage_options: dict | None = None, progress: bool | Progress = False, sample_weight=None,
                  checkpoint: str | None = None, security=None, memory_limit: int | str | None = None) -> Model:
    """:func:`fit` with its parameters validated already (``settings``, by ``task``'s fit: :func:`fit_of`):
    the estimators and the command validate them before their own checks, once per fit."""
    fitting = fit_of(task)
    started = time.perf_counter()
    limit = parse_memory_limit(memory_limit)
    given = open_input(data, y, settings, fitting, target=target, features=features, exclude=exclude,
                       nominal=nominal, key=key, folds=folds, part_rows=part_rows, storage_options=storage_options,
                       sample_weight=sample_weight)
    grid = fitting.grid(settings, given, bin_spec)
    saving = None if checkpoint is None else _checkpoint(checkpoint, given, fitting, settings, part_rows, bin_spec,
                                                         dict(target=given.roles.target, features=features,
                                                              exclude=exclude, nominal=nominal, key=key, folds=folds),
                                                         grid)
    with open_runner(given.source, given.roles, folds=given.fold_spec, client=client, scheduler=scheduler,
                     cache=cache, progress=progress, security=security, memory_limit=limit) as runner:
        per_read = given.source.bytes_of(given.roles.columns)  # a pass's Parquet bytes, for the progress lines
        runner.progress.count_reads(lambda: runner.parquet_reads * per_read)
        try:  # the count is dropped afterwards: no reference cycle keeps the runner's data alive past the fit
            spec, summary = _bins(runner, given, fitting, settings, bin_spec, saving)
            passes = runner if saving is None else Resuming(runner, saving)  # saved passes come from the checkpoint
            return fitting.grow_model(runner, passes, given, settings, grid, spec, summary, started)
        finally:
            runner.progress.count_reads(None)


def open_input(data, y, settings, fitting, *, target, features, exclude, nominal, key, folds, part_rows,
               storage_options, sample_weight) -> _Input:
    """The input as parts, its weight column, the fold hash and the column roles (as ``fitting``'s task
    reads its target); bad usage first."""
    source, target = open_source(data, y, target=target, part_rows=part_rows, storage_options=storage_options)
    source, weight = _weight_column(source, sample_weight, part_rows)
    cv, repeats = fitting.folds(settings)
    if (key is not None or folds is not None) and cv is None:
        raise ParameterError("key= and folds= are for cross-validation: give cv=k too")
    fold_spec = None if cv is None else FoldSpec(cv, repeats, settings["seed"], key, folds)
    only_fold = hook_points.value("only_fold")  # None unless a test or benchmark set it
    if only_fold is not None and (fold_spec is None or not 0 <= only_fold < fold_spec.n_parts):
        raise ParameterError(f"only_fold must be in 0..cv*repeats-1 with cv given, got {only_fold!r}")
    roles = resolve_roles(source.schema, target, features=features, exclude=exclude, nominal=nominal,
                          extra=fold_spec.columns if fold_spec else (), weight=weight, where=source.description)
    roles = dataclasses.replace(roles, regression=not fitting.task.predicts_classes)  # the target: numbers
    return _Input(source, roles, fold_spec and fold_spec.hashing(roles), only_fold)


def _checkpoint(directory, given: _Input, fitting, settings, part_rows: int, bin_spec: BinSpec | None,
                columns: dict, grid: Grid | None) -> Checkpoint:
    """The checkpoint of this fit: what identifies it (task, data, parameters, columns), to refuse another's."""
    try:
        class_weight = settings["class_weight"]
    except KeyError:  # a task without class weights
        class_weight = None
    return checkpoint_of(directory, given.source, fitting.task, {
        "params": fitting.saved(settings), "part_rows": part_rows,
        "columns": {**columns, "features": list(columns["features"] or []), "exclude": list(columns["exclude"]),
                    "nominal": list(columns["nominal"]), "weight": given.roles.weight},
        "class_weight": None if class_weight is None else repr(class_weight),
        "only_fold": given.only_fold, "bin_spec": None if bin_spec is None else bin_spec.to_json(),
        **({} if grid is None else {"param_grid": list(grid.settings)})})


def checkpoint_of(directory, source: Source, task: Task, identity: dict) -> Checkpoint:
    """The checkpoint in ``directory`` of a fit of ``task`` on ``source`` (a dataset: data in memory is
    gone with the process that held it); ``identity``: the fit's parameters and columns, beside the
    data's files and the version, which every checkpoint names."""
    if not isinstance(source, FileSource):
        raise ParameterError("checkpoint= is for Parquet datasets (a path or URL): data in memory is "
                             "gone with the process that held it")
    from .version import __version__

    return Checkpoint(directory, {"task": task.name, "data": source.fingerprint(), "version": __version__,
                                  **identity})


def _bins(runner, given: _Input, fitting, settings, bin_spec: BinSpec | None, saving) -> tuple:
    """Pass 0's summary and the bin spec the tree grows on (weighed, and refined as the task's fit says:
    a classification tree's given bins, or global discretization's pass when ``binning`` names a
    method); the runner prepared to encode with it."""
    source, roles, fold_spec = given.source, given.roles, given.fold_spec
    runner.progress.describe(rows=source.n_rows)  # pass 0's line
    summary = runner.summary(settings["max_bins"])
    runner.progress.describe(rows=int(summary.n_rows), max_depth=settings["max_depth"])
    spec = make_bin_spec(summary, roles, max_bins=settings["max_bins"], max_categories=settings["max_categories"],
                         where=source.description)
    spec = fitting.weighed(spec, summary, roles, source, settings)
    k, repeats = (fold_spec.k, fold_spec.repeats) if fold_spec else (1, 1)
    spec = fitting.refined(runner, spec, settings, bin_spec, k, repeats)
    if saving is not None:
        saving.check_spec(spec)
    runner.prepare(spec, k)
    return spec, kept_for_keys(summary, roles, source.schema)


class ClassificationFit:
    """A classification fit's own steps of :func:`fit_validated` (a regression fit's:
    :class:`dasktree.regress.fitting.RegressionFit`): its settings (``validate``, ``folds``, ``saved``:
    what the model keeps, ``grid``), its bins (``weighed``, ``refined``), then ``grow_model``:
    the level passes (``passes``: the runner, or its checkpoint's replay), the model, its report, pruning."""

    task = CLASSIFICATION

    @staticmethod
    def validate(values: dict) -> Settings:
        return validate(values)  # looked up at each call: a test counts the calls through the module

    @staticmethod
    def folds(settings: Settings) -> tuple[int | None, int]:
        return settings["cv"], settings["repeats"]

    @staticmethod
    def saved(settings: Settings) -> dict:
        return settings.saved

    @staticmethod
    def grid(settings: Settings, given: _Input, bin_spec: BinSpec | None) -> Grid | None:
        if bin_spec is not None and settings["binning"] != "quantile":
            raise ParameterError(f"bin_spec= gives the bins: leave binning at 'quantile', got {settings['binning']!r}")
        return None if settings["param_grid"] is None else Grid.of_param_grid(
            settings["param_grid"], settings.values, settings["refit"], validate, given.only_fold,
            lambda q: q.grow.split)

    @staticmethod
    def weighed(spec: BinSpec, summary, roles: Roles, source, settings) -> BinSpec:
        class_weight = settings["class_weight"]
        if roles.weight is None and class_weight is None:
            return spec
        return dataclasses.replace(spec, weighting=_weighting(summary, roles, spec, class_weight))

    @staticmethod
    def refined(runner, spec: BinSpec, settings: Settings, bin_spec: BinSpec | None, k: int, repeats: int) -> BinSpec:
        if bin_spec is None and settings["binning"] != "quantile":  # global discretization: one more histogram pass
            from .discretize.jobs import interval_spec

            spec = interval_spec(runner, spec, settings["binning"], n_folds=k, n_repeats=repeats)
        return spec if bin_spec is None else _check_given_spec(bin_spec, spec)

    @staticmethod
    def grow_model(runner, passes, given: _Input, settings: Settings, grid: Grid | None, spec: BinSpec, summary,
                   started: float) -> Model:
        """The level passes, then the pruned model: the one tree's, or the chosen setting's of a grid (every
        distinct growth's main tree and fold trees grown as one forest, each setting pruned from its trees)."""
        fold_spec, only_fold = given.fold_spec, given.only_fold
        grown_at = time.perf_counter() - started
        k, repeats = (fold_spec.k, fold_spec.repeats) if fold_spec else (1, 1)
        n_trees = 1 + (k * repeats if fold_spec else 0)
        holdout = np.arange(-1, n_trees - 1)  # tree 0: the main tree; tree t >= 1 holds out part t - 1
        grow_params = settings.grow
        if getattr(runner, "max_histogram_mb", None) is not None:  # planned against memory_limit (engine.memory_plan)
            grow_params = dataclasses.replace(grow_params, max_histogram_mb=min(grow_params.max_histogram_mb,
                                                                                runner.max_histogram_mb))
        if grid is not None:  # every growth of the grid: its main tree and fold trees (dasktree.levels.settings)
            n_trees, holdout = grid.n_trees, grid.holdout()
            grow_params = dataclasses.replace(grow_params, settings=grid.growths, tree_setting=grid.tree_setting())
        if only_fold is not None:
            n_trees, holdout = 1, np.array([only_fold])
        rows_used = int(summary.n_rows - summary.n_null_target - summary.n_zero_weight)

        def describe(level: int, nodes: int, rows: int) -> None:  # the root's rows are known from pass 0
            runner.progress.describe(level=level, nodes=nodes, rows=rows or rows_used)

        forest, grow_report = grow(passes, spec, grow_params,
                                   n_trees=n_trees, holdout=holdout, n_folds=k, n_repeats=repeats, describe=describe)
        firsts = [0] if grid is None else [grid.first_tree(g) for g in range(len(grid.growths))]
        per_growth = n_trees if grid is None else grid.trees_per_growth
        with collector_paused():  # tens of thousands of objects, no cycles: a full collection here rescans them
            grown = [(tree_model(forest, f), [tree_model(forest, t) for t in range(f + 1, f + per_growth)])
                     for f in firsts]
            n_distinct = forest.distinct_nodes()
            del forest  # freed by reference counting, before any collection must scan it

        def finish(growth: int, chosen_settings: Settings, chosen: bool = True) -> Model:
            tree, fold_trees = grown[growth]
            model = _model_of(runner, given, chosen_settings, spec, summary, tree, fold_trees, grow_report,
                              n_distinct=n_distinct, rows_used=rows_used, pass0=grown_at, started=started)
            return _prune(model, chosen_settings, only_fold, started, keep=chosen, metrics=chosen)

        if grid is None:
            return finish(0, settings)
        from .model.grid import grid_model

        return grid_model(grid, finish, settings["refit"], started)


FITS = {fitting.task: fitting for fitting in (ClassificationFit(), REGRESSION_FIT)}
"""Each task's fit (its own steps of :func:`fit_validated`), by its task object."""


def fit_of(task: str | Task):
    """The fit of ``task``: a task object, or its name (:func:`dasktree.model.task.task_named`)."""
    return FITS[task_named(task) if isinstance(task, str) else task]


def _model_of(runner, given: _Input, settings: Settings, spec: BinSpec, summary, tree, fold_trees, grow_report, *,
              n_distinct: int, rows_used: int, pass0: float, started: float) -> Model:
    """The grown model of a main tree and its fold trees, with its fit report (saved) and run report (not)."""
    source, roles, fold_spec, only_fold = given.source, given.roles, given.fold_spec, given.only_fold
    k, repeats = (fold_spec.k, fold_spec.repeats) if fold_spec else (1, 1)
    leaves = [i for i, t in enumerate(tree.tests) if t is None]
    counted = int(tree.counts[0].sum())  # the rows as counted: weighted, the sum of their multiplicities
    report = {  # a function of the data and parameters alone: saved with the model
        "rows": int(summary.n_rows),
        "rows_used": rows_used,
        "rows_skipped_null_target": int(summary.n_null_target),
        **({"rows_skipped_zero_weight": summary.n_zero_weight,
            "weights": {**spec.weighting.to_json(), "counted": counted,
                        "class_factors": {str(c): f for c, f in zip(spec.classes, spec.weighting.factors)}}}
           if spec.weighting is not None else {}),
        "class_counts": {str(k): int(v) for k, v in sorted(summary.classes.items(), key=lambda kv: str(kv[0]))},
        "features": [{"name": f.name, "kind": f.kind, "bins": f.n_bins,
                      **({"exact": f.exact} if f.kind == "numeric" else {})} for f in spec.features],
        "passes": runner.passes,
        "depth": tree.max_depth,
        "nodes": tree.n_nodes,
        "leaves": tree.n_leaves,
        # each leaf's rows of the class it predicts (argmax of its counts, or under monotonic_cst of its clipped value)
        "training_accuracy": float(tree.counts[leaves, np.argmax(tree.value[leaves], axis=1)].sum() / max(1, counted)),
        "forest_nodes": n_distinct,
        "small_nodes": small_report([asdict(level) for level in grow_report.levels]),
    }
    keys = key_like_columns(summary, roles, source.schema)
    if keys:  # saved with the model, and said on stderr by the command (only when there are any)
        report["warnings"] = key_warnings(keys, tree, [f.name for f in spec.features])
    if fold_spec is not None and only_fold is None:  # its pooled metrics are counted once pruned (_prune)
        report["cv"] = cv_report(fold_trees, k, repeats, spec.classes,
                                 [level.distinct_tests for level in grow_report.levels], False)
        short = fold_warnings(fold_spec, [f["rows"] for f in report["cv"]["per_fold"]])
        if short:
            report["warnings"] = [*report.get("warnings", []), *short]
    run = {  # how this run went: timings and the cluster, not saved with the model
        "parts": len(source.parts),
        "workers": runner.workers,
        "parquet_reads": runner.parquet_reads if isinstance(source, FileSource) else 0,
        **spill_record(runner),
        "seconds": {"pass0": round(pass0, 4), "total": round(time.perf_counter() - started, 4),
                    "search": round(sum(level.search_seconds for level in grow_report.levels), 4)},
        "levels": [asdict(level) for level in grow_report.levels],
    }
    return Model(spec=dataclasses.replace(spec, weighting=None), target=roles.target, tree=tree,
                 params=settings.saved, report=report, run=run, fold_trees=fold_trees)


def _prune(model: Model, settings: Settings, only_fold: int | None, started: float, *, keep: bool = True,
           metrics: bool = True) -> Model:
    """The grown tree pruned as ``prune`` / ``ccp_alpha`` / ``confidence`` say, no pass of its own; the fold
    trees dropped unless ``keep_fold_trees`` and ``keep`` (the pruning and the CV report have used them).
    Without ``metrics`` the CV report keeps each fold's accuracy only (a grid's settings not chosen)."""
    run = model.run
    pruning = time.perf_counter()
    mode = resolve_prune(settings["prune"], settings["ccp_alpha"], bool(model.fold_trees) and only_fold is None)
    model = apply_pruning(model, alpha=settings["ccp_alpha"], mode=None if mode == "alpha" else mode,
                          confidence=settings["confidence"], metrics=metrics)
    run["seconds"]["prune"] = round(time.perf_counter() - pruning, 4)
    if not (settings["keep_fold_trees"] and keep):  # the model keeps its main tree (compact)
        model = dataclasses.replace(model, fold_trees=[])
    run["seconds"]["total"] = round(time.perf_counter() - started, 4)
    return model


def _weight_column(source, sample_weight, part_rows: int) -> tuple:
    """The source and the name of its weight column (None: unweighted). An array beside in-memory
    data becomes a column of it (named ``sample_weight``, made unique)."""
    if sample_weight is None or isinstance(sample_weight, str):
        return source, sample_weight
    if not isinstance(source, TableSource):
        raise ParameterError(f"sample_weight for a {source.description} names its weight column "
                             "(sample_weight='COLUMN', CLI: --weight COLUMN); an array is for data in memory")
    table = source.table
    weights = check_sample_weight(sample_weight, table.num_rows)
    name = "sample_weight"
    while name in table.column_names:
        name = "_" + name
    import pyarrow as pa

    table = table.append_column(name, pa.array(weights))
    return TableSource(table, description=source.description, part_rows=part_rows), name


def _weighting(summary, roles, spec: BinSpec, class_weight):
    """How each row counts (:func:`dasktree.io.weights.weighting`), from pass 0's statistics; with
    ``class_weight`` alone, every row's sample weight is 1."""
    stats = summary.weights
    if stats is None:  # class weights alone: each row weighs 1 before its class's factor
        stats = WeightStats({c: 1.0 for c in summary.classes}, dict(summary.classes))
    return weighting(roles.weight, stats, spec.classes, summary.classes, class_weight)


def _check_given_spec(given: BinSpec, computed: BinSpec) -> BinSpec:
    """A bin spec from elsewhere must name the same features and classes as the data."""
    if [f.name for f in given.features] != [f.name for f in computed.features]:
        raise InputError(f"bin_spec features {[f.name for f in given.features]} differ from the data's "
                         f"{[f.name for f in computed.features]}")
    if tuple(given.classes) != tuple(computed.classes):
        raise InputError(f"bin_spec classes {list(given.classes)} differ from the data's {list(computed.classes)}")
    return dataclasses.replace(given, weighting=computed.weighting)  # the bins given, the rows weighed as this data's
