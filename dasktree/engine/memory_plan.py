"""Which runner a fit gets, and how much memory its passes may take: ``memory_limit``.

One rule (:func:`runner_kind`): without a ``client`` or a ``scheduler``, a fit
stays in this process. Its codes are kept in memory (:class:`~dasktree.engine.local_runner.LocalRunner`,
Parquet read once) when the dataset's Arrow tables and codes fit in a quarter
of the memory limit and the cache is allowed; otherwise every pass streams the
Parquet row groups through a bounded pool of threads
(:class:`~dasktree.engine.stream_runner.StreamRunner`), so its peak memory is set by
the threads, the row-group size, the columns and the histograms, not by the
rows. A ``LocalCluster`` starts only when asked (``scheduler="processes"``).

The streaming runner plans against the limit (:class:`MemoryPlan`): what is
left once the process itself and every thread's row group are counted goes to
the histograms, one per thread and their sum, and the frontier is counted in
node groups that fit it (``max_histogram_mb``, lowered when the limit asks).
When not even one node's histogram fits, the fit stops before its first
level pass with a one-line :class:`~dasktree.errors.ParameterError` (exit 2:
the limit, a parameter, is too small for the data's shape; a larger limit, or
fewer bins or folds, fixes it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ParameterError
from ..io.schema import Roles
from ..io.sources import FileSource, Source, TableSource
from .part_groups import arrow_row_bytes, physical_memory

__all__ = ["parse_memory_limit", "runner_kind", "cached_histogram_mb", "MemoryPlan", "CACHED", "STREAM",
           "CLUSTER", "BASE_BYTES", "HELD_HISTOGRAMS", "MEMORY_SHARE"]

CACHED, STREAM, CLUSTER = "cached", "stream", "cluster"
MEMORY_SHARE = 4  # the codes are kept in memory when tables and codes fit in this share of the limit
BASE_BYTES = 320 << 20  # the process before any data: interpreter, numpy, pyarrow, the compiled kernels
HELD_HISTOGRAMS = 2  # histograms beside the threads' own: the last pass's (kept for subtraction), the search's

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_memory_limit(value) -> int | None:
    """Bytes of a ``memory_limit``: None (this machine's memory), a number of bytes, or a text
    such as ``"1GB"``, ``"512MB"``, ``"2GiB"`` (kB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024)."""
    if value is None:
        return None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*", value)
        if not match or match.group(2).lower() not in _UNITS:
            raise ParameterError(f"memory_limit must be bytes or a size such as '1GB' or '512MB', got {value!r}")
        value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value == value or value <= 0:
        raise ParameterError(f"memory_limit must be a positive number of bytes or a size such as '1GB', got {value!r}")
    if value < BASE_BYTES:
        raise ParameterError(f"memory_limit {int(value):,} bytes is below the {BASE_BYTES >> 20} MB the process "
                             "takes before any data; give at least 512MB")
    return int(value)


def _row_bytes(source: Source, roles: Roles) -> int:
    """A row's Arrow bytes and codes (two bytes an attribute), its class, fold part and start node."""
    columns = roles.columns
    return arrow_row_bytes(source.schema, columns) + 2 * len(columns) + 6


def runner_kind(source: Source, roles: Roles, *, client=None, scheduler: str | None = None,
                cache: bool | str = "auto", memory_limit: int | None = None) -> str:
    """:data:`CACHED` (in process, codes kept), :data:`STREAM` (in process, every pass reading
    anew) or :data:`CLUSTER`. A ``client`` or a scheduler other than ``"inprocess"`` is a cluster;
    in-memory data is cached (it is in memory already); a dataset is cached when its tables and
    codes fit in a quarter of ``memory_limit`` (default: this machine's memory) and ``cache`` is
    not False, else streamed. A dask DataFrame goes to the cluster its graph needs."""
    from .local_runner import IN_PROCESS

    if client is not None or (scheduler is not None and scheduler != IN_PROCESS):
        return CLUSTER
    if isinstance(source, TableSource):
        return CACHED
    if not isinstance(source, FileSource):
        return CACHED if scheduler == IN_PROCESS else CLUSTER
    limit = physical_memory() if memory_limit is None else memory_limit
    if cache is not False and source.n_rows * _row_bytes(source, roles) <= limit // MEMORY_SHARE:
        return CACHED
    return STREAM


def cached_histogram_mb(source: Source, roles: Roles, memory_limit: int, threads: int) -> float:
    """The histogram budget (MB, int64 cells, as grow's ``max_histogram_mb`` counts it) of a cached
    fit in this process under ``memory_limit``: what the process, the kept tables and codes leave,
    shared by a histogram per thread and their sum. (The data takes at most a quarter of the
    limit, :func:`runner_kind`, so some is always left.)"""
    data = source.n_rows * _row_bytes(source, roles) if isinstance(source, FileSource) else 0
    return max(memory_limit - BASE_BYTES - data, 0) / (threads + HELD_HISTOGRAMS) / 2**20


@dataclass(frozen=True)
class MemoryPlan:
    """How a streaming fit spends ``limit`` bytes.

    peak ~= BASE_BYTES + threads x piece_rows x row_bytes + (threads + 2) x histogram bytes (int64)

    ``piece_bytes`` is one row group's (the largest) tables and codes; ``histogram_bytes``
    the budget of one histogram: an int64 counter per thread (the first one their sum), the last
    level pass's kept for subtraction, and the search's sums (:data:`HELD_HISTOGRAMS`)."""

    limit: int
    threads: int
    piece_bytes: int
    histogram_bytes: int

    @classmethod
    def of(cls, limit: int | None, threads: int, piece_rows: int, row_bytes: int) -> "MemoryPlan":
        limit = physical_memory() if limit is None else limit
        piece = piece_rows * row_bytes
        left = limit - BASE_BYTES - threads * piece
        return cls(limit, threads, piece, max(0, left // (threads + HELD_HISTOGRAMS)))

    def max_histogram_mb(self) -> float:
        """The budget of a pass's histogram as grow's ``max_histogram_mb`` counts it (int64 cells)."""
        return self.histogram_bytes / 2**20

    def check_node(self, node_bytes: int, where: str) -> None:
        """Raise when one node's histogram (int64 ``node_bytes``, the least a pass can count) cannot fit."""
        if node_bytes > self.histogram_bytes:
            need = BASE_BYTES + self.threads * self.piece_bytes + (self.threads + HELD_HISTOGRAMS) * node_bytes
            raise ParameterError(
                f"memory_limit {self.limit / 2**20:.0f} MB is too small for {where}: one node's histograms "
                f"take {node_bytes * (self.threads + HELD_HISTOGRAMS) / 2**20:.0f} MB on {self.threads} threads beside "
                f"{self.piece_bytes * self.threads / 2**20:.0f} MB of row groups; give at least "
                f"{need / 2**20:.0f}MB or fewer bins, folds or threads")
