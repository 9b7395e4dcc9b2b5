"""A/B of two commits: the same ``dasktree`` command, each a whole process, alternated base / this checkout.

The machines drift by 10-30% within an hour, so two separate benchmark runs
cannot show a change of that size. This developer tool checks the base commit out
into a temporary ``git worktree`` and runs ``python -m dasktree.cli ARGS`` with
``PYTHONPATH`` set to the base, then to this checkout, alternately (a warm-up
round first, not kept: numba fills each side's cache of compiled kernels), and
prints each side's median wall seconds, peak memory of the process tree, and the
ratio this / base. Nothing is written to ``benchmarks/results/``.

Usage::

    python benchmarks/dev/ab.py --base COMMIT [--pairs 3] -- fit DATA --target class --out /tmp/m.json --max-depth 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)

from benchmarks.harness import alternate  # noqa: E402


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--pairs", type=int, default=3, help="alternated runs of each side (medians reported)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the dasktree arguments")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the dasktree command after --")
    with tempfile.TemporaryDirectory(prefix="dasktree-ab-") as base_tree:
        _git("worktree", "add", "--detach", base_tree, args.base)
        try:
            argv = [sys.executable, "-m", "dasktree.cli", *command]
            sides = {"base": base_tree, "this": ROOT}
            runs = {}
            for _ in range(args.pairs + 1):  # the first round warms both sides, not kept
                for name, tree in sides.items():
                    r = alternate({name: argv}, 1, env={"PYTHONPATH": tree})[name][0]
                    runs.setdefault(name, []).append(r)
        finally:
            _git("worktree", "remove", "--force", base_tree)
    medians = {name: statistics.median(r["seconds"] for r in rs[1:]) for name, rs in runs.items()}
    peaks = {name: max(r["peak_bytes"] for r in rs[1:]) for name, rs in runs.items()}
    for name in sides:
        print(f"{name:5s} {medians[name]:.3f} s (runs {[round(r['seconds'], 3) for r in runs[name][1:]]}), "
              f"peak {peaks[name] / 2**20:.0f} MB")
    print(f"this / base: {medians['this'] / medians['base']:.3f}x time, {peaks['this'] / peaks['base']:.3f}x peak")


if __name__ == "__main__":
    main()
