"""The ``dasktree`` command: fit, predict, discretize, show, warm, demo.

Exit codes: 0 done; 1 the data or a file cannot be used (one line on stderr);
2 bad command-line usage; 3 an internal error (a bug: please report it).
``--json`` prints a machine-readable report on stdout; progress bars go to
stderr and ``--quiet`` turns them off.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import warnings
from typing import Sequence

from . import __version__  # noqa: F401  (set before the submodules load)
from .discretize.jobs import DEFAULT_MAX_BINS, DISCRETIZERS
from .errors import DaskTreeError

__all__ = ["main", "build_parser"]


def _columns(text: str | None) -> list[str]:
    return [c for c in (text or "").split(",") if c]


def _add_runtime(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="'inprocess' (this process, a thread per core; the default for data whose "
                        "tables and codes fit in a quarter of the memory), 'processes' (a LocalCluster, "
                        "one worker per core; the default for larger data), 'threads', "
                        "or a Dask scheduler address such as tcp://host:8786")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")


def _add_learning(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("learning")
    g.add_argument("--criterion", choices=["gini", "entropy", "gain_ratio"], default="gini")
    g.add_argument("--max-depth", type=int, default=None, metavar="D",
                   help="deepest level; a tree of depth D reads the data D + 1 times (default: no limit)")
    g.add_argument("--min-samples-split", type=int, default=2, metavar="N")
    g.add_argument("--min-samples-leaf", type=int, default=1, metavar="N")
    g.add_argument("--min-impurity-decrease", type=float, default=0.0, metavar="X")
    g.add_argument("--max-leaf-nodes", type=int, default=None, metavar="N")
    g.add_argument("--max-bins", type=int, default=255, metavar="N",
                   help="numeric columns with at most N distinct values get exact bins, others N quantile bins")
    g.add_argument("--max-categories", type=int, default=255, metavar="N")
    g.add_argument("--nominal-split", choices=["binary", "multiway"], default="binary")
    g.add_argument("--max-arity", type=int, default=2, metavar="K",
                   help="numeric tests with up to K intervals: optimal splits by Block-Opt-P (default 2: binary)")
    g.add_argument("--selection", choices=["balanced_gain", "gain_ratio", "distance"], default="balanced_gain",
                   help="with --max-arity > 2, what picks the arity and the attribute")
    g.add_argument("--max-histogram-mb", type=float, default=256.0, metavar="MB",
                   help="histogram memory of one pass; wider frontiers take one pass per node group")
    g.add_argument("--binning", choices=["quantile", *DISCRETIZERS], default="quantile", metavar="METHOD",
                   help="bins of the numeric attributes: 'quantile' (default: exact up to --max-bins distinct "
                        "values, else quantile bins) or a discretization method (" + ", ".join(DISCRETIZERS)
                        + ") whose intervals become the bins, at the cost of one more pass")
    g.add_argument("--postpone", default=None, metavar="RULE",
                   help="skip, at a node, numeric attributes with many boundary points (reconsidered deeper): "
                        "'analytic' (score bound below the best found: the same tree), 'ratio:T' (blocks/rows > T), "
                        "'rank:T' (search the fraction T with the fewest blocks), 'relative:T' (more than 1/T "
                        "times the fewest blocks); 0 < T <= 1")
    g = p.add_argument_group("cross-validation (grown in the same passes as the tree)")
    g.add_argument("--cv", type=int, default=None, metavar="K", help="K-fold cross-validation")
    g.add_argument("--repeats", type=int, default=1, metavar="R", help="R x K cross-validation (5x2cv: --cv 2 --repeats 5)")
    g.add_argument("--seed", type=int, default=0, help="seed of the fold hash")
    g.add_argument("--key", metavar="COL", help="column keying rows for the fold hash (default: file and row offset)")
    g.add_argument("--folds", metavar="COL", help="column of your own folds 0..K-1 (with --cv K)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dasktree",
        description="Decision trees from partitioned Parquet, one pass over the data per level, on Dask.",
    )
    parser.add_argument("--version", action="version", version=f"dasktree {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("fit", help="learn a tree from a Parquet dataset and save it as JSON")
    p.add_argument("data", help="Parquet file, directory (hive partitions included), glob or fsspec URL")
    p.add_argument("--target", required=True, help="the class column")
    p.add_argument("--out", required=True, help="model file to write (JSON)")
    p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    p.add_argument("--exclude", help="comma-separated columns to leave out")
    p.add_argument("--nominal", help="comma-separated numeric columns to treat as nominal")
    p.add_argument("--no-cache", action="store_true",
                   help="re-read the Parquet files every pass instead of keeping encoded data on the workers")
    _add_learning(p)
    _add_runtime(p)

    p = sub.add_parser("predict", help="predict a Parquet dataset with a saved model")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    p.add_argument("data", help="Parquet file, directory, glob or fsspec URL")
    p.add_argument("--out", required=True, help="output directory of Parquet files (written atomically)")
    p.add_argument("--keep", help="comma-separated input columns to copy to the output (e.g. an id)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    _add_runtime(p)

    p = sub.add_parser("discretize", help="discretize the numeric columns of a Parquet dataset (MDLP and "
                                          "others) from one histogram pass; write it as Parquet")
    p.add_argument("data", help="Parquet file, directory (hive partitions included), glob or fsspec URL")
    p.add_argument("--target", required=True, help="the class column")
    p.add_argument("--out", required=True,
                   help="output directory: one Parquet file per input part and _discretizer.json with the "
                        "cut points, written atomically")
    p.add_argument("--method", choices=DISCRETIZERS, default="mdlp",
                   help="mdlp (Fayyad & Irani, default), distance (Lopez de Mantaras, MDL stop), chimerge "
                        "(Kerber), equal_width, equal_frequency, optimal (Block-Opt-P)")
    p.add_argument("--labels", action="store_true",
                   help="write readable interval labels such as '(1.5, 2]' instead of codes 0..m")
    p.add_argument("--n-intervals", type=int, default=None, metavar="K",
                   help="equal_width / equal_frequency: intervals (default 10); chimerge: at most K; "
                        "optimal: exactly K (default: chosen by balanced gain)")
    p.add_argument("--significance", type=float, default=0.05, metavar="A", help="chimerge's significance level")
    p.add_argument("--max-arity", type=int, default=5, metavar="K",
                   help="optimal without --n-intervals: the most intervals tried")
    p.add_argument("--max-bins", type=int, default=DEFAULT_MAX_BINS, metavar="N",
                   help=f"candidate cut points: exact between distinct values up to N, else N quantile bins' "
                        f"edges (default {DEFAULT_MAX_BINS})")
    p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    p.add_argument("--exclude", help="comma-separated columns to leave untouched")
    p.add_argument("--nominal", help="comma-separated numeric columns to leave untouched as nominal")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    _add_runtime(p)

    p = sub.add_parser("show", help="print a saved model")
    p.add_argument("model")
    p.add_argument("--format", choices=["text", "dot", "json", "report"], default="text")

    p = sub.add_parser("warm", help="compile every kernel into numba's cache now, so that no fit pays "
                                    "for it (after pip install, or in an image build)")
    p.add_argument("--no-cluster", action="store_true",
                   help="skip the fit on a Dask cluster of threads (its pass paths then compile at "
                        "the first cluster fit)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")

    p = sub.add_parser("demo", help="write a sample Agrawal dataset, fit a tree, print it and its accuracy")
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--function", type=int, default=2, help="Agrawal classification function 1..10")
    p.add_argument("--max-depth", type=int, default=5)
    p.add_argument("--dir", help="where to write the sample data (default: a temporary directory)")
    _add_runtime(p)
    return parser


def _progress(args):
    from .engine.progress import Progress

    return Progress(enabled=not (args.quiet or args.json))


def _cmd_fit(args) -> dict:
    from .fit import fit

    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        raise _input(f"--out {args.out}: directory {out_dir} does not exist")
    model = fit(
        args.data, target=args.target, features=_columns(args.features) or None,
        exclude=_columns(args.exclude), nominal=_columns(args.nominal), key=args.key, folds=args.folds,
        cv=args.cv, repeats=args.repeats, seed=args.seed, scheduler=args.scheduler,
        cache=not args.no_cache and "auto", progress=_progress(args),
        criterion=args.criterion, max_depth=args.max_depth, min_samples_split=args.min_samples_split,
        min_samples_leaf=args.min_samples_leaf, min_impurity_decrease=args.min_impurity_decrease,
        max_leaf_nodes=args.max_leaf_nodes, max_bins=args.max_bins, max_categories=args.max_categories,
        nominal_split=args.nominal_split, max_histogram_mb=args.max_histogram_mb,
        max_arity=args.max_arity, selection=args.selection, binning=args.binning, postpone=args.postpone,
    )
    model.save(args.out)
    if not args.json:
        r = model.report
        print(f"wrote {args.out}: depth {r['depth']}, {r['leaves']} leaves, training accuracy "
              f"{r['training_accuracy']:.4f}, {r['passes']} passes over {r['rows_used']} rows "
              f"in {model.run['seconds']['total']:.2f}s")
        if "cv" in r:
            cv = r["cv"]
            print(f"{cv['repeats']}x{cv['folds']}-fold cross-validated accuracy {cv['accuracy_mean']:.4f} "
                  f"+/- {cv['accuracy_std']:.4f} (pooled {cv['accuracy_pooled']:.4f})")
    return {"model": args.out, "report": model.report, "run": model.run}


def _input(message: str):
    from .errors import InputError

    return InputError(message)


def _cmd_predict(args) -> dict:
    from .engine.predict import predict_dataset
    from .model.model import load

    model = load(args.model)
    files = predict_dataset(model, args.data, args.out, keep=_columns(args.keep), overwrite=args.overwrite,
                            scheduler=args.scheduler, progress=_progress(args))
    if not args.json:
        print(f"wrote {len(files)} files to {args.out}")
    return {"out": args.out, "files": files}


def _cmd_discretize(args) -> dict:
    import time

    from .discretize import Discretizer
    from .discretize.discretizer import CUTS_FILE
    from .engine.cluster import connect
    from .io.outputs import check_out

    started = time.perf_counter()
    disc = Discretizer(args.method, max_bins=args.max_bins, n_intervals=args.n_intervals,
                       significance=args.significance, max_arity=args.max_arity, progress=_progress(args))
    disc._kernel_params()  # bad parameters fail before any work
    check_out(args.out, overwrite=args.overwrite)
    with connect(None, args.scheduler) as client:
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
    if not args.json:
        cuts = sum(len(t) for t in disc.cut_points_.values())
        print(f"wrote {len(files)} files and {CUTS_FILE} to {args.out}: {len(disc.cut_points_)} columns "
              f"discretized by {args.method} ({cuts} cut points), {len(disc.passed_through_)} passed through; "
              f"{passes} passes over {r['rows']} rows in {seconds:.2f}s")
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
    elif args.format == "report":
        print(json.dumps(model.report, indent=2))
    else:
        print(model.dumps())
    return None


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
        model = fit(data, target=agrawal.TARGET, nominal=["car", "zipcode"], max_depth=args.max_depth,
                    scheduler=args.scheduler, progress=_progress(args))
        test = agrawal.generate(max(1000, args.rows // 4), function=args.function, seed=1)
        predicted = np.asarray(model.classes)[model.predict_codes(pa.Table.from_pandas(test))]
        accuracy = float(np.mean(predicted == test[agrawal.TARGET].to_numpy()))
        if not args.json:
            print(f"Agrawal function F{args.function}: {args.rows} rows in {args.files} Parquet files at {data}")
            sys.stdout.write(export_text(model))
            r = model.report
            print(f"depth {r['depth']}, {r['leaves']} leaves, {r['passes']} passes, {model.run['seconds']['total']:.2f}s")
            print(f"training accuracy {r['training_accuracy']:.4f}, accuracy on {len(test)} new rows {accuracy:.4f}")
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
            "warm": _cmd_warm, "demo": _cmd_demo}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # distributed's own warnings and asyncio's shutdown chatter (a cluster closing after an error)
    # would break the one-line error contract
    warnings.filterwarnings("ignore", module="distributed")
    for name in ("asyncio", "distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        result = COMMANDS[args.command](args)
    except DaskTreeError as exc:
        print(f"dasktree: error: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dasktree: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so in one line, show the traceback on request
        if os.environ.get("DASKTREE_DEBUG"):
            raise
        print(f"dasktree: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
              "(a bug in dasktree; rerun with DASKTREE_DEBUG=1 for the traceback and please report it)",
              file=sys.stderr)
        return 3
    if getattr(args, "json", False) and result is not None:
        print(json.dumps(result, indent=2, default=str))
    return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
