"""Write an Agrawal et al. (1993) synthetic dataset as Parquet files.

Example::

    python benchmarks/make_agrawal.py OUT --rows 1000000 --files 16 \\
        --function 2 --perturbation 0.05 --seed 0 [--overwrite]

writes ``OUT/part-00000.parquet`` .. ``OUT/part-00015.parquet`` with
:func:`dasktree.datasets.agrawal.write_parquet` and prints the row, file and
byte counts and the time taken.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

try:
    from dasktree.datasets.agrawal import write_parquet
except ImportError:  # run from a checkout: python benchmarks/make_agrawal.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from dasktree.datasets.agrawal import write_parquet


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="make_agrawal.py",
        description=(
            "Write the Agrawal, Imielinski & Swami (1993) synthetic loan database "
            "as Parquet files part-NNNNN.parquet in a directory."
        ),
    )
    parser.add_argument(
        "out", metavar="OUT", help="output directory (created; must be empty unless --overwrite)"
    )
    parser.add_argument(
        "--rows", type=int, default=1_000_000, help="total number of rows (default: 1000000)"
    )
    parser.add_argument("--files", type=int, default=1, help="number of Parquet files (default: 1)")
    parser.add_argument(
        "--function", type=int, default=1, help="classification function, 1 to 10 (default: 1)"
    )
    parser.add_argument(
        "--perturbation",
        type=float,
        default=0.0,
        help="perturbation factor of the numeric attributes, in [0, 1] (default: 0)",
    )
    parser.add_argument("--seed", type=int, default=0, help="non-negative root seed (default: 0)")
    parser.add_argument(
        "--row-group-size",
        type=int,
        default=None,
        help="maximum rows per Parquet row group (default: pyarrow's)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a non-empty directory, replacing its part-*.parquet files",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        paths = write_parquet(
            args.out,
            args.rows,
            n_files=args.files,
            function=args.function,
            perturbation=args.perturbation,
            seed=args.seed,
            row_group_size=args.row_group_size,
            overwrite=args.overwrite,
        )
    except ValueError as error:
        parser.error(str(error))  # exits with status 2
    seconds = time.perf_counter() - start
    n_bytes = sum(os.path.getsize(path) for path in paths)
    print(
        f"wrote {args.rows:,} rows (function F{args.function}, perturbation {args.perturbation:g}, "
        f"seed {args.seed}) to {len(paths)} files in {args.out}: "
        f"{n_bytes:,} bytes ({n_bytes / 2**20:.1f} MiB) in {seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
