"""Columns that look like row keys: found from pass 0's summary, said on stderr and in the report."""


import numpy as np
import pyarrow as pa
import pytest

from dasktree import fit
from dasktree.binning.summary import merge_all, summarize
from dasktree.binning.keys import key_like_columns
from dasktree.io.schema import resolve_roles
from dasktree.testing import mixed_frame, write_dataset
from dasktree.testing.processes import run_command


def _keys(frame, parts=3):
    table = pa.Table.from_pandas(frame, preserve_index=False)
    roles = resolve_roles(table.schema, "label")
    bounds = np.linspace(0, table.num_rows, parts + 1).astype(int)
    summary = merge_all([summarize(table.slice(a, b - a), roles, max_bins=255) for a, b in zip(bounds[:-1], bounds[1:])])
    return key_like_columns(summary, roles, table.schema)


@pytest.mark.parametrize("n", [150, 5000, 70_000])
def test_dense_integer_and_string_ids_are_keys_in_any_order(n):
    rng = np.random.default_rng(n)
    frame = mixed_frame(n, seed=1).assign(
        id=rng.permutation(n) + 1000, sid=[f"row-{i}" for i in range(n)],
        count=rng.integers(0, 50, n), amount=rng.integers(0, 10 * n, n))
    assert _keys(frame) == ["id", "sid"]


def test_not_keys_a_missing_value_a_repeat_or_few_rows():
    frame = mixed_frame(3000, seed=2).assign(id=np.arange(3000))
    assert _keys(frame.assign(id=np.r_[np.arange(2999), 5])) == []  # one repeat
    assert _keys(frame.assign(id=frame["id"].astype("float64").where(frame.index != 7))) == []  # one missing
    assert _keys(frame.head(50)) == []


def test_the_command_warns_and_the_report_keeps_it(tmp_path):
    frame = mixed_frame(4000, seed=3).assign(id=np.arange(4000))
    data = write_dataset(frame, tmp_path / "data", n_files=2)
    out = tmp_path / "m.json"
    done = run_command("fit", data, "--target", "label", "--out", str(out),
                           "--max-depth", "6", "--quiet")
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("dasktree: warning: ")]
    assert "column 'id' looks like a row key" in line and "--exclude id" in line
    shown = run_command("show", str(out), "--format", "report").stdout
    assert "warning: column 'id' looks like a row key" in shown
    assert "warnings" not in fit(frame.drop(columns=["id"]), target="label", max_depth=3).report


def test_the_summary_kept_for_the_keys_lets_go_of_the_other_sketches():
    """Once the bins are made a fit keeps only the integer columns' sketches (what the key check
    reads): the same keys are found, the float columns' sketches are gone."""
    from dasktree.binning.keys import kept_for_keys

    n = 5000
    frame = mixed_frame(n, seed=1).assign(id=np.random.default_rng(0).permutation(n))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    roles = resolve_roles(table.schema, "label")
    summary = summarize(table, roles, max_bins=255)
    kept = kept_for_keys(summary, roles, table.schema)
    names = list(roles.features)
    assert kept.numeric[names.index("x")] is None and summary.numeric[names.index("x")] is not None
    assert kept.numeric[names.index("id")] is summary.numeric[names.index("id")]
    assert key_like_columns(kept, roles, table.schema) == key_like_columns(summary, roles, table.schema) == ["id"]
