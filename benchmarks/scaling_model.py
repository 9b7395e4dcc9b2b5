"""The scaling claim's tables and its model of a level pass, from the figures :mod:`benchmarks.scaling` measured.

The model of one level pass of a cached fit (holders) on ``W`` workers, level ``d``::

    T(d, W) = client(d) + passes(d) * (count(d) + exchange(d) + search(d) + fixed(W))

- ``client(d) = c_client * F(d)``: the client's own work per frontier node (plans, search
  chunks, applying the results), measured as the CPU of its thread that runs the grow loop;
- ``count(d) = c_row * v * R / W * A + c_cell * H(d) / cell``: counting a worker's share of the
  ``R`` rows' ``A`` attributes, each row once per distinct node of the level it reaches (``v`` of
  them, at most the number of trees), and zeroing and filling (derived slots) its histogram's cells;
- ``exchange(d) = H(d) * (W - 1) / W / B``: the reduce-scatter, each holder receiving its
  chunk's cells of every peer's histogram (``H`` bytes of one worker's histogram, ``B`` the
  bandwidth into a worker);
- ``search(d) = (c_search / W + c_sum) * H(d) / cell``: the split search per cell, chunks in
  parallel, and each chunk summing its cells of the W histograms;
- ``fixed(W)``: an empty pass (the client's calls on the holders, the scheduler passing them
  on, the peers' messages): here the larger of a line in W and every process's CPU on the
  cores; on a cluster of machines the client's and scheduler's serial CPU and one holder's;
- ``passes(d)``: the node groups a level needs under ``max_histogram_mb`` (256 MB).

On this machine every worker shares 2 cores: ``W`` above becomes ``min(W, 2)`` for the CPU
terms. Inputs are measured on 1, 2 and 4 workers; the 8 and 16 worker points are predicted.
"""

from __future__ import annotations

import math
import statistics

from benchmarks import harness

CORES = 2  # this machine's
BUDGET = 256 * 2**20  # max_histogram_mb's default, against 8-byte cells (Forest.node_bytes)
TARGET = {"rows": 1_000_000_000, "attributes": 50, "bins": 255, "depth": 12, "workers": 100,
          "bandwidth": 1.25e9}  # 10 Gb/s into each worker: an assumption, not measured here


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f}"


def _line(points: dict[int, float]) -> tuple[float, float]:
    """Least squares ``a + b * W`` through ``points`` (W -> seconds)."""
    xs, ys = list(points), list(points.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(1e-12, sum((x - mx) ** 2 for x in xs))
    return my - b * mx, b


def fixed_costs(empty: dict, idle: dict, known: list[int], parts: int) -> dict:
    """The empty pass (holders, ``parts`` parts) on the ``known`` worker counts: lines ``a + b * W`` of
    its least wall seconds, of the CPU of every process (client, scheduler, workers, idle taken off)
    and of the client's and scheduler's alone (serial: they do not spread over the workers), and
    a holder's own CPU (the workers' over their number, at the most workers known)."""
    def cpu(w: int, *who: str) -> float:
        r = empty[(w, parts, "holders")]
        idle_part = {"client_cpu": 0.0, "scheduler_cpu": idle[w][1], "workers_cpu": idle[w][2]}
        return sum(r[k] - idle_part[k] * r["seconds"] for k in who)

    every = ("client_cpu", "scheduler_cpu", "workers_cpu")
    return {"wall": _line({w: empty[(w, parts, "holders")]["least"] for w in known}),
            "cpu": _line({w: cpu(w, *every) for w in known}),
            "serial": _line({w: cpu(w, "client_cpu", "scheduler_cpu") for w in known}),
            "holder": cpu(max(known), "workers_cpu") / max(known)}


def fixed_here(fixed: dict, w: int) -> float:
    """An empty pass on ``w`` workers of this machine: the wall line, or every process's CPU on its cores."""
    (a, b), (c, d) = fixed["wall"], fixed["cpu"]
    return max(a + b * w, (c + d * w) / min(w, CORES))


def fixed_target(fixed: dict, w: int) -> float:
    """An empty pass on ``w`` machines: the client's and scheduler's serial CPU, and one holder's."""
    a, b = fixed["serial"]
    return a + b * w + fixed["holder"]


def _inputs(fits: dict, known: list[int]) -> dict:
    """Per level: the model's costs measured on the ``known`` worker counts (medians over them)."""
    first = fits[known[0]]
    per_level = []
    for d, level in enumerate(first["levels"]):
        rows = [fits[w]["levels"][d] for w in known]
        cells = [r["hist_bytes"] / r["workers"] / r["cell_bytes"] for r in rows]
        per_level.append({
            "frontier": level["frontier"],
            "rows": level["rows"],
            "hist_one": statistics.median(r["hist_bytes"] / r["workers"] for r in rows),
            "cell_bytes": level["cell_bytes"],
            "search_cpu": statistics.median(r["search_cpu_s"] for r in rows),
            "search_per_cell": statistics.median(r["search_cpu_s"] / c for r, c in zip(rows, cells)),
            "client": statistics.median(r["client_cpu_s"] for r in rows),
        })
    # counting = c_row * rows reaching a node * attributes + c_cell * cells of every worker's histogram
    # (zeroing it, filling the derived slots). c_row from the root's pass (one node, a histogram of a few
    # cells); c_cell from the levels after it: per level a line in W through the known worker counts,
    # whose slope is the cost of the W histograms' cells
    c_row = statistics.median(fits[w]["levels"][0]["count_cpu_s"] / (first["rows"] * first["attributes"])
                              for w in known)
    lines = [_line({w: fits[w]["levels"][d]["count_cpu_s"] for w in known}) for d in range(1, len(first["levels"]))]
    level_cells = [lv["hist_bytes"] / lv["workers"] / lv["cell_bytes"] for lv in first["levels"][1:]]
    c_cell = max(0.0, sum(b for _, b in lines) / sum(level_cells))
    # searching = cells * (c_search + c_sum * W): every chunk sums its cells of the W workers' histograms
    lines = [_line({w: fits[w]["levels"][d]["search_cpu_s"] for w in known}) for d in range(1, len(first["levels"]))]
    c_search = max(0.0, sum(a for a, _ in lines) / sum(level_cells))
    c_sum = max(0.0, sum(b for _, b in lines) / sum(level_cells))
    served = sum(level["served_bytes"] for w in known for level in fits[w]["levels"] if w > 1)
    fetching = sum(level["fetch_s"] / min(w, CORES) for w in known for level in fits[w]["levels"] if w > 1)
    return {"levels": per_level, "bandwidth": served / max(fetching, 1e-9), "rows": first["rows"],
            "attributes": first["attributes"], "total_bins": first["total_bins"], "c_row": c_row, "c_cell": c_cell,
            "c_search": c_search, "c_sum": c_sum,
            "sharing": max(lv["frontier"] / 2 ** d for d, lv in enumerate(per_level)),
            "visits": max(lv["rows"] / first["rows"] for lv in per_level)}


def _here(inputs: dict, fixed: dict, w: int) -> dict:
    """The fit's level passes (after the first) on ``w`` workers of this machine, predicted: bytes
    exchanged, counting and search CPU, and wall seconds (the CPU on ``min(w, 2)`` cores)."""
    cpu = min(w, CORES)
    out = {"exchanged": 0.0, "count_cpu": 0.0, "search_cpu": 0.0, "seconds": 0.0}
    for level in inputs["levels"][1:]:
        exchanged = (w - 1) * level["hist_one"]
        count = (inputs["c_row"] * level["rows"] * inputs["attributes"]
                 + inputs["c_cell"] * w * level["hist_one"] / level["cell_bytes"])
        search = level["hist_one"] / level["cell_bytes"] * (inputs["c_search"] + inputs["c_sum"] * w)
        out["exchanged"] += exchanged
        out["count_cpu"] += count
        out["search_cpu"] += search
        out["seconds"] += (level["client"] + (count + search + exchanged / inputs["bandwidth"]) / cpu
                           + fixed_here(fixed, w))
    return out


def _measured(fit: dict) -> dict:
    """What :func:`_here` predicts, as measured (levels after the first)."""
    levels = fit["levels"][1:]
    return {"exchanged": sum(lv["served_bytes"] for lv in levels), "count_cpu": sum(lv["count_cpu_s"] for lv in levels),
            "search_cpu": sum(lv["search_cpu_s"] for lv in levels), "seconds": sum(lv["seconds"] for lv in levels)}


def _target(inputs: dict, fixed: dict) -> list[dict]:
    """The model's levels of ``TARGET``'s fit: full trees, fold trees sharing nodes as measured."""
    t = TARGET
    w, rows_per_worker = t["workers"], t["rows"] / t["workers"]
    bins = t["attributes"] * t["bins"]
    deepest = inputs["levels"][-1]
    ratios = [lv["frontier"] / 2 ** d for d, lv in enumerate(inputs["levels"])]
    widest = ratios.index(max(ratios))
    node_bin = deepest["hist_one"] / (deepest["frontier"] * inputs["total_bins"]) * 4 / deepest["cell_bytes"]
    out = []
    for d in range(t["depth"]):
        measured = inputs["levels"][min(d, len(inputs["levels"]) - 1)]
        frontier = 2 ** d * ratios[min(d, widest)]  # the fold trees part from the main tree as measured, then keep so
        hist = frontier * bins * node_bin  # int32: every node of these depths has over 65,536 rows
        passes = max(1, math.ceil(2 * hist / BUDGET))
        count_rows = inputs["c_row"] * inputs["visits"] * rows_per_worker * t["attributes"]  # a pass's
        parts = {
            "count": passes * count_rows + inputs["c_cell"] * hist / 4,
            "exchange": hist * (w - 1) / w / t["bandwidth"],
            "search": hist / 4 * (inputs["c_search"] / w + inputs["c_sum"]),
            "fixed": passes * fixed_target(fixed, w),
            "client": measured["client"] / measured["frontier"] * frontier,
        }
        out.append({"level": d, "frontier": frontier, "hist_mb": hist / 2**20, "passes": passes,
                    "count_rows": count_rows, **parts,
                    "total": sum(parts.values()), "bound": max(parts, key=parts.get)})
    return out


def report(empty: dict, floor: dict, fits: dict, idle: dict, workers, part_counts, fit_rows: int,
           depth: int) -> harness.Result:
    many = part_counts[-1]
    holders = {w: empty[(w, many, "holders")]["least"] for w in workers}  # the least disturbed of the passes
    known = [w for w in workers if w <= 4]
    fixed = fixed_costs(empty, idle, known, many)
    md = ["On a real `dask scheduler` with single-threaded `dask worker` processes (no nannies) on 127.0.0.1, "
          "reached as `--scheduler ADDRESS` reaches it. **This machine has 2 cores, shared with other work**: "
          "with more worker processes than cores the figures measure the overhead of a pass (every process's "
          "CPU adds up on 2 cores), not its throughput; idle workers alone take "
          + ", ".join(f"{idle[w][2]:.2f} core at {w}" for w in workers) + " (heartbeats, event loops).", "",
          "## An empty pass", "",
          f"`DaskRunner.level_pass` of a new tree's root (the grow loop with `max_depth=1`) on {100_000:,} "
          "Agrawal rows in 100 files, cut into row groups of 1,000, 100 or 10 rows (one part each). Median "
          "and least wall ms of the passes (other work shares the machine: the least is the pass least "
          "disturbed by it, the figure the fixed cost is judged by); CPU ms per pass of this process (the "
          "client), the scheduler and all workers, the idle rate over the pass's time taken off the "
          "scheduler's and workers'. The same pass in this process (LocalRunner, counting and search of the "
          f"root): {_ms(floor['least'])} ms.", "",
          "| workers | parts | strategy | median ms | least ms | client CPU ms | scheduler CPU ms | workers CPU "
          "ms |",
          "|---|---|---|---|---|---|---|---|"]
    for (w, p, kind), r in sorted(empty.items()):
        sched = r["scheduler_cpu"] - idle[w][1] * r["seconds"]
        work = r["workers_cpu"] - idle[w][2] * r["seconds"]
        md.append(f"| {w} | {p:,} | {kind} | {_ms(r['seconds'])} | {_ms(r['least'])} | {_ms(r['client_cpu'])} | "
                  f"{_ms(sched)} | {_ms(work)} |")
    steps = [f"{holders[b] / holders[a]:.2f}x ({a}->{b})" for a, b in zip(workers, workers[1:])]
    md += ["", "*holders*: a cached fit's level pass (one call per worker's holder, cells holder to holder); "
           "*tasks*: a fit without the cache (a histogram task per worker thread reading and encoding its "
           "parts anew, then a search task per chunk): its wall time is the reading of every part, so its "
           "client and scheduler CPU are its fixed cost; *holders, direct*: the holders' pass through a client "
           "that talks to the workers directly (as the cluster `scheduler=\"processes\"` starts), not through "
           "the scheduler.", "",
           f"Holders at {many:,} parts (least ms), per doubling of the workers: {', '.join(steps)} "
           "(linear: at most 2x). Fitted on 1-4 workers, this machine's empty pass is the larger of "
           f"{_ms(fixed['wall'][0])} + {_ms(fixed['wall'][1])} x W ms (the least wall) and every process's CPU, "
           f"{_ms(fixed['cpu'][0])} + {_ms(fixed['cpu'][1])} x W ms, on min(W, 2) cores"
           + "".join(f"; {w} workers predicted {_ms(fixed_here(fixed, w))} ms, measured {_ms(holders[w])} ms"
                     for w in workers if w not in known) + ". Of that CPU the client's and the scheduler's, "
           f"{_ms(fixed['serial'][0])} + {_ms(fixed['serial'][1])} x W ms, stay serial on a cluster of "
           f"machines; a holder's own is {_ms(fixed['holder'])} ms a pass at {max(known)} workers."]
    md += _fit_tables(fits, workers, fit_rows, depth, known, fixed)
    top = max(workers)
    summary = [(f"empty pass, holders, {top} workers x {many:,} parts (target < 50 ms; least of the passes)",
                f"{_ms(holders[top])} ms (median {_ms(empty[(top, many, 'holders')]['seconds'])} ms); "
                f"{holders[top] / holders[1]:.1f}x the 1-worker pass for {top}x the workers"),
               (f"empty pass, holders, {many:,} parts, per doubling of the workers (linear: at most 2x)",
                ", ".join(steps)),
               ("model fitted on 1-4 workers, predicted / measured empty pass at the most workers",
                harness.ratio(fixed_here(fixed, top), holders[top]))]
    figures = {"empty": {f"{w}/{p}/{kind}": r for (w, p, kind), r in empty.items()}, "floor": floor,
               "idle_cpu": idle, "fits": fits, "fixed": fixed, "workers": list(workers),
               "part_counts": list(part_counts), "fit_rows": fit_rows, "depth": depth}
    return harness.Result(summary, "\n".join(md), figures)


def _fit_tables(fits: dict, workers, fit_rows: int, depth: int, known: list[int], fixed) -> list[str]:
    top = max(workers)
    fit = fits[top]
    md = ["", f"## A fit's levels ({top} workers)", "",
          f"`fit(cv=10, max_depth={depth})` of {fit_rows:,} Agrawal F2 rows in 16 files (the second fit of "
          "them: the first loads the kernels), probed on the workers. *histogram*: one worker's (per pass); "
          "*exchanged*: bytes the holders handed each other, against (W - 1) x one histogram; times in ms: "
          "the slowest holder's counting and fetching (its wait for the peers' counts included), the search "
          "summed over the chunks, the client's CPU (its thread running the grow loop and the runner), the "
          "level's wall time, and the search's share of the pass: its CPU against the CPU of counting, "
          "searching and the client (a share of CPU: wall shares mean little with the workers taking turns "
          "on 2 cores).", "",
          "| level | frontier | histogram KB | exchanged KB | / (W-1) x histogram | count ms | fetch ms | "
          "count CPU ms | search CPU ms | client CPU ms | level ms | search share |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for level in fit["levels"]:
        one = level["hist_bytes"] / level["workers"]
        work = level["count_cpu_s"] + level["search_cpu_s"] + level["client_cpu_s"]
        md.append(f"| {level['level']} | {level['frontier']} | {one / 1024:.0f} | {level['served_bytes'] / 1024:.0f} | "
                  f"{level['served_bytes'] / max(1, (level['workers'] - 1) * one):.3f} | {_ms(level['count_s_max'])} | "
                  f"{_ms(level['fetch_s_max'])} | {_ms(level['count_cpu_s'])} | {_ms(level['search_cpu_s'])} | "
                  f"{_ms(level['client_cpu_s'])} | {_ms(level['seconds'])} | {level['search_cpu_s'] / work:.0%} |")
    inputs = _inputs(fits, [w for w in known if w in fits])
    md += ["", "## The model", "", __doc__.split("\n\n", 1)[1].strip(), "",
           f"Measured inputs (1-4 workers): fixed(W) as above; loopback "
           f"bandwidth into a worker B = {inputs['bandwidth'] / 1e6:.0f} MB/s (bytes handed over / fetch time); "
           f"frontier per 2^d at its widest {inputs['sharing']:.2f} (the fold trees' nodes beside the main "
           f"tree's); a row reaching at most {inputs['visits']:.2f} distinct nodes of a level (the rows the "
           f"passes count against the rows); counting c_row = {inputs['c_row'] * 1e9:.2f} ns per row reaching a "
           f"node and attribute (the root's pass) and c_cell = "
           f"{inputs['c_cell'] * 1e9:.2f} ns per histogram cell; searching c_search = "
           f"{inputs['c_search'] * 1e9:.2f} ns per cell and c_sum = {inputs['c_sum'] * 1e9:.2f} ns per cell and "
           "worker (a chunk sums its cells of every worker's histogram: the search's CPU grows with the "
           "workers): per level a line in W through the 1-4 worker points, its slopes (and for the search "
           "its intercepts) summed over the levels and divided by their cells; per level the client's CPU "
           "per frontier node (in the JSON).", "",
           "Predicted / measured, the fit's level passes after the first (which encodes) summed: bytes the "
           "holders exchanged, counting and search CPU (thread CPU seconds on the workers: other work on "
           "the machine aside), and wall seconds (other work not aside).", "",
           "| workers | exchanged MB | count CPU s | search CPU s | wall s |", "|---|---|---|---|---|"]
    for w in workers:
        predicted, measured = _here(inputs, fixed, w), _measured(fits[w])
        cells = [f"{predicted[k] / scale:.2f} / {measured[k] / scale:.2f} ({harness.ratio(predicted[k], measured[k])})"
                 if measured[k] else f"{predicted[k] / scale:.2f} / 0"
                 for k, scale in (("exchanged", 2**20), ("count_cpu", 1), ("search_cpu", 1), ("seconds", 1))]
        md.append(f"| {w}{'' if w in known else ' (predicted)'} | " + " | ".join(cells) + " |")
    t = TARGET
    levels = _target(inputs, fixed)
    md += ["", f"### {t['rows']:,} rows, {t['attributes']} attributes ({t['bins']} bins each), depth {t['depth']}, "
           f"10-fold CV, {t['workers']} workers", "",
           "Assumed: every tree full (2^d nodes at depth d), its fold trees sharing nodes with it as the "
           "measured fit's do (frontier / 2^d as measured down to its widest level, then kept); int32 counts; "
           f"level 0's encoding aside; {t['bandwidth'] / 1e9:.2f} GB/s into each worker (10 Gb/s, not "
           f"measured here); fixed = the client's and scheduler's serial CPU line at {t['workers']} workers "
           f"({_ms(fixed_target(fixed, t['workers']))} ms a pass, a holder's own included; its messages to "
           f"{t['workers'] - 1} peers are not: they grow it). The codes (50 GB at a byte per value) fit in a "
           "quarter of 100 workers' "
           "memory, so the fit is cached and no level pass reads Parquet: reading is pass 0's and the first "
           "level pass's.", "",
           "| level | frontier | histogram MB | passes | count s | exchange s | search s | fixed s | client s | "
           "total s | bound |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for lv in levels:
        md.append(f"| {lv['level']} | {lv['frontier']:,.0f} | {lv['hist_mb']:,.1f} | {lv['passes']} | "
                  f"{lv['count']:.2f} | {lv['exchange']:.2f} | {lv['search']:.2f} | {lv['fixed']:.2f} | "
                  f"{lv['client']:.2f} | {lv['total']:.2f} | {lv['bound']} |")
    pass0 = (statistics.median(fits[w]["pass0"] * min(w, CORES) for w in known)
             / (inputs["rows"] * inputs["attributes"]))
    read = pass0 * t["rows"] / t["workers"] * t["attributes"]
    bounds = sorted({lv["bound"] for lv in levels})
    one_pass = sum(lv["total"] - (lv["passes"] - 1) * (lv["count_rows"] + lv["fixed"] / lv["passes"]) for lv in levels)
    md.append(f"\nBound by: {', '.join(bounds)}. The node groups under max_histogram_mb's 256 MB make "
              f"{sum(lv['passes'] for lv in levels)} passes of {t['depth']} levels, each counting every row again; "
              f"with max_histogram_mb of {2 * max(lv['hist_mb'] for lv in levels):,.0f} (one pass a level, "
              f"if the workers have the memory) the level passes would take {one_pass:.0f} s.")
    md.append(f"\nPredicted level passes: {sum(lv['total'] for lv in levels):.0f} s. Pass 0 (reading the Parquet "
              f"files and summarizing them, {pass0 * 1e9:.1f} ns per row and attribute on a core as measured "
              f"on 1-4 workers, their fixed costs in it: an upper bound): {read:.0f} s, bound by reading; the "
              "first level pass encodes what it kept.")
    fits[top]["model_inputs"] = {**inputs, "target_levels": levels, "pass0_per_row_attribute": pass0}
    return md


def rerender(path: str | None = None) -> None:
    """Write ``results/scaling.md`` again from the figures of ``results/scaling.json`` (this module's
    analysis of them, as changed since), keeping the stamp of their measurement; RESULTS.md too."""
    record = harness.saved("scaling", path)
    r = record["figures"]
    empty = {(int(w), int(p), kind): v for w, p, kind in (k.split("/", 2) for k in r["empty"])
             for v in [r["empty"][f"{w}/{p}/{kind}"]]}
    harness.rewrite("scaling", record, report(empty, r["floor"], {int(k): v for k, v in r["fits"].items()},
                                              {int(k): v for k, v in r["idle_cpu"].items()}, r["workers"],
                                              r["part_counts"], r["fit_rows"], r["depth"]))
