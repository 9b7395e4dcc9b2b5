"""Python's cyclic garbage collector, kept out of the way of bursts of short-lived objects.

A level pass makes tens of thousands of small objects at a deep forest level
(search requests; on the client, tests, branches and nodes) that are freed by
reference counting. Each time they push the young generations over their
thresholds, and the long-lived objects grow by a quarter, the collector rescans
*every* tracked object of the process: on the client the imported modules and
the forest, on a worker all of ``distributed``'s state as well (about 200,000
objects). None of the contexts below frees anything early or late but cyclic
garbage, which the next collection after it takes; the objects they cover have
no cycles.

- :func:`older_objects_frozen` (the client's grow loop): objects older than the
  fit are frozen (:func:`gc.freeze`), so a collection scans only the fit's own.
- :func:`freeze_older_objects` / :func:`unfreeze_older_objects` (a worker's
  :class:`~dasktree.engine.part_holders.PartHolder`, from its start to its
  close): the same, for a span that is not one block. A worker that ran other
  work before (a long-running cluster) would otherwise start a fit close to a
  full collection, and its peers would wait for its cells while it ran.
- :func:`collector_paused` (a worker's search tasks, the client's
  :func:`dasktree.levels.grow._apply`, and :func:`dasktree.fit.fit` building the
  models from the forest): no automatic collection while the block runs.

What each buys is a matter of measurement (A/B fits of a cross-validation
forest), not of this module's correctness: the tests check only that the
collector is paused and restored.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["older_objects_frozen", "freeze_older_objects", "unfreeze_older_objects", "collector_paused"]

_lock = threading.Lock()
_paused = 0  # tasks of this process inside collector_paused
_reenable = False  # whether the collector was on when the first of them came in
_spans = 0  # spans of this process between freeze_older_objects and unfreeze_older_objects
_unfreeze = False  # whether the first of them froze the objects (and the last is to unfreeze them)


@contextmanager
def older_objects_frozen():
    """Objects older than the block are left out of the collector's scans during it.

    They are unfrozen after, so nothing stays exempt; a process that froze its
    own objects already is left as it is.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def freeze_older_objects() -> None:
    """Start a span during which objects older than it stay out of the collector's scans.

    Spans may overlap (two fits' holders on one worker): the objects are frozen
    when the first starts and unfrozen when the last ends, and only if the
    process had not frozen objects of its own. Each start needs one
    :func:`unfreeze_older_objects`.
    """
    global _spans, _unfreeze
    with _lock:
        if _spans == 0:
            _unfreeze = not gc.get_freeze_count()
            if _unfreeze:
                gc.freeze()
        _spans += 1


def unfreeze_older_objects() -> None:
    """End a span of :func:`freeze_older_objects` (an end without a start does nothing)."""
    global _spans
    with _lock:
        if _spans == 0:
            return
        _spans -= 1
        if _spans == 0 and _unfreeze:
            gc.unfreeze()


@contextmanager
def collector_paused():
    """No automatic collection during the block (a worker task making many short-lived objects).

    The collector is process-wide and a worker may run several tasks in threads
    at once: it is switched off when the first paused task comes in and back on
    when the last one leaves, and only if it was on to begin with (a process that
    turned it off keeps it off).
    """
    global _paused, _reenable
    with _lock:
        if _paused == 0:
            _reenable = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _reenable:
                gc.enable()
