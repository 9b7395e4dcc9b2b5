"""Memory flat in rows: the peak memory of the whole ``dasktree fit`` process tree at two sizes.

On Agrawal F2 (5% perturbation, 16 Parquet files), depth 10, the peak resident
memory of the command and all its processes (sampled every 20 ms,
:class:`benchmarks.harness.PeakRSS`) at N and 4N rows: as a user runs it (the
default: the encoded codes cached, in the command's own process while they fit in
a quarter of the memory) and with ``--no-cache`` (every pass streaming the
Parquet row groups in the command's process, :mod:`benchmarks.outofcore`), beside
LightGBM's one-tree script on the same files. Runs alternate; the peak is the largest over the runs, the time the median.
Two things in the streamed fit grow with these rows and stop at a bound: the row group (16 files at
both sizes, so a piece in flight holds 4x the rows at 4N) and the log2 table of the default criterion,
gain ratio (an entry per row of the root, at most ``LOG2_TABLE_MAX``, 32 MB).

Wide data in memory: a 200,000 x 300 float32 array (229 MB of values) fitted by
``DaskTreeClassifier(max_depth=8).fit(X, y)`` in a script, beside LightGBM's one tree on the same
array: the script's peak, and what the fit adds to the process as it stood with the array made
(the peak less that), each against the values' bytes.
"""

from __future__ import annotations

import statistics
import sys
import tempfile

from benchmarks import harness

NAME = "memory"
CLAIM = "Peak memory of the fit's process tree, flat in rows (with and without the cache of codes)"
DEPTH = 10
WIDE = (200_000, 300)
WIDE_SCRIPT = """
import sys, numpy as np, psutil
rows, columns = int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.standard_normal((rows, columns), dtype=np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64)
import lightgbm, dasktree, sklearn  # imported before the baseline: the libraries are not the fit's
before = psutil.Process().memory_info().rss
if sys.argv[1] == "dasktree":
    dasktree.DaskTreeClassifier(max_depth=8).fit(X, y)
else:
    params = {"objective": "binary", "max_depth": 8, "num_leaves": 256, "max_bin": 255, "learning_rate": 1.0,
              "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "num_threads": 0, "seed": 0, "verbose": -1}
    lightgbm.train(params, lightgbm.Dataset(X, y), num_boost_round=1)
print(before, X.nbytes)
"""


def _wide(repeat: int, rows: int, columns: int) -> dict:
    """The wide in-memory fit's peak (the script's process), the process before the fit, the values' bytes."""
    commands = {name: [sys.executable, "-c", WIDE_SCRIPT, name, str(rows), str(columns)]
                for name in ("dasktree", "LightGBM")}
    runs = harness.alternate(commands, repeat)
    out = {}
    for name, rs in runs.items():
        before, values = map(int, rs[0]["stdout"].split())
        out[name] = {"peak_bytes": max(r["peak_bytes"] for r in rs), "before_bytes": before, "values_bytes": values,
                     "seconds": statistics.median(r["seconds"] for r in rs)}
    return out


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
    rows, columns = (50_000, 300) if quick else WIDE
    wide = _wide(repeat, rows, columns)
    values = wide["dasktree"]["values_bytes"]
    md += ["", f"**Wide, in memory**: {rows:,} x {columns} float32 ({values / 2**20:.0f} MB of values), depth 8, "
           "one script each (MB; the fit's share: the peak less the process with the array made and the "
           "libraries imported).", "",
           "| learner | peak MB | the fit's share MB | peak / values | the fit's share / values | seconds |",
           "|---|---|---|---|---|---|"]
    for name, w in wide.items():
        added = w["peak_bytes"] - w["before_bytes"]
        md.append(f"| {name} | {w['peak_bytes'] / 2**20:.0f} | {added / 2**20:.0f} | "
                  f"{harness.ratio(w['peak_bytes'], values)} | {harness.ratio(added, values)} | {w['seconds']:.1f} |")
    d = wide["dasktree"]
    summary.append((f"wide in memory ({rows:,} x {columns} float32): peak / values' bytes, the fit's share / values' bytes",
                    f"{harness.ratio(d['peak_bytes'], values)}, {harness.ratio(d['peak_bytes'] - d['before_bytes'], values)} "
                    f"(LightGBM {harness.ratio(wide['LightGBM']['peak_bytes'], values)}, "
                    f"{harness.ratio(wide['LightGBM']['peak_bytes'] - wide['LightGBM']['before_bytes'], values)})"))
    return harness.Result(summary, "\n".join(md), {"sizes": {str(k): v for k, v in figures.items()}, "wide": wide})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
