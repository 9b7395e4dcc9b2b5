"""A pass that reads only some columns of every part and reduces what a function makes of each.

``reduce_parts(runner, func, combine, columns, label)`` runs ``func(table)`` on
each part's Arrow table of ``columns`` (chunk) and adds the results with
``combine(*results)`` (combine; associative and commutative, so the grouping
does not matter), and with ``then`` returns ``then(total, item)`` for each of
``items`` (aggregate, a task per item next to the total, as
:meth:`~dasktree.engine.runner.Runner.apply_pass` does with its chunks): on the runner's own parts and threads in process
(:class:`~dasktree.engine.local_runner.LocalRunner`, or the pieces of the
:class:`~dasktree.engine.stream_runner.StreamRunner`, one piece in memory per
thread), or as a task per worker thread's group of parts on a cluster
(:class:`~dasktree.engine.runners.DaskRunner`), reduced on the workers
``split_every`` at a time. Only the combined result reaches the caller. It is
one more pass over the data (``runner.passes``) that reads Parquet.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..io.sources import Part, Source

__all__ = ["reduce_parts"]


def reduce_parts(runner, func: Callable, combine: Callable, columns: Sequence[str], label: str, *,
                 then: Callable | None = None, items: Sequence = (), then_kwargs: dict | None = None,
                 **kwargs) -> Any:
    """``combine`` of ``func(table, **kwargs)`` over every part's table of ``columns``; with
    ``then``, the list of ``then(total, item, **then_kwargs)`` for each of ``items``."""
    columns = list(dict.fromkeys(columns))
    then_kwargs = then_kwargs or {}
    if hasattr(runner, "client"):
        return _on_cluster(runner, func, combine, columns, label, kwargs, then, list(items), then_kwargs)
    parts = getattr(runner, "pieces", None) or runner.source.parts
    runner._count(True)
    runner.progress.start(label, len(parts))
    source = runner.source

    def one(part: Part):
        return func(source.read(part, columns), **kwargs)

    total = _merged(runner._stream(one, parts, runner.threads + 1), combine)
    runner.progress.finish()
    if then is None:
        return total
    return runner._map(lambda item: then(total, item, **then_kwargs), list(items))


def _merged(results, combine: Callable):
    """``combine`` of ``results`` as they come, as a binary counter: a sum of 2**k results is added to
    another of 2**k only, so each result takes part in log2(parts) combines (a sum that grows with
    its parts, such as sorted distinct values, costs O(n log parts), not O(n parts)), and at most
    log2(parts) sums are held."""
    stack: list[tuple[int, Any]] = []
    for result in results:
        size = 1
        while stack and stack[-1][0] == size:
            result, size = combine(stack.pop()[1], result), 2 * size
        stack.append((size, result))
    total = None
    while stack:
        _, result = stack.pop()
        total = result if total is None else combine(result, total)
    return total


def read_apply(parts: list[Part], *, source: Source, columns: list[str], apply: Callable, combine: Callable,
               kwargs: dict):
    """A task: ``func`` over a group of parts read one at a time, combined as they come."""
    return _merged((apply(source.read(part, columns), **kwargs) for part in parts), combine)


def frame_apply(frame, *, columns: list[str], apply: Callable, kwargs: dict):
    """A task: ``func`` over one pandas partition of a dask DataFrame."""
    from ..io.sources import frame_to_table

    return apply(frame_to_table(frame[columns]), **kwargs)


def _on_cluster(runner, func, combine, columns, label, kwargs, then, items, then_kwargs):
    from .waits import wait_futures

    client = runner.client
    runner.passes += 1
    if runner._frames is not None:
        futures = [client.submit(frame_apply, frame, columns=columns, apply=func, kwargs=kwargs, pure=False)
                   for frame in runner._frames]
    else:
        runner.parquet_reads += 1
        futures = [runner._submit(read_apply, runner._parts(parts), worker=worker, source=runner._source,
                                  columns=columns, apply=func, combine=combine, kwargs=kwargs)
                   for worker, parts in runner._assign()]
    [root] = runner._reduce(combine, list(futures), 1)
    tasks = [root] if then is None else [client.submit(then, root, item, pure=False, **then_kwargs) for item in items]
    runner._drain(futures, label)
    wait_futures(client, tasks)
    results = client.gather(tasks)
    runner.progress.finish()
    return results[0] if then is None else results
