"""A/B of two commits: the same fit, each in a fresh process, alternated between a base and this checkout.

The machines these benchmarks run on are shared and drift by 10-30% within an
hour, so two separate runs of ``bench_cv.py`` cannot show a change of that size.
This script checks the base commit out into a temporary ``git worktree``, then
for each dataset runs ``bench_cv.py --measure KIND`` (a fresh 2-process
LocalCluster per fit, as there) alternately from the base and from this
checkout, and reports each side's median and the ratio this / base.

Usage: python benchmarks/bench_ab.py --base COMMIT [--functions F7] [--sizes 1000000 4000000]
       [--measure forest] [--pairs 3] [--name ab]
Writes benchmarks/results/<name>.json and <name>.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_core import ensure_data, run_child  # noqa: E402
from bench_cv import FUNCTIONS  # noqa: E402
from results_io import write_results  # noqa: E402


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--functions", nargs="+", default=["F7"], help="bench_cv.py labels' first words")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--measure", choices=["plain", "forest"], default="forest")
    parser.add_argument("--pairs", type=int, default=3, help="fits of each side per dataset, alternated")
    parser.add_argument("--name", default="ab", help="results file stem in benchmarks/results/")
    args = parser.parse_args()

    base = _git("rev-parse", "--short", args.base)
    head = _git("rev-parse", "--short", "HEAD") + ("+changes" if _git("status", "--porcelain", "dasktree") else "")
    labels = [label for label in FUNCTIONS if label.split()[0] in args.functions]
    rows, data = [], {"base": base, "head": head, "measure": args.measure, "results": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "base")
        _git("worktree", "add", "--detach", tree, base)
        try:
            scripts = {"base": os.path.join(tree, "benchmarks", "bench_cv.py"), "head": os.path.join(HERE, "bench_cv.py")}
            for label in labels:
                function, perturbation = FUNCTIONS[label]
                for size in args.sizes:
                    path = ensure_data(size, args.files, function, perturbation)
                    runs = {"base": [], "head": []}
                    for _ in range(args.pairs):
                        for side in ("base", "head"):
                            runs[side].append(run_child(scripts[side], args.measure, path)["seconds"])
                    medians = {side: statistics.median(r) for side, r in runs.items()}
                    ratio = medians["head"] / medians["base"]
                    key = f"{label} {size:,}"
                    data["results"][key] = {"runs": runs, "medians": medians, "ratio": ratio}
                    print(key, {s: [round(x, 2) for x in r] for s, r in runs.items()}, f"ratio {ratio:.2f}", flush=True)
                    rows.append(f"| {key} | {', '.join(f'{x:.2f}' for x in runs['base'])} | "
                                f"{', '.join(f'{x:.2f}' for x in runs['head'])} | {ratio:.2f} |")
        finally:
            _git("worktree", "remove", "--force", tree)
    text = (f"# A/B: `{head}` against `{base}`\n\n{args.measure} fit seconds, each in a fresh process and 2-process "
            f"LocalCluster, alternated base / this; ratio = median this / median base.\n\n"
            f"| data | `{base}` | `{head}` | ratio |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")
    write_results(args.name, text, data)


if __name__ == "__main__":
    main()
