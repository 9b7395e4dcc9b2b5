"""A small regression dataset for tests and examples: continuous, few-valued and nominal attributes,
missing values, and a target made of all of them."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["regression_frame"]


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
