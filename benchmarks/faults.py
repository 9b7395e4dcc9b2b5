"""Worker kills at random moments of a cross-validated fit, and what checkpointing every level costs.

On a real ``dask scheduler`` with two ``dask worker`` processes (each under its
nanny) on 127.0.0.1, ``dasktree fit --cv 10`` of Agrawal F7 rows runs first
undisturbed (the reference model and time), then once per kill: the workers
are armed (:mod:`dasktree.testing.hooks`) to SIGKILL themselves at a random stage
(pass 0, encoding in the first level pass, counting, serving cells or searching
in a random level pass, or gathering a pass's small nodes, serving them to a peer
or growing them in memory, at the fit's first small pass). Every
run must end (a bound of 10x the reference time), exit 0 and write the
reference's bytes; the added time per kill is the median of (time - median
reference time). Then fits with and without ``--checkpoint`` alternate on the
same cluster: the ratio of their median times.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time

from benchmarks import harness

CLAIM = "A worker SIGKILLed at a random moment of a 10-fold fit: the same model, no hang; checkpoints cost <= 1.05x"
NAME = "faults"

SMALL_STAGES = ("gather", "pieces", "grow")  # a holder in a small pass (dasktree.hook_points)
STAGES = ("summary", "encode", "count", "cells", "search", *SMALL_STAGES)


def _fit(data: str, out: str, address: str, depth: int, *extra: str, bound: float = 1800) -> dict:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", data, "--target", "class", "--out", out,
                               "--cv", "10", "--max-depth", str(depth), "--quiet", "--scheduler", address, *extra],
                              capture_output=True, text=True, timeout=bound)
        code, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired:
        code, err = None, "hang: no exit within the bound"
    return {"seconds": time.perf_counter() - started, "returncode": code, "stderr": err[-500:]}


def run(quick: bool) -> harness.Result:
    rows, kills, depth, repeat = (100_000, 4, 8, 2) if quick else (1_000_000, 20, 12, 5)
    rng = random.Random(29)
    with tempfile.TemporaryDirectory(prefix="dasktree-faults-") as tmp:
        return _measure(tmp, rows, kills, depth, repeat, rng)


def _measure(tmp: str, rows: int, kills: int, depth: int, repeat: int, rng: random.Random) -> harness.Result:
    from distributed import Client

    from dasktree.datasets import agrawal
    from dasktree.testing.cluster import scheduler_and_workers
    from dasktree.testing.hooks import arm

    data = os.path.join(tmp, "data")
    agrawal.write_parquet(data, rows, n_files=8, function=7, perturbation=0.05, seed=1)
    runs, plain, ckpt = [], [], []
    with scheduler_and_workers(2) as address:
        reference = os.path.join(tmp, "reference.json")
        warm = _fit(data, reference, address, depth)  # the workers' first fit compiles the kernels
        assert warm["returncode"] == 0, warm["stderr"]
        expected = open(reference, "rb").read()
        for i in range(repeat):  # alternated: without, with a checkpoint
            out = os.path.join(tmp, f"plain-{i}.json")
            plain.append(_fit(data, out, address, depth))
            assert open(out, "rb").read() == expected
            out = os.path.join(tmp, f"ckpt-{i}.json")
            ckpt.append(_fit(data, out, address, depth, "--checkpoint", os.path.join(tmp, f"ckpt-{i}")))
            assert ckpt[-1]["returncode"] == 0, ckpt[-1]["stderr"]
            assert open(out, "rb").read() == expected
        base = harness.median(r["seconds"] for r in plain)
        for k in range(kills):
            stage = rng.choice(STAGES)
            # pass 0 summarizes; the first level pass encodes (the codes stay cached after it)
            # the small-pass points at the first small pass (a fit has one or two, at a depth the data sets)
            at = 0 if stage == "summary" else 1 if stage in ("encode", *SMALL_STAGES) else rng.randint(1, depth)
            marker = os.path.join(tmp, f"killed-{k}")
            with Client(address, timeout="30s") as client:
                client.run(arm, f"{stage}:{at}:{marker}")
            out = os.path.join(tmp, f"kill-{k}.json")
            r = _fit(data, out, address, depth, bound=max(120.0, 10 * base))
            with Client(address, timeout="30s") as client:
                client.run(arm, None)
                client.wait_for_workers(2, timeout=120)
            r.update(stage=stage, at=at, killed=os.path.exists(marker),
                     identical=r["returncode"] == 0 and open(out, "rb").read() == expected)
            runs.append(r)
    killed = [r for r in runs if r["killed"]]
    identical = sum(r["identical"] for r in killed)
    hangs = sum(r["returncode"] is None for r in runs)
    added = harness.median(r["seconds"] - base for r in killed) if killed else float("nan")
    ratio = harness.median(r["seconds"] for r in ckpt) / base
    rows_md = "\n".join(f"| {r['stage']} | {r['at']} | {'yes' if r['killed'] else 'no (pass not reached)'} | "
                        f"{r['returncode']} | {'yes' if r['identical'] else 'NO'} | {r['seconds']:.1f} |" for r in runs)
    markdown = f"""{rows:,} Agrawal F7 rows in 8 files, `--cv 10 --max-depth {depth}`, `dask scheduler` + 2
single-threaded `dask worker` processes with nannies on 127.0.0.1 (a shared 2-core machine).
Reference fit: median {base:.2f} s of {repeat}.

| stage | pass | a worker killed | exit | same bytes | seconds |
|---|---|---|---|---|---|
{rows_md}

Killed runs: {len(killed)}, identical models: {identical}, hangs: {hangs}; median added time per kill
{added:.2f} s (a nanny restarting the worker, the pass redone from the Parquet files on new holders).

Checkpoint every level pass (`--checkpoint DIR`), alternated with plain fits: median
{harness.median(r['seconds'] for r in ckpt):.2f} s against {base:.2f} s, **{ratio:.3f}x**.
"""
    return harness.Result(
        summary=[("worker kills survived with the same model", f"{identical}/{len(killed)} ({hangs} hangs)"),
                 ("added time per kill", f"{added:.2f} s on a {base:.1f} s fit"),
                 ("checkpoint every level / none", f"{ratio:.3f}x")],
        markdown=markdown,
        figures={"rows": rows, "depth": depth, "reference_seconds": [r["seconds"] for r in plain],
                 "checkpoint_seconds": [r["seconds"] for r in ckpt], "kills": runs, "added_seconds": added,
                 "checkpoint_ratio": ratio, "hangs": hangs, "identical": identical, "killed": len(killed)},
    )


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
