"""The suite run again and again beside a CPU hog: a suite that never flakes under load.

The whole suite, run as CI runs it (``.ci/run``'s pytest command, the README's: ``python -m pytest -q
-p no:cacheprovider -n 4``, a new pytest process each run), :data:`RUNS` times in a row while two
processes spin (``while 1: pass``) on this 2-core machine, so every scheduler, worker, job and wait
runs behind them. Each run's outcome comes from pytest's JUnit XML: how many tests passed, failed,
errored or were skipped, which failed and why (the first lines in the table, the report's last
:data:`TEXT_CHARS` characters in the JSON), the run's seconds and the load
average before and after it; results/flakes.{md,json} are written again after each run (a campaign
cut short keeps the runs it made). The claim: every run green.

``--runs N`` (``--quick``: one run), ``--hogs N``, ``-k EXPR`` and test paths (``--fault-tests``: the
test files with a fault or a loss in their name and the Kubernetes job's commands, :data:`FAULT_TESTS`)
choose a part of it, for a smoke run of the harness or a look at the fault tests alone.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from benchmarks import harness

CLAIM = "The suite passes 5 runs in a row beside a CPU hog of two busy processes"
NAME = "flakes"
RUNS = 5
FAULT_TESTS = [
    "tests/engine/test_worker_loss.py",
    "tests/engine/test_scheduler_loss.py",
    "tests/engine/test_faults.py",
    "tests/io/test_store_faults.py",
    "tests/test_deploy_kubernetes.py::test_the_daskjob_commands_run_on_a_real_cluster",
]
"""Every test file of the suite with a fault or a loss in its name, and the Kubernetes test that once
saw 0 workers under load."""
HOGS = 2
TEXT_CHARS = 20000
"""The last characters of a failure's report (pytest's traceback and captured output) kept in
results/flakes.json: the JUnit file goes with its temporary directory, and a rare failure must be
readable after the campaign."""
RUN_SECONDS = 3600  # a run still going after an hour hangs: it is killed and counted as failed


def suite_command() -> list[str]:
    """pytest's arguments as CI gives them: the last line of ``.ci/run`` (the README's test command,
    kept identical by tests/test_docs.py), after ``python -m pytest``."""
    with open(os.path.join(harness.ROOT, ".ci", "run")) as f:
        line = f.read().strip().splitlines()[-1]
    words = shlex.split(line.split("&&")[-1])
    start = words.index("pytest") + 1
    assert words[:start] == ["python", "-m", "pytest"], line
    return words[start:]


def add_arguments(parser) -> None:
    parser.add_argument("--runs", type=int, default=None, help=f"runs in a row (default {RUNS}; --quick: 1)")
    parser.add_argument("--hogs", type=int, default=HOGS, help=f"busy processes beside the runs (default {HOGS})")
    parser.add_argument("-k", dest="keyword", default=None, help="only the tests pytest's -k EXPR selects")
    parser.add_argument("--fault-tests", action="store_true", help="only the fault tests (FAULT_TESTS)")
    parser.add_argument("tests", nargs="*", help="only these test paths or node ids (default: the whole suite)")


def partial(options) -> bool:
    """Every selection writes results/flakes.*: each says what it ran (a smoke run is marked quick)."""
    return False


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
            failures.append({"test": name, "message": (bad.get("message") or "")[:300],
                             "text": (bad.text or "")[-TEXT_CHARS:]})
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return {**counts, "failures": failures}


def _one_run(i: int, tmp: str, selection: list[str]) -> dict:
    junit = os.path.join(tmp, f"run-{i}.xml")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": harness.ROOT}
    pytest = subprocess.Popen([sys.executable, "-m", "pytest", *suite_command(), f"--junitxml={junit}", *selection],
                              cwd=harness.ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)  # its own process group: a hung run ends with all it started
    try:
        out = pytest.communicate(timeout=RUN_SECONDS)[0]
        code, tail = pytest.returncode, out.strip().splitlines()[-1:]
    except subprocess.TimeoutExpired:
        os.killpg(pytest.pid, signal.SIGKILL)
        out = pytest.communicate()[0] or ""
        code, tail = None, [f"no end within {RUN_SECONDS} s"]
    seconds = time.perf_counter() - started
    outcome = _outcome(junit) if os.path.exists(junit) else {"passed": 0, "failed": 0, "errors": 1, "skipped": 0,
                                                             "failures": [{"test": "the run", "message": tail,
                                                                           "text": out[-TEXT_CHARS:]}]}
    run = {"run": i + 1, "exit": code, "seconds": seconds, "load_before": load, "load_after": os.getloadavg()[0],
           "summary": tail, **outcome}
    print(f"  run {i + 1}: {run['passed']} passed, {run['failed']} failed, {run['errors']} errors, "
          f"{run['skipped']} skipped in {seconds:.0f} s (load {load:.1f} -> {run['load_after']:.1f})",
          file=sys.stderr, flush=True)
    return run


def _selection(options) -> list[str]:
    """pytest's arguments after the suite's: ``-k`` and the test paths, or the fault tests."""
    if options is None:
        return []
    chosen = [*(FAULT_TESTS if options.fault_tests else []), *options.tests]
    return [*(["-k", options.keyword] if options.keyword else []), *chosen]


def run(quick: bool, options=None) -> harness.Result:
    """Every run, the results written after each (a campaign cut short keeps the runs it made)."""
    planned = options.runs if options is not None and options.runs else (1 if quick else RUNS)
    hogs_n = options.hogs if options is not None else HOGS
    selection = _selection(options)
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(hogs_n)]
    runs: list[dict] = []
    try:
        with tempfile.TemporaryDirectory(prefix="dasktree-flakes-") as tmp:
            for i in range(planned):
                runs.append(_one_run(i, tmp, selection))
                if len(runs) < planned:
                    harness.write(NAME, CLAIM, _result(runs, planned, selection, hogs_n), quick=quick)
                    harness.gather()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return _result(runs, planned, selection, hogs_n)


def _result(runs: list[dict], planned: int, selection: list[str], hogs: int) -> harness.Result:
    green = [r for r in runs if r["exit"] == 0 and not r["failed"] and not r["errors"]]
    table = ["| run | passed | failed | errors | skipped | seconds | load before / after |",
             "|---|---|---|---|---|---|---|"]
    table += [f"| {r['run']} | {r['passed']} | {r['failed']} | {r['errors']} | {r['skipped']} | {r['seconds']:.0f} | "
              f"{r['load_before']:.1f} / {r['load_after']:.1f} |" for r in runs]
    failures = [f"- run {r['run']}: {f['test']}: {f['message']}" for r in runs for f in r["failures"]]
    summary = [
        (f"runs green in a row beside {hogs} busy processes", f"{len(green)}/{len(runs)}"
                                                          + ("" if len(runs) == planned else f" ({planned} planned)")),
        ("tests per run; seconds per run", f"{runs[0]['passed'] + runs[0]['failed'] + runs[0]['errors'] + runs[0]['skipped']}; "
                                           f"{min(r['seconds'] for r in runs):.0f}-{max(r['seconds'] for r in runs):.0f} s"),
    ]
    cut = "" if len(runs) == planned else f" (of the {planned} planned: the results after each run are kept)"
    command = shlex.join(["python", "-m", "pytest", *suite_command(), *selection])
    what = "the whole suite" if not selection else "a part of the suite"
    markdown = "\n".join([
        f"{len(runs)} runs{cut} in a row of `{command}` ({what}, as CI runs it), each a new pytest process, "
        f"while {hogs} processes spun (`while 1: pass`) on this {os.cpu_count()}-core machine, "
        "which other work shared as well (the load averages are the machine's, one minute):", "",
        *table, "",
        "Failures:" if failures else "No test failed or errored in any run.", *failures,
    ])
    figures = {"command": command, "selection": selection, "hogs": hogs, "planned": planned, "runs": runs}
    return harness.Result(summary, markdown, figures)


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
