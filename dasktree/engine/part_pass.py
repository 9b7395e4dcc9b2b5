"""A pass that reads only some columns of every part and reduces what a function makes of each.

``reduce_parts(runner, func, combine, columns, label)`` runs ``func(table)`` on
each part's Arrow table of ``columns`` (chunk) and adds the results with
``combine(*results)`` (combine; associative and commutative, so the grouping
does not matter): on the runner's own parts and threads in process
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


def reduce_parts(runner, func: Callable, combine: Callable, columns: Sequence[str], label: str,
                 **kwargs) -> Any:
    """``combine`` of ``func(table, **kwargs)`` over every part's table of ``columns``."""
    columns = list(dict.fromkeys(columns))
    if hasattr(runner, "client"):
        return _on_cluster(runner, func, combine, columns, label, kwargs)
    parts = getattr(runner, "pieces", None) or runner.source.parts
    runner._count(True)
    runner.progress.start(label, len(parts))
    source = runner.source

    def one(part: Part):
        return func(source.read(part, columns), **kwargs)

    total = None
    for result in runner._stream(one, parts, runner.threads + 1):  # added as they come: one sum in memory
        total = result if total is None else combine(total, result)
    runner.progress.finish()
    return total


def read_apply(parts: list[Part], *, source: Source, columns: list[str], apply: Callable, combine: Callable,
               kwargs: dict):
    """A task: ``func`` over a group of parts read one at a time, combined as they come."""
    total = None
    for part in parts:
        result = apply(source.read(part, columns), **kwargs)
        total = result if total is None else combine(total, result)
    return total


def frame_apply(frame, *, columns: list[str], apply: Callable, kwargs: dict):
    """A task: ``func`` over one pandas partition of a dask DataFrame."""
    from ..io.sources import frame_to_table

    return apply(frame_to_table(frame[columns]), **kwargs)


def _on_cluster(runner, func, combine, columns, label, kwargs):
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
    root = runner._reduce(combine, list(futures), 1)
    runner._drain(futures, label)
    wait_futures(client, root)
    result = root[0].result()
    runner.progress.finish()
    return result
