"""Newline-delimited JSON given where a dataset is read: the one line that says how to convert it, exactly.

dasktree reads Parquet (columnar, typed, read once per level) and CSV (:mod:`dasktree.io.csv_source`).
Newline-delimited JSON converts once with pyarrow's datasets, which dasktree already depends on; the
message gives the command for the path as typed.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import Sequence

__all__ = ["TEXT_FORMATS", "text_format", "convert_hint"]

TEXT_FORMATS = {".json": "json", ".jsonl": "json", ".ndjson": "json",
                ".jsonl.gz": "json", ".ndjson.gz": "json"}
"""File endings pyarrow's datasets read as newline-delimited JSON, and their format name."""


def text_format(files: Sequence[str]) -> str | None:
    """``"json"`` when every file ends as newline-delimited JSON's files do, else None."""
    found = set()
    for path in files:
        name = os.path.basename(str(path)).lower()
        ending = next((e for e in sorted(TEXT_FORMATS, key=len, reverse=True) if name.endswith(e)), None)
        if ending is None:
            return None
        found.add(TEXT_FORMATS[ending])
    return found.pop() if len(found) == 1 else None


def convert_hint(path: str, fmt: str) -> str:
    """The sentence naming the data as ``fmt`` and the command that writes it as a Parquet dataset."""
    base = str(path).rstrip("/")
    for ending in sorted(TEXT_FORMATS, key=len, reverse=True):
        if base.lower().endswith(ending):
            base = base[:-len(ending)]
            break
    out = base + ".parquet"
    code = (f"import pyarrow.dataset as ds; ds.write_dataset(ds.dataset({json.dumps(str(path))}, "
            f"format={json.dumps(fmt)}), {json.dumps(out)}, format=\"parquet\")")
    return f"{path}: newline-delimited JSON, not Parquet: convert it once with: python -c {shlex.quote(code)} (then use {out})"
