"""Feature sampling per (member, node) for forests: ``max_features`` attributes searched at a node.

Member ``m`` searches, at a node of key ``k``, the ``n_sampled`` attributes of least score
``mix64(mix64(k ^ salt_m) + (a + 1) * golden)`` (ties: the lower attribute), with
``salt_m = mix64((seed * golden) ^ FEATURE_TAG + m + 1)``: a uniform draw of ``n_sampled`` of
the attributes without replacement, a function of the seed, the member and the node's key alone.

A node's *key* is its path from the root: the root's is 0, the child of index ``i`` of a node of
key ``k`` has ``mix64(k * golden + i + 1)`` (:func:`child_key`). So the sample does not depend on
the node's id in the forest, on which pass or node group counted it, on the partitioning, or on
whether the node grew in a level pass or in memory.

A single tree with ``max_features`` (:class:`dasktree.DaskTreeClassifier`,
:class:`dasktree.DaskTreeRegressor`) draws as member 0 of a forest without bags, and so do its
``cv`` fold trees (:func:`tree_sampling`, :func:`tree_members`): at a node path they search the
main tree's draw, which depends on no row (the parameter's docstring says why that is the honest
choice for the CV estimate).

Pure numpy; :func:`feature_mask_naive` is its plain-Python twin.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ..io.row_hash import _mix_int, mix64

__all__ = ["resolve_max_features", "tree_sampling", "tree_members", "job_salts", "child_key", "member_salts",
           "feature_mask", "feature_mask_naive"]

_GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1
FEATURE_TAG = 0x5EA7F00DF00D5EA7  # keeps the features' salts apart from the bags' and the folds'


def resolve_max_features(max_features, n_features: int) -> int:
    """Attributes searched per node, as scikit-learn's forests read ``max_features``: "sqrt",
    "log2", an int (at most ``n_features``), a float fraction (at least 1), None (all)."""
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(math.sqrt(n_features)))
        if max_features == "log2":
            return max(1, int(math.log2(n_features)))
        raise ValueError(f"max_features must be 'sqrt', 'log2', an int, a float or None, got {max_features!r}")
    if isinstance(max_features, Integral) and not isinstance(max_features, bool):
        return max(1, min(int(max_features), n_features))
    if isinstance(max_features, Real) and not isinstance(max_features, bool):
        return max(1, int(float(max_features) * n_features))
    raise ValueError(f"max_features must be 'sqrt', 'log2', an int, a float or None, got {max_features!r}")


def tree_sampling(max_features, random_state: int, n_features: int) -> tuple[int, int]:
    """A single tree's ``(attributes searched per node, seed)`` from its ``max_features`` and
    ``random_state``: ``(0, 0)`` when every attribute is searched."""
    if max_features is None:
        return 0, 0
    k = resolve_max_features(max_features, n_features)
    return (k, int(random_state)) if k < n_features else (0, 0)


def tree_members(trees, bagged: bool) -> np.ndarray:
    """The member each of ``trees`` draws as: itself in a bagged forest, 0 for a single tree's main and
    fold trees (they search the main tree's draw at each node path)."""
    trees = np.asarray(trees, dtype=np.int64)
    return trees if bagged else np.zeros(trees.size, dtype=np.int64)


def job_salts(seed: int, trees, bagged: bool) -> np.ndarray:
    """The salts (:func:`member_salts`) of the members ``trees`` draw as (:func:`tree_members`)."""
    return member_salts(seed, tree_members(trees, bagged))


def child_key(key: int, index: int) -> int:
    """The key of child ``index`` of a node of key ``key``."""
    return _mix_int((key * _GOLDEN + index + 1) & _MASK)


def member_salts(seed: int, members) -> np.ndarray:
    """Each member's salt ``salt_m`` (uint64): with a node's key, what its sample is drawn from (the
    small nodes' grower draws it per node too, :mod:`dasktree.split.small_grower`)."""
    base = ((seed * _GOLDEN) & _MASK) ^ FEATURE_TAG
    with np.errstate(over="ignore"):
        return mix64(np.uint64(base) + np.asarray(members, dtype=np.uint64) + np.uint64(1))



def feature_mask(seed: int, members, keys, n_features: int, n_sampled: int) -> np.ndarray:
    """(n_features, M) bool: the attributes member ``members[j]`` searches at the node of key ``keys[j]``."""
    members = np.asarray(members, dtype=np.int64)
    out = np.ones((n_features, members.size), dtype=bool)
    if n_sampled >= n_features or not members.size:
        return out
    with np.errstate(over="ignore"):
        node = mix64(np.asarray(keys, dtype=np.uint64) ^ member_salts(seed, members))  # (M,)
        steps = (np.arange(1, n_features + 1, dtype=np.uint64) * np.uint64(_GOLDEN))[:, None]
        score = mix64(node[None, :] + steps)  # (A, M)
    order = np.argsort(score, axis=0, kind="stable")  # equal scores: the lower attribute first
    out[:] = False
    np.put_along_axis(out, order[:n_sampled], True, axis=0)
    return out


def feature_mask_naive(seed: int, members, keys, n_features: int, n_sampled: int) -> np.ndarray:
    """The twin of :func:`feature_mask`, one (member, node) at a time in Python integers."""
    out = np.zeros((n_features, len(members)), dtype=bool)
    for j, (m, k) in enumerate(zip(members, keys)):
        salt = _mix_int(((((seed * _GOLDEN) & _MASK) ^ FEATURE_TAG) + int(m) + 1) & _MASK)
        node = _mix_int(int(k) ^ salt)
        scores = [(_mix_int((node + (a + 1) * _GOLDEN) & _MASK), a) for a in range(n_features)]
        for _, a in sorted(scores)[:min(n_sampled, n_features)]:
            out[a, j] = True
    return out
