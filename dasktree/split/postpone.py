"""Postponing the evaluation of attributes with many boundary points (Elomaa & Rousu, 001).

An attribute postponed at a node is not searched there, and is considered
again at every deeper node (001, Section 1: the boundary points of an
attribute fall as the data is partitioned). The rules read each numeric
attribute's *blocks* at the node (001, Definition 2; ``B`` below is the number
of blocks, ``B - 1`` the number of boundary points), counted from the node's
histogram before any split search. Nominal attributes are never postponed.

Rules (001, Section 5), with ``n`` the examples at the node:

* ``("ratio", t)``, Heuristic 1: postpone when ``B / n > t``.
* ``("rank", t)``, Heuristic 2: order the numeric attributes by ``B`` (ties:
  the lower attribute index first) and search the first ``ceil(t * count)``;
  postpone the rest, the ``(1 - t)`` share with the most boundary points.
* ``("relative", t)``, Heuristic 3: postpone when ``B_min / B < t``, with
  ``B_min`` the fewest blocks among the numeric attributes. The paper prints
  the inequality as ``B_min / B > t``, which would postpone the attribute with
  the fewest boundary points itself (its ratio is 1); the rule here postpones
  the attributes with many boundary points, as the heuristic intends.
* ``"analytic"`` (001, Sections 3-4): postpone when an upper bound of the
  attribute's score is below the best score already found at the node
  (:func:`analytic_bound`).

The heuristics rank only the attributes with at least one boundary point
(``B >= 2``); an attribute without one is searched (cheaply) as usual.

The analytic bound. For any split of the node into intervals of bins, the
weighted impurity ``sum_i |S_i| I(S_i)`` of the intervals is

1. at least ``sigma_B``, the weighted impurity of the partition into all bins
   (equal to that of all blocks, 001 Section 4: refining a partition never
   raises a concave impurity, Log Sum Inequality; uniform bins add nothing);
2. at least ``c * (B - k)`` for a split into ``k`` intervals (001, Section 3:
   ``B - k`` boundary points stay inside the intervals). The paper derives
   ``c = 1`` for entropy in bits on two classes. It holds for any number of
   classes: an interval with ``b`` inner boundary points has at least ``b / 2``
   examples outside its majority class (no two majority-uniform blocks are
   adjacent), and ``|S| H(S) >= 2 (|S| - max_c |S_c|)``. For Gini the same
   count gives ``c = 1/2`` (``|S| G(S) >= |S| - max_c |S_c|``).

Missing values join a child; by the same refinement they add at least
``|M| I(M)``. So a split of arity ``k`` gains at most
``I(S) - (max(sigma_B, c (B - k)) + |M| I(M)) / n``, and the score bound is
that gain (binary search ranked by gain: criterion gini or entropy), or its
maximum over ``k = 2 .. max_arity`` divided by ``log2 k`` (multi-way search
ranked by ``balanced_gain``, the paper's BG_log). For gain ratio and
López de Mántaras' distance the score has no bound from these counts (a split
of tiny split information can have any ratio): ``"analytic"`` is refused
there (:func:`check_postpone`).
"""

from __future__ import annotations

import math

import numpy as np

from .blocks import bins_to_blocks
from .criteria import weighted_impurity

__all__ = ["RULES", "parse_postpone", "postpone_text", "check_postpone", "analytic_holds", "block_stats",
           "block_stats_naive", "ratio_postponed", "rank_postponed", "relative_postponed", "heuristic_postponed",
           "analytic_bound", "BOUND_SLACK"]

RULES = ("analytic", "ratio", "rank", "relative")
"""``postpone=`` rules: the analytic bound, Heuristics 1, 2 and 3."""

BOUND_SLACK = 1e-9
"""An attribute is postponed by the bound only when the bound is below the best score by more than
this: the float rounding of a gain is far smaller, so a postponed attribute can never win."""


def parse_postpone(value) -> tuple[str, float | None] | None:
    """``postpone=`` as ``(rule, t)`` (``t`` None for "analytic"), or None; ValueError says what is wrong.

    Accepts None, "analytic", ``(rule, t)`` (tuple or list) and the text ``"rule:t"``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if value == "analytic":
            return ("analytic", None)
        rule, sep, number = value.partition(":")
        if not sep:
            raise ValueError(f"postpone must be None, 'analytic' or (rule, t) with rule in "
                             f"{list(RULES[1:])}, got {value!r}")
        try:
            t = float(number)
        except ValueError:
            raise ValueError(f"postpone {value!r}: the threshold after ':' must be a number") from None
        value = (rule, t)
    if not isinstance(value, (tuple, list)) or len(value) != 2 or value[0] not in RULES[1:]:
        raise ValueError(f"postpone must be None, 'analytic' or (rule, t) with rule in {list(RULES[1:])}, "
                         f"got {value!r}")
    rule, t = value
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) or not 0 < t <= 1:
        raise ValueError(f"postpone ({rule!r}, t) needs a number 0 < t <= 1, got {t!r}")
    return (str(rule), float(t))


def postpone_text(rule: tuple[str, float | None] | None) -> str | None:
    """The canonical text of a parsed rule: "analytic", "rank:0.5", or None."""
    if rule is None:
        return None
    return rule[0] if rule[1] is None else f"{rule[0]}:{rule[1]:g}"


def analytic_holds(criterion: str, max_arity: int, selection: str) -> bool:
    """Whether :func:`analytic_bound` bounds the score that ranks the attributes."""
    if max_arity > 2:
        return selection == "balanced_gain"
    return criterion in ("gini", "entropy")


def check_postpone(rule, criterion: str, max_arity: int, selection: str) -> None:
    """ValueError when "analytic" is asked for a score it does not bound."""
    if rule is not None and rule[0] == "analytic" and not analytic_holds(criterion, max_arity, selection):
        what = f"selection={selection!r}" if max_arity > 2 else f"criterion={criterion!r}"
        raise ValueError(f"postpone='analytic' bounds the gain (criterion gini or entropy) and, with max_arity > 2, "
                         f"balanced_gain only; not {what}: use a heuristic (ratio, rank, relative)")


def block_stats(h: np.ndarray, impurity: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks of one numeric attribute in each of M histograms ``h`` (M, 1 + bins, C), row 0 missing.

    Returns the number of blocks ``B`` (M,) int64, the weighted impurity
    ``sigma_B`` of the partition into all bins (M,), and the weighted impurity
    ``|M| I(M)`` of the missing values (M,). Equal to :func:`block_stats_naive`.
    """
    bins = h[:, 1:]
    present = bins > 0
    classes = present.sum(axis=2)  # (M, w)
    nonempty = classes > 0
    uniform = classes == 1
    label = np.where(uniform, present.argmax(axis=2), -1)  # the class of a uniform bin, -1 otherwise
    w = bins.shape[1]
    index = np.where(nonempty, np.arange(w), -1)
    last = np.maximum.accumulate(index, axis=1) if w else index
    previous = np.concatenate([np.full((h.shape[0], 1), -1), last[:, :-1]], axis=1)  # the last non-empty bin before
    previous_label = np.where(previous >= 0, np.take_along_axis(label, np.maximum(previous, 0), axis=1), -2)
    # a non-empty bin starts a block unless it and the non-empty bin before are uniform of one class
    starts = nonempty & ~(uniform & (previous_label == label))
    blocks = starts.sum(axis=1).astype(np.int64)
    sigma = weighted_impurity(bins, impurity).sum(axis=1)
    return blocks, sigma, weighted_impurity(h[:, 0], impurity)


def block_stats_naive(h: np.ndarray, impurity: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`block_stats` from :func:`~dasktree.split.blocks.bins_to_blocks`, one histogram at a time."""
    out = [], [], []
    for one in h:
        blocks = bins_to_blocks(one[1:])
        out[0].append(blocks.n_blocks)
        out[1].append(float(weighted_impurity(blocks.counts, impurity).sum()))
        out[2].append(float(weighted_impurity(one[0], impurity)))
    return np.asarray(out[0], dtype=np.int64), np.asarray(out[1]), np.asarray(out[2])


def ratio_postponed(blocks: np.ndarray, n: np.ndarray, t: float) -> np.ndarray:
    """Heuristic 1 on blocks (A, M) of A numeric attributes and node sizes n (M,): ``B / n > t``."""
    blocks = np.asarray(blocks)
    return (blocks >= 2) & (blocks > t * np.asarray(n, dtype=np.float64)[None, :])


def rank_postponed(blocks: np.ndarray, t: float) -> np.ndarray:
    """Heuristic 2: per histogram, all but the ``ceil(t * count)`` ranked attributes with the fewest blocks."""
    blocks = np.asarray(blocks)
    ranked = blocks >= 2
    count = ranked.sum(axis=0)
    searched = np.ceil(np.round(t * count, 9)).astype(np.int64)
    # the ranked attributes by (blocks, index); the unranked sort last
    key = np.where(ranked, blocks, np.iinfo(np.int64).max)
    order = np.argsort(key, axis=0, kind="stable")
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(blocks.shape[0])[:, None].repeat(blocks.shape[1], axis=1), axis=0)
    return ranked & (position >= searched[None, :])


def relative_postponed(blocks: np.ndarray, t: float) -> np.ndarray:
    """Heuristic 3: ``B_min / B < t``, ``B_min`` the fewest blocks among the ranked attributes."""
    blocks = np.asarray(blocks)
    ranked = blocks >= 2
    fewest = np.where(ranked, blocks, np.iinfo(np.int64).max).min(axis=0) if blocks.shape[0] else np.zeros(0)
    return ranked & (fewest[None, :] < t * blocks)


def heuristic_postponed(rule: tuple[str, float], blocks: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The attributes (A, M) a heuristic rule postpones."""
    name, t = rule
    if name == "ratio":
        return ratio_postponed(blocks, n, t)
    if name == "rank":
        return rank_postponed(blocks, t)
    if name == "relative":
        return relative_postponed(blocks, t)
    raise ValueError(f"not a heuristic postponing rule: {rule!r}")


def analytic_bound(blocks: np.ndarray, sigma: np.ndarray, missing: np.ndarray, n: np.ndarray,
                   parent_impurity: np.ndarray, impurity: str, max_arity: int) -> np.ndarray:
    """Upper bound of the score of any test on each numeric attribute (A, M) (module docstring).

    ``blocks``, ``sigma``, ``missing`` (A, M) from :func:`block_stats`; ``n``
    and ``parent_impurity`` (M,) the node's size and impurity. With
    ``max_arity == 2`` the bound of the gain; above, of the balanced gain.
    """
    c = 1.0 if impurity == "entropy" else 0.5
    n = np.where(np.asarray(n, dtype=np.float64) > 0, n, 1.0)[None, :]
    best = np.full(np.shape(blocks), -np.inf)
    for k in range(2, max_arity + 1):
        inside = c * np.maximum(np.asarray(blocks, dtype=np.float64) - k, 0.0)
        gain = np.asarray(parent_impurity)[None, :] - (np.maximum(sigma, inside) + missing) / n
        best = np.maximum(best, gain / math.log2(k))
    return best
