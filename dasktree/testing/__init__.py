"""Helpers for tests of dasktree and of code built on it: datasets as Parquet, a naive tree."""

from .data import mixed_frame, write_dataset
from .processes import run_without_numba

__all__ = ["write_dataset", "mixed_frame", "run_without_numba"]
