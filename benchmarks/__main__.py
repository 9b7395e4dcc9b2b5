"""``python -m benchmarks [--quick] [NAME ...]``: regenerate the claims' figures, then results/RESULTS.md.

RESULTS.md gathers the summary rows of every claim's latest ``results/NAME.json``,
each with the date it was measured, so that a claim run alone updates it too.
"""

from __future__ import annotations

import argparse
import importlib

from . import CLAIMS
from .harness import gather, write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="claims to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run (not for the README)")
    args = parser.parse_args()
    for name in args.names or CLAIMS:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== {name}: {module.CLAIM}", flush=True)
        write(module.NAME, module.CLAIM, module.run(quick=args.quick), quick=args.quick)
        gather()


if __name__ == "__main__":
    main()
