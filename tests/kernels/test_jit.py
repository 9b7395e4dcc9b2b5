"""numba is imported in one module, :mod:`dasktree.kernels.jit`, and every kernel is compiled by its ``jit``."""

import ast
from pathlib import Path

import numpy as np

from dasktree.kernels.jit import OPTIONS, jit, numba
from dasktree.testing import run_without_numba

PACKAGE = Path(__file__).resolve().parents[2] / "dasktree"


def test_numba_is_imported_only_by_the_jit_module():
    """The one exception: the kernel cache asks numba's own rule for its user cache directory."""
    importers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n.split(".")[0] == "numba" for n in names):
                importers.add(path.relative_to(PACKAGE).as_posix())
    assert importers == {"kernels/jit.py", "kernel_cache.py"}


def test_jit_compiles_with_the_shared_options_and_its_own():
    def add(a, b):
        return a + b

    compiled, inlined = jit(add), jit(inline="always")(add)
    assert numba is not None and compiled is not add
    assert OPTIONS == {"cache": True, "nogil": True} and compiled.targetoptions["nogil"]
    assert type(compiled._cache).__name__ == "FunctionCache"  # kept on disk: what dasktree warm fills
    assert inlined.targetoptions["inline"] == "always"
    assert compiled(np.int64(2), np.int64(3)) == 5


def test_without_numba_jit_hands_the_function_back():
    code = ("from dasktree.kernels.jit import jit, numba, register_jitable\n"
            "def f(x): return x\n"
            "register_jitable(f)\n"
            "print(numba is None, jit(f) is f, jit(inline='always')(f) is f)")
    assert run_without_numba(code) == "True True True"
