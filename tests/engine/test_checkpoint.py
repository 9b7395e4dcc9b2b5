"""A fit whose client is killed resumes from its checkpoint and gives the same model, byte for byte."""

import json
import os
import subprocess

import numpy as np
import pytest

from dasktree.engine.checkpoint import SMALL_CHUNKS, Checkpoint
from dasktree.errors import InputError, exit_code
from dasktree.datasets import agrawal
from dasktree.levels.results import PackedResults
from dasktree.testing.hooks import armed_command
from dasktree.testing.processes import run_command

pytestmark = pytest.mark.cluster

FIT = ["--target", "class", "--max-depth", "6", "--cv", "3", "--quiet", "--scheduler", "threads"]


def _fit(*args, fault=None):
    """``dasktree fit *args``: with ``fault``, in a new process armed to die at its point
    (:mod:`dasktree.testing.hooks`), as a job killed from outside dies; else through the command's
    ``main`` in this process (:func:`run_command`: what it resumes, refuses and writes is the same, a
    new interpreter per run would only add its imports)."""
    if fault is None:
        return run_command("fit", *args)
    return subprocess.run(armed_command(fault, "fit", *args), capture_output=True, text=True, timeout=300)


def test_client_killed_after_a_level_resumes_to_the_same_model(tmp_path):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 20000, n_files=4, function=7, perturbation=0.05, seed=2)
    reference = tmp_path / "reference.json"
    assert _fit(str(data), *FIT, "--out", str(reference)).returncode == 0
    out, ckpt = tmp_path / "m.json", tmp_path / "ckpt"
    args = [str(data), *FIT, "--out", str(out), "--checkpoint", str(ckpt)]
    killed = _fit(*args, fault=f"saved:3:{tmp_path / 'killed'}")  # SIGKILL after pass 3
    assert killed.returncode == -9 and not out.exists()
    assert sorted(n for n in os.listdir(ckpt) if n.startswith("pass-")) == [f"pass-{i:05d}.npz" for i in (1, 2, 3)]

    other = _fit(*args[:-4], "--max-depth", "5", *args[-4:])
    assert other.returncode == 1 and "parameter max_depth (6 there, 5 now)" in other.stderr
    first = sorted(p for p in data.rglob("*.parquet"))[0]
    stat = first.stat()
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    changed = _fit(*args)
    assert changed.returncode == 1 and f"data file '{first.name}' changed" in changed.stderr
    assert len(changed.stderr.strip().splitlines()) == 1
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    resumed = _fit(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference.read_bytes()
    assert not ckpt.exists()  # the model is saved: the checkpoint is removed


def test_results_round_trip_through_a_checkpoint(tmp_path):
    packed = PackedResults(
        nodes=np.array([3, 4]), counts=np.arange(12).reshape(2, 3, 2), pair_result=np.array([0, 1]),
        pair_tree=np.array([0, 0]), pair_choice=np.array([0, -1]), reasons=("", "pure"),
        attribute=np.array([1]), kind=("numeric",), default=np.array([0]), thresholds=((0.1, float("inf")),),
        groups=(((0,), (1, 2)),), gain=np.array([0.25]), score=np.array([0.5]),
        bin_children=np.array([0, 1, 1], dtype=np.int16), bin_start=np.array([0, 3]), cut=np.array([1]),
        train_children=np.ones((2, 2), dtype=np.int64), children=np.ones((2, 3, 2), dtype=np.int64),
        arity_start=np.array([0, 2]))
    Checkpoint(tmp_path, {"a": 1}).save_pass(1, packed)
    [back] = Checkpoint(tmp_path, {"a": 1}).saved
    for name, value in vars(packed).items():
        got = getattr(back, name)
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and np.array_equal(got, value), name
        else:
            assert got == value, name
    with pytest.raises(Exception, match="a \\(1 there, 2 now\\)"):
        Checkpoint(tmp_path, {"a": 2})


def test_a_regression_pass_round_trips_through_the_same_checkpoint(tmp_path):
    """One checkpoint for both tasks: a regression pass's slot sums, node cells and chosen tests come
    back as they were saved, and a checkpoint of one task is refused to the other."""
    from dasktree.split.api import NodeSplits

    splits = NodeSplits(gain=np.array([0.5, -np.inf, 2.0]), attribute=np.array([2, -1, 0]), cut=np.array([3, -1, -1]),
                        default=np.array([1, 0, 0]), children=np.arange(24, dtype=np.int64).reshape(3, 2, 4),
                        tables=[np.array([1, 0, 0, 0, 1], np.int16), None, np.array([0, 1, 0], np.int16)])
    sums, cells = np.arange(6, dtype=np.int64).reshape(3, 2), np.arange(24, dtype=np.int64).reshape(3, 8)
    Checkpoint(tmp_path, {"task": "regression"}).save_pass(1, (sums, cells, splits))
    [(sums_back, cells_back, back)] = Checkpoint(tmp_path, {"task": "regression"}).saved
    assert np.array_equal(sums_back, sums) and np.array_equal(cells_back, cells)
    for name in ("gain", "attribute", "cut", "default", "children"):
        assert np.array_equal(getattr(back, name), getattr(splits, name)), name
    assert [None if t is None else (t.dtype, t.tolist()) for t in back.tables] == \
        [None if t is None else (t.dtype, t.tolist()) for t in splits.tables]
    with pytest.raises(Exception, match="task \\('regression' there, 'classification' now\\)"):
        Checkpoint(tmp_path, {"task": "classification"})


def test_the_estimator_resumes_from_a_checkpoint_the_command_left(tmp_path):
    from dasktree import DaskTreeClassifier

    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 20000, n_files=4, function=7, perturbation=0.05, seed=3)
    reference = tmp_path / "reference.json"
    assert _fit(str(data), *FIT, "--out", str(reference)).returncode == 0
    ckpt = tmp_path / "ckpt"
    killed = _fit(str(data), *FIT, "--out", str(tmp_path / "m.json"), "--checkpoint", str(ckpt),
                  fault=f"saved:2:{tmp_path / 'killed'}")  # SIGKILL after pass 2
    assert killed.returncode == -9 and (ckpt / "pass-00002.npz").exists()
    clf = DaskTreeClassifier(max_depth=6, cv=3, scheduler="threads")
    clf.fit(str(data), target="class", checkpoint=str(ckpt))
    resumed = tmp_path / "resumed.json"
    clf.save(resumed)
    assert resumed.read_bytes() == reference.read_bytes()


def test_a_weighted_fit_resumes_to_the_same_model_and_other_weights_are_refused(tmp_path):
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 20000, n_files=4, function=7, perturbation=0.05, seed=4)
    weighted = [*FIT, "--weight", "age", "--class-weight", "balanced"]  # age: whole years, a row weight here
    reference = tmp_path / "reference.json"
    assert _fit(str(data), *weighted, "--out", str(reference)).returncode == 0
    out, ckpt = tmp_path / "m.json", tmp_path / "ckpt"
    args = [str(data), *weighted, "--out", str(out), "--checkpoint", str(ckpt)]
    killed = _fit(*args, fault=f"saved:2:{tmp_path / 'killed'}")  # SIGKILL after pass 2
    assert killed.returncode == -9 and (ckpt / "pass-00002.npz").exists()
    other = _fit(str(data), *FIT, "--weight", "hyears", "--out", str(out), "--checkpoint", str(ckpt))
    assert other.returncode == 1 and "weight" in other.stderr and len(other.stderr.strip().splitlines()) == 1
    resumed = _fit(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference.read_bytes()



def test_a_level_pass_file_whose_zip_says_encrypted_is_damaged(tmp_path):
    """One bit of a saved pass (its zip entry's "encrypted" flag, found by fuzzing) made numpy's loader
    raise zipfile's RuntimeError, an internal error (exit 3): it is a damaged checkpoint (exit 1)."""
    from dasktree.errors import InputError, exit_code

    packed = PackedResults(
        nodes=np.array([3]), counts=np.arange(6).reshape(1, 3, 2), pair_result=np.array([0]),
        pair_tree=np.array([0]), pair_choice=np.array([-1]), reasons=("pure",), attribute=np.zeros(0, int),
        kind=(), default=np.zeros(0, int), thresholds=(), groups=(), gain=np.zeros(0), score=np.zeros(0),
        bin_children=np.zeros(0, dtype=np.int16), bin_start=np.array([0]), cut=np.zeros(0, int),
        train_children=np.ones((1, 2), dtype=np.int64), children=np.ones((1, 3, 2), dtype=np.int64),
        arity_start=np.array([0]))
    Checkpoint(tmp_path, {"a": 1}).save_pass(1, packed)
    path = tmp_path / "pass-00001.npz"
    raw = bytearray(path.read_bytes())
    for header, flags_at in ((b"PK\x01\x02", 8), (b"PK\x03\x04", 6)):  # central directory, local header
        at = raw.find(header)
        raw[at + flags_at] |= 1
    path.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="pass-00001.npz is damaged") as caught:
        Checkpoint(tmp_path, {"a": 1}).saved
    assert exit_code(caught.value) == 1


@pytest.mark.parametrize("task, extra, small_saved", [
    ("classification", [], [False, False, True]),  # levels 0 and 1, then the small pass: all three replayed
    ("classification", ["--cv", "3"], [True]),  # the fold trees' roots gathered at once: the one pass replayed
    ("regression", [], [False, False]),  # two level passes replayed, the small pass made on resuming
])
def test_a_fit_growing_small_nodes_keeps_them_with_a_checkpoint_and_resumes_to_the_same_model(
        tmp_path, task, extra, small_saved):
    """A checkpointed fit grows its small nodes in memory as the fit without a checkpoint does (the same
    passes, so the same model and report, byte for byte), saves the pass that grew them, and resumes
    through it to the same bytes."""
    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 20000, n_files=4, function=7, perturbation=0.05, seed=2)
    target = ["--target", "class"] if task == "classification" else ["--target", "salary", "--task", "regression"]
    fit = [str(data), *target, *extra, "--quiet", "--scheduler", "threads"]  # no max_depth: deep trees
    reference = tmp_path / "reference.json"
    assert _fit(*fit, "--out", str(reference)).returncode == 0
    out, ckpt = tmp_path / "m.json", tmp_path / "ckpt"
    args = [*fit, "--out", str(out), "--checkpoint", str(ckpt)]
    killed = _fit(*args, fault=f"saved:{len(small_saved)}:{tmp_path / 'killed'}")
    assert killed.returncode == -9 and not out.exists(), killed.stderr
    saved = sorted(n for n in os.listdir(ckpt) if n.startswith("pass-"))
    assert saved == [f"pass-{i:05d}.npz" for i in range(1, len(small_saved) + 1)]
    assert [_small_pass_file(ckpt / name) for name in saved] == small_saved

    resumed = _fit(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference.read_bytes()
    report = json.loads(out.read_text())["report"]
    assert report["small_nodes"]["small_nodes"] > 0


def _small_pass_file(path) -> bool:
    """Whether a checkpoint's pass file holds a small pass (:class:`~dasktree.engine.checkpoint.SmallResults`)."""
    with np.load(path, allow_pickle=False) as npz:
        return SMALL_CHUNKS in npz.files


def test_a_checkpoint_whose_pass_is_of_the_other_kind_is_refused_in_one_line(tmp_path):
    """A checkpoint saved a small pass where the fit resumed makes a level pass (here the same fit with
    small nodes switched off): refused in one line, not replayed into the wrong tree."""
    from dasktree import DaskTreeClassifier
    from dasktree.levels.small import small_node_rows

    data = tmp_path / "data"
    agrawal.write_parquet(str(data), 20000, n_files=4, function=7, perturbation=0.05, seed=2)
    ckpt = tmp_path / "ckpt"
    fit = [str(data), "--target", "class", "--cv", "3", "--quiet", "--scheduler", "threads"]
    killed = _fit(*fit, "--out", str(tmp_path / "m.json"), "--checkpoint", str(ckpt),
                  fault=f"saved:1:{tmp_path / 'killed'}")
    assert killed.returncode == -9 and _small_pass_file(ckpt / "pass-00001.npz")
    with small_node_rows(0), pytest.raises(InputError) as caught:
        DaskTreeClassifier(cv=3, scheduler="threads").fit(str(data), target="class", checkpoint=str(ckpt))
    message = str(caught.value)
    assert "pass 1 was saved as a small-node pass" in message and "remove the directory" in message
    assert len(message.splitlines()) == 1 and exit_code(caught.value) == 1


def test_a_checkpoint_of_the_older_format_is_refused_in_one_line(tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "checkpoint.json").write_text('{"format": "dasktree.checkpoint/1", "identity": {}, "spec": null}')
    with pytest.raises(InputError) as caught:
        Checkpoint(ckpt, {"params": {}})
    assert "written by an older dasktree" in str(caught.value) and "remove it to start afresh" in str(caught.value)
