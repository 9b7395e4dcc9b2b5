"""Synthetic datasets for benchmarks and tests.

``agrawal``: the Agrawal, Imielinski & Swami (1993) loan-applicant database,
the classic benchmark of SLIQ and SPRINT.
"""

from __future__ import annotations

from dasktree.datasets import agrawal
from dasktree.datasets.agrawal import (
    ATTRIBUTES,
    FUNCTIONS,
    TARGET,
    classify,
    generate,
    write_parquet,
)

__all__ = [
    "ATTRIBUTES",
    "FUNCTIONS",
    "TARGET",
    "agrawal",
    "classify",
    "generate",
    "write_parquet",
]
