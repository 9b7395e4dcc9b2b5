"""The hooks tests and benchmarks set (:mod:`dasktree.testing.hooks`) and the named points that reach
them (:mod:`dasktree.hook_points`): no-ops in production, a SIGKILL at the armed point, once per marker."""

import signal
import subprocess
import sys

import pytest

from dasktree import hook_points
from dasktree.testing import hooks


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_production_never_loads_the_hooks_and_its_points_do_nothing():
    done = _run("import sys, dasktree, dasktree.cli, dasktree.engine.dask_runner, dasktree.engine.checkpoint\n"
                "from dasktree import hook_points\n"
                "for name in hook_points.POINTS:\n"
                "    hook_points.point(name, 99)\n"
                "assert hook_points.value('only_fold') is None\n"
                "print('dasktree.testing.hooks' in sys.modules)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_an_armed_process_dies_at_its_point_once_per_marker(tmp_path):
    marker = tmp_path / "killed"
    code = ("from dasktree.testing import hooks\n"
            "from dasktree import hook_points\n"
            f"hooks.arm('count:2:{marker}')\n"
            "hook_points.point('count', 1)\n"  # an earlier pass
            "hook_points.point('search', 5)\n"  # another point
            "print('alive', flush=True)\n"
            "hook_points.point('count', 3)\n"  # pass 2 or later: dies
            "print('after')")
    first = _run(code)
    assert first.returncode == -signal.SIGKILL and first.stdout.split() == ["alive"], first.stderr
    assert marker.exists()
    again = _run(code)  # the marker is there: a restarted process lives on
    assert again.returncode == 0 and again.stdout.split() == ["alive", "after"], again.stderr


def test_arming_is_checked_and_undone():
    with pytest.raises(ValueError, match="fault stage must be one of summary, encode, count"):
        hooks.arm("counting:2:/nowhere")
    with pytest.raises(ValueError, match="fault stage"):
        hooks.armed_command("saving:1:/nowhere", "fit")
    hooks.arm("saved:7:/a:b")
    try:
        assert hooks.fault == hooks.Fault("saved", 7, "/a:b")
        hook_points.point("saved", 6)  # before its pass: nothing
    finally:
        hooks.arm(None)
    assert hooks.fault is None


def test_only_fold_is_a_value_while_set():
    assert hook_points.value("only_fold") is None
    with hooks.grow_only_fold(3):
        assert hook_points.value("only_fold") == 3
    assert hook_points.value("only_fold") is None


def test_the_armed_command_runs_dasktree_in_its_process():
    done = subprocess.run(hooks.armed_command("saved:1:/nonexistent/marker", "show", "--help"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage: dasktree show"), done.stderr
