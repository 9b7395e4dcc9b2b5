"""Histogram subtraction: one child of each branch is its parent minus its siblings.

The children of a branch partition the rows of their parent (every code,
missing included, goes to exactly one child), so the counts of any one child
are the parent's counts minus those of the others, cell for cell, exactly.
A level pass then need not count the rows of the branch's largest child: they
still move to it (it is on the frontier, so it stays a start node) but add
nothing to the workers' histograms, and the search chunk holding the branch
fills the child's slices from the parent's summed histogram of the previous
level, kept on the workers. This is the "histogram subtraction" of
LightGBM-style learners; in the forest it works per branch, since trees that
share a branch share its children.

A child tracks the parts of its branch's trees, a subset of its parent's, so
its slices are sums of the parent's: a part's slice is the parent's slice of
that part; the child's rest slice is the parent's rest slice plus the parent's
slices of first-repetition parts the child does not track
(:func:`slice_map`).

Pure numpy; the runners decide where the parent's counts come from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Derivation", "ChunkDerivation", "ChunkFill", "slice_map", "expand_counted", "fill_derived",
           "take_cells"]


@dataclass(frozen=True)
class Derivation:
    """Slot ``slot`` (node ``node``) of a pass is node ``parent`` minus the slots ``siblings``.

    Child slice ``j`` is the sum of the parent's slices ``parent_slices[j]``.
    """

    node: int
    slot: int
    parent: int
    siblings: tuple[int, ...]
    parent_slices: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ChunkDerivation:
    """A :class:`Derivation` in a search chunk's cells: bases relative to the chunk; the parent's
    cells are ``parent_cells`` cells from ``parent_base`` of the chunk task's ``parent``-th extra input."""

    base: int
    n_slices: int
    sibling_bases: tuple[int, ...]
    parent: int
    parent_base: int
    parent_cells: int
    parent_slices: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ChunkFill:
    """How a search chunk's cells come from what the workers counted, as one task argument
    (Dask walks lists and tuples looking for futures, not this).

    The workers' histograms leave the derived slots out; ``runs`` rows
    ``(cell in the chunk, cell in the counted cells, length)`` put the counted
    cells back in place in a chunk of ``size`` cells, and ``items`` fill the gaps.
    """

    size: int
    runs: np.ndarray
    items: tuple[ChunkDerivation, ...]


def slice_map(child_parts: tuple[int, ...], child_rest: bool, parent_parts: tuple[int, ...], parent_rest: bool,
              n_folds: int) -> tuple[tuple[int, ...], ...]:
    """For each slice of a child (rest slice first, then its parts), the parent slices that sum to it.

    Both layouts are :meth:`~dasktree.forest.Forest.slices`: a rest slice (when
    present) holds the first-repetition rows of the parts not tracked.
    """
    parent_first = int(parent_rest)
    where = {p: parent_first + j for j, p in enumerate(parent_parts)}
    out: list[tuple[int, ...]] = []
    if child_rest:
        rest = [0] if parent_rest else []
        rest += [where[p] for p in parent_parts if p < n_folds and p not in child_parts]
        out.append(tuple(rest))
    for p in child_parts:
        if p not in where:
            raise RuntimeError(f"a child tracks part {p} that its parent does not: it's a bug, please report it")
        out.append((where[p],))
    return tuple(out)


def expand_counted(counted: np.ndarray, runs: np.ndarray, size: int) -> np.ndarray:
    """``size`` cells holding each run ``(at, start, length)`` of ``counted`` at ``at``; zero elsewhere."""
    out = np.zeros(size, dtype=counted.dtype)
    for at, start, length in np.asarray(runs).tolist():
        out[at:at + length] = counted[start:start + length]
    return out


def fill_derived(total: np.ndarray, parents: list[np.ndarray], derivations: list[ChunkDerivation],
                 cells: int) -> None:
    """Write each derived child's slices into ``total`` (a chunk's summed cells), in place.

    ``parents[d.parent]`` holds the parent's slices (int64, its whole slot, at
    ``d.parent_base``); siblings are read from ``total`` itself, so they must be
    counted slots.
    """
    for d in derivations:
        child = total[d.base:d.base + d.n_slices * cells].reshape(d.n_slices, cells)
        parent = parents[d.parent][d.parent_base:d.parent_base + d.parent_cells].reshape(-1, cells)
        for j, sources in enumerate(d.parent_slices):
            if sources:
                np.sum(parent[list(sources)], axis=0, out=child[j])
            else:
                child[j] = 0
        for base in d.sibling_bases:
            child -= total[base:base + d.n_slices * cells].reshape(d.n_slices, cells)


def take_cells(total: np.ndarray, ranges) -> np.ndarray:
    """The cells ``lo:hi`` of each row ``(lo, hi)`` of ``ranges``, one after another: the parents
    a search chunk needs from one of the last level's chunks, in one transfer."""
    return np.concatenate([total[:0]] + [total[lo:hi] for lo, hi in np.asarray(ranges).tolist()])
