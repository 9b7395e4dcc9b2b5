"""The in-process runner: the default for data that fits, the same model as a cluster's whatever the
number of threads or files, and no worker processes."""

import importlib
import multiprocessing

import pytest

from dasktree import fit
from dasktree.engine.local_runner import IN_PROCESS
from dasktree.engine.place import choose
from dasktree.io.schema import resolve_roles
from dasktree.io.sources import open_source
from dasktree.testing import mixed_frame, write_dataset

place_module = importlib.import_module("dasktree.engine.place")


def _roles(source, target):
    return resolve_roles(source.schema, target)


def embedded(source, roles, **where) -> bool:
    return choose(source, roles, **where).kind == "here"


def test_the_default_runs_in_process_and_on_a_cluster_only_when_asked(tmp_path):
    path = write_dataset(mixed_frame(500, seed=2), tmp_path / "data", n_files=2)
    source, target = open_source(str(path), target="label")
    roles = _roles(source, target)
    assert embedded(source, roles)
    assert embedded(source, roles, scheduler=IN_PROCESS)
    assert not embedded(source, roles, scheduler="processes")
    assert not embedded(source, roles, scheduler="tcp://127.0.0.1:8786")
    assert not embedded(source, roles, client=object())
    assert embedded(source, roles, cache=False)  # read anew every pass: streamed here (engine.stream_runner)
    memory, frame = open_source(mixed_frame(50), target="label")
    assert embedded(memory, _roles(memory, frame))


def test_a_dataset_fit_without_a_scheduler_starts_no_worker_process(tmp_path):
    path = write_dataset(mixed_frame(2000, seed=5), tmp_path / "data", n_files=3)
    before = set(multiprocessing.active_children())  # a cluster another test keeps may have some
    model = fit(str(path), target="label", max_depth=4)
    assert model.run["workers"] == 0 and model.run["parquet_reads"] == 1
    assert set(multiprocessing.active_children()) <= before


THREADS_PARAMS = dict(target="label", max_depth=6, criterion="entropy", max_bins=32)


@pytest.fixture(scope="module")
def partitionings(tmp_path_factory):
    """One frame written as 1, 4 and 9 files, for every number of threads."""
    frame = mixed_frame(3000, seed=7)
    root = tmp_path_factory.mktemp("partitionings")
    return {n: str(write_dataset(frame, root / f"files-{n}", n_files=n, row_group_size=300)) for n in (1, 4, 9)}


@pytest.fixture(scope="module")
def cluster_models(partitionings, cluster_client):
    """The 2-process cluster's model of each partitioning, without and with folds: the reference of
    every number of threads, fitted once (the number of this process's threads is not the cluster's)."""
    return {(n, tuple(extra.items())): fit(path, client=cluster_client, **THREADS_PARAMS, **extra).dumps()
            for n, path in partitionings.items() for extra in ({}, {"cv": 3})}


@pytest.mark.cluster
@pytest.mark.parametrize("threads", [1, 2, 5])
def test_threads_and_files_change_nothing_of_the_model(monkeypatch, partitionings, cluster_models, threads):
    """The same model as on a 2-process cluster, and without folds (which hash each file's row keys)
    the same whatever the files."""
    monkeypatch.setattr(place_module, "cores", lambda: threads)
    plain = []
    for n_files, path in partitionings.items():
        for extra in ({}, {"cv": 3}):
            here = fit(path, **THREADS_PARAMS, **extra)
            assert here.run["workers"] == 0
            assert here.dumps() == cluster_models[n_files, tuple(extra.items())], (threads, n_files)
            if not extra:
                plain.append(here.dumps())
    assert plain[0] == plain[1] == plain[2]


@pytest.mark.parametrize("cache", ["auto", False])
def test_a_fit_in_process_derives_the_largest_children_and_grows_the_same_model(tmp_path, cache):
    """The in-process runners keep the last level pass's histogram and derive each branch's
    largest child from it (histogram subtraction); counted in node groups, a level cannot derive
    (its parents are in another pass), and the model is the same."""
    path = write_dataset(mixed_frame(4000, seed=5), tmp_path / "d", n_files=4, row_group_size=500)
    derived = fit(path, target="label", max_depth=7, cv=3, cache=cache)
    counted = fit(path, target="label", max_depth=7, cv=3, cache=cache, max_histogram_mb=0.05)
    assert sum(level["derived"] for level in derived.run["levels"]) > 0
    assert sum(level["derived"] for level in counted.run["levels"]) == 0
    assert any(level["groups"] > 1 for level in counted.run["levels"])
    grown, reference = derived.to_json(), counted.to_json()
    for key in ("bins", "tree", "full_tree"):
        assert grown[key] == reference[key]
    assert grown["report"]["cv"] == reference["report"]["cv"]  # the fold trees' held-out counts
    assert grown["report"]["passes"] < reference["report"]["passes"]  # the groups took more passes
