"""Fuzzed inputs, bounded and seeded: mutated Parquet files, model files, checkpoints and argument
strings (:mod:`dasktree.testing.fuzz`). Every case ends with exit 0, or 1 / 2 and one line on
stderr; no traceback, no hang, no crash of the interpreter, no output left behind.

Most cases run in this process through ``dasktree.cli.main``; a few as real processes, where a
crash of the interpreter would show. The suite runs a fixed sample (the same cases every run); the
long campaign (tens of thousands of cases) is the ``benchmarks/fuzz.py`` claim.
"""

import collections

import pytest

from dasktree.testing import fuzz

IN_PROCESS = 100  # a fixed sample, 20 of each kind: the campaign of 10,000 is benchmarks/fuzz.py's claim
PROCESSES = 2


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return fuzz.make_seeds(str(tmp_path_factory.mktemp("fuzz-seeds")))


def _failures(outcomes) -> str:
    return "\n".join(f"{o.verdict}: {o.note} -> {o.lines[:3]} {o.left_behind[:3]}" for o in outcomes if not o.ok)


def test_the_cases_are_the_same_for_the_same_seed(seeds):
    a, b = fuzz.cases(seeds, 40, seed=7), fuzz.cases(seeds, 40, seed=7)
    assert [(c.kind, c.argv, c.note) for c in a] == [(c.kind, c.argv, c.note) for c in b]
    assert [c.note for c in fuzz.cases(seeds, 40, seed=8)] != [c.note for c in a]


def test_fuzzed_inputs_end_with_one_line_and_exit_0_1_or_2(seeds, tmp_path):
    outcomes = [fuzz.run_case(case, str(tmp_path / f"case-{i}"), seconds=60)
                for i, case in enumerate(fuzz.cases(seeds, IN_PROCESS, seed=41))]
    assert not _failures(outcomes), _failures(outcomes)
    by_kind = collections.Counter(o.kind for o in outcomes)
    assert by_kind == {kind: IN_PROCESS // len(fuzz.KINDS) for kind in fuzz.KINDS}
    codes = collections.Counter((o.kind, o.code) for o in outcomes)
    # the mutations reach past the first check: some still run to the end, most are refused
    assert sum(n for (_, code), n in codes.items() if code == 0) > 0
    assert all(codes[(kind, 1)] + codes[(kind, 2)] > 0 for kind in fuzz.KINDS)


def test_fuzzed_inputs_as_real_processes(seeds, tmp_path):
    outcomes = [fuzz.run_case(case, str(tmp_path / f"case-{i}"), seconds=120, subprocess_run=True)
                for i, case in enumerate(fuzz.cases(seeds, PROCESSES, seed=43))]
    assert not _failures(outcomes), _failures(outcomes)
    assert not any(o.crashed for o in outcomes)


def test_a_case_that_overruns_its_bound_ends_its_interpreter(seeds, tmp_path):
    """``run_isolated``: a case past its bound (10 ms here: a fit takes longer) is a hang, and the
    next case runs in a new interpreter: the alarm ends the command's main thread, not the threads it
    started nor an import it left half done (scipy.ndimage's once failed nine cases after a hang)."""
    fit = fuzz.Case("argv", fuzz._templates(seeds)[0], {"data": seeds["data"]}, "undamaged")
    outcomes = fuzz.run_isolated([fit, fit], str(tmp_path), seconds=0.01)
    assert [o.verdict for o in outcomes] == ["hang", "hang"]
    assert outcomes[0].process != outcomes[1].process


def test_a_case_runs_with_an_empty_home_of_its_own(tmp_path):
    """A mutated ``~`` reads an empty home of the case's own, removed with it: not this machine's (a
    campaign's ``fit ~`` walked 291,645 entries of it past its bound), and nothing written there."""
    import os

    home = os.environ["HOME"]
    case = fuzz.Case("argv", ["fit", "~", "--target", "y", "--out", "~/model.json"], {})
    outcome = fuzz.run_case(case, str(tmp_path / "case-0"), seconds=60)
    assert outcome.code == 1 and outcome.lines == ["dasktree: error: ~: directory holds no Parquet files"]
    assert os.environ["HOME"] == home and not os.path.exists(os.path.join(home, "model.json"))
    assert sorted(os.listdir(tmp_path)) == []  # the case's directory and its home both removed
