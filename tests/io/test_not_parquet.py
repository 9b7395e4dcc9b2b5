"""JSON lines given for Parquet: one line, exit 1, with the exact command that converts them (and it works)."""

import shlex
import subprocess
import sys

import pytest

from dasktree.testing import mixed_frame
from dasktree.testing.processes import run_command


@pytest.mark.parametrize("name, write", [
    ("data.jsonl", lambda f, p: f.to_json(p, orient="records", lines=True)),
])
def test_text_data_says_the_command_that_converts_it(tmp_path, name, write):
    frame = mixed_frame(500, seed=5, missing=0)
    write(frame, tmp_path / name)
    fit = ["fit", name, "--target", "label", "--out", "m.json", "--quiet"]
    done = run_command(*fit, cwd=tmp_path)  # the command's main, here: a new interpreter adds only its imports
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and "not Parquet: convert it once with: python -c " in lines[0]
    assert not (tmp_path / "m.json").exists()
    command = lines[0].split("convert it once with: ", 1)[1].rsplit(" (then use ", 1)[0]
    argv = shlex.split(command)
    assert argv[:2] == ["python", "-c"]
    converted = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert converted.returncode == 0, converted.stderr
    again = run_command(*fit[:1], "data.parquet", *fit[2:], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
