"""Checkpoints: a fit that its client's loss does not undo (``checkpoint=DIR``, ``--checkpoint DIR``).

After every level pass the fit writes that pass's search results (a few flat
arrays: a classification pass's chosen tests and counts,
:class:`~dasktree.levels.results.PackedResults`; a regression pass's slot sums,
node cells and chosen tests, :class:`dasktree.regress.grow.RegressionSearch`; a
pass that grew small nodes in memory, its grown subtrees as the grower's arrays,
:class:`SmallResults`) to ``DIR/pass-NNNNN.npz``, atomically (a temporary name, fsync,
rename). The forest is a function of these results alone: started again with
the same data and parameters, the fit makes pass 0 anew (the bins, checked
against the saved ones), then *replays* the saved passes through the grow loop
(:class:`Resuming`) instead of reading the data, and goes on from the first
pass not saved, saying so once (``resumed from DIR at level L``). The forest, the model and its
report (pass count included) are the same, bit for bit, as those of a fit never interrupted, and
as those of the same fit without a checkpoint (its passes are the same, small nodes included).

``DIR/checkpoint.json`` holds what the passes are valid for: the data files
(path below the root, size, modification time), the parameters and the column
roles, and the bins pass 0 made. A checkpoint of other data or other
parameters is refused with one line naming what differs (exit 1), and so is a
directory other users can write (they could plant the passes replayed). The files
are written with the permissions the umask gives. Nothing in a checkpoint is pickled: ``.npz`` without objects, and JSON. When the fit
succeeds, its checkpoint files are removed (the model is the result).
"""

from __future__ import annotations

import json
import os
import re
import stat
import zipfile
from collections import deque
from dataclasses import dataclass, fields

import numpy as np

from ..errors import InputError
from ..levels.results import PackedResults
from ..hook_points import point
from ..split.api import NodeSplits
from ..io.outputs import atomic_file, atomic_write_text, write_failure

__all__ = ["Checkpoint", "Resuming", "SmallResults", "remove_checkpoint", "say_resumed", "FORMAT"]

FORMAT = "dasktree.checkpoint/2"  # 2: small passes saved (format 1's fits grew every node level-wise)
OLDER_FORMATS = ("dasktree.checkpoint/1",)
META = "checkpoint.json"
TUPLE_FIELDS = ("reasons", "kind", "thresholds", "groups")  # saved as JSON, the rest as arrays
SPLIT_ARRAYS = ("gain", "attribute", "cut", "default", "children")  # a regression pass's NodeSplits


class Checkpoint:
    """The checkpoint directory of one fit: ``identity`` (JSON-able) says what it is valid for."""

    def __init__(self, directory: str | os.PathLike, identity: dict):
        self.directory = os.path.abspath(os.fspath(directory))
        self.identity = json.loads(json.dumps(identity, sort_keys=True, default=str))
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise InputError(f"checkpoint {self.directory}: is a file, not a directory")
        if os.path.isdir(self.directory) and os.stat(self.directory).st_mode & stat.S_IWOTH:
            # another user could plant the passes the fit replays into the model
            raise InputError(f"checkpoint {self.directory} is writable by other users (mode "
                             f"{os.stat(self.directory).st_mode & 0o7777:o}): make it yours alone (chmod o-w) "
                             "or name another directory")
        meta = os.path.join(self.directory, META)
        self.saved: list = []
        self.spec_json: dict | None = None
        if os.path.exists(meta):
            try:
                with open(meta) as f:
                    stored = json.load(f)
            except (ValueError, UnicodeDecodeError, RecursionError, OSError) as exc:
                raise _damaged(self.directory, META, exc) from None
            if isinstance(stored, dict) and stored.get("format") in OLDER_FORMATS:
                raise InputError(f"checkpoint {self.directory} was written by an older dasktree "
                                 f"({stored['format']}), whose passes this one does not replay; remove it to "
                                 "start afresh")
            if not isinstance(stored, dict) or stored.get("format") != FORMAT \
                    or not isinstance(stored.get("identity"), dict) or not isinstance(stored.get("spec"), (dict, type(None))):
                raise _damaged(self.directory, META, None)
            _refuse_other(self.directory, stored.get("identity", {}), self.identity)
            self.spec_json = stored.get("spec")
            self.saved = self._load_passes()
            return
        created = not os.path.exists(self.directory)
        try:
            os.makedirs(self.directory, exist_ok=True)
            self._write_meta(None)
        except BaseException as exc:
            if created:  # a checkpoint that cannot be written leaves nothing behind
                try:
                    os.rmdir(self.directory)
                except OSError:
                    pass
            if write_failure(exc) is not None and not isinstance(exc, InputError):
                raise InputError(f"checkpoint {self.directory}: cannot write: {write_failure(exc)}") from None
            raise

    def check_spec(self, spec) -> None:
        """The bins pass 0 made now must be the checkpoint's (else the data changed unseen)."""
        now = json.loads(json.dumps(spec.to_json(), default=str))
        if self.spec_json is None:
            self.spec_json = now
            self._write_meta(now)
        elif now != self.spec_json:
            raise InputError(f"checkpoint {self.directory} was made of other data: pass 0's bins differ "
                             "(remove the directory to start afresh)")

    def save_pass(self, number: int, packed) -> None:
        """Write pass ``number``'s results (1, 2, ...), whole or not at all."""
        arrays = (_packed_arrays(packed) if isinstance(packed, PackedResults)
                  else _small_arrays(packed) if isinstance(packed, SmallResults) else _sums_arrays(packed))
        with atomic_file(os.path.join(self.directory, f"pass-{number:05d}.npz"), "wb") as f:
            np.savez(f, **arrays)

    def _load_passes(self) -> list:
        passes = []
        while os.path.exists(path := os.path.join(self.directory, f"pass-{len(passes) + 1:05d}.npz")):
            try:
                with open(path, "rb") as f, np.load(f, allow_pickle=False) as npz:
                    arrays = {name: npz[name] for name in npz.files}
                    passes.append(_packed_results(arrays) if "tuples" in arrays
                                  else _small_results(arrays) if SMALL_CHUNKS in arrays else _sums_results(arrays))
            except (OSError, EOFError, ValueError, KeyError, TypeError, RecursionError, NotImplementedError,
                    zipfile.BadZipFile, RuntimeError) as exc:  # RuntimeError: zipfile's "is encrypted" (a flag bit)
                raise _damaged(self.directory, os.path.basename(path), exc) from None
        return passes

    def _write_meta(self, spec_json: dict | None) -> None:
        text = json.dumps({"format": FORMAT, "identity": self.identity, "spec": spec_json}, indent=1, sort_keys=True)
        atomic_write_text(os.path.join(self.directory, META), text)


def _packed_arrays(packed: PackedResults) -> dict:
    """A classification pass's results as arrays (its tuple fields as one JSON string)."""
    arrays = {f.name: getattr(packed, f.name) for f in fields(packed) if f.name not in TUPLE_FIELDS}
    arrays["tuples"] = np.array(json.dumps({name: getattr(packed, name) for name in TUPLE_FIELDS}, default=_plain))
    return arrays


def _packed_results(arrays: dict) -> PackedResults:
    tuples = json.loads(str(arrays["tuples"]))
    values = {name: value for name, value in arrays.items() if name != "tuples"}
    return PackedResults(**values, **{name: _tuples(tuples[name]) for name in TUPLE_FIELDS})


@dataclass
class SmallResults:
    """A pass that grew small nodes in memory: its chunks' grown subtrees, ``(jobs, nodes)`` each as
    :func:`dasktree.levels.small.grow_chunk` returns them (``nodes``: the grower's arrays by name), and
    the rows it gathered (the report says them)."""

    chunks: list
    rows_gathered: int


SMALL_CHUNKS = "small_chunks"  # a small pass's file: its chunk count, then c<i>.jobs and c<i>.<array> each


def _small_arrays(result: SmallResults) -> dict:
    arrays = {SMALL_CHUNKS: np.array(len(result.chunks), dtype=np.int64),
              "rows_gathered": np.array(result.rows_gathered, dtype=np.int64)}
    for i, (jobs, nodes) in enumerate(result.chunks):
        arrays[f"c{i}.jobs"] = np.asarray(jobs)
        arrays.update({f"c{i}.{name}": np.asarray(value) for name, value in nodes.items()})
    return arrays


def _small_results(arrays: dict) -> SmallResults:
    chunks = []
    for i in range(int(arrays[SMALL_CHUNKS])):
        prefix = f"c{i}."
        nodes = {name[len(prefix):]: value for name, value in arrays.items()
                 if name.startswith(prefix) and name != f"{prefix}jobs"}
        chunks.append((arrays[f"{prefix}jobs"], nodes))
    return SmallResults(chunks, int(arrays["rows_gathered"]))


def _sums_arrays(result) -> dict:
    """A regression pass's results (slot sums, node cells, :class:`~dasktree.split.api.NodeSplits`) as
    arrays: each binned slot's code table flattened, with its size (-1: none)."""
    sums, cells, splits = result
    tables = [np.zeros(0, np.int16) if t is None else np.asarray(t, np.int16) for t in splits.tables]
    return {"sums": sums, "cells": cells, **{name: getattr(splits, name) for name in SPLIT_ARRAYS},
            "table_sizes": np.array([t.size if s is not None else -1 for t, s in zip(tables, splits.tables)],
                                    dtype=np.int64),
            "tables": np.concatenate(tables) if tables else np.zeros(0, np.int16)}


def _sums_results(arrays: dict) -> tuple:
    sizes = arrays["table_sizes"]
    pieces = np.split(arrays["tables"], np.cumsum(np.maximum(sizes, 0))[:-1])
    tables = [None if n < 0 else piece.copy() for n, piece in zip(sizes.tolist(), pieces)]
    return arrays["sums"], arrays["cells"], NodeSplits(**{name: arrays[name] for name in SPLIT_ARRAYS}, tables=tables)


def remove_checkpoint(directory: str | os.PathLike) -> None:
    """The fit is done and its model saved: the checkpoint's files go (and the directory, if empty)."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        if name == META or (name.startswith("pass-") and name.endswith(".npz")):
            os.unlink(os.path.join(directory, name))
    try:
        os.rmdir(directory)
    except OSError:  # it holds files of the user's
        pass


def _damaged(directory: str, name: str, exc: BaseException | None) -> InputError:
    why = "" if exc is None else f" ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    return InputError(f"checkpoint {directory}: {name} is damaged{why}; remove the directory to start afresh")


def _plain(value):
    """A numpy scalar as the Python number it holds."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot save {type(value).__name__} in a checkpoint")


def _tuples(value):
    """JSON's lists back to the tuples :class:`PackedResults` holds (nested, as the fields are)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _refuse_other(directory: str, stored: dict, now: dict) -> None:
    """One line naming the first thing that differs between a checkpoint and this fit."""
    if stored == now:
        return
    for key in sorted(set(stored) | set(now)):
        if stored.get(key) == now.get(key):
            continue
        if key == "data":
            try:
                old = {row[0]: row for row in stored.get("data") or []}
                new = {row[0]: row for row in now.get("data") or []}
                changed = sorted(set(old) ^ set(new)) or sorted(k for k in new if old[k] != new[k])
                what = f"data file {changed[0]!r} " + ("added or removed" if changed[0] not in old
                                                       or changed[0] not in new else "changed (size or modification time)")
            except (TypeError, KeyError, IndexError):  # a hand-edited list of files
                what = "data files"
        elif key == "params":
            old, new = stored.get("params"), now.get("params") or {}
            old = old if isinstance(old, dict) else {}
            name = next((k for k in sorted(set(old) | set(new)) if (k in old) != (k in new) or old[k] != new[k]),
                        None)
            what = "parameters" if name is None else \
                f"parameter {name} ({old.get(name, '(none)')!r} there, {new.get(name, '(none)')!r} now)"
        else:
            what = f"{key} ({stored.get(key)!r} there, {now.get(key)!r} now)"
        raise InputError(f"checkpoint {directory} is of another fit: {what}; remove it to start afresh")


class Resuming:
    """A runner whose passes come from a checkpoint while it has them, then from ``runner``; every
    pass the runner makes is saved. The grow loop sees the same results either way: a classification
    pass's or a regression pass's (:meth:`level_pass`, the task's search in its context), and a pass
    that grew small nodes in memory (:meth:`small_pass`, where ``runner`` has one). Everything else is
    ``runner``'s (its threads, gathering budget, ...): the fit takes the passes it takes without a
    checkpoint."""

    def __init__(self, runner, checkpoint: Checkpoint):
        self.runner, self.checkpoint = runner, checkpoint
        self._replay = deque(checkpoint.saved)
        self._number = 0
        if callable(getattr(runner, "small_pass", None)):
            self.small_pass = self._small_pass

    def __getattr__(self, name: str):
        if name in ("runner", "checkpoint", "_replay", "_number"):  # not yet set (copying, unpickling)
            raise AttributeError(name)
        return getattr(self.runner, name)

    def level_pass(self, plan, requests, context, label: str):
        return self._pass(label, lambda: self.runner.level_pass(plan, requests, context, label), small=False)

    def _small_pass(self, gather, func, label: str, **kwargs) -> list:
        """The runner's ``small_pass``, saved; replayed from the checkpoint while it has passes."""
        def run() -> SmallResults:
            chunks = list(self.runner.small_pass(gather, func, label, **kwargs))
            return SmallResults(chunks, int(getattr(self.runner, "rows_gathered", 0)))

        result = self._pass(label, run, small=True)
        self.rows_gathered = result.rows_gathered
        return result.chunks

    def _pass(self, label: str, run, small: bool):
        """Pass ``label``: the next saved one (of the kind asked: a small pass or a level pass), else
        ``run()``'s, saved."""
        self._number += 1
        if self._replay:
            saved = self._replay.popleft()
            if small != isinstance(saved, SmallResults):
                raise InputError(f"checkpoint {self.checkpoint.directory}: pass {self._number} was saved as "
                                 f"{'a small-node' if not small else 'a level'} pass where "
                                 "this fit makes the other kind (another version, or another budget of small nodes); "
                                 "remove the directory to start afresh")
            self.runner.passes += 1  # the pass was made, before the client was lost
            return saved
        say_resumed(self.runner, self.checkpoint, self._number, label)
        result = run()
        self.checkpoint.save_pass(self._number, result)
        point("saved", self._number)
        return result


def say_resumed(runner, checkpoint: Checkpoint, number: int, label: str) -> None:
    """Before level pass ``number`` (``label``, e.g. ``level 3``) reads the data: if the passes before
    it were replayed from ``checkpoint``, say once where the fit resumed (``resumed from DIR at
    level 3``; the runner's progress: a line on stderr, or a JSON line ``"event": "resumed"``)."""
    replayed = number - 1
    if replayed != len(checkpoint.saved) or replayed == 0 or getattr(runner, "progress", None) is None:
        return
    level = re.match(r"level (\d+)", label)
    where = f"level {level.group(1)}" if level else f"level pass {number}"
    runner.progress.note("resumed", f"resumed from {checkpoint.directory} at {where} "
                                    f"({replayed} level pass{'es' if replayed > 1 else ''} replayed)",
                         checkpoint=checkpoint.directory, replayed=replayed,
                         level=int(level.group(1)) if level else None)
