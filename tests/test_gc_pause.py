"""The collector is paused only while paused tasks run, and left as the process had it."""

import gc
import threading

from dasktree.gc_pause import collector_paused


def test_paused_inside_and_back_on_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off, and the inner exit does not turn it on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_back_on_after_an_error():
    try:
        with collector_paused():
            raise ValueError("a failing task")
    except ValueError:
        pass
    assert gc.isenabled()


def test_a_process_that_turned_it_off_keeps_it_off():
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_threads_overlapping_turn_it_on_only_when_the_last_leaves():
    """Two tasks in two threads of one worker: the first to leave must not turn it on under the other."""
    first_in, first_out, second_done = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def long_task():
        with collector_paused():
            first_in.set()
            first_out.wait(10)
            seen["while the short one had left"] = gc.isenabled()
        second_done.set()

    thread = threading.Thread(target=long_task)
    thread.start()
    first_in.wait(10)
    with collector_paused():
        pass
    first_out.set()
    second_done.wait(10)
    thread.join()
    assert seen == {"while the short one had left": False}
    assert gc.isenabled()


def test_frozen_spans_overlap_and_the_last_to_end_unfreezes():
    """Two holders on one worker: the objects are frozen from the first start to the last end."""
    from dasktree.gc_pause import freeze_older_objects, unfreeze_older_objects

    # Counts of frozen objects only as zero or not: other threads of the process (a cluster's) may
    # free frozen objects meanwhile.
    assert gc.get_freeze_count() == 0
    freeze_older_objects()
    assert gc.get_freeze_count() > 0
    freeze_older_objects()  # a second span
    unfreeze_older_objects()
    assert gc.get_freeze_count() > 0  # the first span is still on
    unfreeze_older_objects()
    assert gc.get_freeze_count() == 0
    unfreeze_older_objects()  # an end without a start does nothing
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_its_objects_keeps_them_frozen():
    from dasktree.gc_pause import freeze_older_objects, unfreeze_older_objects

    gc.freeze()
    try:
        freeze_older_objects()
        unfreeze_older_objects()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_part_holder_freezes_from_its_start_to_its_close_once():
    """The holder's span ends at close, and its collection after that ends nothing more."""
    from dasktree.engine.part_holders import PartHolder

    holder = PartHolder()
    assert gc.get_freeze_count() > 0
    holder.close()
    assert gc.get_freeze_count() == 0
    other = PartHolder()
    del holder  # closed already: its collection must not end the other holder's span
    gc.collect()
    assert gc.get_freeze_count() > 0
    del other  # never closed: its collection ends its span
    gc.collect()
    assert gc.get_freeze_count() == 0


def test_a_fits_models_are_built_with_the_collector_paused(monkeypatch):
    """The main and fold trees' models are made from the forest with the collector off (a full
    collection there would rescan the forest's nodes), and it is on again after the fit."""
    import numpy as np
    import pandas as pd

    import importlib

    import dasktree
    from dasktree.levels.to_model import tree_model

    fit_module = importlib.import_module("dasktree.fit")  # the attribute dasktree.fit is the function

    seen = []

    def watched(forest, tree):
        seen.append(gc.isenabled())
        return tree_model(forest, tree)

    monkeypatch.setattr(fit_module, "tree_model", watched)
    x = np.random.default_rng(0).random(400)
    model = dasktree.fit(pd.DataFrame({"x": x, "y": (x > 0.5).astype(int)}), target="y", cv=3, max_depth=2,
                         keep_fold_trees=True)
    assert len(model.fold_trees) == 3
    assert seen == [False] * 4
    assert gc.isenabled()
