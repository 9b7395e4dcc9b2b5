"""One rule for where a job runs (dasktree.engine.place), for fit, Discretizer, predict and
evaluate alike: client, scheduler, an active client, else this process; never a process cluster
nobody asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import dask.dataframe as dd
import pytest

import dasktree
from dasktree import Discretizer
from dasktree.engine.place import choose
from dasktree.testing.processes import run_command
from dasktree.errors import ParameterError
from dasktree.io.schema import resolve_roles
from dasktree.io.sources import open_source
from dasktree.testing import mixed_frame, write_dataset


def _place(data, **where):
    source, target = open_source(data, target="label")
    return choose(source, resolve_roles(source.schema, target), **where)


def test_the_rule(tmp_path):
    path = str(write_dataset(mixed_frame(300, seed=1), tmp_path / "data", n_files=2))
    frame = mixed_frame(100)
    assert _place(path).kind == _place(frame).kind == "here"
    assert _place(dd.from_pandas(frame, npartitions=3)).kind == "here"  # computed here, no cluster
    assert not _place(path).stream
    streamed = _place(path, cache=False)  # read anew every pass: out of core, here
    assert streamed.kind == "here" and streamed.stream
    small = _place(path, memory_limit=512 << 20)  # fits a quarter of 512 MB: codes kept
    assert small.kind == "here" and not small.stream
    assert _place(path, scheduler="inprocess").kind == "here"
    assert _place(path, scheduler="threads") == _place(path, scheduler="threads")
    assert _place(path, scheduler="tcp://127.0.0.1:8786").scheduler == "tcp://127.0.0.1:8786"
    given = object()
    assert _place(frame, client=given).client is given
    with pytest.raises(ParameterError, match="scheduler 'nowhere': expected 'inprocess', 'processes'"):
        _place(path, scheduler="nowhere")


def test_an_active_client_is_used_and_none_is_started(tmp_path):
    from distributed import Client, LocalCluster

    frame = mixed_frame(400, seed=3)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        assert _place(frame).client is client
        on_it = dasktree.fit(frame, target="label", max_depth=3)
        assert on_it.run["workers"] == 1
    here = dasktree.fit(frame, target="label", max_depth=3)
    assert here.run["workers"] == 0 and here.tree.to_json() == on_it.tree.to_json()


def test_a_dask_frame_is_learned_here_as_a_cluster_learns_it(cluster_client):
    frame = mixed_frame(1500, seed=4)
    lazy = dd.from_pandas(frame, npartitions=5)
    here = dasktree.fit(lazy, target="label", max_depth=5, cv=3)
    assert here.run["workers"] == 0 and here.run["parts"] == 5
    there = dasktree.fit(lazy, target="label", max_depth=5, cv=3, client=cluster_client)
    assert there.run["workers"] == 2
    assert here.tree.to_json() == there.tree.to_json() and here.report == there.report  # the folds too


def test_a_script_without_a_main_guard_fits_dask_collections_and_ends(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import json
        import dask.dataframe as dd
        from dasktree import DaskTreeClassifier
        from dasktree.testing import mixed_frame

        frame = mixed_frame(600, seed=2)
        X = dd.from_pandas(frame.drop(columns="label"), npartitions=4)
        y = dd.from_pandas(frame["label"], npartitions=4)
        clf = DaskTreeClassifier(max_depth=4).fit(X, y)
        print(json.dumps({"workers": clf.run_["workers"], "score": clf.score(X, y),
                          "predicted": int(clf.predict(X).compute().shape[0])}))
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["workers"] == 0 and out["predicted"] == 600 and out["score"] > 0.5


def test_every_verb_and_the_discretizer_accept_inprocess(tmp_path):
    path = str(write_dataset(mixed_frame(800, seed=6), tmp_path / "data", n_files=2))
    model = tmp_path / "m.json"

    def run(*args):
        result = run_command(*args, "--quiet", "--scheduler", "inprocess")  # the command's main, here
        assert result.returncode == 0, result.stderr
        return result

    run("fit", path, "--target", "label", "--out", str(model), "--max-depth", "3")
    run("predict", str(model), path, "--out", str(tmp_path / "predicted"))
    evaluated = run("evaluate", str(model), path, "--json")
    assert sum(map(sum, json.loads(evaluated.stdout)["metrics"]["confusion_matrix"]["rows_true_columns_predicted"])) == 800
    run("discretize", path, "--target", "label", "--out", str(tmp_path / "cut"))
    disc = Discretizer("mdlp").fit(path, target="label")
    assert disc.run_["workers"] == 0
    assert Discretizer("mdlp", scheduler="inprocess").fit(path, target="label").cut_points_ == disc.cut_points_
