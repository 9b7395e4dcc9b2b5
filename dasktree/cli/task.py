"""``dasktree fit --task``: a classification or a regression tree, and the fit's command for both.

The rule for ``--task auto`` (the default), said in one line on stderr when it
chooses regression: a target column of floating-point (or decimal) numbers is
regressed; any other type (strings, integers, booleans, categories) is
classified. ``--task classification`` classifies a float column's values;
``--task regression`` regresses an integer one.
"""

from __future__ import annotations

import argparse

from ..errors import InputError, ParameterError
from .say import progress as _progress, say as _say, warn as _warn

__all__ = ["add_task", "resolve_task", "regression_values", "cmd_fit", "task_command", "TASKS"]

TASKS = ("auto", "classification", "regression")


def add_task(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", choices=TASKS, default="auto",
                   help="classification (class labels) or regression (numbers); auto: regression for a "
                        "floating-point target column, else classification (said on stderr when it regresses)")


def resolve_task(args) -> str:
    """The task of ``dasktree fit``: as given, or by the target column's type in the dataset's schema."""
    if args.task != "auto":
        return args.task
    import pyarrow as pa

    from ..io.csv_source import CSV, CsvSource, is_csv_path
    from ..io.sources import open_path

    if isinstance(args.data, CSV) or is_csv_path(args.data):  # its types, not yet its records: the fit scans
        schema = CsvSource(args.data, schema_only=True).schema
    else:
        schema = open_path(args.data).schema
    if args.target not in schema.names:
        return "classification"  # the fit names the missing column, with the columns there are
    kind = schema.field(args.target).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        _say(args, f"--task auto: target {args.target!r} holds {kind} numbers: a regression tree "
                   "(--task classification to classify its values)")
        return "regression"
    return "classification"


def regression_values(args) -> dict:
    """The regression parameters the command line gave; an option only classification reads, given, is
    bad usage (exit 2)."""
    from ..params import declared_params
    from ..params.regression import REGRESSION_PARAMS

    regression = {p.name: p for p in REGRESSION_PARAMS if p.layer != "runtime"}
    out = {}
    for p in declared_params():
        if p.group is None or p.layer == "runtime":
            continue
        value = getattr(args, p.name)
        if p.name not in regression:
            if value != p.default:
                raise ParameterError(f"{p.flag} is for classification trees, not --task regression")
            continue
        if value is not None or regression[p.name].default is None:
            out[p.name] = value
    from .forest import sampling_values

    return {**out, **sampling_values(args)}  # --max-features, --random-state: the forest's options, a tree's too


def _classification(args):
    """A classification fit's settings from the command's parameters (bad usage, exit 2, here)."""
    from ..params import validate
    from .grid import param_grid
    from .parser import learning_values

    return validate({**learning_values(args), "param_grid": param_grid(args.grid)})


def _regression(args):
    """A regression fit's settings from the command's parameters (bad usage, exit 2, here)."""
    from ..params.regression import validate_regression

    settings = validate_regression(regression_values(args))
    if args.grid:
        raise ParameterError("--grid is for classification trees, not --task regression")
    return settings


def _accuracy(r: dict) -> tuple[str, str | None]:
    cv = r.get("cv")
    return (f"training accuracy {r['training_accuracy']:.4f}",
            cv and f"{cv['repeats']}x{cv['folds']}-fold cross-validated accuracy {cv['accuracy_mean']:.4f} "
                   f"+/- {cv['accuracy_std']:.4f} (pooled {cv['accuracy_pooled']:.4f})")


def _rmse(r: dict) -> tuple[str, str | None]:
    cv = r.get("cv")
    return (f"training RMSE {r['training']['rmse']:.6g} (R^2 {r['training']['r2']:.4f})",
            cv and f"{cv['folds']}-fold cross-validated RMSE {cv['rmse']:.6g}, R^2 {cv['r2']:.4f} "
                   f"(per fold {cv['r2_mean']:.4f} +/- {cv['r2_std']:.4f})")


def task_command(name: str) -> tuple:
    """The command's steps for the task ``name`` (``--task``, resolved), looked up by the task object: the
    learning parameters the command line gave (a forest's members' too), the fit's validated settings
    from them (bad usage, exit 2), the summary's training and CV figures, and whether a fit with no row
    with a target is an error the command says."""
    from ..model.task import CLASSIFICATION, task_named
    from ..regress.task import REGRESSION
    from .parser import learning_values

    return {CLASSIFICATION: (learning_values, _classification, _accuracy, False),
            REGRESSION: (regression_values, _regression, _rmse, True)}[task_named(name)]


def cmd_fit(args, columns) -> dict:
    """``dasktree fit`` of either task; ``columns``: the command's comma-separated list reader."""
    from ..engine.memory_plan import parse_memory_limit
    from ..fit import fit_validated
    from ..io.outputs import check_file_out
    from .commands import skipped_said, verify  # here: commands imports this module

    task = resolve_task(args)
    _, prepare, figures, needs_rows = task_command(task)
    settings = prepare(args)  # bad usage (exit 2) before an output's trouble (exit 1)
    parse_memory_limit(args.memory_limit)
    check_file_out(args.out, overwrite=args.overwrite)  # before any pass
    verify(args, args.data)
    model = fit_validated(args.data, None, settings, task=task, target=args.target,
                          features=columns(args.features) or None, exclude=columns(args.exclude),
                          nominal=columns(args.nominal), key=args.key, folds=args.folds, scheduler=args.scheduler,
                          cache=not args.no_cache and "auto", progress=_progress(args, task),
                          checkpoint=args.checkpoint, sample_weight=args.weight, memory_limit=args.memory_limit)
    model.save(args.out)
    if args.checkpoint:  # the model is safe: the checkpoint has served
        from ..engine.checkpoint import remove_checkpoint

        remove_checkpoint(args.checkpoint)
    r = model.report
    for warning in r.get("warnings", []):
        _warn(args, warning)
    pruned = r["prune"]
    if pruned["mode"] != "none":
        at = "" if pruned["alpha"] is None else f" at alpha {pruned['alpha']:.6g}"
        _say(args, f"pruned ({pruned['mode']}){at}: {pruned['leaves_grown']} -> {pruned['leaves']} leaves")
    training, cv = figures(r)
    _say(args, f"wrote {args.out}: depth {r['depth']}, {r['leaves']} leaves, {training}, {r['passes']} passes over "
               f"{r['rows_used']} rows{skipped_said(r)} in {model.run['seconds']['total']:.2f}s")
    if cv:
        _say(args, cv)
    if "grid" in r:
        _say(args, f"grid: best of {r['grid']['settings']} settings {r['grid']['best_params']} "
                   "(its CV accuracy above is optimistic: it chose the setting)")
    if needs_rows and not r["rows_used"]:
        raise InputError(f"{args.data}: no row with a target")
    return {"model": args.out, "report": model.report, "run": model.run}
