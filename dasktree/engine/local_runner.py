"""The in-process runner: every part in this process, the codes kept after the first level pass.

For in-memory inputs (no cluster to start): it reads and encodes each part once
and counts the level passes over the kept codes, calling the same task functions
as the Dask runner, so the forest is the same bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..binning.spec import BinSpec
from ..binning.summary import Summary, merge_all
from ..forest.level_search import SearchContext, SearchRequest, search_group
from ..forest.results import PackedResults
from ..io.schema import Roles
from ..io.sources import Source
from .progress import Progress
from .runner import PassCounter
from .tasks import PassShape, encode_part, histogram_of, summarize_part

__all__ = ["LocalRunner"]


class LocalRunner(PassCounter):
    """All parts in this process; the codes are kept after the first level pass."""

    def __init__(self, source: Source, roles: Roles, *, folds=None, progress: Progress | None = None):
        super().__init__(progress)
        self.source, self.roles, self.folds = source, roles, folds
        self.encoded = None
        self.spec: BinSpec | None = None

    def summary(self, max_bins: int) -> Summary:
        self._count(True)
        self.progress.start("pass 0 (summary)", len(self.source.parts))
        parts = []
        for part in self.source.parts:
            parts.append(summarize_part(part, source=self.source, roles=self.roles, max_bins=max_bins))
            self.progress.advance()
        self.progress.finish()
        return merge_all(parts)

    def prepare(self, spec: BinSpec, n_folds: int, level_passes: bool = True) -> None:
        """Encode with ``spec`` from now on; codes cached under another spec are dropped.
        (``level_passes`` is the Dask runner's: whether to start its holders. In process there are none.)"""
        if self.encoded is not None and (self.spec is not spec or self.shape.n_folds != n_folds):
            self.encoded = None
        self.spec = spec
        self.shape = PassShape.of(spec, n_folds)

    def apply_pass(self, plan, func, chunks: list, label: str, **kwargs) -> list:
        """One pass: the histogram of ``plan``'s slots, then ``func(hist, chunk, **kwargs)`` per chunk."""
        self._count(self.encoded is None)
        self.progress.start(label, len(self.source.parts))
        if self.encoded is None:
            self.encoded = [
                encode_part(p, source=self.source, roles=self.roles, spec=self.spec, folds=self.folds)
                for p in self.source.parts
            ]
        total = np.zeros(plan.size, dtype=np.int64)
        for encoded in self.encoded:
            histogram_of(encoded, plan=plan, shape=self.shape, out=total)
            self.progress.advance()
        results = [func(total, chunk, **kwargs) for chunk in chunks]
        self.progress.finish()
        return results

    derived = 0  # the reference runner counts every node

    def level_pass(self, plan, requests: list[SearchRequest], context: SearchContext, label: str) -> PackedResults:
        [results] = self.apply_pass(plan.counting_all(), search_group, [requests], label, context=context)
        return results

    def close(self) -> None:
        self.encoded = None
