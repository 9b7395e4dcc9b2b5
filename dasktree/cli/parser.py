"""The ``dasktree`` command's parser: every verb, its options and their defaults, and the exit codes."""

from __future__ import annotations

import argparse
import functools

from ..version import __version__
from .grid import add_grid
from .evaluate import add_evaluate_parser, add_plot_parser
from .export import add_export_parser
from .csv_options import add_csv
from .suggest import Parser
from .security import add_security
from .forest import add_forest
from .task import add_task

__all__ = ["build_parser", "EXIT_CODES", "HelpFormatter", "columns", "add_runtime", "add_learning", "learning_values"]


EXIT_CODES = """exit codes:
  0   done
  1   the data or a file cannot be used (permanent: fix the input or the output path)
  2   bad usage, including a bad parameter value (--max-depth -1, --cv 1)
  3   internal error (a bug in dasktree: please report it)
  75  transient failure a retry may fix: the scheduler cannot be reached, the cluster
      was lost, --timeout expired"""

class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, unless the help says it already or it is a flag."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "(default" in text or action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def columns(text: str | None) -> list[str]:
    return [c for c in (text or "").split(",") if c]


def add_runtime(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="'inprocess' (this process, a thread per core), 'processes' (a LocalCluster, "
                        "one worker per core), 'threads', or a Dask scheduler address such as "
                        "tcp://host:8786 (default: inprocess; processes for a dataset to fit whose tables and "
                        "codes exceed a quarter of the memory)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or log lines")
    p.add_argument("--log-format", choices=["text", "json"], default="text",
                   help="stderr: progress bars (text) or JSON lines only (json: one per pass with level, nodes, "
                        "rows, bytes_read, seconds; one for the cluster; one per summary line, which then leaves "
                        "stdout to --json's report), written even with --json")
    p.add_argument("--json", action="store_true",
                   help="print a machine-readable JSON report on stdout (the human summary goes to stderr)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="give up after S seconds of the whole run: one line on stderr, exit 75, the cluster "
                        "closed and no output written (default: no limit)")
    add_security(p)


def add_verify(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verify", action="store_true",
                   help="first read every page of every column of the data with its checksum, where the writer "
                        "wrote one, and check the numbers against the row groups' statistics: a damaged page is "
                        "exit 1 naming the file, row group and column (default: off: the job checks the pages "
                        "of the columns it reads, the same way, as it reads them)")


def add_learning(p: argparse.ArgumentParser) -> None:
    """The learning options, one per declared parameter with an option group
    (:mod:`dasktree.params.declared`: flag, type, choices, default and help all
    come from there), and the fold columns ``--key`` / ``--folds``."""
    from ..params import declared_params
    from ..params.regression import REGRESSION_PARAMS

    regression = {q.name: q for q in REGRESSION_PARAMS}
    groups: dict[str, argparse._ArgumentGroup] = {}
    for param in declared_params():
        if param.group is None:
            continue
        g = groups.get(param.group) or groups.setdefault(param.group, p.add_argument_group(param.group))
        if param.default is False and param.choices is None and param.from_text is None:  # a boolean: a flag
            g.add_argument(param.flag, dest=param.name, action="store_true", help=param.help)
            continue
        choices = [c for c in param.choices or () if isinstance(c, str)] or None
        kind = _from_text(param.from_text, param.flag) if param.from_text else _option_type(param)
        default, text = param.default, param.help
        other = regression.get(param.name)
        if other is not None and other is not param:  # the tasks differ: both tasks' values, each its default
            choices = list(dict.fromkeys([*(choices or ()), *(c for c in other.choices or () if isinstance(c, str))])) \
                or None
            default = None
            def said(q):
                return q.help if "(default" in q.help else f"{q.help} (default: {q.default})"

            text = f"{said(param)}; --task regression: {said(other)}"
        g.add_argument(param.flag, dest=param.name, type=kind, choices=choices, default=default,
                       metavar=param.metavar if choices is None or param.metavar else None, help=text)
    g = groups.get(CV_GROUP) or p.add_argument_group(CV_GROUP)
    g.add_argument("--key", metavar="COL", help="column keying rows for the fold hash, and with --trees for the bags' hash (default: the row's "
                        "values in the fit's columns)")
    g.add_argument("--folds", metavar="COL", help="column of your own folds 0..K-1, with --cv K (default: the fold hash of --key)")


CV_GROUP = "cross-validation (grown in the same passes as the tree)"


def _from_text(convert, flag: str):
    """``convert`` as an argparse type whose refusal is its own message: argparse words any other
    ValueError as ``invalid <function name> value``, naming a private function to the user (argparse
    names the option first, so the message's own ``flag`` goes)."""
    def option_value(text):
        try:
            return convert(text)
        except (TypeError, ValueError) as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{flag} ")) from None

    return option_value


def _option_type(param):
    """The option's text as the parameter's type: int or float for numbers, else the text itself."""
    from numbers import Integral

    from ..params import Interval

    for c in param.constraints or ():
        if isinstance(c, Interval):
            return int if c.kind is Integral else float
    return None


def learning_values(args: argparse.Namespace) -> dict:
    """The declared parameters' values the command line gave (or their defaults), by name: what
    :func:`dasktree.params.validate` takes (a runtime parameter's option is the command's to pass on)."""
    from ..params import declared_params

    from .forest import sampling_values

    out = {}
    for param in declared_params():
        if param.group is not None and param.layer != "runtime":
            value = getattr(args, param.name)
            out[param.name] = param.default if value is None else value  # None: the task's default
    return {**out, **sampling_values(args)}  # --max-features, --random-state: the forest's options, a tree's too


def _fit_options(p: argparse.ArgumentParser) -> None:
    """``dasktree fit``'s arguments and options."""
    p.add_argument("data", help="Parquet file, directory (hive partitions included), glob or fsspec URL; or the "
                                "same of CSV files (.csv, .tsv, compressed or not: see CSV input below)")
    p.add_argument("--target", required=True, help="the class column (or, --task regression, the number to predict)")
    p.add_argument("--out", required=True, help="model file to write (JSON, written atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="after every pass, save what the fit needs to continue in DIR (small nodes' grown "
                        "subtrees included); the same command run again continues from the last complete pass "
                        "(the model of the same command without --checkpoint, bit for bit; a forest's too) "
                        "(default: none)")
    p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    p.add_argument("--exclude", help="comma-separated columns to leave out (default: none)")
    p.add_argument("--nominal", help="comma-separated numeric columns to treat as nominal (default: none; "
                                     "strings, booleans and dictionaries are nominal)")
    p.add_argument("--no-cache", action="store_true",
                   help="do not keep encoded data in memory: in this process, every pass streams the data, "
                        "its codes spilled to $TMPDIR after the first pass reads Parquet; on a cluster, every "
                        "pass re-reads the Parquet files")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory a fit in this process plans against, e.g. 1GB or 512MB: data whose codes do not "
                        "fit in a quarter of it streams its pieces every pass, as --no-cache (default: this "
                        "machine's memory)")
    p.add_argument("--weight", metavar="COL",
                   help="numeric column of row weights >= 0, counted as whole rows: integers as they are, others "
                        "in fixed point; weight 0 leaves a row out (default: none: every row counts once)")
    add_verify(p)
    add_task(p)
    add_learning(p)
    add_forest(p)
    add_grid(p)
    add_csv(p)
    add_runtime(p)


def _discretize_options(p: argparse.ArgumentParser) -> None:
    """``dasktree discretize``'s arguments and options."""
    from ..discretize.jobs import DEFAULT_MAX_BINS, DISCRETIZERS

    p.add_argument("data", help="Parquet file, directory (hive partitions included), glob or fsspec URL; or "
                                "the same of CSV files")
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
                   help="fine bins of pass 0: one per distinct value up to N, else N quantile bins (mdlp, "
                        "distance and optimal refine the bins holding several classes: exact cuts either way)")
    p.add_argument("--features", help="comma-separated feature columns (default: all but the target)")
    p.add_argument("--exclude", help="comma-separated columns to leave untouched (default: none)")
    p.add_argument("--nominal", help="comma-separated numeric columns to leave untouched as nominal (default: none)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    add_csv(p)
    add_runtime(p)


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The command's parser. With ``verb``, only that verb's options are added where declaring them
    imports much (``fit``'s come from the declared parameters, ``discretize``'s from the discretizers);
    the other verbs keep their name and help, so ``dasktree --help`` is the same, and a command parses
    only its own verb: ``dasktree show`` imports neither. Without it, every verb is whole (the synopsis,
    the tests)."""
    parser = Parser(  # no option prefixes; a misspelt option names the closest
        prog="dasktree",
        description="Decision trees from partitioned Parquet or CSV, one pass over the data per level, on Dask.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"dasktree {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add = functools.partial(sub.add_parser, formatter_class=HelpFormatter)

    p = add("fit", help="learn a tree from a Parquet or CSV dataset and save it as JSON")
    if verb in (None, "fit"):
        _fit_options(p)

    p = add("predict", help="predict a Parquet or CSV dataset with a saved model")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    p.add_argument("data", help="Parquet or CSV file, directory, glob or fsspec URL")
    p.add_argument("--out", required=True, help="output directory of Parquet files (written atomically)")
    p.add_argument("--keep", help="comma-separated input columns to copy to the output, e.g. an id (default: none)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    add_csv(p)
    add_verify(p)
    add_runtime(p)

    p = add("discretize", help="discretize the numeric columns of a Parquet or CSV dataset (MDLP and "
                                          "others) from one histogram pass; write it as Parquet")
    if verb in (None, "discretize"):
        _discretize_options(p)

    p = add("show", help="print a saved model (a tree, or a forest: its summary, report or a member's tree)")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    p.add_argument("--format", choices=["text", "dot", "json", "report", "cp", "grid"], default="text",
                   help="text: the tree as indented rules; dot: graphviz; json: the model file, indented; "
                        "report: a readable summary (data, parameters, tree size, CV table); "
                        "cp: the cost-complexity table (alpha, leaves, training and CV error; a regression tree's "
                        "train_mse, cv_mse, cv_se), as rpart's printcp; "
                        "grid: a --grid fit's settings by CV accuracy. A forest file: text is its summary, "
                        "report its report (trees, out-of-bag estimate, importances), json the file; "
                        "a member's tree with --member")
    p.add_argument("--member", type=int, default=None, metavar="M",
                   help="a forest file: show its member M (0 is the first) as a tree: --format text, dot or json "
                        "(a single tree's model file) (default: the whole forest)")
    p.add_argument("--max-depth", type=int, default=None, metavar="D",
                   help="text and dot: print the tree down to depth D (the root is depth 0), saying how many "
                        "nodes are cut below it (default: all of it)")

    p = add("prune", help="prune a saved model again from its grown tree (no pass over the data)")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--alpha", type=float, metavar="A", help="cost-complexity alpha to prune at (default: none: give --alpha or --mode)")
    how.add_argument("--mode", choices=["cv", "cv-min", "pessimistic", "none"],
                     help="choose again: cv (1-SE rule), cv-min, pessimistic (C4.5), none (the grown tree); "
                          "cv and cv-min choose by the CV errors of the fit's cp table (a model fitted with --cv K; "
                          "no kept fold trees needed); a regression tree: cv, cv-min or none "
                          "(default: none: give --alpha or --mode)")
    p.add_argument("--confidence", type=float, default=0.25, metavar="CF",
                   help="with --mode pessimistic (default 0.25)")
    p.add_argument("--out", required=True, help="model file to write (JSON, atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")

    add_evaluate_parser(add, add_runtime)
    add_plot_parser(add)
    add_export_parser(add)

    p = add("warm", help="compile every kernel into numba's cache now, so that no fit pays "
                         "for it (after pip install, or in an image build)")
    p.add_argument("--no-cluster", action="store_true",
                   help="skip the fit on a Dask cluster of threads (its pass paths then compile at "
                        "the first cluster fit)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")

    p = add("demo", help="write a sample Agrawal dataset, fit a tree, print it and its accuracy")
    p.add_argument("--rows", type=int, default=200_000, help="rows of the sample dataset (at least 1)")
    p.add_argument("--files", type=int, default=8,
                   help="Parquet files it is written as, 1 to --rows (more files than rows is refused)")
    p.add_argument("--function", type=int, default=2, help="Agrawal classification function 1..10")
    p.add_argument("--max-depth", type=int, default=5, metavar="D", help="deepest level of the tree")
    p.add_argument("--dir", help="keep the sample data in DIR/agrawal (default: a temporary directory, "
                                 "removed at the end)")
    add_runtime(p)
    return parser
