"""Multi-way numeric tests and the selection functions that choose among arities.

With ``max_arity > 2`` a numeric attribute's test at a node is an optimal
k-interval split for every ``k = 2 .. max_arity`` (Block-Opt-P over the node's
bins, :mod:`dasktree.split.optimal`), of which one is kept by a *selection
function*. Information gain grows with the arity, so the selection corrects
for it (Elomaa & Rousu, 001):

* ``balanced_gain``: ``BG_log = gain / log2 k`` (the default for multi-way);
* ``gain_ratio``: ``gain / split_information`` (Quinlan);
* ``distance``: ``1 - d`` with López de Mántaras' normalized distance
  ``d(Pc, Pd) = (H(Pc|Pd) + H(Pd|Pc)) / H(Pc ∩ Pd)`` between the class
  partition and the test's partition.

The same function then ranks the attributes (numeric and nominal alike).
``gain`` is the impurity decrease of the criterion (entropy: information gain).

Missing values are not part of the optimal partition: they join the child
where they give the largest gain (ties: the larger child, then the lower
index), as in the binary search. A split whose child would hold fewer than
``min_samples_leaf`` examples is not a candidate.
"""

from __future__ import annotations

import numpy as np

from .criteria import entropy, gini
from .node_tests import Test, numeric_test
from .optimal import block_opt_p

__all__ = ["SELECTIONS", "selection_score", "numeric_multiway"]

SELECTIONS = ("balanced_gain", "gain_ratio", "distance")


def _entropy_of(counts: np.ndarray) -> float:
    return float(entropy(np.asarray(counts, dtype=np.float64).ravel()))


def selection_score(children: np.ndarray, gain: float, selection: str) -> float:
    """Score of a test with children class counts ``children`` (k, C) and impurity decrease ``gain``."""
    sizes = children.sum(axis=1)
    k = int(np.count_nonzero(sizes))
    if k < 2:
        return -np.inf
    if selection == "balanced_gain":
        return gain / np.log2(k)
    if selection == "gain_ratio":
        info = _entropy_of(sizes)
        return gain / info if info > 0 else -np.inf
    if selection == "distance":
        joint = _entropy_of(children)
        if joint <= 0:
            return -np.inf
        d = (2 * joint - _entropy_of(sizes) - _entropy_of(children.sum(axis=0))) / joint
        return 1.0 - d
    raise ValueError(f"selection must be one of {list(SELECTIONS)}, got {selection!r}")


def _impurity(counts: np.ndarray, name: str) -> np.ndarray:
    return gini(counts) if name == "gini" else entropy(counts)


def _place_missing(children: np.ndarray, miss: np.ndarray, parent_impurity: float, n: float,
                   name: str) -> tuple[int, float, np.ndarray]:
    """(default child, gain, children with the missing values added)."""
    k = children.shape[0]
    options = np.repeat(children[None], k, axis=0)
    options[np.arange(k), np.arange(k)] += miss
    sizes = options.sum(axis=-1)
    gains = parent_impurity - np.sum(sizes * _impurity(options, name), axis=-1) / n
    order = np.lexsort((np.arange(k), -children.sum(axis=1), -gains))
    best = int(order[0])
    return best, float(gains[best]), options[best]


def numeric_multiway(h: np.ndarray, upper: np.ndarray, values: np.ndarray, a: int, parent_impurity: float,
                     n: float, *, impurity: str, max_arity: int, selection: str, min_samples_leaf: int,
                     centre) -> tuple[Test, float, np.ndarray] | None:
    """The selected optimal k-interval test (k = 2 .. max_arity) on one numeric attribute.

    ``h`` is the attribute's slice of the node histogram: row 0 missing, then bins.
    ``centre(bins, cut, upper, values)`` moves a cut to the middle of a run of empty bins.
    """
    bins = h[1:]
    if np.count_nonzero(bins.sum(axis=1)) < 2:
        return None
    optimum = block_opt_p(bins, max_arity=max_arity, criterion=impurity)
    best = None
    for k in range(2, max_arity + 1):
        if not np.isfinite(optimum.cost[k]):
            break
        cuts = np.asarray(optimum.cuts[k], dtype=np.int64) + 1  # 1-based: cut c sends bins <= c left
        edges = np.concatenate([[0], cuts, [bins.shape[0]]])
        children = np.stack([bins[edges[i]:edges[i + 1]].sum(axis=0) for i in range(k)])
        default, gain, children = _place_missing(children, h[0], parent_impurity, n, impurity)
        if children.sum(axis=1).min() < min_samples_leaf:
            continue
        score = selection_score(children, gain, selection)
        if best is None or score > best[0]:
            best = (score, cuts, default, gain, children)
    if best is None:
        return None
    _, cuts, default, gain, children = best
    cuts = np.array([centre(bins, int(c), upper, values) for c in cuts])
    return numeric_test(a, cuts, upper, default), gain, children
