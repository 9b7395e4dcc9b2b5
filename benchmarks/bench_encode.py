"""Numeric encoding benchmark: value -> bin code, ``np.searchsorted`` against the bucket-table kernel.

Encodes the 9 Agrawal attributes of 1,000,000 rows (F2, 5% perturbation, 16 Parquet parts,
read part by part as a level pass does; generated in memory when
``benchmarks/data/agrawal-f2-p05-1000000-16`` is absent) with the bins of a 255-bin spec, and
times in the same run, best of 3 after a warm-up call (numba compile and cache load excluded):

  numeric_values   arrow column -> float64 (``dasktree.io.schema.numeric_values``), shared by both
  old codes        ``np.searchsorted(upper, x, side="left") + 1``, NaN -> 0, ``astype`` (the old branch)
  new codes        ``dasktree.binning.codes.numeric_codes``
  lookup           integer columns only: ``dasktree.binning.codes.integer_codes`` on the Arrow integers
                   (no float64 conversion), against numeric_values + new codes, which it replaces
  encode old / new numeric_values + codes for every part (the old loop vs ``encode_features``, which
                   takes the lookup for integer columns of a narrow span)

plus, as a check on skewed edges, the codes of 1M synthetic values against 255 and 65,534
quantile edges of a few shapes. Every new code is checked equal to the old one.

Target: a few ns per value for the codes (old: ~50-60 ns).

Usage: python benchmarks/bench_encode.py [--repeat 3]
Writes benchmarks/results/encode.json and encode.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from dasktree.binning.codes import integer_codes, kernel_backend, numeric_codes  # noqa: E402
from dasktree.binning.spec import bin_spec
from dasktree.binning.summary import merge_all, summarize  # noqa: E402
from dasktree.binning.encode import encode_features  # noqa: E402
from dasktree.io.schema import NUMERIC, Roles, numeric_values  # noqa: E402
from results_io import write_results  # noqa: E402

FEATURES = ["salary", "commission", "age", "elevel", "car", "zipcode", "hvalue", "hyears", "loan"]
DATA = os.path.join(HERE, "data", "agrawal-f2-p05-1000000-16")
ROWS, FILES, MAX_BINS = 1_000_000, 16, 255


def load_parts() -> tuple[list[pa.Table], str]:
    if os.path.isdir(DATA):
        files = sorted(f for f in os.listdir(DATA) if f.endswith(".parquet"))
        tables = [pq.read_table(os.path.join(DATA, f), columns=FEATURES + ["class"]) for f in files]
        return tables, os.path.relpath(DATA, os.path.dirname(HERE))
    from dasktree.datasets import agrawal

    table = pa.Table.from_pandas(agrawal.generate(ROWS, function=2, perturbation=0.05, seed=0),
                                 preserve_index=False).select(FEATURES + ["class"])
    bounds = np.linspace(0, ROWS, FILES + 1).astype(int)
    return [table.slice(a, b - a) for a, b in zip(bounds[:-1], bounds[1:])], "generated in memory"


def best(fn, repeat: int) -> float:
    fn()  # warm-up: numba compile / cache load, page cache
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def old_codes(x: np.ndarray, upper: np.ndarray, dtype) -> np.ndarray:
    codes = np.searchsorted(upper, x, side="left") + 1
    codes[np.isnan(x)] = 0
    return codes.astype(dtype, copy=False)


def old_encode(table: pa.Table, spec) -> np.ndarray:
    out = np.empty((spec.n_features, table.num_rows), dtype=spec.code_dtype)
    for j, bins in enumerate(spec.features):
        out[j] = old_codes(numeric_values(table.column(bins.name), bins.name), bins.upper, spec.code_dtype)
    return out


def agrawal(repeat: int) -> dict:
    parts, source = load_parts()
    roles = Roles("class", tuple(FEATURES), (NUMERIC,) * len(FEATURES))
    summary = merge_all([summarize(p, roles, max_bins=MAX_BINS) for p in parts])
    spec = bin_spec(summary, roles, max_bins=MAX_BINS, max_categories=MAX_BINS)
    dtype = spec.code_dtype
    n_rows = sum(p.num_rows for p in parts)
    values = {b.name: [numeric_values(p.column(b.name), b.name) for p in parts] for b in spec.features}

    for b in spec.features:  # exactness on the real data
        for x in values[b.name]:
            assert np.array_equal(numeric_codes(x, b.upper, dtype), old_codes(x, b.upper, dtype)), b.name
    for p in parts:
        assert np.array_equal(encode_features(p, spec), old_encode(p, spec))

    columns = {}
    for b in spec.features:
        xs = values[b.name]
        columns[b.name] = {
            "edges": int(b.upper.size),
            "arrow_type": str(parts[0].schema.field(b.name).type),
            "numeric_values_s": best(lambda: [numeric_values(p.column(b.name), b.name) for p in parts], repeat),
            "old_codes_s": best(lambda: [old_codes(x, b.upper, dtype) for x in xs], repeat),
            "new_codes_s": best(lambda: [numeric_codes(x, b.upper, dtype) for x in xs], repeat),
        }
        ints = [p.column(b.name).to_numpy() for p in parts] if pa.types.is_integer(parts[0].schema.field(b.name).type) \
            else []
        if ints and all(integer_codes(i, b.upper, dtype) is not None for i in ints):
            for i, x in zip(ints, xs):
                assert np.array_equal(integer_codes(i, b.upper, dtype), numeric_codes(x, b.upper, dtype)), b.name
            columns[b.name]["lookup_s"] = best(lambda: [integer_codes(i, b.upper, dtype) for i in ints], repeat)
    n_values = n_rows * len(spec.features)
    total = {k: sum(c[k] for c in columns.values()) for k in ("numeric_values_s", "old_codes_s", "new_codes_s")}
    total["encode_old_s"] = best(lambda: [old_encode(p, spec) for p in parts], repeat)
    total["encode_new_s"] = best(lambda: [encode_features(p, spec) for p in parts], repeat)
    return {"source": source, "rows": n_rows, "parts": len(parts), "attributes": len(spec.features),
            "code_dtype": str(np.dtype(dtype)), "columns": columns, "total": total, "values": n_values}


def synthetic(repeat: int) -> list[dict]:
    rng = np.random.default_rng(0)
    n = 1_000_000
    shapes = {"uniform": lambda: rng.random(n), "normal": lambda: rng.standard_normal(n),
              "lognormal(0, 2)": lambda: rng.lognormal(0, 2, n), "pareto(0.5)": lambda: rng.pareto(0.5, n)}
    rows = []
    for n_bins, dtype in ((256, np.uint8), (65535, np.uint16)):
        for name, draw in shapes.items():
            x = draw()
            upper = np.unique(np.sort(x)[(np.arange(1, n_bins) * (n / n_bins)).astype(int)])
            x[rng.random(n) < 0.01] = np.nan
            assert np.array_equal(numeric_codes(x, upper, dtype), old_codes(x, upper, dtype)), name
            rows.append({"shape": name, "edges": int(upper.size), "code_dtype": np.dtype(dtype).name,
                         "old_ns": best(lambda: old_codes(x, upper, dtype), repeat) / n * 1e9,
                         "new_ns": best(lambda: numeric_codes(x, upper, dtype), repeat) / n * 1e9})
    return rows


def ns(seconds: float, n: int) -> float:
    return seconds / n * 1e9


def report(result: dict) -> None:
    a = result["agrawal"]
    t, n = a["total"], a["values"]
    old, new = ns(t["old_codes_s"], n), ns(t["new_codes_s"], n)
    nv = ns(t["numeric_values_s"], n)
    summary = {
        "old_codes_ns_per_value": old,
        "new_codes_ns_per_value": new,
        "codes_speedup": old / new,
        "numeric_values_ns_per_value": nv,
        "encode_speedup": t["encode_old_s"] / t["encode_new_s"],
        "numeric_values_share_of_new_encode": t["numeric_values_s"] / (t["numeric_values_s"] + t["new_codes_s"]),
    }
    result["summary"] = summary
    lines = [
        "# Numeric encoding benchmark", "",
        f"Run of {result['date']} on {os.cpu_count()} cores, one thread, kernel backend `{result['backend']}`. "
        f"{a['rows']:,} Agrawal rows (F2, 5% perturbation; {a['source']}) in {a['parts']} parts, "
        f"{a['attributes']} numeric attributes, {a['code_dtype']} codes, best of {result['repeat']} after a warm-up. "
        "Every new code equals the old one.", "",
        "| attribute | arrow type | edges | numeric_values ns/value | old codes ns/value | new codes ns/value "
        "| speed-up | lookup ns/value (integers) | numeric_values + new codes / lookup |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in a["columns"].items():
        o, w = ns(c["old_codes_s"], a["rows"]), ns(c["new_codes_s"], a["rows"])
        v = ns(c["numeric_values_s"], a["rows"])
        lookup = f"{ns(c['lookup_s'], a['rows']):.2f} | {(v + w) / ns(c['lookup_s'], a['rows']):.1f}x" \
            if "lookup_s" in c else "- | -"
        lines.append(f"| {name} | {c['arrow_type']} | {c['edges']} | {v:.2f} | {o:.1f} | {w:.2f} | {o / w:.1f}x "
                     f"| {lookup} |")
    lines += [
        f"| **all** | | | {nv:.2f} | {old:.1f} | {new:.2f} | **{old / new:.1f}x** | | |", "",
        f"Whole encode (numeric_values + codes, every part): {t['encode_old_s']:.3f} s old, "
        f"{t['encode_new_s']:.3f} s new (**{summary['encode_speedup']:.1f}x**); numeric_values is "
        f"{100 * summary['numeric_values_share_of_new_encode']:.0f}% of the new encode.", "",
        "Skewed edges: 1M synthetic values (1% NaN) against their quantile edges.", "",
        "| shape | edges | codes | old ns/value | new ns/value | speed-up |", "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["synthetic"]:
        lines.append(f"| {r['shape']} | {r['edges']} | {r['code_dtype']} | {r['old_ns']:.1f} | {r['new_ns']:.2f} | "
                     f"{r['old_ns'] / r['new_ns']:.1f}x |")
    text = "\n".join(lines) + "\n"
    write_results("encode", text, result)
    print(text)
    print(f"codes: old {old:.1f} ns/value, new {new:.2f} ns/value, ratio {old / new:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    result = {"date": datetime.date.today().isoformat(), "backend": kernel_backend(), "repeat": args.repeat,
              "agrawal": agrawal(args.repeat), "synthetic": synthetic(args.repeat)}
    report(result)


if __name__ == "__main__":
    main()
