"""``dasktree warm``: the kernels a fit calls are in numba's cache afterwards, and a cache is found
even where the package and the home directory are read-only."""

import json
import os
import subprocess
import sys

from dasktree.kernel_cache import LEVEL_PASS_KERNELS, ensure_cache_dir
from dasktree.testing.processes import cache_without

# A fresh interpreter fits a small dataset with each criterion of its arguments, in turn, and prints the
# dasktree kernels numba compiled meanwhile, by criterion (a kernel loaded from the cache is no compile; one
# compiled for an earlier criterion is in memory for the later ones: it was counted where it was compiled).
COUNT_COMPILES = """
import json, sys
from numba.core import event
compiled = {}
class Listener(event.Listener):
    def on_start(self, ev): pass
    def on_end(self, ev):
        func = ev.data["dispatcher"].py_func
        if func.__module__.startswith("dasktree"):
            compiled[criterion].append(func.__qualname__)
event.register("numba:compile", Listener())
from dasktree.testing import mixed_frame
from dasktree import fit
import os, tempfile
for criterion in sys.argv[1:]:
    compiled[criterion] = []
    frame = mixed_frame(3000, seed=4)
    if criterion == "squared_error":  # a regression tree: its own level pass
        from dasktree import DaskTreeRegressor
        frame["amount"] = frame["label"].astype("category").cat.codes * 2.5 + 1.0
        DaskTreeRegressor(max_depth=5, cv=3).fit(frame.drop(columns=["label", "amount"]), frame["amount"])
        numbers = frame.drop(columns="label").select_dtypes("number")
        DaskTreeRegressor().fit(numbers.drop(columns="amount"), numbers["amount"])  # deep: small nodes in memory
    else:
        fit(frame, target="label", criterion=criterion, max_depth=5, cv=3)
        numbers = frame.select_dtypes("number").assign(label=frame["label"])
        fit(numbers, target="label", criterion=criterion)  # deep: small nodes in memory where the criterion allows
    csv = os.path.join(tempfile.mkdtemp(), "rows.csv")  # CSV input's record scan too
    mixed_frame(500, seed=4).to_csv(csv, index=False)
    fit(csv, target="label", criterion="gini", max_depth=3)
print(json.dumps(compiled))
"""


def _python(args, env, timeout=600):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env)


def _compiled(done) -> list[str]:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_after_warm_a_fit_compiles_nothing(warmed_kernel_cache, tmp_path):
    """``dasktree warm`` (the pytest session's, :func:`warmed_kernel_cache`) fills a cache in which fits of
    each task compile nothing; the same fit on a copy of that cache without the level pass's kernel
    compiles it, so the count can see a compile (an empty cache's fit compiles them all; that would
    prove the same, at the price of compiling every kernel twice)."""
    cache, report = warmed_kernel_cache
    assert report["cache_dir"] == str(cache) and report["fits"] > 0
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    criteria = ("gini", "entropy", "squared_error")  # one interpreter: its imports once, not once a criterion
    assert _compiled(_python(["-c", COUNT_COMPILES, *criteria], env)) == {c: [] for c in criteria}
    pass_kernel = LEVEL_PASS_KERNELS["classification"][0]
    cache_without(cache, tmp_path / "without", [pass_kernel])
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "without")
    assert pass_kernel[1] in _compiled(_python(["-c", COUNT_COMPILES, "gini"], env))["gini"]


def test_an_install_where_no_cache_can_be_written_gets_one_under_the_temporary_directory(tmp_path):
    blocker = tmp_path / "a-file"  # nothing can be made below a file, whatever the user's rights
    blocker.write_text("")
    environ = {}
    ensure_cache_dir(environ, package=str(blocker / "dasktree"), home_cache=str(blocker / "home"))
    path = environ["NUMBA_CACHE_DIR"]
    assert os.path.basename(path).startswith("dasktree-numba-") and os.path.isabs(path)


def test_a_writable_cache_or_a_chosen_one_is_left_alone(tmp_path):
    environ = {}
    ensure_cache_dir(environ, package=str(tmp_path / "pkg"), home_cache=str(tmp_path / "home"))
    assert environ == {}  # the package's __pycache__ can be made: numba's own rule applies
    environ = {"NUMBA_CACHE_DIR": "/somewhere"}
    ensure_cache_dir(environ, package="/proc/no", home_cache="/proc/no")
    assert environ == {"NUMBA_CACHE_DIR": "/somewhere"}
