"""A feature's kind, as the bin spec and the model files name it: here, apart from :mod:`dasktree.io.schema`
(which reads Arrow schemas), so that what reads a model file, ``dasktree show``, imports no pyarrow."""

from __future__ import annotations

__all__ = ["NUMERIC", "NOMINAL"]

NUMERIC = "numeric"
NOMINAL = "nominal"
