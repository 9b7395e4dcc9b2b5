"""numba, imported in this one module for every compiled kernel of dasktree, and the options they share.

numba is a declared dependency; the package still imports and gives the same bytes where it cannot be
imported (a Python numba does not support yet, an install without dependencies): every compiled kernel
has a numpy twin, which runs then. That choice is made here once: a kernel module takes
:data:`numba` (the module, or None) and :func:`jit` from here, never ``import numba`` of its own
(``tests/kernels/test_jit.py`` checks it), and ``dasktree.testing.run_without_numba`` runs code where
the import fails, to prove the twins' bytes.
"""

from __future__ import annotations

try:
    import numba
except ImportError:  # pragma: no cover - exercised in a subprocess by run_without_numba
    numba = None

__all__ = ["numba", "jit", "register_jitable", "OPTIONS"]

OPTIONS = {"cache": True, "nogil": True}
"""What every kernel is compiled with: kept in numba's on-disk cache (``dasktree warm`` fills it), and
the GIL released, so the threads of a process run kernels at once."""


def jit(function=None, **options):
    """``numba.njit`` with :data:`OPTIONS` (and ``options``, e.g. ``inline="always"``), as ``@jit`` or
    ``@jit(...)``; without numba, the function itself (its caller runs the numpy twin instead)."""
    if function is None:
        return lambda f: jit(f, **options)
    if numba is None:
        return function
    return numba.njit(**{**OPTIONS, **options})(function)


def register_jitable(function) -> None:
    """Let compiled kernels call ``function`` by name (``numba.extending.register_jitable``); nothing
    without numba."""
    if numba is not None:
        from numba.extending import register_jitable as register

        register(function)
