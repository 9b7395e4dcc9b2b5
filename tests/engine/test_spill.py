"""The streamed fit's spill: pieces encoded once and read back as codes; the same model with it,
without it (no room on its disk, a write that fails), and nothing left behind."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
import pytest

from dasktree import fit
from dasktree.engine import spill as spill_module
from dasktree.testing import mixed_frame, write_dataset
from dasktree.testing.data import regression_frame


@pytest.fixture
def temporary(tmp_path, monkeypatch):
    """The system's temporary directory for this test: where the spill goes."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def _spills(where) -> list:
    return [name for name in os.listdir(where) if name.startswith("dasktree-spill-")]


def _dataset(tmp_path, frame=None):
    return write_dataset(mixed_frame(3000, seed=7) if frame is None else frame, tmp_path / "data", n_files=3,
                         row_group_size=400)


@pytest.mark.parametrize("params", [dict(max_depth=6), dict(max_depth=5, cv=3, repeats=2),
                                    dict(max_depth=5, nominal_split="multiway", max_arity=4)])
def test_a_spilled_fit_reads_parquet_twice_and_is_the_cached_fit(tmp_path, temporary, params):
    path = _dataset(tmp_path)
    streamed = fit(path, target="label", cache=False, **params)
    assert streamed.run["parquet_reads"] == 2 < streamed.report["passes"]  # pass 0 and the first level pass
    assert streamed.run["spill_bytes_read"] > 0
    assert streamed.dumps() == fit(path, target="label", **params).dumps()
    assert _spills(temporary) == []  # removed when the fit ends


def test_a_weighted_spilled_regression_is_the_cached_one(tmp_path, temporary):
    frame = regression_frame(3000, seed=2)
    frame["w"] = np.random.default_rng(1).integers(0, 4, len(frame))
    path = write_dataset(frame, tmp_path / "r", n_files=3, row_group_size=400)
    kwargs = dict(target="y", sample_weight="w", max_depth=6, cv=3)
    from dasktree import fit_regression

    streamed = fit_regression(path, cache=False, **kwargs)
    assert streamed.run["parquet_reads"] == 2 and streamed.run["spill_bytes_read"] > 0
    assert streamed.dumps() == fit_regression(path, **kwargs).dumps()
    assert _spills(temporary) == []


def test_without_room_for_the_spill_every_pass_reads_parquet(tmp_path, temporary, monkeypatch):
    path = _dataset(tmp_path)
    monkeypatch.setattr(spill_module, "MARGIN_BYTES", 1 << 62)  # more than any disk has free
    streamed = fit(path, target="label", max_depth=6, cv=3, cache=False)
    assert streamed.run["parquet_reads"] == streamed.report["passes"] and streamed.run["spill_bytes_read"] == 0
    assert streamed.dumps() == fit(path, target="label", max_depth=6, cv=3).dumps()
    assert _spills(temporary) == []


def test_pieces_whose_rows_all_reached_leaves_are_not_read(tmp_path, temporary):
    """Rows in order of x: the first half is one class, the second half is grown further. The root
    splits at x; level 1's pass counts the pure child, which its search makes a leaf; level 2's pass
    walks its rows into that leaf, so from level 3 on its pieces are not read back."""
    n = 8000
    rng = np.random.default_rng(3)
    x = np.arange(n, dtype=np.float64)
    z = rng.normal(size=n)
    label = np.where(x < n / 2, "a", np.where(z + rng.normal(scale=0.3, size=n) > 0, "b", "c"))
    path = write_dataset(pd.DataFrame({"x": x, "z": z, "label": label}), tmp_path / "sorted", n_files=8,
                         row_group_size=1000)
    streamed = fit(path, target="label", max_depth=6, cache=False, min_samples_leaf=1)
    level_passes = streamed.report["passes"] - 1
    row_bytes = 2 * streamed.spec.code_dtype.itemsize + 4 + 2  # two codes, the class, a fold part
    assert streamed.tree.tests[0].attribute == 0 and level_passes == 6  # x
    every_piece = n * row_bytes * (level_passes - 1)  # read back in every level pass after the first
    assert streamed.run["spill_bytes_read"] == every_piece - (level_passes - 3) * (n // 2) * row_bytes
    assert streamed.dumps() == fit(path, target="label", max_depth=6, min_samples_leaf=1).dumps()


FAILING_DISK = """
import resource, signal, sys, json
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
from dasktree import fit
model = fit(sys.argv[1], target="label", max_depth=6, cv=3, cache=False)
print(json.dumps({"model": model.dumps(), "reads": model.run["parquet_reads"], "passes": model.report["passes"]}))
"""


def test_a_spill_write_that_fails_falls_back_to_parquet_with_the_same_model(tmp_path, temporary):
    """Files limited to 6 kB (RLIMIT_FSIZE): the larger spill writes fail as on a full disk; the
    fit goes on reading Parquet and gives the cached fit's model, leaving no spill behind."""
    path = _dataset(tmp_path)
    env = {**os.environ, "TMPDIR": str(temporary)}
    done = subprocess.run([sys.executable, "-c", FAILING_DISK, path, "6000"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["reads"] > 2  # the spill stopped: later passes read Parquet
    assert out["model"] == fit(path, target="label", max_depth=6, cv=3).dumps()
    assert _spills(temporary) == []


def test_a_spill_in_memory_counts_against_the_memory_it_may_take(tmp_path):
    """/dev/shm is tmpfs: a spill there is memory, made only within ``memory_room``; on disk the
    room in memory does not matter."""
    from dasktree.engine.spill import Spill, in_memory_file_system

    if not (os.path.isdir("/dev/shm") and in_memory_file_system("/dev/shm")):
        pytest.skip("no tmpfs at /dev/shm here")
    assert Spill.create(10**6, "/dev/shm", memory_room=10**5) is None
    made = Spill.create(10**6, "/dev/shm", memory_room=10**7)
    assert made is not None and made.directory.startswith("/dev/shm/")
    made.close()
    assert not os.path.exists(made.directory)
    if not in_memory_file_system(str(tmp_path)):
        on_disk = Spill.create(10**6, str(tmp_path), memory_room=10**5)
        assert on_disk is not None
        on_disk.close()


def test_a_spill_left_by_a_killed_process_is_removed_by_the_next_one(tmp_path, temporary):
    """A dead process's spill on this host goes; a live process's and another host's stay."""
    import socket

    from dasktree.engine.spill import PREFIX

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)  # exited: no such process now
    from dasktree.engine.spill import _alive

    if _alive(dead_pid):
        pytest.skip("the exited process's pid was given to another process already")
    host = socket.gethostname()
    left = temporary / f"{PREFIX}{dead_pid}@{host}-abc123"
    (left / "x").mkdir(parents=True)
    live = temporary / f"{PREFIX}{os.getpid()}@{host}-def456"
    other = temporary / f"{PREFIX}{dead_pid}@another-host-ghi789"
    live.mkdir()
    other.mkdir()
    streamed = fit(_dataset(tmp_path), target="label", max_depth=4, cache=False)
    assert streamed.run["spill_bytes_read"] > 0
    assert not left.exists() and live.exists() and other.exists()
