"""Where numba keeps dasktree's compiled kernels, and a writable place when the defaults are not.

Every compiled kernel is declared ``cache=True``; numba writes its machine code
to ``__pycache__`` beside the package when that is writable, else to its user
cache directory (``~/.cache/numba``), or to ``NUMBA_CACHE_DIR`` when set.
Importing dasktree calls :func:`ensure_cache_dir` before numba compiles
anything (``dasktree warm`` fills the cache ahead of a fit: :mod:`dasktree.warm`).
"""

from __future__ import annotations

import os

__all__ = ["ensure_cache_dir", "cache_dir", "cold", "COMPILING"]

COMPILING = "compiling kernels, once: dasktree warm does it ahead"
"""What the command says before a fit whose kernels are not in the cache (:func:`cold`)."""

LEVEL_PASS_KERNELS = {
    "classification": (("dasktree.kernels.histogram", "_pass_numba"), ("dasktree.binning.codes", "_codes_numba")),
    "regression": (("dasktree.kernels.regression_pass", "_pass"), ("dasktree.binning.codes", "_codes_numba")),
}
"""The kernels every fit of a task compiles first (module, name): one cold means the rest are too."""


def _writable(path: str) -> bool:
    """Whether files can be created in ``path`` (made if missing)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def ensure_cache_dir(environ=None, package: str | None = None, home_cache: str | None = None) -> None:
    """Give numba a writable cache directory when it would find none.

    numba refuses to define a ``cache=True`` kernel (a ``RuntimeError`` at import)
    when neither the package's ``__pycache__`` nor its user cache directory can be
    written, as in a container with a read-only site-packages and home. Then
    ``NUMBA_CACHE_DIR`` is set in ``environ`` (default ``os.environ``), before numba
    is imported, to ``<tmp>/dasktree-numba-<uid>``. A ``NUMBA_CACHE_DIR`` already set
    is left alone. ``package`` and ``home_cache`` default to this package's folder and
    ``$XDG_CACHE_HOME`` or ``~/.cache``.
    """
    environ = os.environ if environ is None else environ
    if environ.get("NUMBA_CACHE_DIR"):
        return
    package = package or os.path.dirname(os.path.abspath(__file__))
    if _writable(os.path.join(package, "__pycache__")):
        return
    home_cache = home_cache or environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(os.path.join(home_cache, "numba")):
        return
    import tempfile  # here: importing dasktree (as `dasktree show` does) imports no tempfile

    uid = os.getuid() if hasattr(os, "getuid") else "user"
    environ["NUMBA_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), f"dasktree-numba-{uid}")


def cache_dir() -> str:
    """Where this process's kernels are cached (as numba decides; see the module's documentation)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    package = os.path.dirname(os.path.abspath(__file__))
    if _writable(os.path.join(package, "__pycache__")):
        return os.path.join(package, "__pycache__") + " (and each subpackage's)"
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def cold(task: str = "classification") -> bool:
    """Whether a fit of ``task`` in this process will compile its kernels first (many seconds): one of
    its level-pass kernels has nothing in numba's on-disk cache for its current source (no index file,
    or one of an older source, as after an install or an upgrade). Read from the cache, not timed;
    False when numba's cache cannot be read this way (nothing is said rather than something wrong)."""
    import importlib

    for module, name in LEVEL_PASS_KERNELS[task]:
        kernel = getattr(importlib.import_module(module), name)
        try:
            index = kernel._cache._cache_file._load_index()  # {} when missing or stale (numba's own check)
        except Exception:  # noqa: BLE001 - numba's private cache API moved: say nothing
            return False
        if not index:
            return True
    return False
