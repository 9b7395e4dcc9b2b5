"""A grid of settings as trees of one forest: which tree grows with which setting, holding out what.

A *setting* is one point of scikit-learn's ``param_grid`` (a dict of lists, or
a list of such dicts, expanded in :class:`sklearn.model_selection.ParameterGrid`'s
order). Its *growth* part (:data:`GROWTH`: the split parameters that change
which tests are chosen) is one more reason for trees to part ways, like a
fold: every distinct growth gets a main tree and its fold trees, and all of
them grow as one forest, sharing a node until they choose different tests.
Its *pruning* part (:data:`PRUNING`) needs no tree of its own: it is read
from the grown trees and their held-out counts afterwards, so settings that
differ only in pruning share every tree.

Tree ``g * (1 + n_parts) + j`` is growth ``g``'s main tree (``j = 0``) or its
fold tree holding out part ``j - 1``; tree 0 is the first growth's main tree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..split.api import SplitParams

__all__ = ["GROWTH", "PRUNING", "Grid", "expand_grid"]

GROWTH = ("criterion", "min_samples_leaf", "nominal_split", "max_arity", "selection")
"""Grid parameters that change the tests chosen: each distinct combination grows its own trees."""
PRUNING = ("prune", "confidence", "ccp_alpha")
"""Grid parameters read from the grown trees afterwards: no tree, no pass."""


def expand_grid(param_grid) -> list[dict[str, Any]]:
    """The settings of ``param_grid`` (scikit-learn's dict of lists or list of dicts), in
    :class:`~sklearn.model_selection.ParameterGrid`'s order; a bad grid is one line naming it."""
    from sklearn.model_selection import ParameterGrid

    grids = [param_grid] if isinstance(param_grid, dict) else param_grid
    if not isinstance(grids, (list, tuple)) or not grids or not all(isinstance(g, dict) for g in grids):
        raise ParameterError(f"param_grid must be a dict of lists or a non-empty list of such dicts, got {param_grid!r}")
    for g in grids:
        for name, values in g.items():
            if name not in GROWTH + PRUNING:
                raise ParameterError(f"param_grid: {name!r} is not a grid parameter; grid parameters are "
                                     f"{list(GROWTH + PRUNING)}")
            if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
                raise ParameterError(f"param_grid: {name!r} needs a non-empty list of values, got {values!r}")
    try:
        settings = [dict(s) for s in ParameterGrid(list(grids))]
    except (TypeError, ValueError) as e:
        raise ParameterError(f"param_grid: {e}") from None
    return [{k: v.item() if isinstance(v, np.generic) else v for k, v in s.items()} for s in settings]


@dataclass(frozen=True)
class Grid:
    """The settings of a grid, their distinct growths, and the trees of the forest that grows them."""

    settings: tuple[dict[str, Any], ...]  # every setting, in the grid's order
    params: tuple[dict[str, Any], ...]  # each setting's full learning parameters
    growth_of: tuple[int, ...]  # per setting: its growth
    growths: tuple[SplitParams, ...]  # per distinct growth: its split parameters
    n_parts: int  # fold trees per growth (cv x repeats)

    @classmethod
    def of(cls, settings: list[dict[str, Any]], params: list[dict[str, Any]], split, n_parts: int) -> "Grid":
        """``settings`` with their validated full ``params``; ``split(params)`` gives a setting's
        :class:`SplitParams`."""
        growths: list[SplitParams] = []
        growth_of = []
        for p in params:
            s = split(p)
            if s.max_arity == 2:  # selection ranks arities: binary tests grow alike under any
                s = replace(s, selection=SplitParams.selection)
            if s not in growths:
                growths.append(s)
            growth_of.append(growths.index(s))
        return cls(tuple(settings), tuple(params), tuple(growth_of), tuple(growths), n_parts)

    @classmethod
    def of_param_grid(cls, param_grid, p: dict[str, Any], refit, validate, only_fold, split) -> "Grid":
        """The settings of ``param_grid`` over the fit's parameters ``p``, each checked by ``validate``
        as a fit's are, before any pass; ``split(params)`` gives a setting's :class:`SplitParams`."""
        from ..model.grid import check_refit

        check_refit(refit)
        if p["cv"] is None:
            raise ParameterError("a grid of settings (param_grid=, --grid) chooses one by cross-validation: "
                                 "give cv=k too (--cv K)")
        if only_fold is not None:  # a test hook's one fold tree (dasktree.testing.hooks) has no forest to choose in
            raise ParameterError("a grid of settings is not grown by the one-fold test hook (grow_only_fold)")
        settings = expand_grid(param_grid)
        return cls.of(settings, [validate({**p, **s}) for s in settings], split, p["cv"] * p["repeats"])

    @property
    def trees_per_growth(self) -> int:
        return 1 + self.n_parts

    @property
    def n_trees(self) -> int:
        return len(self.growths) * self.trees_per_growth

    def holdout(self) -> np.ndarray:
        """The part each tree holds out (-1: a main tree)."""
        return np.tile(np.arange(-1, self.n_parts), len(self.growths))

    def tree_setting(self) -> tuple[int, ...]:
        """Each tree's growth (its index into :attr:`growths`)."""
        return tuple(np.repeat(np.arange(len(self.growths)), self.trees_per_growth).tolist())

    def first_tree(self, growth: int) -> int:
        """Growth ``growth``'s main tree; its fold trees follow it."""
        return growth * self.trees_per_growth
