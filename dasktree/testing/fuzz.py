"""Fuzzed inputs for the ``dasktree`` command: mutated Parquet files, CSV files, model files,
checkpoints and argument strings, each run and judged against the command's contract.

The contract: every run ends with exit 0, 1 or 2 (never 3, a bug, nor a traceback), an error is
exactly one line on stderr, no run outlives its time bound, the interpreter never crashes, and a
failed run leaves no output behind (neither ``--out`` nor a temporary file beside it).

:func:`make_seeds` writes the valid inputs once: a small Parquet dataset, a model fitted on it
(with cross-validation, its fold trees kept) and a checkpoint of that fit. A Parquet file's
mutations are damage anywhere (flipped bits, truncation, zeroed runs, inserted bytes, the magic,
the footer's length) and, as often again, damage aimed at its footer's Thrift with the length kept
right (flipped bits, odd bytes, bytes inserted or deleted, a list one element longer or shorter,
as a level histogram of the wrong size) and at its page headers (flipped bits, odd bytes, sizes
made huge, zero or one). A CSV file's mutations are the same damage anywhere and, as often again,
damage aimed at its text (a lone quote, a field more or less, a header renamed, duplicated or
emptied, a value replaced by an odd one, NUL or non-UTF-8 bytes, a bare carriage return, a field of
a million characters, a gzip'd file cut short or with a flipped bit). :func:`cases` derives
``n`` mutated cases from them with a seeded ``random.Random`` (the same seed, the same cases);
:func:`run_case` runs one, in this process through :func:`dasktree.cli.main` (``SystemExit`` caught,
stderr and warnings captured) or as a real process (to see a crash of the interpreter), and says
how it ended: :class:`Outcome`. :func:`run_isolated` runs many in a child process that is started
again when a case crashes it (a C++ exception escaping pyarrow ends the whole interpreter): the
crash is that case's outcome and the campaign goes on. A case that overruns its bound ends its child
too: the alarm ends the command's main thread, not the threads it started nor an import it left half
done, and the next case must not meet them (one such import once failed nine cases after it). ``tests/test_fuzz.py`` runs a fixed sample of a hundred; the
``benchmarks/fuzz.py`` claim tens of thousands.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field

__all__ = ["KINDS", "Case", "Outcome", "make_seeds", "undamaged", "cases", "run_case", "run_isolated"]

KINDS = ("parquet", "csv", "model", "checkpoint", "argv")
RUN = ["--scheduler", "inprocess", "--quiet"]
_WEIRD = ["", "-1", "0", "1e400", "-1e400", "nan", "inf", "-inf", "999999999999999999999", "0x10", "1.5",
          "é", "\x00", "--", "-", "a,b,,c", "../../etc/passwd", "s3://", "file://", "~", "%s%s%n", " ", "true",
          "None", "[1]", "{}", "9" * 400, "-0", "1_000", "\u202e", "class", "elevel", "balanced", "0=1,=2"]
_JSON_WEIRD = [None, True, "x", "", -1, 0, 2**63, -(2**63) - 1, 10**400, 1e308, float("nan"), float("inf"),
               [], {}, [[]], {"a": 1}, [None], "NaN", 1.5, -0.0]


@dataclass
class Case:
    """One run: the ``argv`` of the command (``{work}`` for the case's directory) and the files
    (name -> bytes), seed directories (name -> path to copy) it needs there, or a file of a copied
    directory to remove (name -> None)."""

    kind: str
    argv: list[str]
    files: dict[str, bytes | str] = field(default_factory=dict)
    note: str = ""


@dataclass
class Outcome:
    kind: str
    code: int | None  # None: the run did not end within its bound (a hang)
    lines: list[str]
    seconds: float
    left_behind: list[str]
    note: str = ""
    crashed: bool = False
    process: int = 0  # the pid of the interpreter that ran the command

    @property
    def ok(self) -> bool:
        """Whether the run kept the contract (see the module's documentation)."""
        if self.code is None or self.crashed or self.left_behind:
            return False
        if any("Traceback" in line for line in self.lines):
            return False
        if self.code == 0:
            return True
        return self.code in (1, 2) and len(self.lines) == 1

    @property
    def verdict(self) -> str:
        if self.code is None:
            return "hang"
        if self.crashed:
            return "crash"
        if any("Traceback" in line for line in self.lines):
            return "traceback"
        if self.left_behind:
            return "left output behind"
        if self.code not in (0, 1, 2):
            return f"exit {self.code}"
        if self.code != 0 and len(self.lines) != 1:
            return f"{len(self.lines)} lines"
        return "ok"


def make_seeds(root: str) -> dict[str, str]:
    """The valid inputs the mutations start from, written under ``root``."""
    from ..datasets import agrawal
    from ..fit import fit

    data = os.path.join(root, "data")
    agrawal.write_parquet(data, 400, n_files=2, function=7, perturbation=0.1, seed=0, overwrite=True)
    csv = os.path.join(root, "csv")  # the same rows as CSV files, one per Parquet file
    shutil.rmtree(csv, ignore_errors=True)
    os.makedirs(csv)
    import pyarrow.parquet as pq

    for name in sorted(f for f in os.listdir(data) if f.endswith(".parquet")):
        pq.read_table(os.path.join(data, name)).to_pandas().to_csv(
            os.path.join(csv, name.replace(".parquet", ".csv")), index=False)
    model = fit(data, target=agrawal.TARGET, max_depth=4, cv=2, keep_fold_trees=True, scheduler="inprocess")
    model_path = os.path.join(root, "model.json")
    model.save(model_path)
    checkpoint = os.path.join(root, "checkpoint")
    shutil.rmtree(checkpoint, ignore_errors=True)
    fit(data, target=agrawal.TARGET, max_depth=4, scheduler="inprocess", checkpoint=checkpoint)
    return {"data": data, "csv": csv, "model": model_path, "checkpoint": checkpoint, "target": agrawal.TARGET}


# ---------------------------------------------------------------- mutations

def _parquet_regions(data: bytes) -> dict[str, list[int]]:
    """Where a good Parquet file's footer and page headers are (the offsets of each column chunk's
    first page and, when it has one, its dictionary page), for the mutations aimed at them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    length = struct.unpack("<I", data[-8:-4])[0]
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata  # a seed: a good file dasktree wrote
    pages = []
    for g in range(meta.num_row_groups):
        for j in range(meta.num_columns):
            chunk = meta.row_group(g).column(j)
            pages.append(chunk.data_page_offset)
            if chunk.has_dictionary_page:
                pages.append(chunk.dictionary_page_offset)
    return {"footer": [len(data) - 8 - length, len(data) - 8], "pages": sorted(set(pages))}


def _with_footer(b: bytearray, start: int, footer: bytes) -> bytearray:
    """The file with its footer (from ``start``) replaced, the footer's length field set to match."""
    return bytearray(bytes(b[:start]) + footer + struct.pack("<I", len(footer)) + b"PAR1")


def _mutate_footer(rng: random.Random, b: bytearray, start: int, end: int) -> tuple[bytearray, str]:
    """Mutations inside the footer's Thrift, its length kept right, so the damage reaches the decoder."""
    footer = bytearray(b[start:end])
    how = rng.choice(["footer flip", "footer byte", "footer insert", "footer delete", "footer list",
                      "footer list"])
    if how == "footer flip":
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(footer))
            footer[i] ^= 1 << rng.randrange(8)
    elif how == "footer byte":
        footer[rng.randrange(len(footer))] = rng.choice([0x00, 0x0F, 0x15, 0x19, 0x1C, 0x26, 0x7F, 0x80, 0xFF,
                                                         rng.randrange(256)])
    elif how == "footer insert":
        i = rng.randrange(len(footer))
        footer[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 3)))
    elif how == "footer delete":
        i = rng.randrange(len(footer))
        del footer[i:i + rng.randint(1, 3)]
    else:  # a list's length one more or one less, an element added or taken away (a level histogram...)
        lists = [i for i in range(1, len(footer) - 1) if footer[i - 1] & 0x0F == 9 and 0 < footer[i] >> 4 < 14]
        if lists:
            i = rng.choice(lists)
            if rng.random() < 0.5:
                footer[i] += 0x10
                footer[i + 1:i + 1] = bytes([rng.choice([0, 2, 0x15])])
            else:
                footer[i] -= 0x10
                del footer[i + 1]
    return _with_footer(b, start, bytes(footer)), how


def _mutate_page_header(rng: random.Random, b: bytearray, pages: list[int]) -> tuple[bytearray, str]:
    """Mutations in a page header (the Thrift before each page's values: sizes, counts, encodings, CRC)."""
    at = rng.choice(pages)
    how = rng.choice(["page flip", "page byte", "page size"])
    if how == "page flip":
        for _ in range(rng.randint(1, 3)):
            i = at + rng.randrange(24)
            b[i] ^= 1 << rng.randrange(8)
    elif how == "page byte":
        b[at + rng.randrange(24)] = rng.choice([0x00, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    else:  # a size's varint made huge, negative or zero
        i = at + rng.randrange(2, 10)
        b[i:i + 1] = rng.choice([b"\xff\xff\xff\xff\x0f", b"\x01", b"\x00", b"\xfe\xff\xff\xff\x1f"])
    return b, how


def _mutate_bytes(rng: random.Random, data: bytes, regions: dict[str, list[int]] | None = None) -> tuple[bytes, str]:
    kinds = ["flip", "truncate", "footer", "huge footer", "zero run", "insert", "magic"]
    if regions:  # a Parquet file: as many mutations again aimed at its footer and page headers
        kinds += ["in footer"] * 4 + ["page header"] * 3
    how = rng.choice(kinds)
    b = bytearray(data)
    if how == "in footer":
        b, how = _mutate_footer(rng, b, *regions["footer"])
        return bytes(b), how
    if how == "page header":
        b, how = _mutate_page_header(rng, b, regions["pages"])
        return bytes(b), how
    if how == "flip":
        for _ in range(rng.randint(1, 16)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif how == "truncate":
        b = b[:rng.randrange(len(b))]
    elif how == "footer" and len(b) > 12:  # the footer's length field and magic
        i = len(b) - rng.randint(1, 12)
        b[i] = rng.randrange(256)
    elif how == "huge footer" and len(b) > 8:
        b[-8:-4] = struct.pack("<I", rng.choice([0x7FFFFFFF, 0xFFFFFFFF, len(b) + 1, len(b) * 1000, 0]))
    elif how == "zero run":
        i = rng.randrange(len(b))
        b[i:i + rng.randint(1, 256)] = bytes(min(len(b) - i, rng.randint(1, 256)))
    elif how == "insert":
        i = rng.randrange(len(b))
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    else:  # the magic at either end
        b[:4] = b"PAR0" if rng.random() < 0.5 else b[:4]
        b[-4:] = b"RAP1"
    return bytes(b), how


def _mutate_csv(rng: random.Random, text: bytes) -> tuple[bytes, str, bool]:
    """A CSV file damaged: anywhere (:func:`_mutate_bytes`) or, as often, in its text; the third
    value says whether the file is to be written gzip'd (its name then ends in ``.csv.gz``)."""
    how = rng.choice(["bytes", "bytes", "bytes", "bytes", "quote", "field more", "field less", "header",
                      "value", "nul", "not utf-8", "carriage return", "long field", "gzip"])
    if how == "bytes":
        mutated, what = _mutate_bytes(rng, text)
        return mutated, f"bytes: {what}", False
    lines = text.split(b"\n")
    row = rng.randrange(1, max(2, len(lines) - 1))
    fields = lines[row].split(b",")
    at = rng.randrange(len(fields))
    if how == "quote":
        i = rng.randrange(len(lines[row]) + 1)
        lines[row] = lines[row][:i] + b'"' + lines[row][i:]
    elif how == "field more":
        fields.insert(at, rng.choice([b"", b"1", b"x", b'""']))
        lines[row] = b",".join(fields)
    elif how == "field less":
        del fields[at]
        lines[row] = b",".join(fields)
    elif how == "header":
        names = lines[0].split(b",")
        i = rng.randrange(len(names))
        names[i] = rng.choice([b"", names[(i + 1) % len(names)], b'"', b"\xff", b"class", b" "])
        lines[0] = b",".join(names)
    elif how == "value":
        fields[at] = rng.choice(_WEIRD).encode("utf-8", "surrogatepass")
        lines[row] = b",".join(fields)
    elif how == "nul":
        fields[at] += b"\x00"
        lines[row] = b",".join(fields)
    elif how == "not utf-8":
        fields[at] = rng.choice([b"\xff\xfe", b"\x80", b"\xc3", b"\xed\xa0\x80"]) + fields[at]
        lines[row] = b",".join(fields)
    elif how == "carriage return":
        fields[at] += b"\r"
        lines[row] = b",".join(fields)
    elif how == "long field":
        fields[at] = b"9" * 1_000_000 if rng.random() < 0.5 else b"x" * 1_000_000
        lines[row] = b",".join(fields)
    else:  # gzip'd, then cut short or a bit flipped (or left whole)
        import gzip

        b = bytearray(gzip.compress(text, mtime=0))
        what = rng.choice(["cut", "flip", "whole"])
        if what == "cut":
            b = b[:rng.randrange(len(b))]
        elif what == "flip":
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b), f"gzip {what}", True
    return b"\n".join(lines), how, False


def _paths(value, prefix=()):
    """Every (path, value) in a JSON document."""
    yield prefix, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _set(doc, path, value):
    if not path:
        return value
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return doc


def _mutate_json(rng: random.Random, text: str) -> tuple[bytes, str]:
    doc = json.loads(text)
    how = rng.choice(["wrong type", "wrong type", "missing key", "deep nesting", "huge number", "nan",
                      "bytes", "shrink list", "swap"])
    if how == "bytes":
        mutated, what = _mutate_bytes(rng, text.encode())
        return mutated, f"bytes: {what}"
    paths = [p for p, _ in _paths(doc) if p]
    path = rng.choice(paths)
    if how == "wrong type":
        doc = _set(doc, path, rng.choice(_JSON_WEIRD))
    elif how == "missing key":
        keyed = [p for p in paths if isinstance(p[-1], str)]
        path = rng.choice(keyed)
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        del parent[path[-1]]
    elif how == "deep nesting":
        depth = rng.choice([100, 1000, 100_000])
        return _deep(text, path, depth, doc), f"{how} {depth}"
    elif how == "huge number":
        doc = _set(doc, path, rng.choice([10**400, -(10**400), 2**64, 1e308, -1e308, 5e-324]))
    elif how == "nan":
        doc = _set(doc, path, rng.choice([float("nan"), float("inf"), float("-inf")]))
    elif how == "shrink list":
        lists = [p for p, v in _paths(doc) if isinstance(v, list) and v and p]
        if lists:
            path = rng.choice(lists)
            value = doc
            for step in path:
                value = value[step]
            _set(doc, path, value[:rng.randrange(len(value))])
    else:  # two values of the document exchanged
        other = rng.choice(paths)
        a, b = _get(doc, path), _get(doc, other)
        if not _inside(path, other) and not _inside(other, path):
            _set(doc, path, b)
            _set(doc, other, a)
    return json.dumps(doc).encode(), f"{how} at {'/'.join(map(str, path))}"


def _get(doc, path):
    return doc if not path else _get(doc[path[0]], path[1:])


def _inside(a, b) -> bool:
    return len(a) <= len(b) and tuple(b[:len(a)]) == tuple(a)


def _deep(text: str, path, depth: int, doc) -> bytes:
    """The document with the value at ``path`` buried ``depth`` lists deep (written as text: json
    itself cannot dump what it cannot load)."""
    marker = "__dasktree_fuzz_deep__"
    _set(doc, path, marker)
    return json.dumps(doc).replace(f'"{marker}"', "[" * depth + "1" + "]" * depth).encode()


def _mutate_argv(rng: random.Random, argv: list[str]) -> tuple[list[str], str]:
    argv = list(argv)
    how = rng.choice(["value", "value", "drop", "duplicate", "unknown", "swap", "junk"])
    free = [i for i, a in enumerate(argv) if i > 0 and argv[i - 1] != "--scheduler" and a != "--scheduler"
            and a != "inprocess"]
    i = rng.choice(free) if free else 0
    if how == "value":
        argv[i] = rng.choice(_WEIRD)
    elif how == "drop" and free:
        del argv[i]
    elif how == "duplicate":
        argv.insert(i, argv[i])
    elif how == "unknown":
        argv.insert(i, rng.choice(["--no-such-option", "-x", "--max-depth=", "--=", "---", "--json=1"]))
    elif how == "swap" and len(free) > 1:
        j = rng.choice(free)
        argv[i], argv[j] = argv[j], argv[i]
    else:
        argv.insert(i, "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(rng.randint(1, 12))))
    return argv, how


def _templates(seeds: dict[str, str]) -> list[list[str]]:
    t = seeds["target"]
    return [
        ["fit", "{work}/data", "--target", t, "--out", "{work}/out.json", *RUN, "--max-depth", "3"],
        ["fit", "{work}/data", "--target", t, "--out", "{work}/out.json", *RUN, "--cv", "2", "--prune", "cv",
         "--max-arity", "3", "--min-samples-leaf", "5"],
        ["fit", "{work}/data", "--target", t, "--out", "{work}/out.json", *RUN, "--nominal", "elevel,car",
         "--nominal-split", "multiway", "--criterion", "gain_ratio", "--weight", "age", "--class-weight", "balanced"],
        ["predict", "{work}/model.json", "{work}/data", "--out", "{work}/out", *RUN, "--keep", "age"],
        ["show", "{work}/model.json", "--format", "report"],
        ["prune", "{work}/model.json", "--mode", "cv", "--out", "{work}/out.json"],
        ["prune", "{work}/model.json", "--alpha", "0.01", "--out", "{work}/out.json", "--json"],
    ]


def undamaged(seeds: dict[str, str]) -> list[Case]:
    """The commands the mutations start from, on the undamaged inputs (Parquet and CSV): a child's
    warm-up in :func:`run_isolated`."""
    model = open(seeds["model"], "rb").read()
    csv_fit = ["fit", "{work}/csv", "--target", seeds["target"], "--out", "{work}/out.json", *RUN, "--max-depth", "3"]
    return [Case("argv", argv, {"data": seeds["data"], "csv": seeds["csv"], "model.json": model}, "undamaged")
            for argv in [*_templates(seeds), csv_fit]]


def cases(seeds: dict[str, str], n: int, seed: int = 0, kinds=KINDS) -> list[Case]:
    """``n`` mutated cases, spread evenly over ``kinds``, the same for the same ``seed``."""
    rng = random.Random(seed)
    data_files = sorted(f for f in os.listdir(seeds["data"]) if f.endswith(".parquet"))
    blobs = {f: open(os.path.join(seeds["data"], f), "rb").read() for f in data_files}
    regions = {f: _parquet_regions(blob) for f, blob in blobs.items()}
    csv_files = sorted(os.listdir(seeds["csv"]))
    csv_texts = {f: open(os.path.join(seeds["csv"], f), "rb").read() for f in csv_files}
    model_text = open(seeds["model"]).read()
    checkpoint_files = sorted(os.listdir(seeds["checkpoint"]))
    templates = _templates(seeds)
    t = seeds["target"]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        if kind == "parquet":
            name = rng.choice(data_files)
            mutated, how = _mutate_bytes(rng, blobs[name], regions[name])
            files = {"data": seeds["data"], f"data/{name}": mutated, "model.json": model_text.encode()}
            argv = rng.choice([
                ["fit", "{work}/data", "--target", t, "--out", "{work}/out.json", *RUN, "--max-depth", "3"],
                ["predict", "{work}/model.json", "{work}/data", "--out", "{work}/out", *RUN],
            ])
            out.append(Case(kind, argv, files, f"{name}: {how}"))
        elif kind == "csv":
            name = rng.choice(csv_files)
            mutated, how, zipped = _mutate_csv(rng, csv_texts[name])
            files = {"csv": seeds["csv"], "model.json": model_text.encode()}
            if zipped:  # the file replaced by its gzip'd twin
                files[f"csv/{name}"] = None
                name += ".gz"
            files[f"csv/{name}"] = mutated
            argv = rng.choice([
                ["fit", "{work}/csv", "--target", t, "--out", "{work}/out.json", *RUN, "--max-depth", "3"],
                ["fit", "{work}/csv", "--target", t, "--out", "{work}/out.json", *RUN, "--max-depth", "3", "--verify"],
                ["predict", "{work}/model.json", "{work}/csv", "--out", "{work}/out", *RUN],
            ])
            out.append(Case(kind, argv, files, f"{name}: {how}"))
        elif kind == "model":
            mutated, how = _mutate_json(rng, model_text)
            argv = rng.choice([t for t in templates if t[0] in ("predict", "show", "prune")])
            if argv[0] == "show":
                argv = [*argv[:-1], rng.choice(["text", "dot", "json", "report", "cp"])]
            out.append(Case(kind, argv, {"data": seeds["data"], "model.json": mutated}, how))
        elif kind == "checkpoint":
            name = rng.choice(checkpoint_files)
            content = open(os.path.join(seeds["checkpoint"], name), "rb").read()
            if name.endswith(".json"):
                mutated, how = _mutate_json(rng, content.decode())
            else:
                mutated, how = _mutate_bytes(rng, content)
            argv = ["fit", "{work}/data", "--target", t, "--out", "{work}/out.json", *RUN, "--max-depth", "4",
                    "--checkpoint", "{work}/checkpoint"]
            out.append(Case(kind, argv, {"data": seeds["data"], "checkpoint": seeds["checkpoint"],
                                         f"checkpoint/{name}": mutated}, f"{name}: {how}"))
        else:
            argv, how = _mutate_argv(rng, rng.choice(templates))
            out.append(Case(kind, argv, {"data": seeds["data"], "model.json": model_text.encode()}, how))
    return out


# ---------------------------------------------------------------- running

class _Hang(BaseException):  # the run outlived its bound (the command's handlers do not catch BaseException)
    pass


def _materialize(case: Case, work: str) -> list[str]:
    os.makedirs(work)
    for name, content in case.files.items():
        path = os.path.join(work, name)
        if isinstance(content, str):
            shutil.copytree(content, path)
        elif content is None:
            os.remove(path)
        else:
            with open(path, "wb") as f:
                f.write(content)
    if os.path.isdir(os.path.join(work, "checkpoint")):
        os.chmod(os.path.join(work, "checkpoint"), 0o755)
    return [a.replace("{work}", work) for a in case.argv]


def _listing(work: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), work) for d, dirs, files in os.walk(work) for f in [*files, *dirs]}


def _case_home(work: str) -> dict[str, str]:
    """The environment a case runs with: ``HOME`` an empty directory of its own beside the case's
    (removed with it: a mutated ``~`` must not walk this machine's home, nor ``--out ~/...`` write
    into it), the caches where they were (``XDG_CACHE_HOME``: the compiled kernels stay found)."""
    work = os.path.abspath(work)
    home = os.path.join(os.path.dirname(work), f"home-{os.path.basename(work)}")
    os.makedirs(home, exist_ok=True)
    return {"HOME": home, "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME")
            or os.path.join(os.path.expanduser("~"), ".cache")}


def run_case(case: Case, work: str, *, seconds: float = 60.0, subprocess_run: bool = False) -> Outcome:
    """Run ``case`` in the new directory ``work`` (removed afterwards) and judge it."""
    argv = _materialize(case, work)
    before = _listing(work)
    started = time.perf_counter()
    crashed = False
    process = os.getpid()
    home = _case_home(work)
    if subprocess_run:
        with subprocess.Popen([sys.executable, "-m", "dasktree.cli", *argv], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=work, errors="replace",
                              env={**os.environ, **home}) as proc:
            process = proc.pid
            try:
                err = proc.communicate(timeout=seconds)[1]
                code = proc.returncode
                crashed = code < 0
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                code, err = None, ""
    else:
        here, was = os.getcwd(), {name: os.environ.get(name) for name in home}
        os.chdir(work)  # a mutated --out may be a relative name: it lands in the case's directory
        os.environ.update(home)
        try:
            code, err = _in_process(argv, seconds)
        finally:
            os.chdir(here)
            for name, value in was.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    elapsed = time.perf_counter() - started
    lines = [line for line in err.splitlines() if line.strip()]
    after = _listing(work)
    new = sorted(after - before)
    left = [] if code == 0 else [p for p in new if not p.startswith("checkpoint")]
    if code != 0:  # a checkpoint may keep what it held; nothing else may appear
        left += [p for p in new if p.startswith("checkpoint") and ".tmp" in p]
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(home["HOME"], ignore_errors=True)
    return Outcome(case.kind, code, lines, elapsed, left, note=f"{case.note} | {' '.join(case.argv)}",
                   crashed=crashed, process=process)


def _in_process(argv: list[str], seconds: float) -> tuple[int | None, str]:
    from ..cli import main

    err, out = io.StringIO(), io.StringIO()
    expired = []

    def expire(signum, frame):
        expired.append(True)
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 2
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        text = err.getvalue() + "".join(f"{w.category.__name__}: {w.message}\n" for w in caught
                                        if not _foreign(w))
        if expired:  # the alarm's exception was swallowed (raised in a ctypes callback of numba's
            return None, text  # compiler, it is printed as "Exception ignored"): the case ran past its bound
        return code, text
    except _Hang:  # wherever the alarm found the command, even in its own handlers
        return None, err.getvalue()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_HIDDEN = (ResourceWarning, DeprecationWarning, PendingDeprecationWarning, ImportWarning)


def _foreign(w) -> bool:
    """A warning the real command would not print: hidden by Python's default filters, or
    distributed's, which the command silences."""
    return issubclass(w.category, _HIDDEN) or "distributed" in (w.filename or "")


# ---------------------------------------------------------------- many cases, crashes survived

def _child(conn, root: str, seconds: float, warmup: list[Case]) -> None:
    for i, case in enumerate(warmup):  # what the commands import on their first call in a process, imported here
        run_case(case, os.path.join(root, f"warmup-{os.getpid()}-{i}"), seconds=max(600.0, 10 * seconds))
    conn.send(("ready",))
    while True:
        job = conn.recv()
        if job is None:
            return
        index, case = job
        conn.send(("start", index))
        outcome = run_case(case, os.path.join(root, f"case-{index}"), seconds=seconds)
        conn.send(("done", index, outcome))
        if outcome.code is None:
            # Overran its bound: the alarm ended the command's main thread, but the threads it started
            # may still run and an import it was in may be left half done (scipy.ndimage's once: every
            # later case naming it failed). This interpreter ends now, without waiting for those threads.
            conn.close()
            os._exit(0)


def run_isolated(all_cases: list[Case], root: str, *, seconds: float = 60.0, progress=None,
                 deadline: float | None = None, warmup: list[Case] = ()) -> list[Outcome]:
    """Run ``all_cases`` in process, in a child process; the outcomes in order. The child is replaced
    after a case that crashed it, a case that overran its bound (the case's alarm ended it: whatever
    it left running must not meet the next case) and a hang its alarm could not end (it is killed).
    Each child first runs the ``warmup`` cases (the undamaged commands), unbounded by ``seconds`` and
    not counted, so what the commands import on their first call in a process (sklearn and scipy for a prune's
    cross-validation, seconds; a minute for a child at nice 10 on a loaded machine) is imported
    outside any case's bound. No case starts after ``deadline`` (a ``time.monotonic()``): the
    outcomes are then those of the cases run."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    outcomes: list[Outcome | None] = [None] * len(all_cases)
    index = 0

    def more() -> bool:
        return index < len(all_cases) and (deadline is None or time.monotonic() < deadline)

    while more():
        parent, child_end = context.Pipe()
        child = context.Process(target=_child, args=(child_end, root, seconds, list(warmup)), daemon=True)
        child.start()
        child_end.close()
        started = None
        retired = False
        try:  # the warm-up: undamaged commands, no case's outcome
            if not parent.poll(max(600.0, 10 * seconds) * (len(warmup) + 1)):
                raise RuntimeError("a child's warm-up (the undamaged commands) did not end")
            parent.recv()  # ready
        except (EOFError, OSError, RuntimeError):
            child.kill()
            child.join()
            parent.close()
            raise
        try:
            while more() and not retired:
                started = None
                parent.send((index, all_cases[index]))
                while True:
                    if not parent.poll(seconds + 60):
                        raise TimeoutError
                    message = parent.recv()
                    if message[0] == "start":
                        started = time.perf_counter()
                    else:
                        break
                outcomes[index] = message[2]
                retired = message[2].code is None  # the child ends itself after an overrun
                index += 1
                if progress is not None:
                    progress(index)
            if not retired:
                parent.send(None)
        except (EOFError, OSError, TimeoutError) as exc:
            hang = isinstance(exc, TimeoutError)
            child.kill()
            child.join()
            case = all_cases[index]
            outcomes[index] = Outcome(case.kind, None if hang else child.exitcode,
                                      [] if hang else [f"the interpreter died (exit {child.exitcode})"],
                                      time.perf_counter() - (started or time.perf_counter()), [],
                                      note=f"{case.note} | {' '.join(case.argv)}", crashed=not hang,
                                      process=child.pid)
            shutil.rmtree(os.path.join(root, f"case-{index}"), ignore_errors=True)
            index += 1
            if progress is not None:
                progress(index)
        finally:
            child.join(timeout=30)
            if child.is_alive():  # it did not end when told to: it is not reused, whatever it waits on
                child.kill()
                child.join()
            parent.close()
    return outcomes[:index]
