"""reduce_parts (dasktree.engine.part_pass): the combine tree adds every result once, in any number."""

from __future__ import annotations

import pytest

from dasktree.engine.part_pass import _merged


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8, 9, 63, 64, 65, 200])
@pytest.mark.parametrize("fan_in", [2, 3, 8])
def test_the_combine_tree_adds_every_result_once_and_combines_at_most_fan_in(n, fan_in):
    calls = []

    def combine(*parts):
        calls.append(len(parts))
        return [x for p in parts for x in p]

    total = _merged(([i] for i in range(n)), combine, fan_in)
    assert (total is None) if n == 0 else sorted(total) == list(range(n))
    assert all(2 <= c <= max(fan_in, 64) for c in calls)
