"""The fault tests run again and again beside a CPU hog: a suite that never flakes under load.

The tests that lose a worker, the scheduler or a store in the middle of a job, and the Kubernetes
job's commands on a real cluster (:data:`TESTS`), run :data:`RUNS` times in a row as the suite runs
them (``python -m pytest -q -p no:cacheprovider``, a new pytest process each run), while two
processes spin (``while 1: pass``) on this 2-core machine, so every scheduler, worker and job
waits behind them. Each run's outcome comes from pytest's JUnit XML: how many tests passed,
failed, errored or were skipped, which failed and why (the first lines), the run's seconds and
the load average before and after it. The claim: every run green. ``--quick``: one run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from benchmarks import harness

CLAIM = "The fault tests pass 5 runs in a row beside a CPU hog of two busy processes"
NAME = "flakes"
RUNS = 5
TESTS = [
    "tests/engine/test_worker_loss.py",
    "tests/engine/test_scheduler_loss.py",
    "tests/engine/test_faults.py",
    "tests/io/test_store_faults.py",
    "tests/test_deploy_kubernetes.py::test_the_daskjob_commands_run_on_a_real_cluster",
]
"""Every test file of the suite with a fault or a loss in its name, and the Kubernetes test that once
saw 0 workers under load."""
HOGS = 2
RUN_SECONDS = 3600  # a run still going after an hour hangs: it is killed and counted as failed


def _outcome(junit: str) -> dict:
    """Counts and failures from pytest's JUnit XML file."""
    root = ET.parse(junit).getroot()
    cases = root.iter("testcase")
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures = []
    for case in cases:
        name = f"{case.get('classname')}::{case.get('name')}"
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            counts["failed" if bad.tag == "failure" else "errors"] += 1
            failures.append({"test": name, "message": (bad.get("message") or "")[:300]})
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return {**counts, "failures": failures}


def _one_run(i: int, tmp: str) -> dict:
    junit = os.path.join(tmp, f"run-{i}.xml")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": harness.ROOT}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}",
                               *TESTS], cwd=harness.ROOT, env=env, capture_output=True, text=True,
                              timeout=RUN_SECONDS)
        code, tail = done.returncode, done.stdout.strip().splitlines()[-1:]
    except subprocess.TimeoutExpired:
        code, tail = None, [f"no end within {RUN_SECONDS} s"]
    seconds = time.perf_counter() - started
    outcome = _outcome(junit) if os.path.exists(junit) else {"passed": 0, "failed": 0, "errors": 1, "skipped": 0,
                                                             "failures": [{"test": "the run", "message": tail}]}
    run = {"run": i + 1, "exit": code, "seconds": seconds, "load_before": load, "load_after": os.getloadavg()[0],
           "summary": tail, **outcome}
    print(f"  run {i + 1}: {run['passed']} passed, {run['failed']} failed, {run['errors']} errors, "
          f"{run['skipped']} skipped in {seconds:.0f} s (load {load:.1f} -> {run['load_after']:.1f})",
          file=sys.stderr, flush=True)
    return run


def run(quick: bool) -> harness.Result:
    """Every run, the results written after each (a campaign cut short keeps the runs it made)."""
    planned = 1 if quick else RUNS
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(HOGS)]
    runs: list[dict] = []
    try:
        with tempfile.TemporaryDirectory(prefix="dasktree-flakes-") as tmp:
            for i in range(planned):
                runs.append(_one_run(i, tmp))
                if len(runs) < planned:
                    harness.write(NAME, CLAIM, _result(runs, planned), quick=quick)
                    harness.gather()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return _result(runs, planned)


def _result(runs: list[dict], planned: int) -> harness.Result:
    green = [r for r in runs if r["exit"] == 0 and not r["failed"] and not r["errors"]]
    table = ["| run | passed | failed | errors | skipped | seconds | load before / after |",
             "|---|---|---|---|---|---|---|"]
    table += [f"| {r['run']} | {r['passed']} | {r['failed']} | {r['errors']} | {r['skipped']} | {r['seconds']:.0f} | "
              f"{r['load_before']:.1f} / {r['load_after']:.1f} |" for r in runs]
    failures = [f"- run {r['run']}: {f['test']}: {f['message']}" for r in runs for f in r["failures"]]
    summary = [
        ("runs green in a row beside two busy processes", f"{len(green)}/{len(runs)}"
                                                          + ("" if len(runs) == planned else f" ({planned} planned)")),
        ("tests per run; seconds per run", f"{runs[0]['passed'] + runs[0]['failed'] + runs[0]['errors'] + runs[0]['skipped']}; "
                                           f"{min(r['seconds'] for r in runs):.0f}-{max(r['seconds'] for r in runs):.0f} s"),
    ]
    cut = "" if len(runs) == planned else f" (of the {planned} planned: the results after each run are kept)"
    markdown = "\n".join([
        f"{len(runs)} runs{cut} in a row of `python -m pytest -q -p no:cacheprovider` on the fault tests, each a new "
        f"pytest process, while {HOGS} processes spun (`while 1: pass`) on this {os.cpu_count()}-core machine, "
        "which other work shared as well (the load averages are the machine's, one minute):", "",
        *[f"- `{t}`" for t in TESTS], "", *table, "",
        "Failures:" if failures else "No test failed or errored in any run.", *failures,
    ])
    figures = {"tests": TESTS, "hogs": HOGS, "planned": planned, "runs": runs}
    return harness.Result(summary, markdown, figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
