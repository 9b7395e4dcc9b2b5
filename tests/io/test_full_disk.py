"""A disk that fills while dasktree writes: a model, predictions, a discretized dataset, a checkpoint.

On a real small filesystem (a tmpfs mounted here, which needs root: skipped otherwise) filled
by a file to a chosen free space. Each write ends with exit 1 and one line naming the output,
leaves no partial file (no hidden temporary either), and never replaces a good output.
"""

import os
import subprocess

import pytest

from dasktree.datasets import agrawal

FIT = ["--target", "class", "--max-depth", "5", "--scheduler", "threads", "--quiet"]


def _run(*args):
    """The command's ``main`` in this process (:func:`~dasktree.testing.processes.run_command`): what it
    writes and says is the same; a new interpreter per write would only add its imports."""
    from dasktree.testing.processes import run_command

    return run_command(*args)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("full-disk") / "data"
    agrawal.write_parquet(str(path), 20000, n_files=4, function=7, perturbation=0.05, seed=2)
    return str(path)


@pytest.fixture(scope="module")
def model(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "m.json"
    done = _run("fit", data, *FIT, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def disk(tmp_path):
    """A 2 MiB tmpfs, unmounted afterwards."""
    path = tmp_path / "disk"
    path.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(disk, leave: int = 0) -> None:
    """Fill ``disk`` with a file up to its last byte, then give back ``leave`` bytes."""
    filler = disk / ".filler"
    with open(filler, "wb", buffering=0) as f:
        block = b"\0" * 4096
        try:
            while f.write(block):
                pass
        except OSError:  # full
            pass
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - leave))


def _one_line(done, needle: str) -> None:
    assert done.returncode == 1, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dasktree: error: "), lines
    assert needle in lines[0] and "No space left on device" in lines[0], lines


def _left(disk) -> list[str]:
    return sorted(p.name for p in disk.iterdir() if p.name != ".filler")


def test_a_model_that_cannot_be_written_leaves_the_good_one(data, model, disk):
    good = disk / "m.json"
    good.write_bytes(b'{"a good model": "kept"}')
    _fill(disk)
    done = _run("fit", data, *FIT, "--out", str(good), "--overwrite")
    _one_line(done, "m.json")
    assert _left(disk) == ["m.json"] and good.read_bytes() == b'{"a good model": "kept"}'


@pytest.mark.parametrize("command", ["predict", "discretize"])
def test_a_dataset_that_cannot_be_written_is_not_left_half_written(data, model, disk, command):
    out = disk / "out"
    _fill(disk, leave=8 * 1024)  # room to start, not to finish
    if command == "predict":
        done = _run("predict", str(model), data, "--out", str(out), "--scheduler", "threads", "--quiet")
    else:
        done = _run("discretize", data, "--target", "class", "--out", str(out), "--scheduler", "threads", "--quiet")
    _one_line(done, str(out))
    assert _left(disk) == []


def test_a_checkpoint_that_cannot_be_written_resumes_once_there_is_room(data, model, disk):
    """The disk fills after a few level passes are saved: exit 1 naming the checkpoint's file, every
    file saved is whole, and with room again the same command finishes with the same model."""
    checkpoint, out = disk / "ckpt", disk / "m.json"
    _fill(disk, leave=64 * 1024)  # the checkpoint's description and a pass or two, not all six
    done = _run("fit", data, *FIT, "--out", str(out), "--checkpoint", str(checkpoint))
    _one_line(done, str(checkpoint))
    saved = sorted(p.name for p in checkpoint.iterdir())
    assert "checkpoint.json" in saved and not [n for n in saved if n.startswith(".")], saved
    assert any(n.startswith("pass-") for n in saved), f"no pass saved before the disk filled: {saved}"
    assert not out.exists()
    os.unlink(disk / ".filler")
    again = _run("fit", data, *FIT, "--out", str(out), "--checkpoint", str(checkpoint))
    assert again.returncode == 0, again.stderr
    assert out.read_bytes() == model.read_bytes()
