"""A forest fit resumes from its checkpoint to the same forest, byte for byte, for both tasks: after its
client is killed (the command, a new process killed at a saved pass) and with only its first passes on
disk (the function, in this process)."""

import os
import subprocess

import pytest

from dasktree import fit_forest
from dasktree.datasets import agrawal
from dasktree.model.forest_model import load_forest
from dasktree.testing.hooks import armed_command
from dasktree.testing.processes import run_command

pytestmark = pytest.mark.cluster

FOREST = ["--target", "class", "--trees", "4", "--max-depth", "5", "--quiet", "--scheduler", "threads"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("forest-checkpoint") / "data"
    agrawal.write_parquet(str(path), 8000, n_files=3, function=7, perturbation=0.05, seed=5)
    return path


def test_a_forest_fit_whose_client_is_killed_resumes_to_the_same_forest(data, tmp_path):
    reference = tmp_path / "reference.json"
    assert run_command("fit", str(data), *FOREST, "--out", str(reference)).returncode == 0
    out, ckpt = tmp_path / "forest.json", tmp_path / "ckpt"
    args = [str(data), *FOREST, "--out", str(out), "--checkpoint", str(ckpt)]
    killed = subprocess.run(armed_command(f"saved:2:{tmp_path / 'killed'}", "fit", *args),  # SIGKILL after pass 2
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9 and not out.exists()
    assert sorted(n for n in os.listdir(ckpt) if n.startswith("pass-")) == ["pass-00001.npz", "pass-00002.npz"]

    other = run_command("fit", *args[:-4], "--random-state", "1", *args[-4:])
    assert other.returncode == 1 and "random_state (0 there, 1 now)" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1

    resumed = run_command("fit", *[a for a in args if a != "--quiet"])  # the progress says where it resumed
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed from {ckpt} at level 2 (2 level passes replayed)" in resumed.stderr
    assert out.read_bytes() == reference.read_bytes()
    assert not ckpt.exists()  # the forest is saved: the checkpoint is removed


@pytest.mark.parametrize("task, target", [("classification", "class"), ("regression", "salary")])
def test_a_forest_with_its_first_passes_saved_goes_on_to_the_same_forest(data, tmp_path, task, target):
    options = dict(task=task, target=target, n_estimators=3, max_depth=4, scheduler="threads", random_state=2)
    reference = fit_forest(str(data), **options)
    ckpt = tmp_path / "ckpt"
    whole = fit_forest(str(data), checkpoint=str(ckpt), **options)  # the function leaves its checkpoint
    saved = sorted(n for n in os.listdir(ckpt) if n.startswith("pass-"))
    assert len(saved) >= 3
    for name in saved[2:]:  # a fit that stopped after its second level pass
        os.unlink(ckpt / name)
    resumed = fit_forest(str(data), checkpoint=str(ckpt), **options)
    assert sorted(n for n in os.listdir(ckpt) if n.startswith("pass-")) == saved  # the rest saved again
    replayed = fit_forest(str(data), checkpoint=str(ckpt), **options)  # every pass from the checkpoint
    for path, model in (("reference", reference), ("whole", whole), ("resumed", resumed), ("replayed", replayed)):
        model.save(tmp_path / f"{path}.json")
    expected = (tmp_path / "reference.json").read_bytes()
    for path in ("whole", "resumed", "replayed"):
        assert load_forest(tmp_path / f"{path}.json").to_json() == load_forest(tmp_path / "reference.json").to_json()
        assert (tmp_path / f"{path}.json").read_bytes() == expected, path


def test_a_forest_checkpoint_is_refused_to_data_in_memory_and_to_a_single_tree(data, tmp_path):
    import pandas as pd
    from dasktree.errors import ParameterError

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "y": [0, 1, 0, 1]})
    with pytest.raises(ParameterError, match="checkpoint= is for Parquet datasets"):
        fit_forest(frame, target="y", n_estimators=2, checkpoint=str(tmp_path / "c"))
    ckpt = tmp_path / "ckpt"
    fit_forest(str(data), target="class", n_estimators=2, max_depth=2, scheduler="threads", checkpoint=str(ckpt))
    single = run_command("fit", str(data), "--target", "class", "--max-depth", "2", "--quiet", "--scheduler",
                         "threads", "--out", str(tmp_path / "tree.json"), "--checkpoint", str(ckpt))
    assert single.returncode == 1 and "is of another fit" in single.stderr
    assert len(single.stderr.strip().splitlines()) == 1
