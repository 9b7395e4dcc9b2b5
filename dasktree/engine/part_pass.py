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
(:class:`~dasktree.engine.dask_runner.DaskRunner`), reduced on the workers
``split_every`` at a time. Only the combined result reaches the caller. It is
one more pass over the data (``runner.passes``) that reads Parquet. On a cluster a
worker lost mid-pass is survived as a histogram pass survives it: the pass is made
again from the Parquet files (MDLP's refinement, ``tests/engine/test_worker_loss.py``).
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


FAN_IN = 8  # results combined at once (as a Dask tree reduction's split_every)


def _merged(results, combine: Callable, fan_in: int = FAN_IN):
    """``combine`` of ``results`` as they come, as a tree: ``fan_in`` results of one level are
    combined at once into one of the next level, so each result takes part in log_fan_in(parts)
    combines (a sum that grows with its parts, such as sorted distinct values, costs
    O(n log parts), not O(n parts)), and at most ``fan_in`` results per level are held."""
    levels: list[list] = []
    for result in results:
        level = 0
        while True:
            if level == len(levels):
                levels.append([])
            levels[level].append(result)
            if len(levels[level]) < fan_in:
                break
            result, levels[level] = combine(*levels[level]), []
            level += 1
    rest = [r for level in levels for r in level]
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else combine(*rest)


def read_apply(parts: list[Part], *, source: Source, columns: list[str], apply: Callable, combine: Callable,
               kwargs: dict):
    """A task: ``func`` over a group of parts read one at a time, combined as they come."""
    return _merged((apply(source.read(part, columns), **kwargs) for part in parts), combine)


def frame_apply(frame, *, columns: list[str], apply: Callable, kwargs: dict):
    """A task: ``func`` over one pandas partition of a dask DataFrame."""
    from ..io.sources import frame_to_table

    return apply(frame_to_table(frame[columns]), **kwargs)


def _on_cluster(runner, func, combine, columns, label, kwargs, then, items, then_kwargs):
    """The pass on the cluster; a worker lost mid-pass is survived as a histogram pass survives it
    (:meth:`~dasktree.engine.dask_runner.DaskRunner.apply_pass`): the source is scattered again and
    the pass made again from the Parquet files, up to three times; the result is the same (the
    combine is exact)."""
    from ..errors import TransientError
    from .dask_runner import _lost_worker_errors
    from .waits import check_scheduler_alive

    runner.passes += 1  # one logical pass, however many attempts it takes
    for attempt in range(3):
        try:
            return _attempt_on_cluster(runner, func, combine, columns, label, kwargs, then, items, then_kwargs)
        except _lost_worker_errors() as exc:
            check_scheduler_alive(runner.client)  # a lost scheduler lost every worker's data: no retry here
            if attempt == 2:
                raise TransientError(f"{label}: workers lost three times over ({exc}); a retry may succeed") from exc
            runner._rescatter(exc)
    raise AssertionError("unreachable")  # pragma: no cover


def _attempt_on_cluster(runner, func, combine, columns, label, kwargs, then, items, then_kwargs):
    from .task_graph_passes import drain, tree_reduce
    from .waits import gathered, wait_futures

    client = runner.client
    if runner._frames is not None:
        futures = [client.submit(frame_apply, frame, columns=columns, apply=func, kwargs=kwargs, pure=False)
                   for frame in runner._frames]
    else:
        runner.parquet_reads += 1
        futures = [runner._submit(read_apply, runner._parts(parts), worker=worker, source=runner._source,
                                  columns=columns, apply=func, combine=combine, kwargs=kwargs)
                   for worker, parts in runner._assign()]
    [root] = tree_reduce(client, combine, list(futures), runner.split_every)
    tasks = [root] if then is None else [client.submit(then, root, item, pure=False, **then_kwargs) for item in items]
    drain(client, runner.progress, futures, label)
    wait_futures(client, tasks)
    results = gathered(client, tasks)
    runner.progress.finish()
    return results[0] if then is None else results
