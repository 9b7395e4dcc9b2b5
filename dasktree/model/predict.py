"""Prediction of an Arrow table or in-memory frame: the columns every prediction output has.

Each output row holds the prediction (column ``prediction``) and one
probability column per class (``proba_<class>``), plus any ``keep`` columns
copied from the input. :mod:`dasktree.engine.predict` writes them for a whole
dataset, part by part on the workers.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from ..errors import InputError
from ..io.sources import frame_to_table
from .model import Model

__all__ = ["predict_table", "prediction_columns", "as_table"]


def prediction_columns(model: Model) -> list[str]:
    """The prediction, then (classification) one probability column per class."""
    return ["prediction", *[f"proba_{c}" for c in model.classes]]


def as_table(model: Model, X) -> pa.Table:
    """In-memory input as an Arrow table with the model's feature names."""
    import pandas as pd

    if isinstance(X, pa.Table):
        return X
    if isinstance(X, pd.DataFrame):
        return frame_to_table(X.reset_index(drop=True))
    array = np.asarray(X)
    if array.ndim != 2:
        raise InputError(f"X must be 2-D (rows x features), got shape {array.shape}")
    if array.shape[1] != len(model.features):
        raise InputError(f"X has {array.shape[1]} columns but the model uses {len(model.features)} features")
    return frame_to_table(pd.DataFrame(array, columns=model.features))


def predict_table(model: Model, table: pa.Table, keep: Sequence[str] = ()) -> pa.Table:
    """Prediction and class probabilities for every row of ``table`` (a regression model's: the
    predicted number, float64), after the ``keep`` columns."""
    return pa.table(model.task.predict_table(model, table, {name: table.column(name) for name in keep}))
