"""The types every layer passes to the split search, apart from its kernels: :class:`TrainBatch`,
the training histograms of a search. (The search's parameters and attribute layout,
``SplitParams`` and ``AttributeLayout``, are :mod:`dasktree.split.search`'s.)"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TrainBatch"]


@dataclass(frozen=True)
class TrainBatch:
    """M training histograms as differences: ``plus[plus_index[m]] - minus[minus_index[m]]``.

    ``minus_index[m] = -1`` subtracts nothing. ``plus`` and ``minus`` have shape
    (slices, total_bins, n_classes), counts, and a subtracted slice is at most
    its plus slice cell by cell (a part of the total); ``node_counts``
    (M, n_classes) holds each histogram's class counts (the sum over the
    first attribute's rows).
    """

    plus: np.ndarray
    plus_index: np.ndarray
    minus: np.ndarray
    minus_index: np.ndarray
    node_counts: np.ndarray
    direct: bool = False  # histogram m is plus[m]: columns are views

    @classmethod
    def of(cls, hists: np.ndarray, first: slice) -> "TrainBatch":
        """The batch of M stored histograms (M, total_bins, n_classes); ``first``: the first attribute's rows."""
        hists = np.asarray(hists)
        m = hists.shape[0]
        return cls(hists, np.arange(m, dtype=np.int64), hists[:1], np.full(m, -1, dtype=np.int64),
                   hists[:, first].sum(axis=1), direct=True)

    def __len__(self) -> int:
        return int(self.plus_index.size)

    def columns(self, start: int, width: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Rows ``start:start + width`` of every histogram (or of ``rows``): (M, width, n_classes)."""
        if self.direct:
            return self.plus[:, start:start + width] if rows is None else self.plus[rows, start:start + width]
        plus_index = self.plus_index if rows is None else self.plus_index[rows]
        minus_index = self.minus_index if rows is None else self.minus_index[rows]
        out = self.plus[plus_index, start:start + width]
        held = minus_index >= 0
        if held.any():
            out[held] -= self.minus[minus_index[held], start:start + width]
        return out
