"""The ``dasktree`` command: fit, predict, discretize, show, prune, evaluate, plot, warm, demo.

Exit codes (:data:`EXIT_CODES`, :mod:`dasktree.errors`): 0 done; 1 the data or
a file cannot be used (one line on stderr); 2 bad usage, including a bad
parameter value; 3 an internal error (a bug: please report it); 75 a transient
failure a retry may fix (scheduler unreachable, cluster lost, ``--timeout``).
``--json`` prints a machine-readable report on stdout and the human summary
on stderr; progress bars go to stderr and ``--quiet`` turns them off.
``--log-format json`` writes one JSON line per pass (and one naming the cluster
and its dashboard) on stderr instead of the bars (:mod:`dasktree.engine.progress`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import os
import signal
import sys
import threading
import tempfile
import warnings
from typing import Sequence

from . import __version__  # noqa: F401  (set before the submodules load)
from .discretize.jobs import DEFAULT_MAX_BINS, DISCRETIZERS
from .cli_evaluate import add_evaluate_parser, add_plot_parser, cmd_evaluate, cmd_plot
from .errors import EXIT_BUG, EXIT_TRANSIENT, EXIT_USAGE, DaskTreeError, TransientError, exit_code

__all__ = ["main", "build_parser", "EXIT_CODES"]

EXIT_CODES = """exit codes:
  0   done
  1   the data or a file cannot be used (permanent: fix the input or the output path)
  2   bad usage, including a bad parameter value (--max-depth -1, --cv 1)
  3   internal error (a bug in dasktree: please report it)
  75  transient failure a retry may fix: the scheduler cannot be reached, the cluster
      was lost, --timeout expired"""

GRACE_SECONDS = 30
"""After ``--timeout`` expires, or after the command is done, how long closing the cluster and
leaving may take before the process ends itself regardless (never a job that does not exit)."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless the help says it already or it is a flag."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "(default" in text or action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def _columns(text: str | None) -> list[str]:
    return [c for c in (text or "").split(",") if c]


def _add_runtime(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="'inprocess' (this process, a thread per core; the default for data whose "
                        "tables and codes fit in a quarter of the memory), 'processes' (a LocalCluster, "
                        "one worker per core; the default for larger data), 'threads', "
                        "or a Dask scheduler address such as tcp://host:8786")
    p.add_argument("--quiet", action="store_true", help="no progress bars or log lines")
    p.add_argument("--log-format", choices=["text", "json"], default="text",
                   help="stderr: progress bars (text) or one JSON line per pass and one for the cluster (json: "
                        "level, nodes, rows, bytes_read, seconds), written even with --json")
    p.add_argument("--json", action="store_true",
                   help="print a machine-readable JSON report on stdout (the human summary goes to stderr)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="give up after S seconds of the whole run: one line on stderr, exit 75, the cluster "
                        "closed and no output written (default: no limit)")


def _add_learning(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("learning")
    g.add_argument("--criterion", choices=["gini", "entropy", "gain_ratio"], default="gini",
                   help="impurity whose decrease chooses the tests (gain_ratio: C4.5's rule)")
    g.add_argument("--max-depth", type=int, default=None, metavar="D",
                   help="deepest level; a tree of depth D reads the data D + 1 times (default: no limit)")
    g.add_argument("--min-samples-split", type=int, default=2, metavar="N",
                   help="fewest training rows a node must have to be split")
    g.add_argument("--min-samples-leaf", type=int, default=1, metavar="N",
                   help="fewest training rows each child of a split must have")
    g.add_argument("--min-impurity-decrease", type=float, default=0.0, metavar="X",
                   help="split only when N_t / N * impurity decrease >= X")
    g.add_argument("--max-leaf-nodes", type=int, default=None, metavar="N",
                   help="leaf budget, spent level by level on the best splits first (default: no limit)")
    g.add_argument("--max-bins", type=int, default=255, metavar="N",
                   help="numeric columns with at most N distinct values get exact bins, others N quantile bins")
    g.add_argument("--max-categories", type=int, default=255, metavar="N",
                   help="nominal columns keep their N most frequent categories; the rest share '__other__'")
    g.add_argument("--nominal-split", choices=["binary", "multiway"], default="binary",
                   help="CART subset splits, or C4.5's one child per category")
    g.add_argument("--max-arity", type=int, default=2, metavar="K",
                   help="numeric tests with up to K intervals: optimal splits by Block-Opt-P (2: binary)")
    g.add_argument("--selection", choices=["balanced_gain", "gain_ratio", "distance"], default="balanced_gain",
                   help="with --max-arity > 2, what picks the arity and the attribute")
    g.add_argument("--max-histogram-mb", type=float, default=256.0, metavar="MB",
                   help="histogram memory of one pass; wider frontiers take one pass per node group")
    g.add_argument("--binning", choices=["quantile", *DISCRETIZERS], default="quantile", metavar="METHOD",
                   help="bins of the numeric attributes: 'quantile' (exact up to --max-bins distinct "
                        "values, else quantile bins) or a discretization method (" + ", ".join(DISCRETIZERS)
                        + ") whose intervals become the bins, at the cost of one more pass")
    g.add_argument("--postpone", default=None, metavar="RULE",
                   help="skip, at a node, numeric attributes with many boundary points (reconsidered deeper): "
                        "'analytic' (score bound below the best found: the same tree), 'ratio:T' (blocks/rows > T), "
                        "'rank:T' (search the fraction T with the fewest blocks), 'relative:T' (more than 1/T "
                        "times the fewest blocks); 0 < T <= 1 (default: none: every attribute searched)")
    g = p.add_argument_group("pruning (no pass over the data)")
    g.add_argument("--prune", choices=["auto", "cv", "cv-min", "pessimistic", "none"], default="auto",
                   help="cv: cost-complexity pruning, alpha by the 1-SE rule over the --cv fold trees; cv-min: "
                        "the least CV error; pessimistic: C4.5's error-based pruning; none: the grown tree "
                        "(default auto: cv-min with --cv, else pessimistic)")
    g.add_argument("--ccp-alpha", type=float, default=None, metavar="A",
                   help="prune at this cost-complexity alpha instead (scikit-learn's ccp_alpha; default: none)")
    g.add_argument("--confidence", type=float, default=0.25, metavar="CF",
                   help="C4.5's confidence factor for --prune pessimistic (default 0.25; smaller prunes more)")
    g = p.add_argument_group("cross-validation (grown in the same passes as the tree)")
    g.add_argument("--cv", type=int, default=None, metavar="K",
                   help="K-fold cross-validation: accuracy, precision, recall, F1, log-loss, ROC AUC in the "
                        "report (default: none)")
    g.add_argument("--repeats", type=int, default=1, metavar="R", help="R x K cross-validation (5x2cv: --cv 2 --repeats 5)")
    g.add_argument("--seed", type=int, default=0, help="seed of the fold hash")
    g.add_argument("--key", metavar="COL", help="column keying rows for the fold hash (default: file and row offset)")
    g.add_argument("--folds", metavar="COL", help="column of your own folds 0..K-1, with --cv K (default: the fold hash of --key)")
    g.add_argument("--keep-fold-trees", action="store_true",
                   help="save the K x R fold trees in the model too (many times its size); the CV report is "
                        "saved either way")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dasktree",
        description="Decision trees from partitioned Parquet, one pass over the data per level, on Dask.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"dasktree {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add = functools.partial(sub.add_parser, formatter_class=HelpFormatter)

    p = add("fit", help="learn a tree from a Parquet dataset and save it as JSON")
    p.add_argument("data", help="Parquet file, directory (hive partitions included), glob or fsspec URL")
    p.add_argument("--target", required=True, help="the class column")
    p.add_argument("--out", required=True, help="model file to write (JSON, written atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="after every level, save what the fit needs to continue in DIR; the same command "
                        "run again continues from the last complete level (same model, bit for bit) (default: none)")
    p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    p.add_argument("--exclude", help="comma-separated columns to leave out (default: none)")
    p.add_argument("--nominal", help="comma-separated numeric columns to treat as nominal (default: none; "
                                     "strings, booleans and dictionaries are nominal)")
    p.add_argument("--no-cache", action="store_true",
                   help="re-read the Parquet files every pass instead of keeping encoded data on the workers")
    _add_learning(p)
    _add_runtime(p)

    p = add("predict", help="predict a Parquet dataset with a saved model")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    p.add_argument("data", help="Parquet file, directory, glob or fsspec URL")
    p.add_argument("--out", required=True, help="output directory of Parquet files (written atomically)")
    p.add_argument("--keep", help="comma-separated input columns to copy to the output, e.g. an id (default: none)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    _add_runtime(p)

    p = add("discretize", help="discretize the numeric columns of a Parquet dataset (MDLP and "
                                          "others) from one histogram pass; write it as Parquet")
    p.add_argument("data", help="Parquet file, directory (hive partitions included), glob or fsspec URL")
    p.add_argument("--target", required=True, help="the class column")
    p.add_argument("--out", required=True,
                   help="output directory: one Parquet file per input part and _discretizer.json with the "
                        "cut points, written atomically")
    p.add_argument("--method", choices=DISCRETIZERS, default="mdlp",
                   help="mdlp (Fayyad & Irani), distance (Lopez de Mantaras, MDL stop), chimerge "
                        "(Kerber), equal_width, equal_frequency, optimal (Block-Opt-P)")
    p.add_argument("--labels", action="store_true",
                   help="write readable interval labels such as '(1.5, 2]' instead of codes 0..m")
    p.add_argument("--n-intervals", type=int, default=None, metavar="K",
                   help="equal_width / equal_frequency: intervals (default: 10); chimerge: at most K; "
                        "optimal: exactly K (default: chosen by balanced gain)")
    p.add_argument("--significance", type=float, default=0.05, metavar="A", help="chimerge's significance level")
    p.add_argument("--max-arity", type=int, default=5, metavar="K",
                   help="optimal without --n-intervals: the most intervals tried")
    p.add_argument("--max-bins", type=int, default=DEFAULT_MAX_BINS, metavar="N",
                   help="candidate cut points: exact between distinct values up to N, else N quantile bins' "
                        "edges")
    p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    p.add_argument("--exclude", help="comma-separated columns to leave untouched (default: none)")
    p.add_argument("--nominal", help="comma-separated numeric columns to leave untouched as nominal (default: none)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    _add_runtime(p)

    p = add("show", help="print a saved model")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    p.add_argument("--format", choices=["text", "dot", "json", "report", "cp"], default="text",
                   help="text: the tree as indented rules; dot: graphviz; json: the model file; "
                        "report: a readable summary (data, parameters, tree size, CV table); "
                        "cp: the cost-complexity table (alpha, leaves, training and CV error), as rpart's printcp")

    p = add("prune", help="prune a saved model again from its grown tree (no pass over the data)")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--alpha", type=float, metavar="A", help="cost-complexity alpha to prune at")
    how.add_argument("--mode", choices=["cv", "cv-min", "pessimistic", "none"],
                     help="choose again: cv (1-SE rule), cv-min, pessimistic (C4.5), none (the grown tree); "
                          "cv and cv-min need a model saved with --keep-fold-trees")
    p.add_argument("--confidence", type=float, default=0.25, metavar="CF",
                   help="with --mode pessimistic (default 0.25)")
    p.add_argument("--out", required=True, help="model file to write (JSON, atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")

    add_evaluate_parser(add, _add_runtime)
    add_plot_parser(add)

    p = add("warm", help="compile every kernel into numba's cache now, so that no fit pays "
                         "for it (after pip install, or in an image build)")
    p.add_argument("--no-cluster", action="store_true",
                   help="skip the fit on a Dask cluster of threads (its pass paths then compile at "
                        "the first cluster fit)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")

    p = add("demo", help="write a sample Agrawal dataset, fit a tree, print it and its accuracy")
    p.add_argument("--rows", type=int, default=200_000, help="rows of the sample dataset")
    p.add_argument("--files", type=int, default=8, help="Parquet files it is written as")
    p.add_argument("--function", type=int, default=2, help="Agrawal classification function 1..10")
    p.add_argument("--max-depth", type=int, default=5, metavar="D", help="deepest level of the tree")
    p.add_argument("--dir", help="keep the sample data in DIR/agrawal (default: a temporary directory, "
                                 "removed at the end)")
    _add_runtime(p)
    return parser


def _progress(args):
    from .engine.progress import Progress

    # --json's report owns stdout; JSON log lines go to stderr and so stay on with it
    return Progress(enabled=not (args.quiet or (args.json and args.log_format == "text")),
                    log_format=args.log_format)


def _cmd_fit(args) -> dict:
    from .fit import fit, validate_params
    from .io.outputs import check_file_out

    learning = dict(
        criterion=args.criterion, max_depth=args.max_depth, min_samples_split=args.min_samples_split,
        min_samples_leaf=args.min_samples_leaf, min_impurity_decrease=args.min_impurity_decrease,
        max_leaf_nodes=args.max_leaf_nodes, max_bins=args.max_bins, max_categories=args.max_categories,
        nominal_split=args.nominal_split, max_histogram_mb=args.max_histogram_mb,
        max_arity=args.max_arity, selection=args.selection, binning=args.binning, postpone=args.postpone,
        prune=args.prune, ccp_alpha=args.ccp_alpha, confidence=args.confidence,
        cv=args.cv, repeats=args.repeats, seed=args.seed,
    )
    validate_params(learning)  # bad usage (exit 2) before an output's trouble (exit 1)
    check_file_out(args.out, overwrite=args.overwrite)  # before any pass
    model = fit(
        args.data, target=args.target, features=_columns(args.features) or None,
        exclude=_columns(args.exclude), nominal=_columns(args.nominal), key=args.key, folds=args.folds,
        scheduler=args.scheduler, cache=not args.no_cache and "auto", progress=_progress(args),
        checkpoint=args.checkpoint, keep_fold_trees=args.keep_fold_trees, **learning,
    )
    model.save(args.out)
    if args.checkpoint:  # the model is safe: the checkpoint has served
        from .engine.checkpoint import remove_checkpoint

        remove_checkpoint(args.checkpoint)
    r = model.report
    pruned = r["prune"]
    if pruned["mode"] != "none":
        at = "" if pruned["alpha"] is None else f" at alpha {pruned['alpha']:.6g}"
        _say(args, f"pruned ({pruned['mode']}){at}: {pruned['leaves_grown']} -> {pruned['leaves']} leaves")
    _say(args, f"wrote {args.out}: depth {r['depth']}, {r['leaves']} leaves, training accuracy "
               f"{r['training_accuracy']:.4f}, {r['passes']} passes over {r['rows_used']} rows "
               f"in {model.run['seconds']['total']:.2f}s")
    if "cv" in r:
        cv = r["cv"]
        _say(args, f"{cv['repeats']}x{cv['folds']}-fold cross-validated accuracy {cv['accuracy_mean']:.4f} "
                   f"+/- {cv['accuracy_std']:.4f} (pooled {cv['accuracy_pooled']:.4f})")
    return {"model": args.out, "report": model.report, "run": model.run}


def _say(args, text: str) -> None:
    """The human summary: on stdout, or on stderr when --json keeps stdout for the JSON report."""
    print(text, file=sys.stderr if getattr(args, "json", False) else sys.stdout)


def _cmd_predict(args) -> dict:
    from .engine.predict import predict_dataset
    from .io.outputs import check_out
    from .model.model import load

    model = load(args.model)
    check_out(args.out, overwrite=args.overwrite)  # before any pass
    written: dict = {}
    files = predict_dataset(model, args.data, args.out, keep=_columns(args.keep), overwrite=args.overwrite,
                            scheduler=args.scheduler, progress=_progress(args), counts=written)
    classes = ", ".join(f"{c}: {n}" for c, n in written["class_counts"].items())
    _say(args, f"wrote {written['rows']} rows in {len(files)} files to {args.out} (predicted {classes})")
    return {"out": args.out, "files": files, "rows": written["rows"], "class_counts": written["class_counts"]}


def _cmd_discretize(args) -> dict:
    import time

    from .discretize import Discretizer
    from .discretize.discretizer import CUTS_FILE
    from .engine.cluster import connect
    from .io.outputs import check_out

    started = time.perf_counter()
    bar = _progress(args)
    disc = Discretizer(args.method, max_bins=args.max_bins, n_intervals=args.n_intervals,
                       significance=args.significance, max_arity=args.max_arity, progress=bar)
    disc._kernel_params()  # bad parameters fail before any work
    check_out(args.out, overwrite=args.overwrite)
    with connect(None, args.scheduler, on_cluster=bar.cluster) as client:
        disc.set_params(client=client)
        try:
            disc.fit(args.data, target=args.target, features=_columns(args.features) or None,
                     exclude=_columns(args.exclude), nominal=_columns(args.nominal))
            files = disc.transform_dataset(args.data, args.out, labels=args.labels, overwrite=args.overwrite)
        finally:
            disc.set_params(client=None)
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
    from .model.export import export_dot, export_text
    from .model.model import load

    model = load(args.model)
    if args.format == "text":
        sys.stdout.write(export_text(model))
    elif args.format == "dot":
        sys.stdout.write(export_dot(model))
    elif args.format == "cp":
        sys.stdout.write(format_cp(model))
    elif args.format == "report":
        from .fit import DEFAULTS
        from .model.show_report import format_report

        sys.stdout.write(format_report(model, args.model, DEFAULTS))
    else:
        print(model.dumps())
    return None


def format_cp(model) -> str:
    """The cost-complexity table as rpart's ``printcp`` prints it; ``*`` marks the pruned tree."""
    from .model.report import cp_rows

    info = model.report.get("prune") or {}
    table = cp_rows(model)
    cv = model.report.get("cv")
    head = f"{info.get('mode', 'none')} pruning"
    if info.get("alpha") is not None:
        head += f" at alpha {info['alpha']:.6g}"
    head += f": {model.report['leaves']} of {info.get('leaves_grown', model.grown_tree.n_leaves)} leaves"
    if cv:
        head += f"; {cv['repeats']}x{cv['folds']}-fold cross-validation"
    lines = [head, f"  {'alpha':>12} {'leaves':>7} {'train_error':>12} {'cv_error':>9} {'cv_se':>8}"]
    for row in table:
        mark = "*" if info.get("alpha") is not None and row["alpha"] == info["alpha"] else " "
        cv_e = "-" if row["cv_error"] is None else f"{row['cv_error']:.4f}"
        cv_s = "-" if row["cv_se"] is None else f"{row['cv_se']:.4f}"
        lines.append(f"{mark} {row['alpha']:>12.6g} {row['leaves']:>7d} {row['train_error']:>12.4f} {cv_e:>9} {cv_s:>8}")
    return "\n".join(lines) + "\n"


def _cmd_prune(args) -> dict:
    from .io.outputs import atomic_write_text, check_file_out
    from .model import load
    from .model.report import check_prune

    check_prune(args.mode, args.alpha, args.confidence)  # bad values (exit 2) before a file's trouble
    check_file_out(args.out, overwrite=args.overwrite)
    model = load(args.model).prune(args.alpha, mode=args.mode, confidence=args.confidence)
    atomic_write_text(args.out, model.dumps())
    r = model.report
    if not args.json:
        print(f"wrote {args.out}: {r['prune']['mode']} pruning, {r['prune']['leaves_grown']} -> {r['leaves']} leaves"
              + (f", cross-validated accuracy {r['cv']['accuracy_pooled']:.4f}" if "cv" in r else ""))
    return {"model": args.out, "prune": {k: v for k, v in r["prune"].items() if k != "cp_table"},
            "leaves": r["leaves"], "cv": r.get("cv", {}).get("accuracy_pooled")}


def _cmd_demo(args) -> dict:
    import numpy as np
    import pyarrow as pa

    from .datasets import agrawal
    from .fit import fit
    from .model.export import export_text

    with tempfile.TemporaryDirectory(prefix="dasktree-demo-") as tmp:
        root = args.dir or tmp
        data = os.path.join(root, "agrawal")
        agrawal.write_parquet(data, args.rows, n_files=args.files, function=args.function, seed=0,
                              overwrite=True)
        # as 'dasktree fit' reads the same files: car and zipcode are int8 columns, so numeric
        model = fit(data, target=agrawal.TARGET, max_depth=args.max_depth, scheduler=args.scheduler,
                    progress=_progress(args))
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
    from .warm import warm

    quiet = args.quiet or args.json
    result = warm(cluster=not args.no_cluster,
                  progress=None if quiet else (lambda label: print(f"compiling: {label}", file=sys.stderr)))
    if not quiet:
        print(f"compiled the kernels of {result['fits']} fits in {result['seconds']:.1f}s into {result['cache_dir']}")
    return result


COMMANDS = {"fit": _cmd_fit, "predict": _cmd_predict, "discretize": _cmd_discretize, "show": _cmd_show,
            "prune": _cmd_prune, "evaluate": cmd_evaluate, "plot": cmd_plot, "warm": _cmd_warm, "demo": _cmd_demo}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command of ``argv``; the exit code (see :data:`EXIT_CODES`)."""
    program = argv is None  # the process is ours: it must end (see _leaving)
    args = build_parser().parse_args(argv)
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        print(f"dasktree: error: --timeout must be a number of seconds > 0, got {timeout}", file=sys.stderr)
        return EXIT_USAGE
    # distributed's own warnings and asyncio's shutdown chatter (a cluster closing after an error)
    # would break the one-line error contract
    warnings.filterwarnings("ignore", module="distributed")
    for name in ("asyncio", "distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        with _deadline(timeout):
            result = COMMANDS[args.command](args)
        if getattr(args, "json", False) and result is not None:
            print(json.dumps(result, indent=2, default=str))
        sys.stdout.flush()
    except BrokenPipeError:  # `dasktree show m.json | head -1`: the reader has what it wanted
        _quiet_stdout()
        return 0
    except DaskTreeError as exc:
        print(f"dasktree: error: {_one_line(str(exc))}", file=sys.stderr)
        return _leaving(exit_code(exc), program)
    except KeyboardInterrupt:
        print("dasktree: interrupted", file=sys.stderr)
        return _leaving(130, program)
    except Exception as exc:  # a bug: say so in one line, show the traceback on request
        if os.environ.get("DASKTREE_DEBUG"):
            raise
        print(f"dasktree: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
              "(a bug in dasktree; rerun with DASKTREE_DEBUG=1 for the traceback and please report it)",
              file=sys.stderr)
        return _leaving(EXIT_BUG, program)
    return _leaving(0, program)


@contextlib.contextmanager
def _deadline(seconds: float | None):
    """Bound the block to ``seconds``: at expiry a :class:`TransientError` is raised in the main
    thread (so the cluster is closed and atomic outputs are removed as for any error); if the
    block has not ended ``GRACE_SECONDS`` later (stuck in compiled code, or in a close that
    hangs), the process says so and ends itself with exit code 75."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    message = f"--timeout {seconds:g} s expired before the run finished; a retry may succeed"

    def expire(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise TransientError(message)

    def hard_stop():
        print(f"dasktree: error: {message} (the cluster did not close within {GRACE_SECONDS} s)",
              file=sys.stderr, flush=True)
        os._exit(EXIT_TRANSIENT)

    previous = signal.signal(signal.SIGALRM, expire)
    watchdog = threading.Timer(seconds + GRACE_SECONDS, hard_stop)
    watchdog.daemon = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    watchdog.start()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watchdog.cancel()


def _leaving(code: int, program: bool) -> int:
    """``code``; for the program (not a call of :func:`main` from Python), with a watchdog that ends
    the process with it if leaving (threads distributed started, a cluster's shutdown) takes more
    than ``GRACE_SECONDS``: a finished job always exits."""
    if not program:
        return code

    def hard_exit():
        sys.stderr.flush()
        os._exit(code)

    watchdog = threading.Timer(GRACE_SECONDS, hard_exit)
    watchdog.daemon = True
    watchdog.start()
    return code


def _quiet_stdout() -> None:
    """stdout's reader is gone: point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
