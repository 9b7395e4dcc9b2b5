"""What a runner is: the :class:`Runner` protocol the fit calls, and the pass counts every runner keeps.

A runner makes the passes over the data: in this process
(:class:`dasktree.engine.local_runner.LocalRunner`) or as Dask work on a cluster
(:class:`dasktree.engine.dask_runner.DaskRunner`). Both run the same functions of
:mod:`dasktree.engine.part_tasks` and :func:`dasktree.levels.level_search.search_group`,
so they give the same forest bit for bit.
"""

from __future__ import annotations

from typing import Protocol

from ..binning.spec import BinSpec
from ..binning.summary import Summary
from ..levels.grow import LevelRunner
from .progress import Progress

__all__ = ["Runner", "PassCounter"]


class Runner(LevelRunner, Protocol):
    """Every method the fit calls on a runner; :class:`LocalRunner` and :class:`DaskRunner` have them all."""

    passes: int  # passes over the data so far
    parquet_reads: int  # of them, passes that read Parquet

    def summary(self, max_bins: int) -> Summary:
        """Pass 0: the merged summary of every part."""
        ...

    def prepare(self, spec: BinSpec, n_folds: int, level_passes: bool = True) -> None:
        """Encode with ``spec`` (and ``n_folds`` fold parts) from now on."""
        ...

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        """One pass counting ``plan``, then ``func(hist, chunk, **kwargs)`` per chunk where the counts are
        (a discretizer's cut pass, :mod:`dasktree.discretize.jobs`; a tree's level passes are
        :meth:`~dasktree.levels.grow.LevelRunner.level_pass`)."""
        ...

    def close(self) -> None:
        """Release what the runner holds (cached codes, holders)."""
        ...


class PassCounter:
    """Passes made and Parquet reads, and the progress bar, shared by the runners."""

    def __init__(self, progress: Progress | None):
        self.progress = progress or Progress(enabled=False)
        self.passes = 0
        self.parquet_reads = 0

    def _count(self, reads_source: bool) -> None:
        self.passes += 1
        self.parquet_reads += int(reads_source)
