"""``RegressionModel``: a :class:`~dasktree.model.model.Model` of the regression task, kept for old imports.

There is one model class; a regression model is a ``Model`` whose ``task`` is
:data:`dasktree.regress.task.REGRESSION` (the leaf statistic, values and reports it asks for).
"""

from __future__ import annotations

from ..model.model import Model
from .task import REGRESSION

__all__ = ["RegressionModel"]


def RegressionModel(**fields) -> Model:  # noqa: N802  (the old class's name, for old imports)
    """A :class:`~dasktree.model.model.Model` of the regression task."""
    return Model(task=REGRESSION, **fields)
