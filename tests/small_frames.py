"""Small generated frames for the property tests of small nodes and of the cp stop: numeric columns
rounded to few or many distinct values, some missing, an optional nominal column, and a target that
follows them (classes or numbers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st


def small_frame(draw, n: int, classify: bool) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """(the frame, its target, its nominal columns) of ``n`` rows, drawn with hypothesis's ``draw``."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    columns = {}
    n_numeric = draw(st.integers(1, 3))
    for j in range(n_numeric):
        digits = draw(st.sampled_from([0, 1, 3]))
        x = np.round(rng.normal(size=n) * 3, digits)
        x[rng.random(n) < draw(st.sampled_from([0.0, 0.1]))] = np.nan
        columns[f"x{j}"] = x
    nominal = []
    if draw(st.booleans()):
        columns["colour"] = rng.choice(["a", "b", "c", "d", "e", "f"], size=n)
        nominal = ["colour"]
    frame = pd.DataFrame(columns)
    signal = np.nan_to_num(frame["x0"].to_numpy())
    if nominal:
        signal = signal + (frame["colour"].to_numpy() == "b") * 2.0
    if classify:
        y = (signal + rng.normal(size=n) > 0).astype(np.int64) + (signal > 2)
    else:
        y = np.round(signal + rng.normal(scale=draw(st.sampled_from([0.1, 1.0])), size=n),
                     draw(st.sampled_from([0, 2])))
    return frame, y, nominal
