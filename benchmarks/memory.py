"""Memory flat in rows: the peak memory of the whole ``dasktree fit`` process tree at two sizes.

On Agrawal F2 (5% perturbation, 16 Parquet files), depth 10, the peak resident
memory of the command and all its processes (sampled every 20 ms,
:class:`benchmarks.harness.PeakRSS`) at N and 4N rows: as a user runs it (the
default: the encoded codes cached, in the command's own process while they fit in
a quarter of the memory) and with ``--no-cache`` (every pass streaming the
Parquet row groups in the command's process, :mod:`benchmarks.outofcore`), beside
LightGBM's one-tree script on the same files. Runs alternate; the peak is the largest over the runs, the time the median.
"""

from __future__ import annotations

import statistics
import sys
import tempfile

from benchmarks import harness

NAME = "memory"
CLAIM = "Peak memory of the fit's process tree, flat in rows (with and without the cache of codes)"
DEPTH = 10


def run(quick: bool) -> harness.Result:
    sizes, repeat = ((250_000, 1_000_000), 1) if quick else ((1_000_000, 4_000_000), 2)
    out = f"{tempfile.mkdtemp(prefix='dasktree-bench-')}/model.json"
    figures = {}
    for rows in sizes:
        path = harness.agrawal(rows)
        fit = harness.dasktree_command("fit", path, "--target", "class", "--out", out, "--overwrite",
                                       "--max-depth", str(DEPTH),
                                       "--quiet")
        if rows == sizes[0]:
            harness.run_process(fit)  # not kept: numba's cache of compiled kernels
        runs = harness.alternate({"dasktree fit": fit, "dasktree fit --no-cache": [*fit, "--no-cache"],
                                  "LightGBM one-tree script": harness.job("lightgbm", path, DEPTH)}, repeat)
        figures[rows] = {name: {"peak_bytes": max(r["peak_bytes"] for r in rs),
                                "seconds": statistics.median(r["seconds"] for r in rs)} for name, rs in runs.items()}
    small, large = sizes
    names = list(figures[small])
    md = [f"Agrawal F2, 5% perturbation, 16 Parquet files, depth {DEPTH}, 2 cores (the machine shared with other "
          f"work). Peak resident memory of each process tree (MB; the largest of {repeat} runs) and its whole-process "
          "seconds (median).", "",
          "| command | " + " | ".join(f"{rows:,} rows MB (s)" for rows in sizes) + f" | {large:,} / {small:,} |",
          "|---|" + "---|" * (len(sizes) + 1)]
    summary = []
    for name in names:
        cells = [f"{figures[rows][name]['peak_bytes'] / 2**20:.0f} ({figures[rows][name]['seconds']:.1f})"
                 for rows in sizes]
        growth = harness.ratio(figures[large][name]["peak_bytes"], figures[small][name]["peak_bytes"])
        md.append(f"| `{name}` | " + " | ".join(cells) + f" | {growth} |")
        if name.startswith("dasktree"):
            summary.append((f"peak memory of `{name}`'s process tree, {large:,} / {small:,} rows "
                            f"(MB at {large:,})",
                            f"{growth} ({figures[large][name]['peak_bytes'] / 2**20:.0f} MB)"))
    lgb = figures[large]["LightGBM one-tree script"]["peak_bytes"]
    summary.append((f"peak memory at {large:,} rows, `dasktree fit` / LightGBM one-tree script",
                    harness.ratio(figures[large]["dasktree fit"]["peak_bytes"], lgb)))
    return harness.Result(summary, "\n".join(md), {"sizes": {str(k): v for k, v in figures.items()}})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
