"""The functional core: ``fit(data, ...) -> Model``. The estimator and the CLI call it.

Steps: open the input as parts, resolve column roles, pass 0 (summary and bin
spec), then level passes until the frontier is empty, then the model and its
fit report. Without ``client``/``scheduler``, in-memory inputs and datasets
whose tables and codes fit in a quarter of this machine's memory run in this
process on a thread per core (:mod:`dasktree.engine.local_runner`); larger datasets
run on a ``LocalCluster``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import asdict
from typing import Any, Sequence

import numpy as np

from .binning.spec import BinSpec
from .binning.spec import bin_spec as make_bin_spec
from .engine.cluster import connect
from .engine.local_runner import LocalRunner, cores
from .engine.memory_plan import CACHED, CLUSTER, parse_memory_limit, runner_kind
from .engine.stream_runner import StreamRunner
from .engine.progress import Progress
from .errors import InputError, ParameterError
from .forest.grow import GrowParams, grow
from .forest.to_model import tree_model
from .gc_pause import collector_paused
from .io.folds import FoldSpec
from .io.schema import resolve_roles
from .io.sources import DEFAULT_PART_ROWS, ParquetSource, TableSource, open_source
from .model.model import Model
from .model.pruning import apply_pruning, check_prune, resolve_prune
from .model.report import cv_report
from .split.postpone import check_postpone, parse_postpone, postpone_text
from .split.search import CRITERIA, NOMINAL_SPLITS, SELECTIONS, SplitParams
from .io.weights import WeightStats, check_class_weight, check_sample_weight, weighting

__all__ = ["fit", "DEFAULTS", "validate_params"]

DEFAULTS: dict[str, Any] = {
    "criterion": "gini",
    "max_depth": None,
    "min_samples_split": 2,
    "min_samples_leaf": 1,
    "min_impurity_decrease": 0.0,
    "max_leaf_nodes": None,
    "max_bins": 255,
    "max_categories": 255,
    "nominal_split": "binary",
    "max_histogram_mb": 256.0,
    "max_arity": 2,
    "selection": "balanced_gain",
    "cv": None,
    "repeats": 1,
    "seed": 0,
    "binning": "quantile",
    "postpone": None,
    "prune": "auto",
    "ccp_alpha": None,
    "confidence": 0.25,
}

BINNINGS = ("quantile", "mdlp", "distance", "chimerge", "equal_width", "equal_frequency", "optimal")
"""``binning=``: pass 0's exact / quantile bins, or a discretization method's intervals."""


def _int(name: str, value, low: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        want = f"an integer >= {low}" + (" or None" if allow_none else "")
        raise ParameterError(f"{name} must be {want}, got {value!r}")


def validate_params(params: dict[str, Any]) -> dict[str, Any]:
    """Check every learning parameter; the message names it, what it must be and what it got."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ParameterError(f"unknown parameter {unknown[0]!r}; known are {sorted(DEFAULTS)}")
    p = {**DEFAULTS, **params}
    if p["criterion"] not in CRITERIA:
        raise ParameterError(f"criterion must be one of {list(CRITERIA)}, got {p['criterion']!r}")
    if p["nominal_split"] not in NOMINAL_SPLITS:
        raise ParameterError(f"nominal_split must be one of {list(NOMINAL_SPLITS)}, got {p['nominal_split']!r}")
    _int("max_depth", p["max_depth"], 1, allow_none=True)
    _int("min_samples_split", p["min_samples_split"], 2)
    _int("min_samples_leaf", p["min_samples_leaf"], 1)
    _int("max_leaf_nodes", p["max_leaf_nodes"], 2, allow_none=True)
    _int("max_bins", p["max_bins"], 2)
    _int("max_categories", p["max_categories"], 2)
    if p["max_bins"] > 65535 or p["max_categories"] > 65535:
        raise ParameterError("max_bins and max_categories must be at most 65535")
    for name in ("min_impurity_decrease", "max_histogram_mb"):
        value = p[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
            raise ParameterError(f"{name} must be a finite number >= 0, got {value!r}")
    if p["max_histogram_mb"] == 0:
        raise ParameterError("max_histogram_mb must be > 0, got 0")
    _int("max_arity", p["max_arity"], 2)
    if p["max_arity"] > 64:
        raise ParameterError(f"max_arity must be at most 64, got {p['max_arity']}")
    if p["selection"] not in SELECTIONS:
        raise ParameterError(f"selection must be one of {list(SELECTIONS)}, got {p['selection']!r}")
    _int("cv", p["cv"], 2, allow_none=True)
    _int("repeats", p["repeats"], 1)
    _int("seed", p["seed"], 0)
    if p["binning"] not in BINNINGS:
        raise ParameterError(f"binning must be one of {list(BINNINGS)}, got {p['binning']!r}")
    try:  # None, "analytic", or a heuristic (rule, t); kept as its text ("rank:0.5"), which JSON holds
        rule = parse_postpone(p["postpone"])
        check_postpone(rule, p["criterion"], p["max_arity"], p["selection"])
    except ValueError as e:
        raise ParameterError(str(e)) from None
    p["postpone"] = postpone_text(rule)
    check_prune(p["prune"], p["ccp_alpha"], p["confidence"])
    if p["prune"] in ("cv", "cv-min") and p["cv"] is None:
        raise ParameterError(f"prune={p['prune']!r} chooses alpha by cross-validation: give cv=k too "
                         "(or prune='pessimistic', or ccp_alpha=)")
    if p["repeats"] > 1 and p["cv"] is None:
        raise ParameterError(f"repeats={p['repeats']} needs cv: repeated cross-validation is cv=k, repeats=r")
    return p


def _grow_params(p: dict[str, Any]) -> GrowParams:
    return GrowParams(
        max_depth=p["max_depth"],
        min_samples_split=p["min_samples_split"],
        min_samples_leaf=p["min_samples_leaf"],
        min_impurity_decrease=float(p["min_impurity_decrease"]),
        max_leaf_nodes=p["max_leaf_nodes"],
        split=SplitParams(p["criterion"], p["min_samples_leaf"], p["nominal_split"],
                          max_arity=p["max_arity"], selection=p["selection"],
                          postpone=parse_postpone(p["postpone"])),
        max_histogram_mb=float(p["max_histogram_mb"]),
    )


def fit(
    data,
    y=None,
    *,
    target: str | None = None,
    features: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    nominal: Sequence[str] = (),
    key: str | None = None,
    folds: str | None = None,
    bin_spec: BinSpec | None = None,
    only_fold: int | None = None,
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
    memory_limit: int | str | None = None,
    **params,
) -> Model:
    """Learn a decision tree from ``data``.

    Parameters
    ----------
    data : str, path, list of paths, pandas DataFrame, dask DataFrame or ndarray
        A Parquet file, directory, glob or fsspec URL; or data in memory.
    y : array-like, optional
        Class labels for in-memory ``data`` (else name a column with ``target``).
    target : str
        The class column of ``data``.
    features, exclude, nominal : list of str
        Feature columns (default: all but the target), columns to leave out,
        and numeric columns to treat as nominal.
    key : str, optional
        With ``cv``: a column whose values key the rows for the fold hash
        (default: the file and row offset, or the row index in memory).
    folds : str, optional
        With ``cv=k``: a column of integer folds ``0..k-1`` given by the user.
    bin_spec : BinSpec, optional
        Use these bins (e.g. another model's ``spec``) instead of pass 0's.
        Not with ``binning=`` other than "quantile".
    only_fold : int, optional
        With ``cv``: grow only the tree that holds out this part (fold
        ``only_fold % cv`` of repetition ``only_fold // cv``), as the main tree;
        the serial baseline of cross-validation, one fold per fit.
    client, scheduler
        A ``distributed.Client``, or ``"inprocess"``, ``"processes"``,
        ``"threads"`` or an address. Without either, in-memory data, and a
        dataset whose tables and codes fit in a quarter of this machine's
        memory, run in this process on a thread per core ("inprocess", no
        cluster to start); a larger dataset, or one with ``cache=False``, on a
        ``LocalCluster`` started (and closed) for the fit.
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
    memory_limit : int or str, optional
        Bytes (or ``"1GB"``, ``"512MB"``) an in-process fit plans against (default: this
        machine's memory): the codes stay in memory when tables and codes fit in a quarter
        of it, else every pass streams the Parquet row groups on a pool of threads
        (:mod:`dasktree.engine.stream_runner`) with its histograms counted in node groups
        that fit; :class:`~dasktree.errors.ParameterError` when not one node's do.
    **params
        Learning parameters, see :data:`DEFAULTS`. ``binning`` (default
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
    started = time.perf_counter()
    p = validate_params(params)
    limit = parse_memory_limit(memory_limit)
    bar = progress if isinstance(progress, Progress) else Progress(enabled=bool(progress))
    check_class_weight(class_weight)
    source, target = open_source(data, y, target=target, part_rows=part_rows, storage_options=storage_options)
    source, weight = _weight_column(source, sample_weight, part_rows)
    if (key is not None or folds is not None) and p["cv"] is None:
        raise ParameterError("key= and folds= are for cross-validation: give cv=k too")
    if bin_spec is not None and p["binning"] != "quantile":
        raise ParameterError(f"bin_spec= gives the bins: leave binning at 'quantile', got {p['binning']!r}")
    fold_spec = None if p["cv"] is None else FoldSpec(p["cv"], p["repeats"], p["seed"], key, folds)
    if only_fold is not None and (fold_spec is None or not 0 <= only_fold < fold_spec.n_parts):
        raise ParameterError(f"only_fold must be in 0..cv*repeats-1 with cv given, got {only_fold!r}")
    roles = resolve_roles(source.schema, target, features=features, exclude=exclude, nominal=nominal,
                          extra=fold_spec.columns if fold_spec else (), weight=weight, where=source.description)
    options = dict(fold_spec=fold_spec, spec=bin_spec, only_fold=only_fold, keep_fold_trees=keep_fold_trees,
                   class_weight=class_weight)
    if checkpoint is not None:
        if not isinstance(source, ParquetSource):
            raise ParameterError("checkpoint= is for Parquet datasets (a path or URL): data in memory is "
                                 "gone with the process that held it")
        from . import __version__
        from .engine.checkpoint import Checkpoint

        options["checkpoint"] = Checkpoint(checkpoint, {
            "data": source.fingerprint(), "params": p, "version": __version__, "part_rows": part_rows,
            "columns": {"target": target, "features": list(features or []), "exclude": list(exclude),
                        "nominal": list(nominal), "key": key, "folds": folds, "weight": weight},
            "class_weight": None if class_weight is None else repr(class_weight),
            "only_fold": only_fold, "bin_spec": None if bin_spec is None else bin_spec.to_json()})
    kind = runner_kind(source, roles, client=client, scheduler=scheduler, cache=cache,
                       memory_limit=limit)
    if kind != CLUSTER:
        runner = (LocalRunner(source, roles, folds=fold_spec, progress=bar, threads=cores(),
                              keep_tables=not isinstance(source, TableSource)) if kind == CACHED else
                  StreamRunner(source, roles, folds=fold_spec, progress=bar, threads=cores(),
                               memory_limit=limit))
        try:
            return _fit_with(runner, source, roles, p, started, workers=0, **options)
        finally:
            runner.close()
    from .engine.runners import DaskRunner

    with connect(client, scheduler, on_cluster=bar.cluster) as dask_client:
        runner = DaskRunner(dask_client, source, roles, folds=fold_spec, cache=cache, progress=bar)
        try:
            workers = len(dask_client.scheduler_info().get("workers", {}))
            return _fit_with(runner, source, roles, p, started, workers=workers, **options)
        finally:
            runner.close()


def _fit_with(runner, source, roles, p: dict[str, Any], started: float, **options) -> Model:
    """:func:`_fit_passes`, the progress lines counting the bytes a pass reads: its Parquet reads
    (the runner's ``parquet_reads``) of the columns used. The count is dropped afterwards, so no
    reference cycle keeps the runner (and the data it scattered) alive past the fit."""
    per_read = source.bytes_of(roles.columns)
    runner.progress.count_reads(lambda: runner.parquet_reads * per_read)
    try:
        return _fit_passes(runner, source, roles, p, started, **options)
    finally:
        runner.progress.count_reads(None)


def _fit_passes(runner, source, roles, p: dict[str, Any], started: float, *, workers: int,
                fold_spec: FoldSpec | None, spec: BinSpec | None, only_fold: int | None = None,
                keep_fold_trees: bool = False, checkpoint=None, class_weight=None) -> Model:
    runner.progress.describe(rows=source.n_rows)  # pass 0's line
    summary = runner.summary(p["max_bins"])
    runner.progress.describe(rows=int(summary.n_rows), max_depth=p["max_depth"])
    computed = make_bin_spec(summary, roles, max_bins=p["max_bins"], max_categories=p["max_categories"],
                             where=source.description)
    if roles.weight is not None or class_weight is not None:
        computed = dataclasses.replace(computed, weighting=_weighting(summary, roles, computed, class_weight))
    k, repeats = (fold_spec.k, fold_spec.repeats) if fold_spec else (1, 1)
    if spec is None and p["binning"] != "quantile":  # global discretization: one more histogram pass
        from .discretize.jobs import interval_spec

        computed = interval_spec(runner, computed, p["binning"], n_folds=k, n_repeats=repeats)
    spec = computed if spec is None else _check_given_spec(spec, computed)
    if checkpoint is not None:
        from .engine.checkpoint import Resuming

        checkpoint.check_spec(spec)
    runner.prepare(spec, k)
    pass0 = time.perf_counter() - started
    n_trees = 1 + (k * repeats if fold_spec else 0)
    holdout = np.arange(-1, n_trees - 1)  # tree 0: the main tree; tree t >= 1 holds out part t - 1
    if only_fold is not None:
        n_trees, holdout = 1, np.array([only_fold])
    rows_used = int(summary.n_rows - summary.n_null_target - summary.n_zero_weight)

    def describe(level: int, nodes: int, rows: int) -> None:  # the root's rows are known from pass 0
        runner.progress.describe(level=level, nodes=nodes, rows=rows or rows_used)

    grow_params = _grow_params(p)
    if getattr(runner, "max_histogram_mb", None) is not None:  # a streaming runner's memory limit
        grow_params = dataclasses.replace(grow_params, max_histogram_mb=min(grow_params.max_histogram_mb,
                                                                            runner.max_histogram_mb))
    forest, grow_report = grow(runner if checkpoint is None else Resuming(runner, checkpoint), spec,
                               grow_params, n_trees=n_trees, holdout=holdout, n_folds=k, n_repeats=repeats,
                               describe=describe)
    with collector_paused():  # tens of thousands of objects, no cycles: a full collection here rescans the forest
        tree = tree_model(forest, 0)
        fold_trees = [tree_model(forest, t) for t in range(1, n_trees)]
        n_distinct = forest.distinct_nodes()
        del forest  # freed by reference counting, before any collection must scan it
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
        "training_accuracy": float(tree.counts[leaves].max(axis=1).sum() / max(1, counted)),
        "forest_nodes": n_distinct,
    }
    if fold_spec is not None and only_fold is None:
        report["cv"] = cv_report(fold_trees, k, repeats, spec.classes,
                                 [level.distinct_tests for level in grow_report.levels])
    run = {  # how this run went: timings and the cluster, not saved with the model
        "parts": len(source.parts),
        "workers": workers,
        "parquet_reads": runner.parquet_reads if isinstance(source, ParquetSource) else 0,
        "seconds": {"pass0": round(pass0, 4), "total": round(time.perf_counter() - started, 4),
                    "search": round(sum(level.search_seconds for level in grow_report.levels), 4)},
        "levels": [asdict(level) for level in grow_report.levels],
    }
    params = {k: v for k, v in p.items()}
    model = Model(spec=dataclasses.replace(spec, weighting=None), target=roles.target, tree=tree, params=params,
                  report=report, run=run, fold_trees=fold_trees)
    pruning = time.perf_counter()
    mode = resolve_prune(p["prune"], p["ccp_alpha"], bool(fold_trees) and only_fold is None)
    model = apply_pruning(model, alpha=p["ccp_alpha"], mode=None if mode == "alpha" else mode,
                          confidence=p["confidence"])
    run["seconds"]["prune"] = round(time.perf_counter() - pruning, 4)
    if not keep_fold_trees:  # the pruning has used them; the model keeps its main tree (compact)
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
