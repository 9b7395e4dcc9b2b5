"""Damaged CSV files end the command with exit 1 and one short line naming the file: bytes that are
not UTF-8 (in a value, in the header), a gzip'd file whose data fail their check, a bad value of a
million characters. Each was an internal error (exit 3) or a megabyte-long line, found by
``benchmarks/fuzz.py``'s CSV mutations."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from dasktree.cli import main


def _text(n: int = 300) -> bytes:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=n).round(3), "b": rng.normal(size=n).round(3),
                          "label": rng.choice(["x", "y"], size=n)})
    return frame.to_csv(index=False).encode()


def _damaged(how: str) -> tuple[str, bytes]:
    text = _text()
    lines = text.split(b"\n")
    if how == "value not utf-8":  # a number's field with bytes no UTF-8 decoder takes
        lines[200] = b"1.5\xff\xfe," + lines[200].split(b",", 1)[1]
        return "1.csv", b"\n".join(lines)
    if how == "header not utf-8":
        lines[0] = b"\xff" + lines[0]
        return "1.csv", b"\n".join(lines)
    if how == "gzip check fails":
        packed = bytearray(gzip.compress(text, mtime=0))
        packed[len(packed) // 2] ^= 0x04
        return "1.csv.gz", bytes(packed)
    assert how == "a million characters"
    lines[100] = b"x" * 1_000_000 + b"," + lines[100].split(b",", 1)[1]
    return "1.csv", b"\n".join(lines)


@pytest.mark.parametrize("how", ["value not utf-8", "header not utf-8", "gzip check fails", "a million characters"])
@pytest.mark.parametrize("command", ["fit", "predict"])
def test_a_damaged_csv_file_is_exit_1_and_one_short_line(tmp_path, capsys, how, command):
    name, content = _damaged(how)
    data = tmp_path / "data"
    data.mkdir()
    (data / "0.csv").write_bytes(_text())  # a good first file: the types come from it
    (data / name).write_bytes(content)
    if command == "fit":
        argv = ["fit", str(data), "--target", "label", "--out", str(tmp_path / "m.json"), "--scheduler", "inprocess",
                "--quiet"]
    else:
        good = tmp_path / "good"
        good.mkdir()
        (good / "data.csv").write_bytes(_text())
        assert main(["fit", str(good), "--target", "label", "--out", str(tmp_path / "m.json"), "--scheduler",
                     "inprocess", "--quiet", "--max-depth", "2"]) == 0
        capsys.readouterr()
        argv = ["predict", str(tmp_path / "m.json"), str(data), "--out", str(tmp_path / "p"), "--scheduler",
                "inprocess", "--quiet"]
    code = main(argv)
    lines = capsys.readouterr().err.splitlines()
    assert code == 1, lines
    assert len(lines) == 1 and lines[0].startswith("dasktree: error: ") and str(data) in lines[0], lines
    assert len(lines[0]) < 600, lines[0][:300]
