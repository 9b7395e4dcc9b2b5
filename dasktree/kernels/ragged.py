"""Runs of lengths laid back to back: where each starts, and where each ends.

Flat arrays of many variable-length pieces (a plan's slots, a level's code
tables and children, a block's parts) are indexed this way throughout.
"""

from __future__ import annotations

import numpy as np

__all__ = ["firsts", "bounds"]


def firsts(lengths) -> np.ndarray:
    """Where each of consecutive runs of ``lengths`` starts (int64): 0, then the running sums."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if lengths.size else lengths


def bounds(lengths) -> np.ndarray:
    """Runs of ``lengths`` back to back: run ``i`` is ``out[i]:out[i + 1]`` (int64, one longer)."""
    return np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64))]).astype(np.int64)
