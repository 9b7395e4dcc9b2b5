"""Options are spelled out: no prefixes taken for an option, and a misspelt one names the closest."""

import argparse
import subprocess
import sys

import pytest

from dasktree.cli import main
from dasktree.cli.parser import build_parser


def _verbs(parser):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_every_parser_refuses_option_prefixes():
    parser = build_parser()
    assert parser.allow_abbrev is False
    for verb, sub in _verbs(parser).items():
        assert sub.allow_abbrev is False, verb


@pytest.mark.parametrize("args, typed, closest", [
    (["fit", "d", "--target", "c", "--out", "m.json", "--max-dept", "5"], "--max-dept", "--max-depth"),
    (["fit", "d", "--target", "c", "--out", "m.json", "--maxdepth", "5"], "--maxdepth", "--max-depth"),
    (["show", "m.json", "--formt", "cp"], "--formt", "--format"),
    (["prune", "m.json", "--alpha", "0.1", "--out", "p.json", "--confidense", "0.2"], "--confidense", "--confidence"),
])
def test_a_misspelt_option_is_one_line_naming_the_closest_and_exit_2(capsys, args, typed, closest):
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dasktree: error: ") and f"no option {typed}" in lines[0], lines
    assert f"did you mean {closest}" in lines[0]


@pytest.mark.parametrize("typed", ["--bogus", "--x", "--zzz"])
def test_an_option_close_to_none_gets_no_suggestion(capsys, typed):
    """The ``--`` every option shares is no likeness: ``--bogus`` was answered with ``did you mean --out?``."""
    with pytest.raises(SystemExit) as stop:
        main(["fit", "d", "--target", "c", "--out", "m.json", typed])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"no option {typed} (" in lines[0] and "did you mean" not in lines[0], lines


def test_the_command_refuses_a_prefix_in_a_process(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", str(tmp_path), "--target", "c", "--out",
                           str(tmp_path / "m.json"), "--max-dept", "5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "did you mean --max-depth" in done.stderr and not (tmp_path / "m.json").exists()
