"""Helpers for tests of dasktree and of code built on it: datasets as Parquet, a naive tree."""

from .data import write_dataset, mixed_frame

__all__ = ["write_dataset", "mixed_frame"]
