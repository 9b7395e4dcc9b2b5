"""CSV input: out of core as Parquet is, the same model, and what a pass over CSV costs beside Parquet.

The Agrawal F2 rows of :mod:`benchmarks.outofcore` (62,500-row files) at N and 10N
rows, written once more as CSV files and as gzipped CSV files (the same rows, file
for file). In this process, alternating the three formats: the seconds to open the
dataset (Parquet: its footers; CSV: the scan that finds every file's records,
:mod:`dasktree.io.csv_scan`) and the seconds of one *read pass*, every part of the
fit's columns read as the streamed runner reads them (a part per thread, on a
thread per core), which is what pass 0 and the first level pass of an out-of-core
fit cost. Then ``dasktree fit --no-cache`` on each format, as whole processes
(alternated): the peak resident memory of the process tree and the wall time, and
whether the three models are the same bytes.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

from benchmarks import harness

NAME = "csv_input"
CLAIM = "CSV input: out of core as Parquet (peak flat in rows, the same model), a CSV read pass beside Parquet's"
DEPTH = 10
FILE_ROWS = 62_500
FORMATS = ("parquet", "csv", "csv.gz")


def as_csv(parquet_dir: str, compressed: bool) -> str:
    """The Parquet directory's files as CSV files (``.csv`` or ``.csv.gz``), written once beside it."""
    import gzip

    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    ending = ".csv.gz" if compressed else ".csv"
    path = parquet_dir + ("-csvgz" if compressed else "-csv")
    names = sorted(f for f in os.listdir(parquet_dir) if f.endswith(".parquet"))
    if os.path.isdir(path) and len(os.listdir(path)) == len(names):
        return path
    os.makedirs(path, exist_ok=True)
    for name in names:
        table = pq.read_table(os.path.join(parquet_dir, name))
        target = os.path.join(path, name[:-len(".parquet")] + ending)
        if compressed:
            with gzip.open(target, "wb", compresslevel=6) as f:
                pcsv.write_csv(table, f)
        else:
            pcsv.write_csv(table, target)
    return path


def read_pass(path: str, target: str) -> dict:
    """Seconds to open ``path`` and to read every part of the fit's columns on a thread per core."""
    from concurrent.futures import ThreadPoolExecutor

    from dasktree.engine.local_runner import cores
    from dasktree.engine.stream_runner import pieces_of
    from dasktree.io.schema import resolve_roles
    from dasktree.io.sources import open_source

    started = time.perf_counter()
    source, target = open_source(path, target=target)
    opened = time.perf_counter() - started
    roles = resolve_roles(source.schema, target)
    pieces = pieces_of(source)
    started = time.perf_counter()
    with ThreadPoolExecutor(cores()) as pool:
        rows = sum(t.num_rows for t in pool.map(lambda p: source.read(p, roles.columns), pieces))
    return {"open_seconds": opened, "read_seconds": time.perf_counter() - started, "rows": rows,
            "stored_bytes": source.bytes_of(roles.columns)}


def _measure(rows: int, repeat: int, out: str) -> dict:
    parquet = harness.agrawal(rows, files=rows // FILE_ROWS)
    paths = {"parquet": parquet, "csv": as_csv(parquet, False), "csv.gz": as_csv(parquet, True)}
    read_pass(paths["csv"], "class")  # not kept: numba's cache of the scan, the page cache
    reads: dict[str, list[dict]] = {f: [] for f in FORMATS}
    for _ in range(repeat):
        for f in FORMATS:
            reads[f].append(read_pass(paths[f], "class"))
    figures: dict = {f: {"open_seconds": statistics.median(r["open_seconds"] for r in reads[f]),
                         "read_seconds": statistics.median(r["read_seconds"] for r in reads[f]),
                         "stored_bytes": reads[f][0]["stored_bytes"]} for f in FORMATS}
    commands = {f: harness.dasktree_command("fit", paths[f], "--target", "class", "--out", f"{out}-{f}.json",
                                            "--overwrite", "--max-depth", str(DEPTH), "--quiet", "--no-cache")
                for f in FORMATS}
    runs = harness.alternate(commands, repeat)
    import dasktree

    dumps = {f: dasktree.load(f"{out}-{f}.json").model_.dumps() for f in FORMATS}
    for f in FORMATS:
        figures[f]["fit_peak_bytes"] = max(r["peak_bytes"] for r in runs[f])
        figures[f]["fit_seconds"] = statistics.median(r["seconds"] for r in runs[f])
        figures[f]["same_model_as_parquet"] = dumps[f] == dumps["parquet"]
    return figures


def run(quick: bool) -> harness.Result:
    sizes = (100_000, 1_000_000) if quick else (1_000_000, 10_000_000)
    repeat = 2 if quick else 3
    out = os.path.join(tempfile.mkdtemp(prefix="dasktree-bench-"), "model")
    figures = {rows: _measure(rows, repeat, out) for rows in sizes}
    small, large = sizes
    md = [f"Agrawal F2 in 62,500-row files, as Parquet, CSV and gzipped CSV (the same rows file for file). "
          f"Open and read-pass seconds: medians of {repeat} alternated runs in one process (a read pass: every "
          "piece of the fit's columns read as the out-of-core runner reads them, a thread per core). `dasktree "
          f"fit --no-cache --max-depth {DEPTH}`: whole-process peak (MB, the largest of the runs) and seconds "
          "(median), alternated. 2 cores, the machine shared with other work.", ""]
    for rows in sizes:
        f = figures[rows]
        md += [f"**{rows:,} rows**", "",
               "| format | stored MB | open s | read pass s | read pass / Parquet's | fit --no-cache MB (s) | "
               "same model as Parquet |", "|---|---|---|---|---|---|---|"]
        for name in FORMATS:
            g = f[name]
            md.append(f"| {name} | {g['stored_bytes'] / 2**20:.0f} | {g['open_seconds']:.2f} | "
                      f"{g['read_seconds']:.2f} | {harness.ratio(g['read_seconds'], f['parquet']['read_seconds'])} | "
                      f"{g['fit_peak_bytes'] / 2**20:.0f} ({g['fit_seconds']:.1f}) | "
                      f"{'yes' if g['same_model_as_parquet'] else 'NO'} |")
        md.append("")
    big = figures[large]
    summary = [
        (f"a read pass over CSV / over Parquet, {large:,} rows (seconds of Parquet's)",
         f"{harness.ratio(big['csv']['read_seconds'], big['parquet']['read_seconds'])} "
         f"({big['parquet']['read_seconds']:.2f} s); gzipped CSV "
         f"{harness.ratio(big['csv.gz']['read_seconds'], big['parquet']['read_seconds'])}"),
        (f"opening CSV (the record scan) / a CSV read pass, {large:,} rows",
         harness.ratio(big["csv"]["open_seconds"], big["csv"]["read_seconds"])),
        (f"streamed CSV fit: peak {large:,} / {small:,} rows (MB at {large:,}); time / Parquet's",
         f"{harness.ratio(big['csv']['fit_peak_bytes'], figures[small]['csv']['fit_peak_bytes'])} "
         f"({big['csv']['fit_peak_bytes'] / 2**20:.0f} MB); "
         f"{harness.ratio(big['csv']['fit_seconds'], big['parquet']['fit_seconds'])}"),
        ("the same model bytes from CSV, gzipped CSV and Parquet",
         "yes" if all(figures[r][f]["same_model_as_parquet"] for r in sizes for f in FORMATS) else "NO"),
    ]
    return harness.Result(summary, "\n".join(md), {str(r): v for r, v in figures.items()})


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
