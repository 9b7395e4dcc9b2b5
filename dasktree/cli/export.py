"""The ``dasktree export`` verb: a saved model as SQL, ONNX or PMML (:mod:`dasktree.export`).

``export MODEL --format sql|onnx|pmml --out FILE`` writes the export (of a tree, or of a forest:
:mod:`dasktree.export.forest_sql`, ``forest_onnx``, ``forest_pmml``) whole or not at all; an
existing ``--out`` is refused (exit 1) unless ``--overwrite``. What a format cannot express is
refused with one line before anything is written.
"""

from __future__ import annotations

import sys

from ..errors import ParameterError

__all__ = ["add_export_parser", "cmd_export"]

SQL_ONLY = ("dialect", "table", "keep", "types_from", "shape")


def add_export_parser(add) -> None:
    """``add``: the subparsers' ``add_parser``."""
    p = add("export", help="write a saved model as SQL (a CASE per output), ONNX (ai.onnx.ml TreeEnsemble) "
                           "or PMML 4.4 (TreeModel), each predicting exactly as 'dasktree predict'; a forest's: "
                           "its members' averaged (SQL: their CASEs; ONNX: a TreeEnsemble each; PMML: a MiningModel)")
    p.add_argument("model", help="model file (JSON) written by 'dasktree fit' (a tree or a forest)")
    p.add_argument("--format", required=True, choices=["sql", "onnx", "pmml"],
                   help="sql: a SELECT with the prediction and proba_<class> columns (a regression model: the "
                        "prediction, a double); onnx: a graph taking one double tensor [N, features] (nominal "
                        "features as category codes, see the guide's exports page, docs/guide/exports.md); pmml: a PMML 4.4 TreeModel")
    p.add_argument("--out", required=True, help="file to write (atomically)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    g = p.add_argument_group("sql")
    g.add_argument("--dialect", choices=["ansi", "duckdb", "postgres", "sqlite"], default=None,
                   help="where SQL dialects differ: NaN (duckdb, postgres test it; sqlite and ansi have NULL only) "
                        "and the double type (default: ansi)")
    g.add_argument("--table", default=None, help="what the SELECT reads FROM, written as given (default: data)")
    g.add_argument("--keep", default=None,
                   help="comma-separated input columns selected beside the outputs (default: all, *)")
    g.add_argument("--shape", choices=["nested", "flat"], default=None,
                   help="nested: a CASE per node (a row tested along its path); flat: one WHEN per leaf with its "
                        "path's conditions (no nesting: SQLite's parser overflows on ~25 nested CASE) "
                        "(default: flat for sqlite, else nested)")
    g.add_argument("--types-from", default=None, metavar="DATA",
                   help="a Parquet file or dataset with the columns' types where the SQL runs: date and timestamp "
                        "columns are then compared with DATE / TIMESTAMP literals (default: every numeric column "
                        "compared as a number: dates as days, timestamps as their unit since 1970)")
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON report on stdout")


def cmd_export(args) -> dict:
    from ..export import write_export
    from .forest import load_model_or_forest

    options = {name: getattr(args, name) for name in SQL_ONLY if getattr(args, name) is not None}
    if args.format != "sql" and options:
        given = ", ".join(f"--{name.replace('_', '-')}" for name in options)
        raise ParameterError(f"{given}: only for --format sql, not {args.format}")
    if "keep" in options:
        options["keep"] = [c for c in options["keep"].split(",") if c]
    if "types_from" in options:
        from ..export.sql_types import schema_of

        options["types"] = schema_of(options.pop("types_from"))
    model = load_model_or_forest(args.model)  # a tree's file, or a forest's (its members' exports combined)
    data = write_export(model, args.format, args.out, overwrite=args.overwrite, **options)
    line = f"wrote {args.format} export of {args.model} to {args.out} ({len(data)} {'bytes' if isinstance(data, bytes) else 'characters'})"
    print(line, file=sys.stderr if args.json else sys.stdout)
    options.pop("types", None)
    return {"model": args.model, "format": args.format, "out": args.out, **options}
