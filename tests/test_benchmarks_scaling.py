"""The scaling claim's probes on a real scheduler: what they count as exchanged is what a level's
reduce-scatter moves, and probing changes nothing of the model."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import scaling  # noqa: E402

pytestmark = pytest.mark.cluster


def test_probed_exchange_is_every_peer_histogram_but_ones_own_and_the_model_unchanged(tmp_path):
    import dasktree
    from dasktree.datasets.agrawal_parquet import write_parquet
    from dasktree.engine.cluster import connect
    from dasktree.testing.cluster import cluster_processes

    path = str(tmp_path / "data")
    write_parquet(path, 6_000, n_files=6, function=2, perturbation=0.05, seed=3)
    with cluster_processes(3, nanny=False) as procs, connect(scheduler=procs.address) as client:
        plain = dasktree.fit(path, target="class", client=client, cv=10, max_depth=5)
        probed = scaling.fit_levels(client, path, 5)
    assert probed["model"].dumps() == plain.dumps()  # the probes call the holders' own methods
    assert len(probed["levels"]) >= 3
    for level in probed["levels"]:
        # one group per single-threaded worker, each counting the whole level's histogram
        assert level["workers"] == 3 and level["hist_groups"] == 3
        one = level["hist_bytes"] // 3
        assert one * 3 == level["hist_bytes"] and level["cell_bytes"] in (2, 4)
        # reduce-scatter: each holder is handed its chunk's cells by the 2 others, so the level moves
        # 2 whole histograms, not every histogram to every holder
        assert level["served_bytes"] == 2 * one
