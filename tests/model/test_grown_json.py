"""The grown tree of a pruned model, saved compactly: the same tree back, older files still load,
and the report summarizes a long cp table."""

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import dasktree
from dasktree.cli import main
from dasktree.model import load
from dasktree.model.grown_json import from_runs, grown_from_json, grown_to_json, runs
from dasktree.model.pruning import prune_model
from dasktree.testing import mixed_frame


@given(st.lists(st.integers(-3, 3), max_size=300))
def test_runs_give_back_the_table(values):
    assert from_runs(runs(np.asarray(values))).tolist() == values


def _noisy(n=6000):
    rng = np.random.default_rng(0)
    return mixed_frame(n, seed=1).assign(z=rng.normal(size=n), w=rng.normal(size=n))


def test_a_pruned_models_file_keeps_its_grown_tree_in_a_fraction_of_the_bytes(tmp_path, capsys):
    model = dasktree.fit(_noisy(), target="label", cv=5, max_depth=12)
    grown = model.full_tree
    assert grown is not None and grown.n_leaves > 10 * model.tree.n_leaves
    assert grown_from_json(json.loads(json.dumps(grown_to_json(grown)))).to_json() == grown.to_json()
    path = tmp_path / "m.json"
    model.save(path)
    loaded = load(path)
    assert loaded.dumps() == model.dumps() and loaded.full_tree.to_json() == grown.to_json()
    assert prune_model(loaded, mode="none").tree.to_json() == grown.to_json()  # re-pruning has all it needs
    as_nodes = json.dumps(grown.to_json(), separators=(",", ":"))  # the node list of versions 1 and 2
    assert len(json.dumps(grown_to_json(grown), separators=(",", ":"))) * 3 < len(as_nodes)
    # a version 2 file (the grown tree as a node list) loads as before
    old = json.loads(model.dumps())
    old["version"], old["full_tree"] = 2, grown.to_json()
    (tmp_path / "v2.json").write_text(json.dumps(old))
    assert load(tmp_path / "v2.json").dumps() == model.dumps()
    # the report shows the cp table's ends and the chosen row; --format cp all of it
    table = model.report["prune"]["cp_table"]
    assert len(table) > 30
    assert main(["show", str(path), "--format", "report"]) == 0
    report = capsys.readouterr().out
    cp = report[report.index("pruning ("):].splitlines()
    assert len(cp) < 20 and sum(line.startswith("*") for line in cp) == 1
    assert f"prints all {len(table)})" in report
    assert main(["show", str(path), "--format", "cp"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(table) + 2
