"""CSV input: the same model, byte for byte, as Parquet on the same rows, whatever the files, their
compression and the runner; types fixed once; bad values and ragged rows one line naming the line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dasktree
from dasktree import CSV, fit, fit_regression
from dasktree.cli import main
from dasktree.errors import DataError, InputError
from dasktree.io import csv_source
from dasktree.io.csv_scan import scan_bytes
from dasktree.io.csv_source import CsvSource
from dasktree.testing import mixed_frame
from dasktree.testing.data import regression_frame

SHADES = ["plain", 'dark, "navy"\nblue', "a;b", ""]  # quotes, a delimiter and a line end inside values


def _frame(n: int = 3000, seed: int = 3) -> pd.DataFrame:
    frame = mixed_frame(n, seed=seed)
    frame["k"] = frame["k"].astype("int64")  # as CSV's inference reads it
    rng = np.random.default_rng(seed)
    shade = rng.choice(SHADES, size=n).astype(object)
    shade[shade == ""] = None  # an empty field is missing
    frame["shade"] = shade
    return frame


def _parquet(frame: pd.DataFrame, path) -> str:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=700)
    return str(path)


def _csv(frame: pd.DataFrame, path, **kw) -> str:
    path = str(path)
    text = frame.to_csv(index=False, **kw).encode()
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(os.path.splitext(path)[1])
    if path.endswith(".zst"):
        with pa.CompressedOutputStream(path, "zstd") as out:
            out.write(text)
    elif opener is not None:
        with opener(path, "wb") as out:
            out.write(text)
    else:
        with open(path, "wb") as out:
            out.write(text)
    return path


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 256 records: files cut into many chunks, parts and pieces."""
    monkeypatch.setattr(csv_source, "CHUNK_ROWS", 256)


# -- the scan ----------------------------------------------------------------------------------------

FIELD = st.text(alphabet=["a", "b", " ", ",", '"', "\n", "\r", "1"], max_size=6)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(FIELD, FIELD, FIELD), min_size=0, max_size=30),
       every=st.integers(1, 4), crlf=st.booleans(), blank=st.integers(0, 30))
def test_the_scan_finds_the_records_pyarrow_reads(rows, every, crlf, blank):
    """Against pyarrow's own parser: as many records, and parsing from each chunk start gives the rows
    from that record on (quoted delimiters, quotes and line ends, \\r\\n, empty lines)."""
    table = pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows], "c": [r[2] for r in rows]},
                     schema=pa.schema([("a", pa.string()), ("b", pa.string()), ("c", pa.string())]))
    sink = pa.BufferOutputStream()
    pcsv.write_csv(table, sink, write_options=pcsv.WriteOptions(quoting_style="all_valid" if rows else "needed"))
    data = sink.getvalue().to_pybytes()
    lines = data.split(b"\n")
    if blank and len(lines) > 2:  # an empty line between records
        at = 1 + blank % (len(lines) - 1)
        lines.insert(at, b"")
        data = b"\n".join(lines)
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    types = {"a": pa.string(), "b": pa.string(), "c": pa.string()}
    parse = pcsv.ParseOptions(newlines_in_values=True)
    expected = pcsv.read_csv(pa.BufferReader(data), parse_options=parse,
                             convert_options=pcsv.ConvertOptions(column_types=types))
    found = scan_bytes(data, every=every, block=7)  # blocks of 7 bytes: state carried across them
    assert found.rows == expected.num_rows and found.bad_line == -1
    assert len(found.starts) == -(-found.rows // every)
    for i, start in enumerate(found.starts):
        rest = pcsv.read_csv(pa.BufferReader(data[start:]), parse_options=parse,
                             read_options=pcsv.ReadOptions(column_names=["a", "b", "c"]),
                             convert_options=pcsv.ConvertOptions(column_types=types))
        assert rest.equals(expected.slice(i * every))


def test_the_scan_counts_lines_and_finds_a_ragged_row():
    data = b'a,b\n1,"x\ny"\n\n2,z\n3\n4,w'
    found = scan_bytes(data, every=1)
    assert found.rows == 4 and list(found.lines) == [1, 4, 5, 6] and found.quoted_newlines
    assert (found.bad_line, found.bad_fields, found.bad_row) == (5, 1, 2)


# -- the same model as Parquet ----------------------------------------------------------------------

@pytest.mark.parametrize("params", [dict(max_depth=6), dict(max_depth=4, nominal_split="multiway", max_arity=3)])
def test_a_csv_file_gives_the_parquet_model(tmp_path, params):
    frame = _frame()
    reference = fit(_parquet(frame, tmp_path / "d.parquet"), target="label", **params).dumps()
    assert fit(_csv(frame, tmp_path / "d.csv"), target="label", **params).dumps() == reference


def test_a_regression_from_csv_is_the_parquet_one(tmp_path):
    frame = regression_frame(3000, seed=4)
    kwargs = dict(target="y", max_depth=6)
    reference = fit_regression(_parquet(frame, tmp_path / "r.parquet"), **kwargs).dumps()
    assert fit_regression(_csv(frame, tmp_path / "r.csv"), **kwargs).dumps() == reference


def test_compressed_files_a_directory_a_glob_and_a_list_give_one_model(tmp_path, small_chunks):
    frame = _frame(4000, seed=8)
    reference = fit(_parquet(frame, tmp_path / "all.parquet"), target="label", max_depth=6).dumps()
    folder = tmp_path / "csv"
    folder.mkdir()
    endings = [".csv.gz", ".csv.bz2", ".csv.zst", ".csv.xz", ".csv"]
    bounds = np.linspace(0, len(frame), len(endings) + 1).astype(int)
    files = [_csv(frame.iloc[bounds[i]:bounds[i + 1]], folder / f"part-{i}{e}") for i, e in enumerate(endings)]
    (folder / "_SUCCESS").write_text("")  # hidden: skipped as for Parquet
    source = CsvSource(str(folder), part_rows=600)
    assert source.n_rows == len(frame) and len(source.parts) > len(files)  # parts inside compressed files too
    assert source.bytes_of(["x", "label"]) == sum(os.path.getsize(f) for f in files)  # a read reads every byte
    for data in (str(folder), str(folder / "part-*"), files):
        assert fit(data, target="label", max_depth=6, part_rows=600).dumps() == reference


def test_out_of_core_the_pieces_spill_as_parquets_do(tmp_path, small_chunks):
    frame = _frame(5000, seed=9)
    path = _csv(frame, tmp_path / "d.csv.gz")
    reference = fit(_parquet(frame, tmp_path / "d.parquet"), target="label", max_depth=6).dumps()
    streamed = fit(path, target="label", max_depth=6, cache=False, part_rows=1000)
    assert streamed.run["parquet_reads"] == 2 and streamed.run["spill_bytes_read"] > 0  # read twice, then codes
    assert streamed.dumps() == reference


def test_no_header_another_delimiter_and_names(tmp_path):
    frame = _frame(2000, seed=1)
    reference = fit(_parquet(frame, tmp_path / "d.parquet"), target="label", max_depth=5).dumps()
    path = _csv(frame, tmp_path / "d.txt", sep="|", header=False)
    data = CSV(path, delimiter="|", header=False, names=list(frame.columns))
    assert fit(data, target="label", max_depth=5).dumps() == reference
    unnamed = CsvSource(CSV(path, delimiter="|", header=False))
    assert unnamed.schema.names == [f"f{i}" for i in range(frame.shape[1])] and unnamed.n_rows == len(frame)


def test_tsv_is_tab_separated(tmp_path):
    frame = _frame(1500, seed=2).drop(columns=["shade"])
    reference = fit(_parquet(frame, tmp_path / "d.parquet"), target="label", max_depth=5).dumps()
    assert fit(_csv(frame, tmp_path / "d.tsv", sep="\t"), target="label", max_depth=5).dumps() == reference


# -- types ------------------------------------------------------------------------------------------

def test_given_types_replace_inference(tmp_path):
    rng = np.random.default_rng(0)
    zips = rng.choice(["01234", "02139", "10001", "94105"], size=800)
    label = np.where(np.isin(zips, ["01234", "02139"]), "east", "west")
    path = tmp_path / "z.csv"
    pd.DataFrame({"zip": zips, "label": label}).to_csv(path, index=False)
    assert CsvSource(str(path)).schema.field("zip").type == pa.int64()  # leading zeros gone, numeric
    source = CsvSource(CSV(str(path), types={"zip": "string"}))
    assert source.schema.field("zip").type == pa.string()
    assert set(source.read(source.parts[0], ["zip"]).column(0).to_pylist()) == set(zips)
    model = fit(CSV(str(path), types={"zip": "string"}), target="label")
    assert "01234" in dasktree.export_text(model)  # a nominal test on the codes as written


def test_types_do_not_differ_between_pieces(tmp_path, monkeypatch):
    """Types come from the first block only: a later value of another type is an error naming its line
    and column, not a piece read with other types; giving the type fixes it."""
    monkeypatch.setattr(csv_source, "INFER_BYTES", 1 << 10)
    frame = pd.DataFrame({"n": np.arange(3000) % 7, "label": np.where(np.arange(3000) % 3 == 0, "a", "b")})
    frame["n"] = frame["n"].astype(object)
    frame.loc[2500, "n"] = "1.5"
    path = _csv(frame, tmp_path / "late.csv")
    with pytest.raises(DataError, match=r"late\.csv: line 2502, column 'n': '1\.5' is not int64: give its type"):
        fit(path, target="label", max_depth=3)
    model = fit(CSV(path, types={"n": "float64"}), target="label", max_depth=3)
    assert model.report["rows_used"] == 3000


def test_a_column_empty_in_the_first_block_is_float64(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_source, "INFER_BYTES", 1 << 10)
    x = np.full(2000, np.nan)
    x[1500:] = np.linspace(0, 1, 500)
    path = _csv(pd.DataFrame({"x": x, "label": np.where(x > 0.5, "a", "b")}), tmp_path / "e.csv")
    assert CsvSource(path).schema.field("x").type == pa.float64()


@pytest.mark.parametrize("types, message", [
    ({"nope": "float64"}, "CSV types: no column 'nope'"),
    ({"x": "floaty"}, "'floaty' for column 'x' is not a type"),
])
def test_bad_types_are_usage_errors(tmp_path, types, message):
    path = _csv(_frame(100), tmp_path / "d.csv")
    with pytest.raises(InputError, match=message):
        CsvSource(CSV(path, types=types))


def test_files_with_other_headers_are_mixed_schemas(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    frame = _frame(200)
    _csv(frame, folder / "a.csv")
    _csv(frame.rename(columns={"x": "y"}), folder / "b.csv")
    with pytest.raises(DataError, match="mixed schemas: .*b.csv .* differ in columns"):
        CsvSource(str(folder))


def test_an_empty_file_is_a_data_error(tmp_path):
    (tmp_path / "e.csv").write_bytes(b"")
    with pytest.raises(DataError, match="empty file"):
        CsvSource(str(tmp_path / "e.csv"))


# -- the command ------------------------------------------------------------------------------------

def _run(argv, capsys) -> tuple[int, list[str]]:
    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()


def test_a_ragged_row_is_one_line_and_exit_1(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("x,k,label\n1,2,a\n3,4,b\n5,a\n7,8,a\n")
    code, err = _run(["fit", str(path), "--target", "label", "--out", str(tmp_path / "m.json"), "--quiet"], capsys)
    assert code == 1 and len(err) == 1
    assert "bad.csv: line 4: 2 fields where the header has 3: a ragged row" in err[0]
    assert not (tmp_path / "m.json").exists()


def test_an_unparsable_number_in_a_typed_column_is_one_line_and_exit_1(tmp_path, capsys):
    frame = _frame(3000)
    frame["x"] = frame["x"].astype(object)
    frame.loc[2000, "x"] = "n/a?"
    path = _csv(frame, tmp_path / "d.csv")
    code, err = _run(["fit", path, "--target", "label", "--out", str(tmp_path / "m.json"), "--quiet",
                      "--csv-types", "x=float64"], capsys)
    records = scan_bytes(open(path, "rb").read(), every=1)  # the line of data row 2000 (values span lines)
    assert code == 1 and len(err) == 1
    assert f"d.csv: line {records.lines[2000] + 1}, column 'x': 'n/a?' is not double" in err[0]
    code, err = _run(["fit", path, "--target", "label", "--out", str(tmp_path / "m.json"), "--quiet",
                      "--csv-types", "x"], capsys)
    assert code == 2 and "--csv-types: 'x' is not COLUMN=TYPE" in err[0]


def test_verify_parses_every_record_of_csv_before_the_work(tmp_path, capsys):
    frame = _frame(3000)
    path = _csv(frame, tmp_path / "d.csv")
    out = tmp_path / "m.json"
    assert main(["fit", path, "--target", "label", "--out", str(out), "--verify"]) == 0
    said = "".join(capsys.readouterr())
    assert "verified 1 files: 3,000 records read and every value parsed" in said
    frame["x"] = frame["x"].astype(object)
    frame.loc[2500, "x"] = "n/a?"
    bad = _csv(frame, tmp_path / "bad.csv")
    code, err = _run(["fit", bad, "--target", "label", "--out", str(tmp_path / "m2.json"), "--quiet",
                      "--csv-types", "x=float64", "--verify"], capsys)
    assert code == 1 and len(err) == 1 and "column 'x': 'n/a?' is not double" in err[0]
    assert not (tmp_path / "m2.json").exists()


def test_predict_evaluate_and_discretize_read_csv(tmp_path, capsys):
    frame = _frame(2000, seed=6)
    csv, parquet = _csv(frame, tmp_path / "d.csv"), _parquet(frame, tmp_path / "d.parquet")
    model = str(tmp_path / "m.json")
    assert main(["fit", csv, "--target", "label", "--out", model, "--quiet", "--max-depth", "5"]) == 0
    for name, data in (("csv", csv), ("parquet", parquet)):
        assert main(["predict", model, data, "--out", str(tmp_path / f"p-{name}"), "--keep", "k", "--quiet"]) == 0
    read = [pq.read_table(tmp_path / f"p-{n}").sort_by("k").to_pandas() for n in ("csv", "parquet")]
    assert len(read[0]) == len(frame)
    pd.testing.assert_frame_equal(read[0].sort_values(list(read[0].columns)).reset_index(drop=True),
                                  read[1].sort_values(list(read[1].columns)).reset_index(drop=True))
    capsys.readouterr()
    scores = []
    for data in (csv, parquet):
        assert main(["evaluate", model, data, "--json", "--quiet"]) == 0
        scores.append(capsys.readouterr().out.replace(data, "DATA"))
    assert scores[0] == scores[1]
    cuts = []
    for name, data in (("csv", csv), ("parquet", parquet)):
        out = tmp_path / f"disc-{name}"
        assert main(["discretize", data, "--target", "label", "--out", str(out), "--quiet", "--features", "x,k"]) == 0
        cuts.append((out / "_discretizer.json").read_text())
    assert cuts[0] == cuts[1]


def test_the_help_names_the_csv_options(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = capsys.readouterr().out
    assert "--csv-types" in text and "--csv-delimiter" in text and "--csv-no-header" in text


# -- on a cluster, and on S3 ------------------------------------------------------------------------

@pytest.mark.cluster
def test_on_a_cluster_the_parts_are_read_on_the_workers(tmp_path, cluster_client, small_chunks):
    frame = _frame(3000, seed=11)
    path = _csv(frame, tmp_path / "d.csv.gz")
    reference = fit(_parquet(frame, tmp_path / "d.parquet"), target="label", max_depth=5).dumps()
    assert fit(path, target="label", max_depth=5, client=cluster_client, part_rows=800).dumps() == reference
    streamed = fit(path, target="label", max_depth=5, client=cluster_client, part_rows=800, cache=False)
    assert streamed.dumps() == reference


@pytest.mark.cluster
def test_csv_from_s3_is_the_local_model(tmp_path):
    pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    from dasktree.testing.s3 import s3_server

    frame = _frame(2000, seed=12)
    reference = fit(_parquet(frame, tmp_path / "d.parquet"), target="label", max_depth=5).dumps()
    with s3_server() as endpoint:
        options = {"key": "testing", "secret": "testing",
                   "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"}}
        fs = s3fs.S3FileSystem(**options)
        fs.call_s3("create_bucket", Bucket="dasktree-csv")
        fs.put(_csv(frame, tmp_path / "d.csv.gz"), "dasktree-csv/in/d.csv.gz")
        model = fit("s3://dasktree-csv/in/d.csv.gz", target="label", max_depth=5, storage_options=options)
        assert model.dumps() == reference
        typed = fit(CSV("s3://dasktree-csv/in/", types={"k": "float64"}, storage_options=options),
                    target="label", max_depth=5)
        assert typed.report["rows_used"] == len(frame)


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=["a", ",", '"', "\n", "\r"], min_size=1, max_size=40))
def test_the_scan_agrees_with_pyarrow_on_any_text(text):
    """Any text pyarrow parses (quotes inside unquoted values, stray line ends): the scan finds its
    records, or a ragged row where pyarrow's field counts differ."""
    data = ("h1,h2\n" + text).encode()
    parse = pcsv.ParseOptions(newlines_in_values=True)
    types = {"h1": pa.string(), "h2": pa.string()}
    try:
        expected = pcsv.read_csv(pa.BufferReader(data), parse_options=parse,
                                 convert_options=pcsv.ConvertOptions(column_types=types))
    except pa.ArrowInvalid as exc:
        if "columns, got" in str(exc):  # pyarrow's ragged row: the scan finds one too
            assert scan_bytes(data, every=1, block=5).bad_line >= 0
        return
    found = scan_bytes(data, every=1, block=5)
    assert found.rows == expected.num_rows and found.bad_line == -1
    for i, start in enumerate(found.starts):
        rest = pcsv.read_csv(pa.BufferReader(data[start:]), parse_options=parse,
                             read_options=pcsv.ReadOptions(column_names=["h1", "h2"]),
                             convert_options=pcsv.ConvertOptions(column_types=types))
        assert rest.equals(expected.slice(i))


def test_a_compressed_files_parts_read_in_order_decompress_it_once(tmp_path, small_chunks, monkeypatch):
    frame = _frame(3000, seed=5)
    source = CsvSource(_csv(frame, tmp_path / "d.csv.gz"), part_rows=500)
    opened = []
    real = CsvSource._open
    monkeypatch.setattr(CsvSource, "_open", lambda self, path: opened.append(path) or real(self, path))
    tables = [source.read(part, ["x", "label"]) for part in source.parts]
    assert len(source.parts) > 3 and len(opened) == 1  # each part continues where the last one stopped
    assert pa.concat_tables(tables).to_pandas()["x"].equals(frame["x"])
    source.read(source.parts[0], ["x"])  # behind every kept stream: a stream of its own
    assert len(opened) == 2
    import pickle

    again = pickle.loads(pickle.dumps(source))  # as shipped to a worker: no stream, reads all the same
    assert again.read(source.parts[-1], ["x"]).equals(tables[-1].select(["x"]))


def test_the_command_scans_the_data_once(tmp_path, monkeypatch, capsys):
    """``--task auto`` looks at the target's type without the scan: the fit's opening is the one read."""
    frame = regression_frame(1500, seed=3)
    path = _csv(frame, tmp_path / "r.csv")
    scanned = []
    real = CsvSource._scan
    monkeypatch.setattr(CsvSource, "_scan", lambda self, p: scanned.append(p) or real(self, p))
    assert main(["fit", path, "--target", "y", "--out", str(tmp_path / "m.json"), "--max-depth", "3"]) == 0
    assert "a regression tree" in capsys.readouterr().out and scanned == [path]


def test_with_cv_the_folds_follow_the_same_row_keys(tmp_path):
    """A CSV part's rows are keyed (file below the root, row offset) as Parquet's: the same file name
    gives the same folds, so the cross-validated model is the same bytes too."""
    frame = _frame(2500, seed=13)
    (tmp_path / "p").mkdir()
    (tmp_path / "c").mkdir()
    parquet = _parquet(frame, tmp_path / "p" / "rows")
    csv = _csv(frame, tmp_path / "c" / "rows")
    params = dict(target="label", max_depth=5, cv=3)
    assert fit(CSV(csv), part_rows=900, **params).dumps() == fit(parquet, **params).dumps()


def test_an_empty_file_among_others_holds_no_rows(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.csv").write_bytes(b"")  # first in order: the types come from the next one
    frame = _frame(300)
    _csv(frame, folder / "b.csv")
    source = CsvSource(str(folder))
    assert source.n_rows == len(frame) and source.schema.names == list(frame.columns)
