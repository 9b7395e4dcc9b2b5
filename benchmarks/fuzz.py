"""Fuzzed inputs at scale: tens of thousands of mutated inputs, each run judged by the command's
contract (:mod:`dasktree.testing.fuzz`).

Mutated Parquet files (flipped bits, truncations, a damaged footer or magic, huge declared footer
lengths, zeroed runs, inserted bytes; as many again aimed inside the footer's Thrift, its length
kept right, and at the page headers), mutated CSV files (the same damage, and as much again aimed
at the text: quotes, fields, the header, odd values, NUL and non-UTF-8 bytes, a gzip'd file
damaged), mutated model files (wrong types, missing keys, nesting 100 to
100,000 deep, huge numbers, NaN and infinities, lists cut short, values swapped, damaged bytes),
mutated checkpoints (a level pass's ``.npz`` or ``checkpoint.json``) and mutated argument strings,
in equal shares, from one seeded generator. Every kernel is compiled into numba's cache first
(``dasktree warm``): a case times the command, not a compile of its kernels, which at a load of 10
ran one case past its bound for minutes; and each child process running cases first runs the undamaged
commands, so what they import the first time they run in a process (sklearn and scipy for a prune's cross-validation: a
minute in a child at nice 10 on a machine at a load of 15, past the bound) is imported outside every
case's bound. Each case runs in process through
``dasktree.cli.main``, in a child process started again should a case crash the interpreter (that
case counted as a crash) or overrun its bound (counted as a hang: what it left running must not meet
the next case); one in a hundred also as a real process of its own. A case's bound follows
the machine's speed: before every :data:`CHUNK` cases the undamaged commands are timed, and the
bound is 20 times the slowest of them, at least 60 s in process (twice that as a process), so a
machine slowed by other work does not turn slow runs into hangs. ``FUZZ_MINUTES`` in the
environment bounds the campaign: no case starts after it, and the results say how many cases ran.
``FUZZ_JOBS`` (default 1) runs each chunk's cases in that many child processes at once, each its
share in order; the cases and their outcomes are the same, in the same order. The claim: every case ends with exit 0, or 1 / 2 and one line
on stderr; no traceback, no hang, no crash, no output left behind. The counts by kind and exit
code, and every case that broke the contract, are in the results.
"""

from __future__ import annotations

import collections
import os
import shutil
import sys
import time

from benchmarks import harness
from dasktree.testing import fuzz

CLAIM = "Fuzzed inputs end with exit 0, or 1/2 and one line: no traceback, hang, crash or output left behind"
NAME = "fuzz"
SEED = 2026
CHUNK = 500  # cases between two timings of the undamaged commands
MINUTES = float(os.environ.get("FUZZ_MINUTES", "inf"))  # no case starts after this long
JOBS = max(1, int(os.environ.get("FUZZ_JOBS", "1")))  # child processes running a chunk's cases at once


def _run_chunk(chunk: list, root: str, seconds: float, progress, deadline: float, warmup: list) -> list:
    """The outcomes of ``chunk``'s cases, in order: :data:`JOBS` children each run every JOBS-th case
    (:func:`fuzz.run_isolated`, each child warmed up by the undamaged commands ``warmup``), on threads
    of this process that wait for them."""
    if JOBS == 1:
        return fuzz.run_isolated(chunk, root, seconds=seconds, progress=progress, deadline=deadline, warmup=warmup)
    import threading

    shares: list = [None] * JOBS
    done = [0] * JOBS
    lock = threading.Lock()

    def one(j: int) -> None:
        def counted(i: int) -> None:
            with lock:
                done[j] = i
                progress(sum(done))

        shares[j] = fuzz.run_isolated(chunk[j::JOBS], os.path.join(root, f"job-{j}"), seconds=seconds,
                                      progress=counted, deadline=deadline, warmup=warmup)

    threads = [threading.Thread(target=one, args=(j,)) for j in range(JOBS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outcomes = []
    for i in range(len(chunk)):  # case i is share i % JOBS's (i // JOBS)th; a share cut by the deadline ends early
        share = shares[i % JOBS]
        if i // JOBS >= len(share):
            break
        outcomes.append(share[i // JOBS])
    return outcomes


def _bound(seeds: dict[str, str], root: str) -> tuple[float, float]:
    """(the slowest undamaged command's seconds now, the in-process bound that follows from it)."""
    model = open(seeds["model"], "rb").read()
    slowest = 0.0
    for i, argv in enumerate(fuzz._templates(seeds)):
        case = fuzz.Case("argv", argv, {"data": seeds["data"], "model.json": model})
        outcome = fuzz.run_case(case, os.path.join(root, f"reference-{i}"), seconds=600)
        assert outcome.code == 0, (argv, outcome.lines)  # the undamaged commands work
        slowest = max(slowest, outcome.seconds)
    return slowest, max(60.0, 20 * slowest)


def run(quick: bool) -> harness.Result:
    n = 1000 if quick else 10_000
    root = os.path.join(harness.DATA, "fuzz")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    from dasktree.warm import warm

    warm(cluster=False)  # the children load every kernel from the cache: no case compiles one
    seeds = fuzz.make_seeds(os.path.join(root, "seeds"))
    started = time.perf_counter()

    def progress(done: int) -> None:
        if done % 1000 == 0:
            print(f"  {done} cases", file=sys.stderr, flush=True)

    all_cases = fuzz.cases(seeds, n, seed=SEED)
    outcomes, bounds = [], []
    while len(outcomes) < n and (not bounds or time.perf_counter() - started < MINUTES * 60):
        reference, seconds = _bound(seeds, root)
        bounds.append((len(outcomes), reference, seconds))
        print(f"  cases {len(outcomes)}-: the undamaged commands take up to {reference:.1f} s: bound {seconds:.0f} s",
              file=sys.stderr, flush=True)
        chunk = all_cases[len(outcomes):len(outcomes) + CHUNK]
        done = len(outcomes)
        outcomes += _run_chunk(chunk, os.path.join(root, f"chunk-{done}"), seconds,
                               lambda i: progress(done + i),
                               time.monotonic() + MINUTES * 60 - (time.perf_counter() - started),
                               fuzz.undamaged(seeds))
    in_process_seconds = time.perf_counter() - started
    n_processes = max(1, len(outcomes) // 100)
    started = time.perf_counter()
    reference, seconds = _bound(seeds, root)
    bounds.append(("processes", reference, 2 * seconds))
    processes = [fuzz.run_case(case, os.path.join(root, f"process-{i}"), seconds=2 * seconds, subprocess_run=True)
                 for i, case in enumerate(fuzz.cases(seeds, n_processes, seed=SEED + 1))]
    process_seconds = time.perf_counter() - started
    shutil.rmtree(root, ignore_errors=True)

    everything = outcomes + processes
    codes = collections.Counter((o.kind, o.code) for o in everything)
    verdicts = collections.Counter(o.verdict for o in everything)
    broken = [o for o in everything if not o.ok]
    kinds = fuzz.KINDS
    code_values = sorted({c for _, c in codes}, key=lambda c: (c is None, c))
    table = ["| kind | " + " | ".join(f"exit {c}" if c is not None else "hang" for c in code_values) + " | cases |",
             "|" + "---|" * (len(code_values) + 2)]
    for kind in kinds:
        table.append(f"| {kind} | " + " | ".join(str(codes[(kind, c)]) for c in code_values)
                     + f" | {sum(codes[(kind, c)] for c in code_values)} |")
    slowest = max(o.seconds for o in everything)
    summary = [
        ("mutated inputs run (in process + as processes)", f"{len(outcomes)} + {len(processes)}"),
        ("broke the contract: tracebacks / hangs / crashes / other", f"{verdicts['traceback']} / {verdicts['hang']} / "
         f"{verdicts['crash']} / {len(broken) - verdicts['traceback'] - verdicts['hang'] - verdicts['crash']}"),
        ("exit 0 / 1 / 2 / other", f"{sum(n for (_, c), n in codes.items() if c == 0)} / "
         f"{sum(n for (_, c), n in codes.items() if c == 1)} / {sum(n for (_, c), n in codes.items() if c == 2)} / "
         f"{sum(n for (_, c), n in codes.items() if c not in (0, 1, 2))}"),
    ]
    in_bounds = [b for b in bounds if b[0] != "processes"]
    cut = "" if len(outcomes) == n else f" (of the {n:,} planned: FUZZ_MINUTES={MINUTES:g} reached)"
    markdown = "\n".join([
        f"{len(outcomes)} cases in process{cut} (seed {SEED}) in {in_process_seconds:.0f} s, {len(processes)} as real "
        f"processes in {process_seconds:.0f} s; the in-process cases ran in {JOBS} child process"
        f"{'es' if JOBS > 1 else ''} at once; the slowest case took {slowest:.1f} s. The bound follows the "
        f"machine's speed (20x the slowest undamaged command, timed before every {CHUNK} cases, at least 60 s; "
        f"twice that as a process): the undamaged commands took {min(b[1] for b in in_bounds):.1f}-"
        f"{max(b[1] for b in in_bounds):.1f} s, so the in-process bound was {min(b[2] for b in in_bounds):.0f}-"
        f"{max(b[2] for b in in_bounds):.0f} s and the processes' {bounds[-1][2]:.0f} s. "
        "The machine was shared with other work while this ran.", "",
        "Exit codes by kind of input:", "", *table, "",
        f"Verdicts: {dict(verdicts)}.", "",
        "Cases that broke the contract (the first 20):" if broken else "No case broke the contract.",
        *[f"- {o.verdict}: {o.note} -> {o.lines[:2]}" for o in broken[:20]],
    ])
    figures = {"seed": SEED, "cases": len(outcomes), "planned": n, "jobs": JOBS, "processes": len(processes),
               "bounds": bounds,
               "codes": {f"{k}:{c}": v for (k, c), v in sorted(codes.items(), key=str)},
               "verdicts": dict(verdicts), "seconds": {"in_process": in_process_seconds, "processes": process_seconds,
                                                       "slowest_case": slowest},
               "broken": [{"verdict": o.verdict, "note": o.note, "lines": o.lines[:3]} for o in broken[:200]]}
    return harness.Result(summary, markdown, figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
