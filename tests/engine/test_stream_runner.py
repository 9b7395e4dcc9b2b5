"""Out of core in this process: the streaming runner gives the cached fit's and the cluster's model
bit for bit, plans against memory_limit, and says in one line when not one node's histograms fit."""

import numpy as np
import pandas as pd
import pytest

from dasktree import fit
from dasktree.cli import main
from dasktree.engine.local_runner import cores
from dasktree.engine.memory_plan import BASE_BYTES, CACHED, HELD_HISTOGRAMS, CLUSTER, STREAM, MemoryPlan, parse_memory_limit, runner_kind
from dasktree.engine.stream_runner import StreamRunner, pieces_of
from dasktree.errors import ParameterError
from dasktree.io.schema import resolve_roles
from dasktree.io.sources import open_source
from dasktree.testing import mixed_frame, write_dataset


def _dataset(tmp_path, n=3000, files=3, row_group_size=400):
    return write_dataset(mixed_frame(n, seed=7), tmp_path / "data", n_files=files, row_group_size=row_group_size)


def test_the_runner_is_chosen_by_the_memory_limit_and_a_cluster_only_when_asked(tmp_path):
    source, target = open_source(_dataset(tmp_path), target="label")
    roles = resolve_roles(source.schema, target)
    assert runner_kind(source, roles) == CACHED
    assert runner_kind(source, roles, cache=False) == STREAM
    assert runner_kind(source, roles, memory_limit=source.n_rows * 4) == STREAM  # codes over a quarter of it
    assert runner_kind(source, roles, scheduler="inprocess", cache=False) == STREAM
    assert runner_kind(source, roles, scheduler="processes") == CLUSTER
    assert runner_kind(source, roles, client=object()) == CLUSTER
    memory, frame_target = open_source(mixed_frame(50), target="label")
    assert runner_kind(memory, resolve_roles(memory.schema, frame_target), cache=False) == CACHED


def test_pieces_are_row_groups_keyed_as_their_parts(tmp_path):
    source, _ = open_source(_dataset(tmp_path), target="label")
    pieces = pieces_of(source, rows=800)
    assert sum(p.n_rows for p in pieces) == source.n_rows
    assert max(p.n_rows for p in pieces) <= 800 and len(pieces) == 6  # 1000-row files: 400 + 400, 200
    for part in source.parts:  # each part's rows, in order, from its own offset
        mine = [p for p in pieces if p.key == part.key]
        assert mine[0].offset == part.offset
        assert [g for p in mine for g in p.row_groups] == list(part.row_groups)


@pytest.mark.parametrize("params", [dict(max_depth=6), dict(max_depth=5, cv=3), dict(max_depth=4, binning="mdlp")])
def test_streamed_fits_are_the_cached_fits_bit_for_bit(tmp_path, params):
    path = _dataset(tmp_path)
    cached = fit(path, target="label", **params)
    streamed = fit(path, target="label", cache=False, **params)
    assert streamed.run["workers"] == 0
    assert streamed.report["passes"] > 2 and streamed.run["spill_bytes_read"] > 0
    # Parquet read by pass 0 and the first level pass (the rest read the spill); mdlp's bins are made
    # by a histogram pass and a refinement pass of their own before it
    assert streamed.run["parquet_reads"] == (4 if params.get("binning") == "mdlp" else 2)
    assert streamed.dumps() == cached.dumps()


def test_a_weighted_streamed_fit_is_the_cached_fit(tmp_path):
    frame = mixed_frame(2000, seed=3)
    frame["w"] = np.random.default_rng(1).integers(0, 4, len(frame))
    path = write_dataset(frame, tmp_path / "w", n_files=2, row_group_size=300)
    assert (fit(path, target="label", sample_weight="w", max_depth=5, cache=False).dumps()
            == fit(path, target="label", sample_weight="w", max_depth=5).dumps())


def test_a_low_limit_counts_in_node_groups_and_grows_the_same_tree(tmp_path):
    path = _dataset(tmp_path)
    cached = fit(path, target="label", max_depth=6, cv=3)
    source, target = open_source(path, target="label")
    threads = cores()
    runner = StreamRunner(source, resolve_roles(source.schema, target), threads=threads, memory_limit=10**9)
    root = cached.spec.total_bins * cached.spec.n_classes * 8 * 3  # the root's int64 histograms: 3 fold parts
    limit = BASE_BYTES + threads * runner.memory.piece_bytes + (threads + HELD_HISTOGRAMS) * 2 * root  # two roots' worth
    limited = fit(path, target="label", max_depth=6, cv=3, cache=False, memory_limit=limit)
    assert any(level["groups"] > 1 for level in limited.run["levels"])  # the histograms counted in groups
    assert limited.tree.tests == cached.tree.tests
    assert [f.tests for f in limited.fold_trees] == [f.tests for f in cached.fold_trees]
    assert limited.report["cv"] == cached.report["cv"]


@pytest.mark.cluster
def test_the_cluster_read_anew_gives_the_streamed_model(tmp_path, cluster_client):
    path = _dataset(tmp_path)
    streamed = fit(path, target="label", max_depth=5, cv=3, cache=False)
    assert fit(path, target="label", max_depth=5, cv=3, cache=False, client=cluster_client).dumps() == streamed.dumps()


def test_memory_limits_parse_and_bad_ones_are_usage_errors(tmp_path, capsys):
    assert parse_memory_limit("1GB") == 10**9 and parse_memory_limit("512MiB") == 512 * 2**20
    assert parse_memory_limit(2 * 10**9) == 2 * 10**9 and parse_memory_limit(None) is None
    for bad in ("lots", "-1GB", "1XB", 0, True, "100MB"):
        with pytest.raises(ParameterError, match="memory_limit"):
            parse_memory_limit(bad)
    path = _dataset(tmp_path)
    assert main(["fit", path, "--target", "label", "--out", str(tmp_path / "m.json"), "--memory-limit", "lots"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "memory_limit" in err[0] and not (tmp_path / "m.json").exists()


def test_histograms_that_cannot_fit_even_one_node_stop_the_fit_in_one_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"x{j}": rng.normal(size=30_000) for j in range(20)})  # 600,000 bins: 96 MB a node
    frame["y"] = rng.integers(0, 2, len(frame))
    path = write_dataset(frame, tmp_path / "wide", n_files=2)
    out = tmp_path / "m.json"
    code = main(["fit", path, "--target", "y", "--out", str(out), "--max-bins", "30000", "--cv", "10",
                 "--memory-limit", "512MB", "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "memory_limit 488 MB is too small" in err[0] and "give at least" in err[0]
    assert not out.exists()
    plan = MemoryPlan.of(10**9, 2, 1000, 100)
    plan.check_node(plan.histogram_bytes, "x")  # exactly the budget fits
    with pytest.raises(ParameterError):
        plan.check_node(plan.histogram_bytes + 1, "x")


def test_a_cached_fit_plans_its_histograms_against_the_memory_limit(tmp_path):
    """What the process and the kept tables and codes leave of the limit is shared by a histogram
    per thread and their sum; the fit's node groups keep to it (without a limit: no budget)."""
    from dasktree.engine.memory_plan import _row_bytes, cached_histogram_mb
    from dasktree.engine.place import open_runner

    source, target = open_source(_dataset(tmp_path), target="label")
    roles = resolve_roles(source.schema, target)
    limit = 10**9
    budget = cached_histogram_mb(source, roles, limit, 2)
    assert budget * (2 + HELD_HISTOGRAMS) * 2**20 == pytest.approx(limit - BASE_BYTES - source.n_rows * _row_bytes(source, roles))
    with open_runner(source, roles, memory_limit=limit) as runner:
        assert runner.max_histogram_mb == cached_histogram_mb(source, roles, limit, runner.threads)
    with open_runner(source, roles) as runner:
        assert runner.max_histogram_mb is None
