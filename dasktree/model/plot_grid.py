"""``dasktree plot MODEL --grid``: a grid's settings by cross-validated accuracy, as a picture.

One row per setting, best rank at the top: each split's held-out accuracy (dots), their mean and
one standard deviation (a bar), the chosen setting in red, and its leaves beside it. The table is
the model's ``report["grid"]`` (:mod:`dasktree.model.grid`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .model import Model
from .plot import _format, _pyplot, _save

__all__ = ["plot_grid"]


def plot_grid(model: Model, out: str) -> None:
    """Draw the model's grid table into ``out`` (.svg or .png, written atomically)."""
    ext = _format(out)
    grid = model.report.get("grid")
    if not grid:
        raise InputError("--grid: the model was fitted without a grid: fit it with --cv K --grid NAME=V,V,...")
    table = grid["cv_results"]
    n = len(table["params"])
    order = sorted(range(n), key=lambda i: (table["rank_test_score"][i], i))
    splits = sorted((k for k in table if k.startswith("split") and k.endswith("_test_score")),
                    key=lambda k: int(k[5:-11]))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.32 * n))
    for row, i in enumerate(order):
        y = n - 1 - row
        colour = "tab:red" if i == grid["best_index"] else "tab:blue"
        scores = np.array([table[k][i] if table[k][i] is not None else np.nan for k in splits], dtype=float)
        ax.plot(scores, np.full(scores.size, y), ".", color=colour, alpha=0.35, markersize=4)
        mean, std = table["mean_test_score"][i], table["std_test_score"][i]
        ax.errorbar([mean], [y], xerr=[std], fmt="o", color=colour, capsize=3, markersize=5)
        ax.annotate(f"{table['leaves'][i]} leaves", (1.0, y), xycoords=("axes fraction", "data"),
                    xytext=(4, 0), textcoords="offset points", va="center", fontsize=7)
    labels = [", ".join(f"{k}={v}" for k, v in table["params"][i].items()) for i in order]
    ax.set_yticks(range(n - 1, -1, -1), labels, fontsize=7)
    ax.set_xlabel("held-out accuracy (dots: splits; bar: mean +/- std)")
    ax.set_title(f"{n} settings, {grid['growths']} grown apart in one forest; chosen in red "
                 f"({grid['best_score']:.4f}, optimistic: it chose)", fontsize=9)
    _save(fig, out, ext)
