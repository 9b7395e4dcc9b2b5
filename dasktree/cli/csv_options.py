"""The CSV options of the verbs that read a dataset (fit, predict, evaluate, discretize)."""

from __future__ import annotations

import argparse

__all__ = ["add_csv", "csv_data"]


def add_csv(p: argparse.ArgumentParser) -> None:
    """``--csv-types``, ``--csv-delimiter``, ``--csv-no-header``, ``--csv-names``: any of them reads the
    data as CSV, whatever its files' endings (``*.csv`` / ``*.tsv`` files, compressed or not, are read as
    CSV without them)."""
    g = p.add_argument_group("CSV input (files ending .csv or .tsv, compressed or not, are CSV without these)")
    g.add_argument("--csv-types", metavar="COL=TYPE,...",
                   help="column types instead of inference from the first 4 MB of the first file, e.g. "
                        "zip=string,amount=float64 (pyarrow's names: int64, float64, string, bool, date32, "
                        "timestamp[s]) (default: inferred)")
    g.add_argument("--csv-delimiter", metavar="C",
                   help="the field delimiter, one character; 'tab' or '\\t' for a tab (default: ',', a tab for .tsv)")
    g.add_argument("--csv-no-header", action="store_true",
                   help="the files have no header row: columns are --csv-names, else f0, f1, ...")
    g.add_argument("--csv-names", metavar="A,B,...",
                   help="the columns' names (replacing the header's, if any) (default: the header's)")


def csv_data(args: argparse.Namespace):
    """``args.data``, as a :class:`~dasktree.io.csv_source.CSV` when a CSV option is given."""
    types, delimiter = getattr(args, "csv_types", None), getattr(args, "csv_delimiter", None)
    no_header, names = getattr(args, "csv_no_header", False), getattr(args, "csv_names", None)
    if types is None and delimiter is None and not no_header and names is None:
        return args.data
    from ..io.csv_source import CSV, parse_types

    if delimiter in ("tab", "\\t"):
        delimiter = "\t"
    return CSV(args.data, types=parse_types(types), delimiter=delimiter, header=not no_header,
               names=[n for n in names.split(",") if n] if names is not None else None)
