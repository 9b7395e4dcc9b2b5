"""Corrupt Parquet pages are not learned from: checked against statistics and page checksums."""

import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dasktree
from dasktree.engine.predict import predict_dataset
from dasktree.errors import DataError


def _frame(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1.3e5, n)
    return pd.DataFrame({"x": x, "z": rng.integers(0, 50, n), "y": (x > 6e4).astype(np.int64)})


def _write(path, checksums: bool) -> None:
    pq.write_table(pa.Table.from_pandas(_frame(), preserve_index=False), path, row_group_size=1000,
                   compression="none", use_dictionary=False, write_page_checksum=checksums)


def _overwrite_in_page(path, row_group: int, column: str, payload: bytes) -> None:
    """Bytes near the end of a column chunk's first data page (its values, PLAIN encoded)."""
    meta = pq.ParquetFile(path).metadata.row_group(row_group)
    chunk = next(meta.column(j) for j in range(meta.num_columns) if meta.column(j).path_in_schema == column)
    at = chunk.data_page_offset + chunk.total_compressed_size - 80
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(payload)


def _fit(path):
    return dasktree.fit(str(path), target="y", max_depth=3, scheduler="threads")


def test_a_value_outside_the_statistics_is_refused(tmp_path):
    path = tmp_path / "data.parquet"
    _write(path, checksums=False)
    _fit(path)  # clean: fits
    _overwrite_in_page(path, 2, "x", struct.pack("<d", 1e307))
    with pytest.raises(DataError, match=r"data.parquet: row group 2, column 'x': decoded value 1e\+307 outside"):
        _fit(path)


def test_a_page_checksum_mismatch_is_refused_through_the_cli(tmp_path):
    path = tmp_path / "data.parquet"
    _write(path, checksums=True)
    _overwrite_in_page(path, 1, "z", struct.pack("<q", 7))  # a value within the statistics: only the CRC sees it
    result = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", str(path), "--target", "y", "--out",
                             str(tmp_path / "m.json"), "--quiet", "--scheduler", "threads"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "row group 1, column 'z': cannot be read" in lines[0], lines
    assert not (tmp_path / "m.json").exists()


def test_files_dasktree_writes_carry_page_checksums(tmp_path):
    path = tmp_path / "data.parquet"
    _write(path, checksums=False)
    model = _fit(path)
    out = tmp_path / "pred"
    predict_dataset(model, str(path), str(out), scheduler="threads")
    written = sorted(out.rglob("*.parquet"))[0]
    _overwrite_in_page(written, 0, "prediction", b"\x05\x05\x05\x05")
    with pytest.raises(OSError, match="CRC"):
        pq.ParquetFile(written, page_checksum_verification=True).read()


def _flip_bit(path, row_group: int, column: str) -> None:
    """One bit of a value in the middle of a column chunk's first data page."""
    meta = pq.ParquetFile(path).metadata.row_group(row_group)
    chunk = next(meta.column(j) for j in range(meta.num_columns) if meta.column(j).path_in_schema == column)
    at = chunk.data_page_offset + chunk.total_compressed_size // 2
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 0x10]))


def _cli(*argv):
    """The command's ``main`` in this process (:func:`~dasktree.testing.processes.run_command`)."""
    from dasktree.testing.processes import run_command

    return run_command(*argv, "--quiet", "--scheduler", "inprocess")


def test_verify_refuses_a_flipped_bit_in_a_column_the_fit_does_not_read(tmp_path):
    path = tmp_path / "data.parquet"
    _write(path, checksums=True)
    _flip_bit(path, 2, "z")
    plain = _cli("fit", path, "--target", "y", "--exclude", "z", "--out", tmp_path / "plain.json")
    assert plain.returncode == 0, plain.stderr  # the fit reads x and y only: z's page is never decoded
    checked = _cli("fit", path, "--target", "y", "--exclude", "z", "--out", tmp_path / "m.json", "--verify")
    lines = checked.stderr.strip().splitlines()
    assert checked.returncode == 1, checked.stderr
    assert len(lines) == 1 and "data.parquet: row group 2, column 'z': cannot be read" in lines[0], lines
    assert "CRC" in lines[0] or "checksum" in lines[0].lower(), lines
    assert not (tmp_path / "m.json").exists()
    model = tmp_path / "plain.json"
    predicted = _cli("predict", model, path, "--out", tmp_path / "pred", "--verify")
    assert predicted.returncode == 1 and "row group 2, column 'z'" in predicted.stderr, predicted.stderr
    assert not (tmp_path / "pred").exists()


def test_verify_says_what_it_read_and_the_pages_without_checksums(tmp_path):
    with_crc, without = tmp_path / "a" / "data.parquet", tmp_path / "b" / "data.parquet"
    for path, checksums in ((with_crc, True), (without, False)):
        path.parent.mkdir()
        _write(path, checksums=checksums)
    pages = 12  # 4 row groups of 1000 rows x 3 columns, a page each (no dictionary, pages of up to 1 MB)
    done = _cli("fit", with_crc.parent, "--target", "y", "--out", tmp_path / "a.json", "--verify")
    assert done.returncode == 0, done.stderr
    assert f"verified 1 files: {pages} pages in 12 column chunks of 4 row groups read with their checksums\n" \
        in done.stdout, done.stdout
    done = _cli("fit", without.parent, "--target", "y", "--out", tmp_path / "b.json", "--verify")
    assert done.returncode == 0, done.stderr
    assert f"; {pages} pages carry none (written without checksums" in done.stdout, done.stdout

