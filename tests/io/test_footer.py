"""Parquet footers read by dasktree itself (:mod:`dasktree.io.footer`): the same numbers as pyarrow's
accessors on good files, one error line (never an aborted interpreter) on the corrupt ones."""

import os
import struct
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.repro import pyarrow_footer_abort
from dasktree.errors import DataError
from dasktree.io import footer as footer_module
from dasktree.io.footer import parse_footer, read_footer

TYPES = {
    "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(), "uint8": pa.uint8(),
    "uint32": pa.uint32(), "uint64": pa.uint64(), "float32": pa.float32(), "float64": pa.float64(),
    "string": pa.string(), "bool": pa.bool_(), "date": pa.date32(),
}


def _naive(path):
    """The footer as pyarrow's accessors give it (the good files only: they abort on some bad ones)."""
    meta = pq.ParquetFile(path).metadata
    rows, groups = [], []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        rows.append(group.num_rows)
        chunks = []
        for j in range(group.num_columns):
            col = group.column(j)
            stats = col.statistics
            numeric = (col.physical_type in ("INT32", "INT64", "FLOAT", "DOUBLE") and "." not in col.path_in_schema
                       and col.statistics is not None and isinstance(col.statistics.min, (int, float)))
            low, high = (stats.min, stats.max) if numeric and stats is not None and stats.has_min_max else (None, None)
            chunks.append((col.path_in_schema.split(".")[0], col.total_compressed_size, low, high))
        groups.append(chunks)
    return rows, groups


@st.composite
def tables(draw):
    n = draw(st.integers(0, 60))
    names = draw(st.lists(st.sampled_from(sorted(TYPES)), min_size=1, max_size=5, unique=True))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    columns = {}
    for name in names:
        t = TYPES[name]
        if name == "string":
            values = [f"s{v}" for v in rng.integers(0, 9, n)]
        elif name == "bool":
            values = list(rng.random(n) < 0.5)
        elif name == "date":
            values = list(rng.integers(0, 20000, n).astype("int32"))
        elif pa.types.is_floating(t):
            values = list(rng.normal(0, 1e6, n))
        else:
            info = np.iinfo(t.to_pandas_dtype())
            values = [int(v) for v in rng.integers(info.min, info.max, n, dtype=t.to_pandas_dtype(), endpoint=True)]
        mask = rng.random(n) < draw(st.sampled_from([0.0, 0.3]))
        columns[name] = pa.array(values, type=t, mask=mask) if n else pa.array([], type=t)
    if draw(st.booleans()) and n:
        columns["nested"] = pa.array([{"a": int(v), "b": float(v)} for v in rng.integers(0, 5, n)])
    return pa.table(columns), draw(st.integers(1, 25)), draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(tables())
def test_the_footer_agrees_with_pyarrows_accessors(tmp_path_factory, case):
    table, group_size, dictionary = case
    path = str(tmp_path_factory.mktemp("footer") / "t.parquet")
    pq.write_table(table, path, row_group_size=group_size, use_dictionary=dictionary)
    with pa.OSFile(path) as f:
        footer = read_footer(f, path)
    rows, groups = _naive(path)
    assert footer.group_rows == rows
    assert [[(c.name, c.compressed, c.min, c.max) for c in g] for g in footer.groups] == groups
    assert footer.metadata().equals(pq.ParquetFile(path).metadata)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_damaged_footer_is_a_data_error_or_decodes(data):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")  # any name for the messages
    body = _FOOTER
    how = data.draw(st.sampled_from(["flip", "cut", "insert", "nest"]))
    b = bytearray(body)
    if how == "flip":
        for i in data.draw(st.lists(st.integers(0, len(b) - 1), min_size=1, max_size=8)):
            b[i] ^= 1 << data.draw(st.integers(0, 7))
    elif how == "cut":
        b = b[:data.draw(st.integers(0, len(b) - 1))]
    elif how == "insert":
        at = data.draw(st.integers(0, len(b)))
        b[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    else:
        b = bytearray(b"\x19\x1c" * 5000 + body)  # a list of structs, 5000 deep
    footer_module._CACHE.clear()
    try:
        parse_footer(bytes(b), path)
    except DataError as exc:
        assert "the Parquet footer is corrupt" in str(exc) and "\n" not in str(exc)


def _footer_of(table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    length = struct.unpack("<I", data[-8:-4])[0]
    return data[-8 - length:-8]


_FOOTER = _footer_of(pa.table({"x": [1.5, None, 3.0], "y": [1, 2, 3], "s": ["a", "b", None]}))


def test_pyarrow_still_aborts_on_the_reproducers_file(tmp_path):
    """The reproducer shows the upstream bug (when this fails, pyarrow fixed it: say so upstream and
    in dasktree.io.footer's documentation)."""
    path = pyarrow_footer_abort.write_file(str(tmp_path / "h.parquet"))
    results = pyarrow_footer_abort.run(path)
    assert results["row_group(0).column(0)"][0] == -6, results
    assert results["read_table"][0] == 1 and "histogram size mismatch" in results["read_table"][1], results


@pytest.mark.parametrize("verb", ["fit", "predict"])
def test_a_footer_that_aborts_pyarrow_is_one_line_and_exit_1(tmp_path, verb):
    """In a child process: an abort fails this test instead of ending pytest."""
    import dasktree

    data = tmp_path / "data"
    data.mkdir()
    frame = pa.table({"x": [1.0, 2.0, 3.0, 4.0] * 10, "y": [0, 1, 0, 1] * 10})
    pq.write_table(frame, data / "a.parquet")
    model = tmp_path / "model.json"
    dasktree.fit(str(data), target="y", max_depth=2, scheduler="inprocess").save(str(model))
    pyarrow_footer_abort.write_file(str(data / "b.parquet"), frame)
    argv = (["fit", str(data), "--target", "y", "--out", str(tmp_path / "m.json")] if verb == "fit"
            else ["predict", str(model), str(data), "--out", str(tmp_path / "pred")])
    result = subprocess.run([sys.executable, "-m", "dasktree.cli", *argv, "--quiet", "--scheduler", "inprocess"],
                            capture_output=True, text=True, timeout=300)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1, (result.returncode, lines)
    assert len(lines) == 1 and "b.parquet" in lines[0] and "histogram size mismatch" in lines[0], lines
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "pred").exists()


def test_a_column_name_that_is_not_utf8_is_one_line_and_exit_1(tmp_path):
    """A footer byte the fuzz claim found: pyarrow raises UnicodeDecodeError reading such a schema."""
    data = tmp_path / "data"
    data.mkdir()
    pq.write_table(pa.table({"q": [1.0, 2.0, 3.0, 4.0], "y": [0, 1, 0, 1]}), data / "a.parquet", store_schema=False)
    raw = (data / "a.parquet").read_bytes()
    length = struct.unpack("<I", raw[-8:-4])[0]
    body, footer = raw[:-8 - length], raw[-8 - length:-8].replace(b"\x01q", b"\x01\x80")
    (data / "a.parquet").write_bytes(body + footer + struct.pack("<I", len(footer)) + b"PAR1")
    result = subprocess.run([sys.executable, "-m", "dasktree.cli", "fit", str(data), "--target", "y", "--out",
                             str(tmp_path / "m.json"), "--quiet", "--scheduler", "inprocess"],
                            capture_output=True, text=True, timeout=300)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "a.parquet: not a Parquet file" in lines[0], lines
