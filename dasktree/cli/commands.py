"""What each verb of the ``dasktree`` command does with its parsed arguments (:data:`COMMANDS`)."""

from __future__ import annotations

import os
import json
import sys

from .evaluate import cmd_evaluate, cmd_plot
from .export import cmd_export
from .grid import format_grid
from .parser import columns
from .say import progress as _progress, say as _say
from .task import cmd_fit

__all__ = ["COMMANDS"]


def verify(args, data) -> None:
    """With ``--verify``: every page of Parquet ``data`` read with its checksum first
    (:meth:`~dasktree.io.sources.ParquetSource.verify`), every record of CSV ``data`` parsed
    (:meth:`~dasktree.io.sources.FileSource.verify`), and what was read said."""
    if not getattr(args, "verify", False):
        return
    from ..io.sources import open_path

    _say(args, f"dasktree: {open_path(data).verify().line()}")


def _cmd_fit(args) -> dict:
    if args.trees is not None:  # a forest: dasktree.cli.forest
        from .forest import cmd_fit_forest

        return cmd_fit_forest(args, columns)
    from .forest import refuse_forest_options

    refuse_forest_options(args)
    return cmd_fit(args, columns)


def skipped_said(r: dict) -> str:
    """The fit summary's note of the rows left out for having no target (null, or a NaN label)."""
    n = r.get("rows_skipped_null_target", 0)
    return f" ({n} skipped: no target)" if n else ""


def _cmd_predict(args) -> dict:
    from ..engine.predict import predict_dataset
    from ..io.outputs import check_out
    from .forest import load_model_or_forest as load

    model = load(args.model)
    check_out(args.out, overwrite=args.overwrite)  # before any pass
    verify(args, args.data)
    written: dict = {}
    files = predict_dataset(model, args.data, args.out, keep=columns(args.keep), overwrite=args.overwrite,
                            scheduler=args.scheduler, progress=_progress(args), counts=written)
    classes = ", ".join(f"{c}: {n}" for c, n in written["class_counts"].items())
    predicted = f" (predicted {classes})" if classes else ""
    _say(args, f"wrote {written['rows']} rows in {len(files)} files to {args.out}{predicted}")
    return {"out": args.out, "files": files, "rows": written["rows"], "class_counts": written["class_counts"]}


def _cmd_discretize(args) -> dict:
    import time

    from ..discretize import Discretizer
    from ..discretize.discretizer import CUTS_FILE
    from ..engine.place import cluster_for
    from ..io.outputs import check_out

    started = time.perf_counter()
    bar = _progress(args, "classification")
    disc = Discretizer(args.method, max_bins=args.max_bins, n_intervals=args.n_intervals,
                       significance=args.significance, max_arity=args.max_arity, progress=bar)
    disc._kernel_params()  # bad parameters fail before any work
    check_out(args.out, overwrite=args.overwrite)
    with cluster_for(None, args.scheduler, progress=bar) as client:  # one cluster for both passes, if any
        disc.set_params(client=client, scheduler=None if client is not None else args.scheduler)
        try:
            disc.fit(args.data, target=args.target, features=columns(args.features) or None,
                     exclude=columns(args.exclude), nominal=columns(args.nominal))
            files = disc.transform_dataset(args.data, args.out, labels=args.labels, overwrite=args.overwrite)
        finally:
            disc.set_params(client=None, scheduler=None)
    seconds = round(time.perf_counter() - started, 4)
    r = disc.report_
    passes = r["passes"] + 1  # the fit's passes, and the one that writes
    cuts = sum(len(t) for t in disc.cut_points_.values())
    uncut = sum(not t for t in disc.cut_points_.values())
    _say(args, f"wrote {len(files)} files and {CUTS_FILE} to {args.out}: {len(disc.cut_points_)} columns "
               f"discretized by {args.method} ({cuts} cut points; {uncut} with no cut, now constant code 0), "
               f"{len(disc.passed_through_)} passed through; {passes} passes over {r['rows']} rows in "
               f"{seconds:.2f}s")
    return {"out": args.out, "files": files, "cut_points": disc.cut_points_, "report": r,
            "run": {**disc.run_, "passes": passes, "seconds": {**disc.run_["seconds"], "total": seconds}}}


def _cmd_show(args) -> dict | None:
    from ..model.text import export_dot, export_text
    from ..model.forest_model import ForestModel
    from ..model.show_report import format_cp, format_report
    from .forest import MEMBER_FORMATS, load_model_or_forest, member_or_tree, show_forest

    from ..errors import DaskTreeError, DataError, ParameterError

    if args.max_depth is not None and (args.max_depth < 0 or args.format not in ("text", "dot")):
        raise ParameterError(f"--max-depth {args.max_depth}: " + (
            "a depth is 0 (the root) or more" if args.max_depth < 0 else
            f"it cuts the tree of --format text or dot, not --format {args.format}"))
    model = load_model_or_forest(args.model, lazy=True)  # the grown tree and fold trees read only if shown
    if isinstance(model, ForestModel) and args.member is None:  # the whole forest: dasktree.cli.forest
        if args.max_depth is not None:
            raise ParameterError(f"--max-depth {args.max_depth}: it cuts a tree; give --member M for a member's")
        sys.stdout.write(show_forest(args, model))
        return None
    if isinstance(model, ForestModel) and args.format not in MEMBER_FORMATS:
        raise ParameterError(f"--format {args.format}: a forest's member is shown as {', '.join(MEMBER_FORMATS)} "
                             "(its members are grown in full: no report of their own, cp table or grid)")
    model = member_or_tree(args, model, "show")
    try:  # the tree is checked when loaded; the report is free-form and read only here
        if args.format == "text":
            text = export_text(model, max_depth=args.max_depth)
        elif args.format == "dot":
            text = export_dot(model, max_depth=args.max_depth)
        elif args.format == "cp":
            text = format_cp(model)
        elif args.format == "grid":
            text = format_grid(model, args.model)
        elif args.format == "report":
            from ..params import task_defaults

            text = format_report(model, args.model, task_defaults(model.task))
        else:
            text = model.dumps(indent=1) + "\n"
    except DaskTreeError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError) as exc:
        raise DataError(f"{args.model}: the model's report is damaged ({type(exc).__name__}: {exc})") from None
    sys.stdout.write(text)
    return None


def _cmd_prune(args) -> dict:
    from ..errors import ParameterError
    from ..io.outputs import atomic_write_text, check_file_out
    from ..model.forest_model import ForestModel
    from ..model.pruning import check_prune
    from .forest import load_model_or_forest

    check_prune(args.mode, args.alpha, args.confidence)  # bad values (exit 2) before a file's trouble
    check_file_out(args.out, overwrite=args.overwrite)
    from ..errors import DaskTreeError, DataError

    loaded = load_model_or_forest(args.model)
    if isinstance(loaded, ForestModel):
        raise ParameterError(f"{args.model} is a forest of {loaded.n_members} trees: its members are grown in full "
                             "and not pruned; 'dasktree prune' takes a single tree's file")
    try:  # the trees are checked when loaded; the report's CV section and cp table are read only here
        model = loaded.task.reprune(loaded, args.alpha, mode=args.mode, confidence=args.confidence)
    except DaskTreeError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError) as exc:
        raise DataError(f"{args.model}: the model's report is damaged ({type(exc).__name__}: {exc})") from None
    atomic_write_text(args.out, model.dumps())
    line, cv = model.task.pruned_summary(model)
    if not args.json:
        print(f"wrote {args.out}: {line}")
    return {"model": args.out, "prune": {k: v for k, v in model.report["prune"].items() if k != "cp_table"},
            "leaves": model.tree.n_leaves, "cv": cv}


def check_demo(args) -> None:
    """The demo's sizes and function as usage errors (exit 2), before anything is written: at least one
    row, one file, and no more files than rows (a file per row at most: refused, not capped)."""
    from ..datasets.agrawal_functions import FUNCTIONS
    from ..errors import ParameterError

    if args.function not in FUNCTIONS:
        raise ParameterError(f"--function must be an Agrawal function {FUNCTIONS[0]}..{FUNCTIONS[-1]}, "
                             f"got {args.function}")
    if args.rows < 1:
        raise ParameterError(f"--rows must be >= 1, got {args.rows}")
    if args.files < 1:
        raise ParameterError(f"--files must be >= 1, got {args.files}")
    if args.files > args.rows:
        raise ParameterError(f"--files {args.files} is more than --rows {args.rows}: give at most one file per row")


def _cmd_demo(args) -> dict:
    import tempfile

    import numpy as np
    import pyarrow as pa

    from ..datasets import agrawal
    from ..fit import fit
    from ..model.text import export_text

    check_demo(args)
    with tempfile.TemporaryDirectory(prefix="dasktree-demo-") as tmp:
        root = args.dir or tmp
        data = os.path.join(root, "agrawal")
        agrawal.write_parquet(data, args.rows, n_files=args.files, function=args.function, seed=0,
                              overwrite=True)
        # as 'dasktree fit' reads the same files: car and zipcode are int8 columns, so numeric
        model = fit(data, target=agrawal.TARGET, max_depth=args.max_depth, scheduler=args.scheduler,
                    progress=_progress(args, "classification"))
        test = agrawal.generate(max(1000, args.rows // 4), function=args.function, seed=1)
        predicted = np.asarray(model.classes)[model.predict_codes(pa.Table.from_pandas(test))]
        accuracy = float(np.mean(predicted == test[agrawal.TARGET].to_numpy()))
        r = model.report
        kept = f" (kept; the same fit: dasktree fit {data} --target {agrawal.TARGET} --max-depth {args.max_depth} " \
               f"--out model.json)" if args.dir else " (a temporary directory: --dir DIR keeps it)"
        _say(args, f"Agrawal function F{args.function}: {args.rows} rows in {args.files} Parquet files at {data}"
                   + kept)
        if not args.json:
            sys.stdout.write(export_text(model))
        _say(args, f"depth {r['depth']}, {r['leaves']} leaves, {r['passes']} passes, "
                   f"{model.run['seconds']['total']:.2f}s")
        _say(args, f"training accuracy {r['training_accuracy']:.4f}, accuracy on {len(test)} new rows {accuracy:.4f}")
        return {"data": data, "report": model.report, "run": model.run, "test_accuracy": accuracy}


def _cmd_warm(args) -> dict:
    from ..warm import warm

    quiet = args.quiet or args.json
    result = warm(cluster=not args.no_cluster,
                  progress=None if quiet else (lambda label: print(f"compiling: {label}", file=sys.stderr)))
    if not quiet:
        print(f"compiled the kernels of {result['fits']} fits in {result['seconds']:.1f}s into {result['cache_dir']}")
    return result


COMMANDS = {"fit": _cmd_fit, "predict": _cmd_predict, "discretize": _cmd_discretize, "show": _cmd_show,
            "prune": _cmd_prune, "evaluate": cmd_evaluate, "plot": cmd_plot, "warm": _cmd_warm, "demo": _cmd_demo}
COMMANDS["export"] = cmd_export
