"""``python -m benchmarks [--quick] [NAME ...]``: regenerate every claim's figures and results/RESULTS.md."""

from __future__ import annotations

import argparse
import importlib
import os

from . import CLAIMS
from .harness import RESULTS, stamp, stamp_text, write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="claims to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run (not for the README)")
    args = parser.parse_args()
    names = args.names or CLAIMS
    rows = []
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== {name}: {module.CLAIM}", flush=True)
        result = module.run(quick=args.quick)
        write(module.NAME, module.CLAIM, result)
        rows += [(module.NAME, what, measured) for what, measured in result.summary]
    if args.names:
        return  # a partial run leaves RESULTS.md to the whole one
    lines = ["# dasktree benchmark results", "", stamp_text(stamp()), "| claim | what | measured |",
             "| --- | --- | --- |"]
    lines += [f"| [{name}]({name}.md) | {what} | {measured} |" for name, what, measured in rows]
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
