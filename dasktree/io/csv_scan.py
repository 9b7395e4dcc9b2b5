"""Where a CSV file's records start: one pass over its bytes, quote-aware, as pyarrow parses them.

A CSV file cannot be cut at a byte offset without knowing whether the offset
falls inside a quoted value. :func:`scan` reads the (decompressed) bytes once, in
blocks, through a small state machine compiled with numba, the same one
pyarrow's CSV parser follows (RFC 4180 with its defaults): a quote opens a quoted
value only at the start of a field, ``""`` inside it is a quote, the delimiter
and a line end (``\\n``, ``\\r`` or ``\\r\\n``) end a field outside quotes, and an
empty line is no record (``ignore_empty_lines``). It gives:

- the byte offset and line number of every ``every``-th data record's start
  (a *chunk*, the CSV's row group: parts and pieces are runs of chunks);
- the data's records (rows), the header's end, whether a value spans lines
  (then the reader needs ``newlines_in_values``);
- the first record whose field count differs from the header's (a ragged row),
  with its line: reported before any pass.

Nothing here knows Dask; the kernel is pure numba with its state in one int64
array, so a file streams through it block by block in constant memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..kernels.jit import jit

__all__ = ["Scan", "scan", "scan_bytes", "SCAN_BLOCK"]

SCAN_BLOCK = 1 << 23  # bytes read per call of the kernel

# the kernel's state, one int64 each
_STATE, _REC_LEN, _FIELDS, _COUNT, _LINE, _PENDING_CR, _REC_START, _REC_LINE, _QUOTED_NL, _EXPECTED, \
    _BAD_LINE, _BAD_FIELDS, _BAD_ROW, _HEADER_END, _N = range(15)
_FIELD_START, _UNQUOTED, _QUOTED, _QUOTE_IN_QUOTED = 0, 1, 2, 3


@jit
def _scan_block(buf, base, delim, quote, skip, every, final, st, starts, lines):  # pragma: no cover - compiled
    """Feed ``buf`` (the bytes at ``base`` onwards) through the machine; returns the chunk starts found.

    The state lives in locals while the loop runs (written back at the end): numba keeps them in
    registers."""
    state, rec_len, fields, count, line = st[_STATE], st[_REC_LEN], st[_FIELDS], st[_COUNT], st[_LINE]
    pending_cr, rec_start, rec_line, quoted_nl = st[_PENDING_CR], st[_REC_START], st[_REC_LINE], st[_QUOTED_NL]
    expected, header_end = st[_EXPECTED], st[_HEADER_END]
    n_out = 0
    n = buf.shape[0]
    for i in range(n + (1 if final else 0)):
        at_end = i == n  # the end of the data: a record without a line end ends here
        c = 10 if at_end else buf[i]
        pos = base + i
        if pending_cr == 1:
            pending_cr = 0
            if c == 10 and not at_end:  # the \n of \r\n
                rec_start = pos + 1
                continue
        if state == _QUOTED and not at_end:
            if c == quote:
                state = _QUOTE_IN_QUOTED
            elif c == 10 or c == 13:
                quoted_nl = 1
                if c == 10 or not (i + 1 < n and buf[i + 1] == 10):
                    line += 1
            rec_len += 1
            continue
        if c == 10 or c == 13:
            if rec_len > 0:  # an empty line is no record
                data = count - skip
                if data < 0:  # the header
                    expected = fields
                    header_end = pos + (0 if at_end else 1) + (1 if c == 13 and i + 1 < n and buf[i + 1] == 10 else 0)
                else:
                    if expected == 0:
                        expected = fields
                    elif fields != expected and st[_BAD_LINE] < 0:
                        st[_BAD_LINE] = rec_line
                        st[_BAD_FIELDS] = fields
                        st[_BAD_ROW] = data
                    if data % every == 0:
                        starts[n_out] = rec_start
                        lines[n_out] = rec_line
                        n_out += 1
                count += 1
            line += 1
            state = _FIELD_START
            rec_len = 0
            fields = 1
            rec_start = pos + 1
            rec_line = line
            if c == 13:
                pending_cr = 1
            continue
        rec_len += 1
        if c == delim:
            state = _FIELD_START
            fields += 1
        elif state == _FIELD_START:
            state = _QUOTED if c == quote else _UNQUOTED
        elif state == _QUOTE_IN_QUOTED:
            state = _QUOTED if c == quote else _UNQUOTED
    st[_STATE], st[_REC_LEN], st[_FIELDS], st[_COUNT], st[_LINE] = state, rec_len, fields, count, line
    st[_PENDING_CR], st[_REC_START], st[_REC_LINE], st[_QUOTED_NL] = pending_cr, rec_start, rec_line, quoted_nl
    st[_EXPECTED], st[_HEADER_END] = expected, header_end
    return n_out


@dataclass
class Scan:
    """What one pass over a CSV file's bytes found (offsets in the decompressed bytes)."""

    starts: np.ndarray  # int64: byte offset of data records 0, every, 2 x every, ...
    lines: np.ndarray  # int64: the 0-based line each of those records starts on
    rows: int  # data records
    size: int  # the decompressed bytes
    data_start: int  # where the first data record may start (after the header)
    quoted_newlines: bool  # some quoted value holds a line end
    header_fields: int  # fields of the header (or of the first record without one); 0: no record
    bad_line: int  # 0-based line of the first record with another field count, or -1
    bad_fields: int
    bad_row: int  # that record's data row

    def chunk_rows(self, every: int) -> list[int]:
        """Rows of each chunk of ``every`` records (the last one the rest)."""
        return [min(every, self.rows - i * every) for i in range(len(self.starts))]


def scan(read: Callable[[int], bytes], *, delimiter: str = ",", quote: str = '"', header: bool = True,
         every: int = 1 << 14, block: int = SCAN_BLOCK) -> Scan:
    """One pass over the bytes ``read(n)`` yields (``b""`` at the end), ``block`` bytes at a time."""
    st = np.full(_N, 0, dtype=np.int64)
    st[_FIELDS] = 1
    st[_BAD_LINE] = -1
    st[_BAD_FIELDS] = -1
    st[_BAD_ROW] = -1
    st[_HEADER_END] = -1
    skip = 1 if header else 0
    starts_all, lines_all = [], []
    base = 0
    pending = read(block)
    while True:
        nxt = read(block) if pending else b""
        final = not nxt
        buf = np.frombuffer(pending, dtype=np.uint8)
        room = buf.shape[0] // max(every, 1) + 2
        starts = np.empty(room, dtype=np.int64)
        lines = np.empty(room, dtype=np.int64)
        n = _scan_block(buf, base, ord(delimiter), ord(quote), skip, every, final, st, starts, lines)
        starts_all.append(starts[:n].copy())
        lines_all.append(lines[:n].copy())
        base += buf.shape[0]
        if final:
            break
        pending = nxt
    rows = max(int(st[_COUNT]) - skip, 0)
    header_end = int(st[_HEADER_END])
    starts = np.concatenate(starts_all) if starts_all else np.zeros(0, np.int64)
    return Scan(
        starts=starts, lines=np.concatenate(lines_all) if lines_all else np.zeros(0, np.int64),
        rows=rows, size=base, data_start=(header_end if header_end >= 0 else base) if header else 0,
        quoted_newlines=bool(st[_QUOTED_NL]), header_fields=int(st[_EXPECTED]),
        bad_line=int(st[_BAD_LINE]), bad_fields=int(st[_BAD_FIELDS]), bad_row=int(st[_BAD_ROW]),
    )


def scan_bytes(data: bytes, **options) -> Scan:
    """:func:`scan` of bytes in memory."""
    view = memoryview(data)
    position = 0

    def read(n: int) -> bytes:
        nonlocal position
        piece = bytes(view[position:position + n])
        position += len(piece)
        return piece

    return scan(read, **options)
