"""``dasktree fit --grid``: a grid of settings grown in the same passes, and ``show --format grid``.

``--grid NAME=V1,V2,...`` (repeatable; names as the Python parameters, ``-``
or ``_``) or ``--grid FILE.json`` (scikit-learn's ``param_grid``: a dict of
lists or a list of them) gives :func:`dasktree.fit.fit` its ``param_grid``
(:mod:`dasktree.levels.settings`); :func:`format_grid` prints a model's table.
"""

from __future__ import annotations

import json
import os

from ..errors import InputError, ParameterError

__all__ = ["add_grid", "param_grid", "format_grid"]

_INTS = ("min_samples_leaf", "max_arity")
_FLOATS = ("confidence", "ccp_alpha")


def add_grid(p) -> None:
    """The fit verb's ``--grid`` option."""
    g = p.add_argument_group("grid of settings (grown in the same passes as the tree; needs --cv)")
    g.add_argument("--grid", action="append", metavar="NAME=V,V,...|FILE.json",
                   help="a setting to choose by cross-validation: criterion, min_samples_leaf, nominal_split, "
                        "max_arity, selection (grown together) and prune, confidence, ccp_alpha (read from the "
                        "grown trees); repeat for a product, e.g. --grid criterion=gini,entropy,gain_ratio "
                        "--grid min_samples_leaf=1,5,20; or a JSON file of scikit-learn's param_grid. The model "
                        "is the setting of best CV accuracy; 'show --format grid' prints the table (default: none)")


def _value(name: str, text: str):
    try:
        if name in _INTS:
            return int(text)
        if name in _FLOATS:
            return None if text.lower() == "none" else float(text)
    except ValueError:
        kind = "an integer" if name in _INTS else "a number"
        raise ParameterError(f"--grid {name}: {text!r} is not {kind}") from None
    return text


def param_grid(items: list[str] | None):
    """``--grid``'s ``param_grid`` (None without it): NAME=V,... items as one dict, or a JSON file's grid."""
    if not items:
        return None
    files = [item for item in items if "=" not in item]
    if files:
        if len(items) > 1:
            raise ParameterError("--grid FILE.json gives the whole grid: give it alone, not with other --grid")
        path = files[0]
        if not os.path.isfile(path):
            raise InputError(f"--grid {path}: no such file (give NAME=V1,V2,... or a JSON file)")
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            raise InputError(f"--grid {path}: not a JSON grid ({e})") from None
    grid: dict = {}
    for item in items:
        name, _, values = item.partition("=")
        name = name.strip().replace("-", "_")
        if name in grid:
            raise ParameterError(f"--grid {name} is given twice")
        if not values:
            raise ParameterError(f"--grid {item!r}: give NAME=V1,V2,...")
        grid[name] = [_value(name, v.strip()) for v in values.split(",")]
    return grid


def format_grid(model, name: str = "model") -> str:
    """A model's grid as a table, best rank first: rank, mean and std of the split scores, leaves, setting."""
    grid = model.report.get("grid")
    if grid is None:
        raise InputError(f"{name}: fitted without a grid (dasktree fit --cv K --grid NAME=V,V,...)")
    table = grid["cv_results"]
    cv = model.report.get("cv") or {}
    lines = [f"{name}: {grid['settings']} settings, {grid['growths']} grown apart ({grid['trees']} trees in one "
             f"forest), {cv.get('repeats', 1)}x{cv.get('folds', '?')}-fold cross-validation",
             f"best {grid['best_params']}: accuracy {grid['best_score']:.4f}",
             f"  note: {grid['note']}",
             f"  {'rank':>4} {'mean':>7} {'std':>7} {'leaves':>6}  setting"]
    order = sorted(range(len(table["params"])), key=lambda i: (table["rank_test_score"][i], i))
    for i in order:
        mark = "*" if i == grid["best_index"] else " "
        setting = ", ".join(f"{k}={v}" for k, v in table["params"][i].items())
        lines.append(f"{mark} {table['rank_test_score'][i]:>4} {table['mean_test_score'][i]:>7.4f} "
                     f"{table['std_test_score'][i]:>7.4f} {table['leaves'][i]:>6}  {setting}")
    return "\n".join(lines) + "\n"
