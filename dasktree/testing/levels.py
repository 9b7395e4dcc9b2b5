"""A fit's level passes, captured: each level's histogram, requests and search context, to test the
search paths against :func:`~dasktree.levels.level_search.search_group` on real counts."""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["captured_levels", "assert_same_results"]


def captured_levels(monkeypatch, frame, target, **params) -> list:
    """Every level's (histogram, requests, context) of an in-process fit of ``frame``, as its searches
    (:func:`~dasktree.levels.level_search.search_group`) are given them."""
    import dasktree
    import dasktree.levels.level_search
    from dasktree.levels.level_search import search_group

    seen = []

    def capture(hist, requests, context):
        seen.append((hist.copy(), list(requests), context))
        return search_group(hist, requests, context)

    monkeypatch.setattr(dasktree.levels.level_search, "search_group", capture)
    dasktree.fit(frame, target=target, **params)
    return seen


def assert_same_results(a, b) -> None:
    """Two :class:`~dasktree.levels.results.PackedResults` are equal, column for column (but the
    search's time, which is how long it took, not what it found)."""
    fa = {f.name: getattr(a, f.name) for f in dataclasses.fields(a) if f.name != "search_seconds"}
    fb = {f.name: getattr(b, f.name) for f in dataclasses.fields(b) if f.name != "search_seconds"}
    assert fa.keys() == fb.keys()
    for name in fa:
        if isinstance(fa[name], np.ndarray):
            np.testing.assert_array_equal(fa[name], fb[name], err_msg=name)
        else:
            assert fa[name] == fb[name], name
