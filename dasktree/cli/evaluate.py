"""The ``dasktree evaluate`` and ``dasktree plot`` verbs: their options and what they run.

``evaluate MODEL DATA --target COL`` scores a saved model (a tree or a forest) on a labelled
dataset on the workers (:mod:`dasktree.engine.evaluate`); ``plot MODEL --out FILE``
draws the tree (a forest's member ``--member M``), or with ``--cv`` the cross-validation results
(:mod:`dasktree.model.plot`).
"""

from __future__ import annotations

from .say import progress, say

__all__ = ["add_evaluate_parser", "add_plot_parser", "cmd_evaluate", "cmd_plot"]


def add_evaluate_parser(add, add_runtime) -> None:
    """``add``: the subparsers' ``add_parser``; ``add_runtime`` adds --scheduler, --quiet, --json."""
    p = add("evaluate", help="score a saved model on a labelled Parquet or CSV dataset: per-class precision, recall, "
                             "F1, balanced accuracy, log-loss, ROC AUC (two classes)")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit' (a tree or a forest)")
    p.add_argument("data", help="Parquet or CSV file, directory, glob or fsspec URL with the class column")
    p.add_argument("--target", help="the class column (default: the model's target column)")
    p.add_argument("--weight", metavar="COL",
                   help="numeric column of row weights: each row counts its weight in every metric (default: none)")
    from .csv_options import add_csv

    add_csv(p)
    add_runtime(p)


def add_plot_parser(add) -> None:
    p = add("plot", help="draw a saved model's tree, or its cross-validation results, to an SVG, PNG or PDF file")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit'")
    p.add_argument("--out", required=True, help="image file to write: .svg, .png or .pdf (written atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--cv", action="store_true",
                   help="plot the CV accuracy per fold and, when the model was pruned, the CV error against "
                        "tree size with the 1-SE line (rpart's plotcp; a regression tree: MSE per fold and the CV "
                        "MSE against alpha and leaves); default: the tree")
    p.add_argument("--grid", action="store_true",
                   help="plot a --grid fit's settings by CV accuracy (each split, mean +/- std, the chosen one)")
    p.add_argument("--max-depth", type=int, default=None, metavar="D",
                   help="draw the tree down to depth D (default: all of it)")
    p.add_argument("--member", type=int, default=None, metavar="M",
                   help="a forest file: draw its member M's tree, 0 the first (default: a tree file's tree; a forest "
                        "has no single tree and needs it)")
    p.add_argument("--engine", choices=["auto", "graphviz", "matplotlib"], default="auto",
                   help="auto: graphviz's dot where installed, else matplotlib")


def cmd_evaluate(args) -> dict:
    from ..engine.evaluate import evaluate_dataset
    from ..model.metrics import format_metrics
    from .forest import load_model_or_forest

    model = load_model_or_forest(args.model)  # a tree, or a forest (its rows grouped by their probabilities)
    target = args.target or model.target
    metrics = evaluate_dataset(model, args.data, target, scheduler=args.scheduler, weight=args.weight,
                               progress=progress(args))
    text = format_metrics(metrics)
    if metrics.get("rows_skipped_null_target"):
        text += f"{'skipped (no label)':>20} {metrics['rows_skipped_null_target']}\n"
    say(args, text.rstrip("\n"))
    return {"model": args.model, "data": args.data, "target": target, "weight": args.weight, "metrics": metrics}


def cmd_plot(args) -> None:
    from ..errors import ParameterError
    from ..io.outputs import check_file_out
    from ..model.plot import plot_cv, plot_tree
    from .forest import load_model_or_forest, member_or_tree

    check_file_out(args.out, overwrite=args.overwrite)  # an existing image is replaced only when asked
    model = load_model_or_forest(args.model)
    if args.member is not None and (args.cv or args.grid):
        raise ParameterError(f"--member {args.member}: a forest's members have no {'--cv' if args.cv else '--grid'} "
                             "results (they are grown in full); plot the member's tree")
    model = member_or_tree(args, model, "plot")  # a forest's member (--member M) is a tree
    if args.grid:
        from ..model.plot_grid import plot_grid

        plot_grid(model, args.out)
    elif args.cv:
        plot_cv(model, args.out)
    else:
        plot_tree(model, args.out, max_depth=args.max_depth, engine=args.engine)
    print(f"wrote {args.out}")
    return None
