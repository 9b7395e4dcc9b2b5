"""Small nodes finish in memory: which frontier nodes, their rows gathered, their subtrees grown.

A frontier node whose rows are few enough is not counted by another level pass: the pass that
reaches it *gathers* its rows (codes, target, fold part, weight) and its subtree grows to the end
in memory, depth first, for every tree that holds it (:func:`dasktree.split.small_grower.grow_jobs`),
with the level-wise path's tests: the same model, byte for byte. The level passes stop once every
open node is small (RainForest's RF-Hybrid; PLANET's InMemoryBuild).

- :func:`small_node_rows`: the switch. ``with small_node_rows(0):`` forces the level-wise path (the
  tests compare the two); a number caps the rows of a node gathered; the default (``None``) takes
  the runner's gather budget (:attr:`GATHER_BUDGET_MB`, or the memory plan's under a
  ``memory_limit``) over the bytes a gathered row costs, its memberships in every tree included.
- :func:`balanced`: a gathered job grows on one thread, so a gathering pass leaves its largest nodes to
  the level pass while the largest job would hold one thread busy for more than its share (a big root
  alone is split by a level pass first, and its children grow side by side).
- :class:`GatherPlan`: the trees as flat arrays and each gathered node's slot (a *job*: one node of one
  tree, its held-out part, its depth).
- :func:`gather_block`, :func:`merge_gathered`: a block of encoded rows' gathered rows, and the blocks'
  as one :class:`Gathered`, its jobs' memberships in order (:meth:`Gathered.chunks` for the threads).
- :func:`report_of`: what the fit report says of them (``report_["small_nodes"]``).
- :func:`attach`, :func:`share_groups`: the grown subtrees kept as arrays, and their nominal tests shared
  as the level loop shares them between trees (a shared test lists its lowest tree's categories).
- :func:`grow_chunk`: a chunk's jobs grown (run where the rows are: the runner's threads, a cluster's
  holders or tasks).
- :func:`job_counts`, :func:`job_runs`, :func:`piece_of_jobs`: on a cluster, the jobs cut in runs of
  similar memberships and each block's rows cut to a run's, so that one task grows a run from every
  worker's rows of it (merged by :func:`merge_gathered` in the blocks' order, as in process).

A bagged forest's members reach every row: gathered as memberships, a row's codes are copied once per
member whose bag holds it (100 members: a hundred copies of the data). A runner whose rows are in one
place (in process, :attr:`gathers_once`) gathers them *once* instead (:func:`gather_block` and
:func:`merge_gathered` with ``once``: each row's codes, target, weight and its multiplicity in every member
with a job, :class:`BagRows`), and the members grow one after another from those shared rows, in chunks of
members (:meth:`BagRows.chunks`): each member's memberships are made in the grow (its tree walked over the
rows, its bag's multiplicities as the weights), one member's arrays at a time per chunk, as a copy of its
rows' codes, target and weight of its own, which the grower moves as nodes of many rows split
(:func:`moving_rows`), so that a deep node's rows are read together. The subtrees are the same as from
memberships (the same rows in the same order, the same weights), so the model's bytes are too; the root of every member may then be one gathered node (:func:`root_rows`), and the whole forest one
pass. ``with gathering_once(False):`` keeps memberships (the tests compare the two).

A runner that gathers has ``small_pass(plan, func, label, **kwargs)``: one pass gathering the plan's
slots, then ``func(chunk, **kwargs)`` per chunk of jobs, the results in job order. A runner without
it (a resumed checkpoint) keeps the level-wise path.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

import numpy as np

from ..split.api import small_grower as kernel

__all__ = ["small_node_rows", "threshold", "GatherPlan", "Gathered", "gather_block", "merge_gathered", "grow_chunk",
           "can_gather", "setting_jobs", "class_criterion", "member_settings", "bound_settings", "most_rows", "jobs", "with_held_out",
           "GATHER_BUDGET_MB", "job_runs", "job_counts", "piece_of_jobs",
           "report_of", "gathers_once", "balanced", "threads_of", "SERIAL_ROWS", "gathering_once", "moving_rows", "BagRows", "root_rows", "forest_jobs", "row_memberships"]

GATHER_BUDGET_MB = 256.0
"""In process without a memory limit: the gathered rows' copy and memberships may take this much."""

SERIAL_ROWS = 1 << 13
"""A job of at most this many rows is gathered even when it would keep one thread busy while the others
wait (:func:`balanced`): grown on one thread, its rows cost about what the level passes it replaces cost
in their own fixed work (a small data set is one small node at the root: split first, iris's or digits'
fit would make several passes more, each costing more than the rows). Larger roots grow faster split
first, on every thread."""

LEVELS_LEFT = 8
"""A node gathered must have more than this many levels left to grow (``max_depth`` minus its
depth; no ``max_depth``: always): within a few levels of ``max_depth`` the level passes left are
few and their frontiers bounded, so a tree of ``max_depth`` D <= 8 makes its D + 1 passes as before
(the claims measured at depth 6 to 12 keep their passes), and a deep tree stops them early."""

_ROWS: contextvars.ContextVar = contextvars.ContextVar("small_node_rows", default=None)
_ONCE: contextvars.ContextVar = contextvars.ContextVar("gathering_once", default=None)
_MOVE: contextvars.ContextVar = contextvars.ContextVar("moving_rows", default=None)

ONCE_STEP = 1 << 16
"""Rows walked at a time when a block's rows are gathered once (its slots in every member: 4 bytes each)."""


@contextlib.contextmanager
def _set(var: contextvars.ContextVar, value):
    """Within the block, ``var`` is ``value``."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


@contextlib.contextmanager
def small_node_rows(rows: int | None):
    """Within the block, gather nodes of at most ``rows`` rows (0: none, every node level-wise;
    None: the runner's budget decides)."""
    with _set(_ROWS, rows):
        yield


@contextlib.contextmanager
def gathering_once(once: bool | None):
    """Within the block, a bagged forest's rows are gathered once (True, where the runner can), as
    memberships (False), or as the runner says (None, the default: :func:`gathers_once`)."""
    with _set(_ONCE, once):
        yield


@contextlib.contextmanager
def moving_rows(rows: int | None):
    """Within the block, a member grown from rows gathered once moves its rows' data at the splits of nodes
    of at least ``rows`` rows (None: the grower's :data:`~dasktree.split.small_grower.MOVE_ROWS`; the tests
    move every node's, 1)."""
    with _set(_MOVE, rows):
        yield


def gathers_once(runner) -> bool:
    """Whether ``runner`` gathers a bagged forest's rows once (:class:`BagRows`): it says so
    (``gathers_once``: its small pass grows the chunks where the rows are gathered) and the switch
    (:func:`gathering_once`) lets it."""
    return bool(getattr(runner, "gathers_once", False)) and _ONCE.get() is not False


def deep_enough(depth: int, max_depth: int | None) -> bool:
    """Whether a node at ``depth`` has more than :data:`LEVELS_LEFT` levels left to grow."""
    return max_depth is None or max_depth - depth > LEVELS_LEFT


def can_gather(runner) -> bool:
    """Whether ``runner`` gathers small nodes and the switch lets it."""
    return kernel.available() and _ROWS.get() != 0 and callable(getattr(runner, "small_pass", None))


def threshold(runner, spec, n_stats: int = 10) -> int:
    """Memberships a pass may gather (0: none, :func:`can_gather` says no), as :func:`jobs` counts them
    (a node's rows once per tree that holds it open): the switch's number, else the runner's budget over
    a membership's bytes: its row's codes, target, part and weight (counted for every membership, an
    upper bound where trees share a row; a bagged member's membership holds a copy), its job and row and
    whether it is held out (9 bytes), and room for the two nodes it may grow into
    (:func:`~dasktree.split.small_grower.grow_jobs`' arrays: 58 bytes and ``n_stats`` int64 statistics
    each)."""
    if not can_gather(runner):
        return 0
    rows = _ROWS.get()
    if rows is not None:
        return int(rows)
    budget = getattr(runner, "gather_budget_mb", None) or GATHER_BUDGET_MB
    return int(budget * 2**20 // _membership_bytes(spec, n_stats))


def _membership_bytes(spec, n_stats: int) -> int:
    """A membership's bytes as :func:`threshold` counts them."""
    return len(spec.features) * spec.code_dtype.itemsize + 4 + 2 + 4 + 9 + 2 * (58 + 8 * n_stats)


def row_memberships(runner, spec, forest, n_stats: int = 10) -> float:
    """What a bagged forest's row gathered once (:class:`BagRows`) costs, in :func:`threshold`'s units (a
    membership's bytes): its codes, target and weight, its multiplicity in every member (2 bytes each; none
    where the runner keeps its encoded rows, ``keeps_rows``: a root gathered once views them), and what a
    member grown from the rows makes per row, one member at a time per thread (its rows, held flags and
    their copies, weights, walk, multiplicities: 41 bytes; its own copy of the rows' codes, target and
    weight and the grower's buffer moving them, and with a nominal attribute the grower's saved copy of
    them). 0 when the rows are not gathered once."""
    if not (forest.bagged and gathers_once(runner)):
        return 0.0
    codes = len(spec.features) * spec.code_dtype.itemsize
    once = codes + 4 + 4
    if not getattr(runner, "keeps_rows", False):
        once += 2 * forest.n_trees
    own = codes + spec.code_dtype.itemsize + 8 + 8 + 8  # the copy (the weight counted above) and the move buffers
    if any(f.kind != "numeric" for f in spec.features):
        own += codes + 8 + 8
    once += (41 + own) * threads_of(runner)
    return once / _membership_bytes(spec, n_stats)


@dataclass(frozen=True)
class GatherPlan:
    """The trees as flat arrays and the nodes gathered (one slot per job).

    Tree ``t`` starts at entry ``root[t]``; entry ``e`` tests attribute ``attribute[e]`` (-1: none)
    and sends code ``c`` to entry ``table[offset[e] + c]``; ``slot[e] >= 0``: a job. Job ``j`` is one
    tree's node: its rows are those reaching it in tree ``job_tree[j]``, held out when their part is
    ``job_part[j]`` (-1: none; part ``p`` is fold ``p % n_folds`` of repetition ``p // n_folds``). In a
    bagged forest's plan (``bagged``) no row is held out: a row counts in member ``t``'s job its
    multiplicity in ``t``'s bag (:mod:`dasktree.io.bagging`), and not at all when that is 0."""

    root: np.ndarray
    attribute: np.ndarray
    offset: np.ndarray
    table: np.ndarray
    slot: np.ndarray
    job_tree: np.ndarray
    job_part: np.ndarray
    job_depth: np.ndarray
    n_folds: int = 1
    bagged: bool = False  # a bagged forest's: a row's part line ``t`` is its multiplicity in member ``t``
    fills: tuple = ()  # what the runners read of any plan
    derived: tuple = ()

    @property
    def n_jobs(self) -> int:
        return int(self.job_tree.size)

    @classmethod
    def of(cls, trees: dict, job_tree, job_depth, holdout: np.ndarray, n_folds: int, bagged: bool) -> "GatherPlan":
        """Either task's plan: ``trees`` as flat entries (``root``, ``attribute``, ``offset``, ``table``,
        ``slot``: a job's slot at its entry), each job's tree and depth, each tree's held-out part."""
        tree = np.asarray(job_tree, dtype=np.int64)
        return cls(**trees, job_tree=tree, job_part=np.asarray(holdout, dtype=np.int64)[tree],
                   job_depth=np.asarray(job_depth, dtype=np.int64), n_folds=n_folds, bagged=bagged)


@dataclass
class Gathered:
    """Gathered rows (columns) and each job's memberships: job ``j``'s rows are
    ``rows[start[j]:start[j + 1]]``, ``held`` where its tree holds them out."""

    codes: np.ndarray
    y: np.ndarray
    weight: np.ndarray | None
    rows: np.ndarray
    held: np.ndarray
    start: np.ndarray
    jobs: np.ndarray  # the jobs of this chunk (plan's job numbers)

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[1])

    def chunks(self, count: int) -> list["Gathered"]:
        """The jobs in about ``count`` runs of similar memberships (at least one job each)."""
        out = []
        for a, b in job_runs(self.start, count):
            lo, hi = int(self.start[a]), int(self.start[b])
            out.append(Gathered(self.codes, self.y, self.weight, self.rows[lo:hi].copy(), self.held[lo:hi].copy(),
                                self.start[a:b + 1] - lo, self.jobs[a:b]))
        return out


@dataclass
class BagRows:
    """A bagged forest's gathered rows once (:func:`gather_block` with ``once``): their codes, targets and
    weights (None: each row once), and their multiplicities in the plan's members with a job
    (:func:`plan_members`) as the blocks gave them (``parts[b]``: block ``b``'s, a row per member), not
    joined: a member's own is joined when it grows (:meth:`multiplicity`)."""

    codes: np.ndarray
    y: np.ndarray
    weight: np.ndarray | None
    parts: list
    members: np.ndarray

    @classmethod
    def of(cls, pieces: list[tuple], plan: GatherPlan) -> "BagRows":
        join = (lambda arrays, axis=0: np.concatenate(arrays, axis=axis)) if len(pieces) > 1 else \
            (lambda arrays, axis=0: arrays[0])
        codes = join([p[0] for p in pieces], axis=1)
        y = join([p[1] for p in pieces])
        weight = None if pieces[0][3] is None else join([p[3] for p in pieces])
        return cls(codes, y, weight, [p[2] for p in pieces], plan_members(plan))

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[1])

    def multiplicity(self, k: int) -> np.ndarray:
        """Member ``members[k]``'s multiplicity of every row (int16)."""
        return np.concatenate([p[k] for p in self.parts]) if len(self.parts) > 1 else self.parts[0][k]

    def chunks(self, count: int) -> list["MemberChunk"]:
        """The members in about ``count`` runs (at least one member each), in order."""
        n = self.members.size
        edges = np.unique(np.linspace(0, n, max(1, min(count, n)) + 1).round().astype(np.int64))
        return [MemberChunk(self, a, b) for a, b in zip(edges[:-1].tolist(), edges[1:].tolist())]


@dataclass
class MemberChunk:
    """Members ``rows.members[lo:hi]`` of gathered rows :class:`BagRows`: what one :func:`grow_chunk` grows."""

    rows: BagRows
    lo: int
    hi: int


def job_runs(start: np.ndarray, count: int) -> list[tuple[int, int]]:
    """Jobs ``0 .. start.size - 1`` as about ``count`` runs ``(a, b)`` of similar memberships (job
    ``j`` has ``start[j + 1] - start[j]``), each at least one job, in order; none when there are no jobs."""
    n_jobs = start.size - 1
    if n_jobs <= 0:
        return []
    total = int(start[-1])
    cuts = np.searchsorted(start, np.linspace(0, total, max(1, count) + 1)[1:-1], side="left")
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 1, n_jobs), [n_jobs]]))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def gather_block(encoded, plan: GatherPlan, once: bool = False) -> tuple:
    """One block of encoded rows' share: (codes, y, part, weight, job, row) of the rows some job holds
    (``row`` indexes them, ``job`` its job). A bagged plan's rows ``once`` (a runner that
    :func:`gathers_once`): (codes, y, part, weight, None, None) of the rows some member's job holds with a
    multiplicity, ``part`` their multiplicities in the members with a job (:func:`plan_members`); every row
    kept (a root's), the block's own arrays (no copy)."""
    if once and plan.bagged:
        return _gather_once(encoded, plan)
    slots = kernel.gather_slots(encoded.codes, plan.root, plan.attribute, plan.offset, plan.table, plan.slot)
    keep = (slots >= 0).any(axis=0)
    index = np.flatnonzero(keep)
    sub = slots[:, index]
    tree, row = np.nonzero(sub >= 0)
    job = sub[tree, row]
    weight = None if encoded.weight is None else encoded.weight[index]
    return (encoded.codes[:, index], encoded.y[index], encoded.part[:, index], weight, job.astype(np.int64),
            row.astype(np.int64))


def plan_members(plan: GatherPlan) -> np.ndarray:
    """The trees (members) with a job in ``plan``, ascending."""
    return np.unique(np.asarray(plan.job_tree, dtype=np.int64))


def _gather_once(encoded, plan: GatherPlan) -> tuple:
    """:func:`gather_block`'s rows once: each member's tree walked over :data:`ONCE_STEP` rows at a time."""
    members = plan_members(plan)
    n = int(encoded.codes.shape[1])
    keep = np.zeros(n, dtype=bool)
    roots = np.asarray(plan.root, dtype=np.int64)[members]
    for lo in range(0, n, ONCE_STEP):
        hi = min(n, lo + ONCE_STEP)
        slots = kernel.gather_slots(encoded.codes[:, lo:hi], roots, plan.attribute, plan.offset, plan.table,
                                    plan.slot)
        keep[lo:hi] = ((slots >= 0) & (encoded.part[members, lo:hi] > 0)).any(axis=0)
    part = encoded.part if members.size == encoded.part.shape[0] else encoded.part[members]
    if keep.all():
        return encoded.codes, encoded.y, part, encoded.weight, None, None
    index = np.flatnonzero(keep)
    return (encoded.codes[:, index], encoded.y[index], part[:, index],
            None if encoded.weight is None else encoded.weight[index], None, None)


def merge_gathered(pieces: list[tuple], plan: GatherPlan, jobs: tuple[int, int] | None = None,
                   once: bool = False) -> "Gathered | BagRows":
    """The blocks' gathered rows as one :class:`Gathered`, every job's memberships together in row order
    (the pieces' order, then each piece's): of every job, or of jobs ``lo <= j < hi`` when ``jobs`` is
    ``(lo, hi)`` (the pieces hold no other's, :func:`piece_of_jobs`). A bagged plan's pieces gathered
    ``once``: the rows once, :class:`BagRows`."""
    lo, hi = (0, plan.n_jobs) if jobs is None else jobs
    pieces = [p for p in pieces if p[0].shape[1]] or pieces[:1]
    if once and plan.bagged:
        return BagRows.of(pieces, plan)
    codes = np.concatenate([p[0] for p in pieces], axis=1) if len(pieces) > 1 else pieces[0][0]
    y = np.concatenate([p[1] for p in pieces]) if len(pieces) > 1 else pieces[0][1]
    part = np.concatenate([p[2] for p in pieces], axis=1) if len(pieces) > 1 else pieces[0][2]
    weight = None if pieces[0][3] is None else np.concatenate([p[3] for p in pieces])
    shift = np.cumsum([0] + [p[0].shape[1] for p in pieces[:-1]])
    job = np.concatenate([p[4] for p in pieces])
    row = np.concatenate([p[5] + s for p, s in zip(pieces, shift.tolist())])
    order = np.lexsort((row, job))
    job, row = job[order], row[order]
    if plan.bagged:
        return _bagged_memberships(codes, y, part, weight, job, row, plan, lo, hi)
    held_part = np.asarray(plan.job_part, dtype=np.int64)[job]
    held = np.zeros(row.size, dtype=bool)
    out = held_part >= 0
    if out.any():
        rep, fold = held_part[out] // plan.n_folds, held_part[out] % plan.n_folds
        held[out] = part[rep, row[out]].astype(np.int64) == fold
    start = np.concatenate([[0], np.cumsum(np.bincount(job - lo, minlength=hi - lo))]).astype(np.int64)
    return Gathered(codes, y, weight, row, held, start, np.arange(lo, hi, dtype=np.int64))


def _bagged_memberships(codes, y, part, weight, job, row, plan: GatherPlan, lo: int, hi: int) -> Gathered:
    """A bagged forest's memberships as rows of their own: member ``t``'s job counts a row its
    multiplicity in ``t``'s bag (times its weight), so each membership gets its row's codes and target
    and that weight; those of multiplicity 0 are left out (out of the bag: not counted in the passes)."""
    times = part[np.asarray(plan.job_tree, dtype=np.int64)[job], row].astype(np.int64)
    keep = times > 0
    job, row, times = job[keep], row[keep], times[keep]
    w = times if weight is None else times * np.asarray(weight, dtype=np.int64)[row]
    start = np.concatenate([[0], np.cumsum(np.bincount(job - lo, minlength=hi - lo))]).astype(np.int64)
    return Gathered(np.ascontiguousarray(codes[:, row]), y[row], w, np.arange(row.size, dtype=np.int64),
                    np.zeros(row.size, dtype=bool), start, np.arange(lo, hi, dtype=np.int64))


def job_counts(piece: tuple, n_jobs: int) -> np.ndarray:
    """A gathered piece's (:func:`gather_block`) memberships of each of ``n_jobs`` jobs."""
    return np.bincount(piece[4], minlength=n_jobs).astype(np.int64)


def piece_of_jobs(piece: tuple, lo: int, hi: int) -> tuple:
    """A gathered piece (:func:`gather_block`) cut to the memberships of jobs ``lo <= j < hi`` and the
    rows they hold, in the piece's order: what a cluster sends to the task growing those jobs."""
    codes, y, part, weight, job, row = piece
    keep = (job >= lo) & (job < hi)
    job, row = job[keep], row[keep]
    used = np.unique(row)  # sorted: the rows keep their order
    return (codes[:, used], y[used], part[:, used], None if weight is None else weight[used], job,
            np.searchsorted(used, row).astype(np.int64))


def grow_chunk(chunk: "Gathered | MemberChunk", *, plan: GatherPlan, task: int, settings: dict) -> tuple[np.ndarray, dict]:
    """A chunk's jobs grown (:func:`dasktree.split.small_grower.grow_jobs`): (its jobs, the nodes). A chunk
    of members (:class:`MemberChunk`): each member's jobs grown in turn (:func:`_grow_member`), their nodes
    one after another."""
    if isinstance(chunk, MemberChunk):
        grown = [_grow_member(chunk.rows, k, plan, task, settings) for k in range(chunk.lo, chunk.hi)]
        return _joined(grown)
    nodes = kernel.grow_jobs(task, chunk.codes, chunk.y, chunk.weight, chunk.rows, chunk.held, chunk.start,
                             np.asarray(plan.job_depth, dtype=np.int64)[chunk.jobs], **_job_settings(settings, chunk.jobs))
    return chunk.jobs, nodes


def _job_settings(settings: dict, jobs: np.ndarray) -> dict:
    """The grower's settings for ``jobs`` of a plan: each per-job one (:data:`PER_JOB`) cut to theirs."""
    extra = dict(settings)
    for name, dtype in PER_JOB.items():  # one value per job of the plan: the chunk's
        if extra.get(name) is not None:
            extra[name] = np.asarray(extra[name], dtype=dtype)[jobs]
    return extra


def _grow_member(rows: BagRows, k: int, plan: GatherPlan, task: int, settings: dict) -> tuple[np.ndarray, dict]:
    """Member ``rows.members[k]``'s jobs grown from the rows gathered once: its tree walked over them, its
    rows of each job (multiplicity above 0) in row order, weighted by their multiplicity (times the row's
    weight), as :func:`merge_gathered` gives a job's memberships, copied as the member's own rows, which
    the grower moves (``own``); (its jobs, the nodes)."""
    tree = int(rows.members[k])
    jobs = np.flatnonzero(np.asarray(plan.job_tree, dtype=np.int64) == tree)
    times = rows.multiplicity(k)
    root = int(plan.root[tree])
    if plan.attribute[root] < 0:  # the member's root is its one job (a root gathered): every row with a
        members = np.flatnonzero(times > 0)  # multiplicity, in order
        start = np.asarray([0, members.size], dtype=np.int64)
    else:
        slot = kernel.gather_slots(rows.codes, np.asarray([root], dtype=np.int64), plan.attribute, plan.offset,
                                   plan.table, plan.slot)[0]
        kept = np.flatnonzero((slot >= 0) & (times > 0))
        job = slot[kept]
        members = kept[np.argsort(job, kind="stable")]  # by job, each job's rows in row order
        start = np.concatenate([[0], np.cumsum(np.bincount(np.searchsorted(jobs, job), minlength=jobs.size))])
    weight = times[members].astype(np.int64)
    if rows.weight is not None:
        weight *= np.asarray(rows.weight, dtype=np.int64)[members]
    # the member's rows as arrays of their own, in its jobs' order, which the grower moves as it splits them
    nodes = kernel.grow_jobs(task, rows.codes[:, members], rows.y[members], weight,
                             np.arange(members.size, dtype=np.int64), np.zeros(members.size, dtype=bool),
                             start.astype(np.int64), np.asarray(plan.job_depth, dtype=np.int64)[jobs],
                             own=_MOVE.get() or kernel.MOVE_ROWS, **_job_settings(settings, jobs))
    return jobs, nodes


def _joined(grown: list[tuple[np.ndarray, dict]]) -> tuple[np.ndarray, dict]:
    """Several (jobs, nodes) of :func:`~dasktree.split.small_grower.grow_jobs` as one: the nodes' ``job``
    numbers, ``parent`` rows and ``table_start`` shifted past the ones before."""
    if len(grown) == 1:
        return grown[0]
    shifts = {name: np.cumsum([0] + [size(jobs, nodes) for jobs, nodes in grown[:-1]]).tolist() for name, size in (
        ("job", lambda jobs, nodes: jobs.size), ("parent", lambda jobs, nodes: nodes["parent"].size),
        ("table_start", lambda jobs, nodes: nodes["tables"].size))}
    out = {}
    for name in grown[0][1]:
        parts = [nodes[name] for _, nodes in grown]
        if name == "job":
            parts = [p + s for p, s in zip(parts, shifts["job"])]
        elif name in ("parent", "table_start"):  # -1: none (a job's own node; a threshold test's table)
            parts = [np.where(p >= 0, p + s, p) for p, s in zip(parts, shifts[name])]
        out[name] = np.concatenate(parts)
    return np.concatenate([jobs for jobs, _ in grown]), out


PER_JOB = {"job_root_size": np.int64, "job_leaf": np.int8, "job_key": np.uint64, "job_salt": np.uint64,
           "job_lo": np.float64, "job_hi": np.float64, "job_cp": np.float64}
"""The grower's settings given per job of a plan (:func:`grow_chunk` passes each chunk its jobs')."""


def report_of(levels: list[dict]) -> dict:
    """What a fit report says of the small nodes, from the run's levels (``run_["levels"]``): the
    frontier nodes finished in memory (``small_nodes``), the nodes their subtrees made
    (``grown_in_memory``), the rows gathered (``rows_gathered``) and the depth at which the passes
    over the data stopped (``passes_stopped_at_depth``: the deepest level a level pass or a
    gathering pass reached; below it every subtree grew in memory, and level-wise it is the
    deepest level counted)."""
    reached = [int(lv["level"]) for lv in levels if lv.get("groups", 0) or lv.get("small_nodes", 0)]
    return {"small_nodes": sum(int(lv.get("small_nodes", 0)) for lv in levels),
            "grown_in_memory": sum(int(lv.get("grown_in_memory", 0)) for lv in levels),
            "rows_gathered": sum(int(lv.get("rows_gathered", 0)) for lv in levels),
            "passes_stopped_at_depth": max(reached, default=0)}


# ---------------------------------------------------------------- the forest (its gathering plan: either task's)
def forest_can_gather(spec, params) -> bool:
    """Whether the compiled grower repeats the level loop's choices for this fit: binary tests (any
    criterion: gini, entropy, gain ratio; a nominal attribute's subset tests, ``nominal_split="binary"``
    with the search's ``exhaustive_categories``), no postponing, in every setting of a grid (each grows
    its own jobs, :func:`setting_jobs`), no ``max_leaf_nodes`` (chosen best first across a level:
    depth-first growth cannot repeat that order). Other fits stay level-wise."""
    nominal = any(f.kind != "numeric" for f in spec.features)
    return params.max_leaf_nodes is None and all(
        split.criterion in kernel.CLASS_CRITERIA and split.max_arity == 2 and split.postpone is None
        and not (nominal and (split.nominal_split != "binary"
                              or split.exhaustive_categories != kernel.EXHAUSTIVE_CATEGORIES))
        for split in (params.settings or (params.split,)))


def setting_jobs(params, jobs: list[tuple[int, int]]) -> list[tuple[object, list[tuple[int, int]]]]:
    """``jobs`` ((node, tree) pairs) by the split setting their trees grow with, in the settings' order:
    one group under ``params.split`` without a grid; a grid's setting of no job is left out."""
    if not params.settings:
        return [(params.split, jobs)]
    groups: dict[int, list] = {}
    for job in jobs:
        groups.setdefault(params.tree_setting[job[1]], []).append(job)
    return [(params.settings[g], groups[g]) for g in sorted(groups)]


def member_settings(forest, jobs: list[tuple[int, int]], max_features: int, feature_seed: int) -> dict:
    """The jobs' feature sampling for the grower (:func:`~dasktree.split.small_grower.grow_jobs`): each
    job's node's path key and its salt, and the attributes searched per node (0: all), as
    :func:`dasktree.levels.sampling.feature_mask` draws them in the level search: a bagged forest's
    member ``t`` draws as member ``t``, a single tree's trees (main and fold) as member 0."""
    if not max_features:
        return {}
    from .sampling import job_salts

    return {"job_key": np.asarray([forest.nodes[n].key for n, _ in jobs], dtype=np.uint64),
            "job_salt": job_salts(feature_seed, [t for _, t in jobs], forest.bagged), "n_sampled": int(max_features)}


def bound_settings(forest, jobs: list[tuple[int, int]]) -> dict:
    """Under ``monotonic_cst``: the grower's constraints and each job's tree's value bounds at its node."""
    if forest.monotonic is None:
        return {}
    bounds = np.asarray([forest.bounds_of(forest.nodes[n], (t,))[0] for n, t in jobs], dtype=np.float64).reshape(-1, 2)
    return {"monotonic": forest.monotonic, "job_lo": bounds[:, 0], "job_hi": bounds[:, 1]}


def class_criterion(split) -> int:
    """The grower's number of a split setting's criterion (:data:`~dasktree.split.small_grower.CLASS_CRITERIA`)."""
    return kernel.CLASS_CRITERIA[split.criterion]


def most_rows(params) -> int | None:
    """The rows a gathered node must stay below: entropy's ``log2`` table (gain ratio too) when any
    setting counts by it, else none."""
    splits = params.settings or (params.split,)
    return None if all(split.criterion == "gini" for split in splits) else kernel.ENTROPY_ROWS


def jobs(items: list, estimates: list, limit: int, work: list | None = None,
         threads: int = 1) -> tuple[list, list, int]:
    """Either task's choice of the nodes gathered: ``items`` taken in order while each one's
    ``estimates`` (the rows a gathering pass would hold for it, every tree's membership counted; None:
    not to gather) fits what is left of ``limit``, then :func:`balanced` on ``threads`` by ``work`` (each
    item's largest job's rows and its jobs' rows; None: no balance). Returns (gathered, the others in
    ``items``' order, the rows left)."""
    chosen = []
    for i, estimate in enumerate(estimates):
        if estimate is not None and 0 < estimate <= limit:
            chosen.append(i)
            limit -= estimate
    if work is not None:
        dropped = balanced([work[i] for i in chosen], threads)
        limit += sum(estimates[chosen[k]] for k in dropped)
        chosen = [i for k, i in enumerate(chosen) if k not in dropped]
    taken = set(chosen)
    return [items[i] for i in chosen], [item for i, item in enumerate(items) if i not in taken], limit


def balanced(work: list[tuple[int, int]], threads: int) -> set[int]:
    """The items a gathering pass leaves to the level pass so that it keeps ``threads`` busy: ``work[i]`` is
    item ``i``'s largest job's rows and its jobs' rows. A job grows on one thread, its rows visited about
    once a level; a level pass shares every node's rows among the threads. So while the largest job left
    holds more than a thread's share of the jobs' rows left (and more than :data:`SERIAL_ROWS`), its
    item is dropped, largest first (the first of equals): the level pass splits it, and its children
    grow side by side. Returns the dropped items' positions."""
    threads = max(1, int(threads))
    total = sum(rows for _, rows in work)
    dropped: set[int] = set()
    for i in sorted(range(len(work)), key=lambda i: -work[i][0]):
        largest = work[i][0]
        if largest <= SERIAL_ROWS or largest * threads <= total:
            break
        dropped.add(i)
        total -= work[i][1]
    return dropped


def with_held_out(train_rows: int, n_folds: int) -> int:
    """The rows a fold tree's node holds, training and held out, from its training rows: about one
    part in ``n_folds - 1`` more, an upper estimate (rounded up)."""
    return train_rows + train_rows // n_folds + 1


def forest_jobs(forest, frontier: list, limit: int, max_depth: int | None = None,
                most_rows: int | None = None, root_rows: int | None = None, once: float = 0.0,
                threads: int = 1) -> tuple[list, list]:
    """The frontier nodes gathered (:func:`jobs`: their rows times their open trees, a bagged forest's the
    sum of its open members' bag sizes; each of fewer than ``most_rows`` rows when given,
    :func:`deep_enough`; balanced on ``threads``, a job per open tree) and those left to the level pass. A node's rows
    are known from its counts; the root's, before any pass, are ``root_rows`` (:func:`root_rows`; None:
    unknown, the root is counted by a level pass). A bagged forest's root gathered once costs its rows
    times ``once`` (:func:`row_memberships`; 0: not gathered once), and a member's bag there holds at
    most :func:`bag_rows` of them."""
    def estimate(node) -> tuple[int | None, tuple[int, int]]:  # (memberships or None, :func:`balanced`'s work)
        if node.counts is None and root_rows is None or not deep_enough(node.depth, max_depth):
            return None, (0, 0)
        trees = node.open_trees()
        if node.counts is None and forest.bagged:  # the root, its rows gathered once for every member
            if once <= 0:
                return None, (0, 0)
            rows = bag_rows(int(root_rows))
            memberships, jobs_rows = int(np.ceil(int(root_rows) * once)), rows * len(trees)
        elif node.counts is not None and forest.bagged:  # a member's rows: its bag's (the total line sums every
            sizes = forest.train_sizes(node.counts)[list(trees)]  # member's multiplicities); at most its size
            rows, memberships = int(sizes.max(initial=0)), int(sizes.sum())
            jobs_rows = memberships
        else:
            rows = int(root_rows) if node.counts is None else int(node.counts[-1].sum())
            memberships = jobs_rows = rows * len(trees)
        return (memberships if most_rows is None or rows < most_rows else None), (rows, jobs_rows)

    estimates, work = zip(*[estimate(node) for node in frontier]) if frontier else ((), ())
    gathered, kept, _ = jobs(frontier, list(estimates), limit, list(work), threads)
    return gathered, kept


def threads_of(runner) -> int:
    """The threads ``runner``'s gathering pass grows its jobs on (a job on one): what :func:`balanced` keeps busy."""
    return max(1, int(getattr(runner, "threads", 1) or 1))


def bag_rows(rows: int) -> int:
    """At most the rows (multiplicities summed) of a member's bag of ``rows`` rows: a Poisson draw of mean
    at most 1 per row (:mod:`dasktree.io.bagging`), its sum within eight deviations of ``rows``."""
    return rows + 8 * int(np.ceil(np.sqrt(rows))) + 16


def root_rows(runner, spec, forest) -> int | None:
    """The rows of the root before any pass, when a small data set may be one small node from the
    start: the source's rows (an upper bound: null targets are not skipped yet) of an unweighted fit,
    unbagged (whose rows count once each) or bagged on a runner that gathers its rows once
    (:func:`gathers_once`); else None. The grower takes each tree's root size
    from the root's own rows then (``job_root_size`` 0)."""
    source = getattr(runner, "source", None)
    if source is None or spec.weighting is not None:
        return None
    if forest.bagged:
        return int(source.n_rows) if gathers_once(runner) else None
    if not (forest.holdout < 0).any():
        return None  # (without a main tree, no job would count the root's total)
    return int(source.n_rows)


def forest_gather_plan(forest, jobs: list[tuple[int, int]], widths: np.ndarray) -> GatherPlan:
    """Either task's pass gathering the rows of ``jobs`` ((node id, tree) pairs, one slot each): every tree's
    nodes on the way to a job as flat entries, parents before children, from the tree's root (node 0, or
    node ``t`` when the trees share none, ``forest.separate``) (:meth:`GatherPlan.of`)."""
    slot_of = {job: k for k, job in enumerate(jobs)}
    on_path = _on_paths(forest, [n for n, _ in jobs])
    attribute: list[int] = []
    offset: list[int] = []
    slot: list[int] = []
    tables: list[np.ndarray] = []
    roots = []
    size = 0
    for tree in range(forest.n_trees):
        roots.append(len(attribute))
        stack = [(tree if forest.separate else 0, None)]
        while stack:
            node_id, link = stack.pop()
            e = len(attribute)
            if link is not None:
                parent_entry, mask = link
                tables[parent_entry][mask] = e
            slot.append(slot_of.get((node_id, tree), -1))
            branch = forest.nodes[node_id].branch_of(tree) if on_path[node_id] else None
            if branch is None or not branch.children:  # a leaf, a job, a subtree grown in memory, or a node
                # no job is under: its rows stop here
                attribute.append(-1)
                offset.append(size)
                tables.append(np.zeros(0, dtype=np.int64))
                continue
            a = branch.test.attribute
            attribute.append(a)
            offset.append(size)
            size += int(widths[a])
            tables.append(np.full(int(widths[a]), -1, dtype=np.int64))
            for child_index in reversed(range(len(branch.children))):
                stack.append((branch.children[child_index], (e, branch.test.bin_children == child_index)))
    trees = dict(root=np.asarray(roots, dtype=np.int64), attribute=np.asarray(attribute, dtype=np.int32),
                 offset=np.asarray(offset, dtype=np.int64),
                 table=np.concatenate(tables).astype(np.int32) if size else np.zeros(1, np.int32),
                 slot=np.asarray(slot, dtype=np.int32))
    return GatherPlan.of(trees, [t for _, t in jobs], [forest.nodes[n].depth for n, _ in jobs], forest.holdout,
                         forest.n_folds, forest.bagged)


def _on_paths(forest, targets: list[int]) -> np.ndarray:
    """Per node of ``forest``, whether it is one of ``targets`` or above one: the nodes a gathering walk
    must pass (the level loop's branches: the subtrees grown in memory before, thousands of nodes deep
    in a default tree, hold no frontier node, and their rows need no walking)."""
    n_nodes = len(forest.nodes)
    flat = forest._flat
    flat.arrays(n_nodes)  # the branches added since the last pass, as arrays
    arity = np.diff(np.append(flat.first_child, flat.children.size))
    parent = np.full(n_nodes, -1, dtype=np.int64)
    parent[flat.children] = np.repeat(flat.node, arity)
    mark = np.zeros(n_nodes, dtype=bool)
    current = np.unique(np.asarray(targets, dtype=np.int64))
    mark[current] = True
    while current.size:
        up = parent[current]
        up = np.unique(up[up >= 0])
        current = up[~mark[up]]
        mark[current] = True
    return mark
