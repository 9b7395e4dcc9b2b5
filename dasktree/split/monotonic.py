"""Monotonicity constraints (scikit-learn's ``monotonic_cst``): what a split must obey, and the bounds.

A node's *value* is what it predicts: a regression tree's training mean (in fixed point, the
searches' units: :mod:`dasktree.binning.target` maps it to the target increasingly), a binary
classification tree's probability of the second class (``classes_[1]``, scikit-learn's positive
class). Every node of a tree has bounds ``lo <= value <= hi``, the root ``(-inf, inf)``. A binary
test on a numeric attribute of constraint ``c`` (1: increasing, -1: decreasing) is allowed when its
children's values ``vl`` (child 0, the lower codes) and ``vr`` (child 1) are both within the node's
bounds and ``(vl - vr) * c <= 0``; the children then get the bounds split at the *middle value*
``mid = vl / 2 + vr / 2``: with ``c = 1`` child 0 ``(lo, mid)`` and child 1 ``(mid, hi)``, with
``c = -1`` the other way round. A test on an unconstrained attribute is not checked and its children
inherit the node's bounds. A node's value as the model predicts it is its value clipped to its
bounds (:func:`tree_bounds`: the bounds are a function of the tree's own counts, computed again
wherever a model is made or read). This is ``sklearn/tree/_tree.pyx``'s depth-first builder with
``_criterion.pyx``'s ``check_monotonicity``, ``middle_value`` and ``clip_node_value``: so every
leaf of a constrained split's child 0 predicts at most (``c = 1``) every leaf of its child 1, and
the prediction is monotone in each constrained feature, pruned or not.

Only binary tests on numeric attributes take a constraint: a nominal feature given a non-zero one,
multi-way tests (``max_arity > 2``) and more than two classes are refused (scikit-learn refuses
multiclass and multi-output too).

The level searches (:func:`dasktree.split.regression.best_splits`, the classification scans) and the
small nodes' grower (:mod:`dasktree.split.small_grower`) call :func:`allowed` (compiled, with a
numpy twin: :func:`allowed_numpy`) on the same floats, so the level-wise path and the grower make the
same tree.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..kernels.jit import jit

__all__ = ["MONOTONIC_WHAT", "check_monotonic_cst", "monotonic_text", "monotonic_layer", "resolve_monotonic", "monotonic_of",
           "binary_monotonic",
           "allowed", "allowed_numpy", "middle", "child_bounds", "tree_bounds", "tree_bounds_naive", "UNBOUNDED"]

MONOTONIC_WHAT = "None, a sequence of -1, 0 or 1 per feature, or a dict {feature: -1, 0 or 1}"
UNBOUNDED = (-np.inf, np.inf)


def _constraint(value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or int(value) not in (-1, 0, 1):
        raise ValueError
    return int(value)


def check_monotonic_cst(value):
    """``value`` in its canonical form, as JSON keeps it (the model's params, a checkpoint's): a list of
    ints (one per feature, in order) or a dict ``{feature: int}``; ``ValueError`` (naming the parameter)
    otherwise."""
    try:
        if isinstance(value, dict):
            if not value or not all(isinstance(k, str) for k in value):
                raise ValueError
            return {k: _constraint(v) for k, v in value.items()}
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise ValueError
        items = np.asarray(value).tolist() if isinstance(value, np.ndarray) else list(value)
        if not items or any(isinstance(v, (list, tuple)) for v in items):
            raise ValueError
        return [_constraint(v) for v in items]
    except (ValueError, TypeError):
        raise ValueError(f"monotonic_cst must be {MONOTONIC_WHAT}, got {value!r}") from None


def monotonic_text(text: str):
    """``--monotonic-cst``: ``FEATURE=1,FEATURE=-1`` (a dict) or ``1,0,-1`` (one per feature, in order)."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    try:
        if items and all("=" in t for t in items):
            pairs = [t.rpartition("=") for t in items]
            return check_monotonic_cst({name.strip(): int(v) for name, _, v in pairs})
        return check_monotonic_cst([int(t) for t in items])
    except ValueError:
        raise ValueError(f"--monotonic-cst must be FEATURE=C,... or C,C,... with each C -1, 0 or 1, "
                         f"got {text!r}") from None


def monotonic_layer(value):
    """The canonical value as the split parameters keep it (hashable): the list as a tuple, or the
    dict's ``(feature, constraint)`` pairs in its order."""
    return tuple(value.items()) if isinstance(value, dict) else tuple(value)


def resolve_monotonic(value, names, numeric) -> np.ndarray | None:
    """Each feature's constraint (int8, in the order of ``names``) from ``monotonic_cst`` as given
    (its canonical or layer form), or None when every one is 0. ``numeric[a]``: whether feature ``a``
    is numeric. ``ValueError`` (one line) for a wrong length, an unknown feature, or a nominal feature
    given a non-zero constraint."""
    if value is None:
        return None
    names = list(names)
    pairs = value.items() if isinstance(value, dict) else value
    if isinstance(value, dict) or (value and isinstance(value[0], tuple)):
        known = {n: i for i, n in enumerate(names)}
        out = np.zeros(len(names), dtype=np.int8)
        for name, c in pairs:
            if name not in known:
                raise ValueError(f"monotonic_cst names {name!r}, not a feature of the fit (features: {names})")
            out[known[name]] = c
    else:
        if len(value) != len(names):
            raise ValueError(f"monotonic_cst has {len(value)} constraints but the fit has {len(names)} features "
                             f"({names}): give one per feature, or a dict {{feature: constraint}}")
        out = np.asarray(value, dtype=np.int8)
    nominal = [names[a] for a in np.flatnonzero(out) if not numeric[a]]
    if nominal:
        raise ValueError(f"monotonic_cst constrains the nominal feature {nominal[0]!r}: only numeric features "
                         "have an order to be monotone in")
    return out if out.any() else None


def monotonic_of(value, spec) -> np.ndarray | None:
    """:func:`resolve_monotonic` against a fit's bin spec (its features' names and kinds); a bad value is
    a :class:`~dasktree.errors.ParameterError` (exit 2)."""
    if value is None:
        return None
    from ..errors import ParameterError

    try:
        return resolve_monotonic(value, [f.name for f in spec.features], [f.kind == "numeric" for f in spec.features])
    except ValueError as exc:
        raise ParameterError(str(exc)) from None


def binary_monotonic(value, spec) -> np.ndarray | None:
    """:func:`monotonic_of` for a classification fit: refused (one line, exit 2) with more than two classes."""
    cst = monotonic_of(value, spec)
    if cst is not None and spec.n_classes > 2:
        from ..errors import ParameterError

        raise ParameterError(f"monotonic_cst is for regression and binary classification: the target has "
                             f"{spec.n_classes} classes (scikit-learn refuses multiclass too)")
    return cst


@jit
def allowed(c, lo, hi, vl, vr) -> bool:
    """Whether a split of children's values ``vl``, ``vr`` obeys constraint ``c`` within bounds ``lo``, ``hi``
    (``c == 0``: always)."""
    if c == 0:
        return True
    return lo <= vl <= hi and lo <= vr <= hi and (vl - vr) * c <= 0


def allowed_numpy(c: int, lo, hi, vl, vr) -> np.ndarray:
    """:func:`allowed` over arrays (broadcast): the level search's twin."""
    vl, vr = np.asarray(vl, dtype=np.float64), np.asarray(vr, dtype=np.float64)
    if c == 0:
        return np.ones(np.broadcast(vl, vr, lo, hi).shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        return (lo <= vl) & (vl <= hi) & (lo <= vr) & (vr <= hi) & ((vl - vr) * c <= 0)


@jit
def middle(vl, vr) -> float:
    """The middle value of a split: the children's values' mean, scikit-learn's order of operations."""
    return vl / 2.0 + vr / 2.0


def child_bounds(c: int, lo: float, hi: float, vl: float, vr: float) -> tuple[tuple, tuple]:
    """The bounds of child 0 and child 1 of a split on an attribute of constraint ``c``."""
    if c == 0:
        return (lo, hi), (lo, hi)
    mid = float(middle(float(vl), float(vr)))
    return ((lo, mid), (mid, hi)) if c > 0 else ((mid, hi), (lo, mid))


def tree_bounds(children: list, attribute, raw: np.ndarray, cst: np.ndarray) -> np.ndarray:
    """(n_nodes, 2) every node's bounds, top down: node 0 the root, a node's children after it
    (breadth-first order). ``attribute[i]``: node ``i``'s test's attribute (-1: a leaf); ``raw``: each
    node's unclipped value; a binary test on a constrained attribute splits the bounds at its
    children's middle value, any other test passes them down (compiled: :func:`tree_bounds_naive`
    is its plain twin)."""
    n = len(children)
    arity = np.fromiter((len(k) for k in children), dtype=np.int64, count=n)
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(arity, out=start[1:])
    flat = np.fromiter(itertools.chain.from_iterable(children), dtype=np.int64, count=int(start[-1]))
    out = np.empty((n, 2))
    _tree_bounds(start, flat, np.asarray(attribute, dtype=np.int64), np.asarray(raw, dtype=np.float64),
                 np.asarray(cst, dtype=np.int64), out)
    return out


@jit
def _tree_bounds(start, flat, attribute, raw, cst, out):
    n = start.size - 1
    if n:
        out[0, 0], out[0, 1] = -np.inf, np.inf
    for i in range(n):
        lo, hi = out[i, 0], out[i, 1]
        a = attribute[i]
        k = start[i + 1] - start[i]
        c = cst[a] if a >= 0 and k == 2 else 0
        if c != 0:
            left, right = flat[start[i]], flat[start[i] + 1]
            mid = middle(raw[left], raw[right])
            if c > 0:
                out[left, 0], out[left, 1], out[right, 0], out[right, 1] = lo, mid, mid, hi
            else:
                out[left, 0], out[left, 1], out[right, 0], out[right, 1] = mid, hi, lo, mid
        else:
            for j in range(start[i], start[i + 1]):
                out[flat[j], 0], out[flat[j], 1] = lo, hi


def tree_bounds_naive(children: list, attribute, raw: np.ndarray, cst: np.ndarray) -> np.ndarray:
    """The plain-Python twin of :func:`tree_bounds`, with :func:`child_bounds`."""
    n = len(children)
    out = np.empty((n, 2))
    if n:
        out[0] = UNBOUNDED
    for i in range(n):
        kids = children[i]
        if not kids:
            continue
        a = int(attribute[i])
        c = int(cst[a]) if a >= 0 and len(kids) == 2 else 0
        lo, hi = out[i]
        for k, bounds in zip(kids, child_bounds(c, lo, hi, raw[kids[0]], raw[kids[1]]) if c
                             else [(lo, hi)] * len(kids)):
            out[k] = bounds
    return out
