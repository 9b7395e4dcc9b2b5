"""JSON lines given for Parquet: one line, exit 1, with the exact command that converts them (and it works)."""

import shlex
import subprocess
import sys

import pytest

from dasktree.testing import mixed_frame


@pytest.mark.parametrize("name, write", [
    ("data.jsonl", lambda f, p: f.to_json(p, orient="records", lines=True)),
])
def test_text_data_says_the_command_that_converts_it(tmp_path, name, write):
    frame = mixed_frame(500, seed=5, missing=0)
    write(frame, tmp_path / name)
    run = dict(capture_output=True, text=True, timeout=300, cwd=tmp_path)
    cmd = [sys.executable, "-m", "dasktree.cli", "fit", name, "--target", "label", "--out", "m.json", "--quiet"]
    done = subprocess.run(cmd, **run)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and "not Parquet: convert it once with: python -c " in lines[0]
    assert not (tmp_path / "m.json").exists()
    command = lines[0].split("convert it once with: ", 1)[1].rsplit(" (then use ", 1)[0]
    argv = shlex.split(command)
    assert argv[:2] == ["python", "-c"]
    converted = subprocess.run([sys.executable, *argv[1:]], **run)
    assert converted.returncode == 0, converted.stderr
    again = subprocess.run([*cmd[:4], "data.parquet", *cmd[5:]], **run)
    assert again.returncode == 0, again.stderr
