"""Small datasets written as real Parquet files, for tests."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["write_dataset", "mixed_frame", "regression_frame"]


def write_dataset(frame: pd.DataFrame, path: str | os.PathLike, n_files: int = 1,
                  row_group_size: int | None = None) -> str:
    """Write ``frame`` as ``n_files`` Parquet files (consecutive row ranges) in directory ``path``."""
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
    bounds = np.linspace(0, table.num_rows, n_files + 1).astype(int)
    for i in range(n_files):
        pq.write_table(table.slice(bounds[i], bounds[i + 1] - bounds[i]),
                       os.path.join(path, f"part-{i:05d}.parquet"), row_group_size=row_group_size)
    return path


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
