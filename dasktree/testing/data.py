"""Small datasets for tests, written as real Parquet files by :func:`~dasktree.datasets.files.write_dataset`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..datasets.files import write_dataset

__all__ = ["write_dataset", "mixed_frame", "regression_frame"]


def mixed_frame(n: int = 2000, seed: int = 0, missing: float = 0.05) -> pd.DataFrame:
    """Numeric, integer, nominal and boolean features with missing values; 3 classes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    k = rng.integers(0, 40, size=n)
    colour = rng.choice(["red", "green", "blue", "violet"], size=n)
    flag = rng.random(n) < 0.3
    score = x + (colour == "red") * 1.5 - (k > 30) + flag * 0.8 + rng.normal(scale=0.5, size=n)
    label = np.where(score > 1.0, "high", np.where(score > -0.5, "mid", "low"))
    frame = pd.DataFrame({"x": x, "k": k.astype(np.int32), "colour": colour, "flag": flag, "label": label})
    if missing:
        frame.loc[rng.random(n) < missing, "x"] = np.nan
        frame["colour"] = frame["colour"].where(rng.random(n) >= missing, None)
    return frame


def regression_frame(n: int = 3000, seed: int = 0, missing: float = 0.05) -> pd.DataFrame:
    """Columns ``x1`` (normal, ``missing`` of it null), ``x2`` (20 values), ``colour`` (5 categories) and
    the target ``y = 2 x1 + sin(x2) + effect(colour) + noise``."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.integers(0, 20, size=n).astype(np.float64)
    colour = rng.choice(["red", "green", "blue", "grey", "teal"], size=n)
    effect = pd.Series(colour).map({"red": 3.0, "green": -1.0, "blue": 0.5, "grey": 2.0, "teal": -2.5}).to_numpy()
    y = 2 * np.nan_to_num(x1) + np.sin(x2) + effect + rng.normal(scale=0.3, size=n)
    x1[rng.random(n) < missing] = np.nan
    return pd.DataFrame({"x1": x1, "x2": x2, "colour": colour, "y": y})
