"""Which Dask cluster a job runs on, and closing what we started.

``client=`` (a ``distributed.Client``) wins; otherwise ``scheduler=``:
``"processes"`` (the default for datasets: a ``LocalCluster`` with one
single-threaded worker process per core), ``"threads"`` (one worker process-free
cluster with a thread per core) or a scheduler address such as
``tcp://10.0.0.5:8786``. A cluster started here is closed when the job ends, its worker processes
killed as soon as the close reaches them (:func:`close_local_cluster`). An address is tried
first with a plain TCP connection: one that refuses it is given up on in seconds (``REFUSED_SECONDS``),
one that does not answer after ``CONNECT_SECONDS``, each with one line saying what was tried.

The worker processes started here allocate memory the way a plain Python
process does. Dask's nanny otherwise sets ``MALLOC_TRIM_THRESHOLD_=65536``,
which also fixes glibc's mmap threshold at 128 KiB: every array above it (a
histogram, a part's codes, a sort's copy) is then mapped fresh and its pages
faulted in on first touch, most of all in pass 0's sorting summary (the
developer benchmark of the two environments measures what it costs). On a
cluster of your own, start the workers with
``MALLOC_TRIM_THRESHOLD_`` unset, or left as it is to give memory back to the
system sooner at that cost (see ``deploy/README.md``).
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from typing import Callable, Iterator

from ..errors import DaskTreeError, ParameterError, TransientError
from .waits import LOST_SECONDS, answered, check_scheduler_alive, remember_scheduler

__all__ = ["connect", "local_cluster", "close_local_cluster", "SCHEDULERS"]

SCHEDULERS = ("processes", "threads")


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def local_cluster(n_workers: int | None = None, threads_per_worker: int = 1, processes: bool = True, **kwargs):
    """A ``LocalCluster`` as dasktree starts one: by default a single-threaded worker process per
    core, quiet, on any free dashboard port, and its workers without Dask's
    ``MALLOC_TRIM_THRESHOLD_`` (see the module's documentation). ``kwargs`` go to ``LocalCluster``."""
    import dask
    from distributed import LocalCluster

    options = dict(dashboard_address=":0",  # any free port: a job says where (connect's on_cluster)
                   silence_logs=logging.CRITICAL)
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        return LocalCluster(n_workers=_cores() if n_workers is None else n_workers,
                            threads_per_worker=threads_per_worker, processes=processes, **{**options, **kwargs})


def _reap_processes() -> None:
    """After a cluster of processes closed: wait for its processes, and stop multiprocessing's resource
    tracker (a helper process it started for the workers, restarted when needed), so that nothing
    started for the fit outlives it, not even for the moment it takes to notice its parent gone."""
    import multiprocessing
    from multiprocessing import resource_tracker

    for child in multiprocessing.active_children():
        child.join(timeout=5)
    if multiprocessing.active_children():  # processes of another cluster hold the tracker: it must stay
        return
    stop = getattr(getattr(resource_tracker, "_resource_tracker", None), "_stop", None)  # not public: may be gone
    if stop is not None:
        try:
            stop()
        except Exception:  # noqa: BLE001 - a tracker that cannot stop is only tidiness lost
            pass


@contextmanager
def connect(client=None, scheduler: str | None = None,
            on_cluster: Callable[[str, str | None, bool], None] | None = None, security=None) -> Iterator:
    """Yield a ``distributed.Client``: the one given, or one on a cluster started here.

    ``on_cluster(scheduler_address, dashboard_link, started)`` hears which cluster a job started
    or connected to (not called for a ``client`` given), so a job can say where to watch it.
    ``security`` (a ``distributed.security.Security``, a directory of certificates or a mapping of
    their paths, :mod:`dasktree.engine.tls`) is the TLS of a scheduler address; the clusters
    started here listen on 127.0.0.1 only and do without."""
    if client is not None:
        with _on_scheduler(client):
            yield client
        return
    from distributed import Client

    scheduler = scheduler or "processes"
    if scheduler in SCHEDULERS:
        n = _cores()
        threads = scheduler == "threads"
        try:
            cluster = local_cluster(n_workers=1 if threads else n, threads_per_worker=n if threads else 1,
                                    processes=not threads)
        except TransientError:  # a --timeout that expires while the workers start: still transient
            raise
        except RuntimeError as exc:
            raise DaskTreeError(
                f"cannot start local Dask worker processes ({exc}); when calling dasktree from a "
                "script, put the call under `if __name__ == \"__main__\":` (worker processes "
                "re-import the script), or use scheduler=\"threads\""
            ) from None
        try:
            started = Client(cluster, direct_to_workers=True)  # a pass's call goes straight to the holders
            try:
                if on_cluster is not None:
                    on_cluster(cluster.scheduler_address, _dashboard(started), True)
                with _on_scheduler(started):
                    yield started
            finally:
                _close(started)
        finally:
            if threads:
                _close(cluster)
            else:
                close_local_cluster(cluster)
                _reap_processes()
        return
    if "://" not in scheduler and ":" not in scheduler:
        raise ParameterError(
            f"scheduler {scheduler!r}: expected 'processes', 'threads' or an address like tcp://host:8786"
        )
    from .tls import check_security, client_security, explain_failure

    security = client_security(security)
    check_security(security, scheduler)
    _reachable(scheduler)
    try:
        started = Client(scheduler, timeout=f"{CONNECT_SECONDS}s", security=security)
    except (OSError, TimeoutError) as exc:
        dropped = scheduler.startswith("tls://") or "closed" in str(exc).lower() or "reset" in str(exc).lower()
        raise (dropped and explain_failure(scheduler, security)) or TransientError(
            f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        if on_cluster is not None:
            on_cluster(scheduler, _dashboard(started), False)
        with _on_scheduler(started):
            yield started
    finally:
        _close(started)


CONNECT_SECONDS = 20
"""How long connecting to a scheduler address may take (a silent address: no answer at all)."""

REFUSED_SECONDS = 3.0
"""How long a scheduler address that refuses connections is tried again (one starting up) before the
job gives up: a refused connect is answered at once, and distributed would retry it for
``CONNECT_SECONDS``."""


def _reachable(scheduler: str) -> None:
    """Try a TCP connection to ``scheduler``'s host and port (closed at once) before the client's: an
    address that refuses for ``REFUSED_SECONDS``, an unknown host name, or no answer in
    ``CONNECT_SECONDS`` is a :class:`TransientError` saying what was tried. Not TCP (``inproc://``,
    ``ucx://``): the client's own connect decides."""
    import socket
    import time

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(scheduler)
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return
    if scheme not in ("tcp", "tls") or not port:
        return
    what = f"cannot reach the Dask scheduler at {scheduler}: tried a TCP connection to {host}:{port}"
    deadline = time.monotonic() + REFUSED_SECONDS
    while True:
        try:
            with socket.create_connection((host, port), timeout=CONNECT_SECONDS):
                return
        except ConnectionRefusedError:
            if time.monotonic() >= deadline:
                raise TransientError(f"{what}, refused for {REFUSED_SECONDS:g} s: nothing listens there "
                                     "(is the scheduler running, at that port?)") from None
            time.sleep(0.25)
        except socket.gaierror as exc:
            raise TransientError(f"{what}: {host!r} is not a host name this machine resolves ({exc.strerror})") \
                from None
        except TimeoutError:
            raise TransientError(f"{what}: no answer in {CONNECT_SECONDS} s") from None
        except OSError as exc:
            raise TransientError(f"{what}: {exc.strerror or exc}") from None


@contextmanager
def _on_scheduler(client) -> Iterator[None]:
    """A block run on ``client``'s scheduler (:func:`~dasktree.engine.waits.remember_scheduler`): an
    error that comes of losing it (distributed cancels the futures, then closes the client when it
    cannot reconnect; or a new scheduler at the address knows nothing of the run) is a
    :class:`~dasktree.errors.TransientError` saying so, whatever it was raised as."""
    remember_scheduler(client)
    try:
        yield
    except DaskTreeError:
        raise
    except Exception as exc:
        check_scheduler_alive(client)  # raises if the scheduler was lost, saying how
        raise


CLOSE_SECONDS = 10
"""How long closing a client or a cluster may take: a lost worker or scheduler must not keep the job alive."""


def _close(thing) -> None:
    """Close a client or cluster within :data:`CLOSE_SECONDS`; a close that fails or times out is
    given up on (the job's result does not depend on it)."""
    try:
        thing.close(timeout=CLOSE_SECONDS)
    except Exception:  # already closed, or its peer is gone: nothing left to release here
        pass


def close_local_cluster(cluster) -> None:
    """Close a ``LocalCluster`` of worker processes (:func:`local_cluster`), its clients already closed,
    without waiting on its workers' interpreters to end by themselves.

    A graceful close has each nanny ask its worker to stop and wait up to 4 s for the process to
    exit before it kills it; the worker closes in a fraction of a second, but its interpreter's
    exit (finalizing numpy, pyarrow, numba and distributed's threads) takes seconds and at times
    never comes, so the nannies waited out their 4 s and killed the workers anyway, after the job
    was done. Nothing in them is wanted then: the model is in this process. So the close runs as
    distributed's, in a thread, and each worker process is killed as soon as its nanny is closing
    (not before: a running nanny would start a new worker in place of one that died); the nanny
    sees its process gone at once and removes the worker's directory, as on a graceful end. The
    whole close stays bounded by :data:`CLOSE_SECONDS`."""
    import signal
    import threading
    import time

    from distributed.core import Status

    nannies = [n for n in list(getattr(cluster, "workers", {}).values()) if getattr(n, "process", None) is not None]
    closing = threading.Thread(target=_close, args=(cluster,), name="dasktree-cluster-close", daemon=True)
    closing.start()
    deadline = time.monotonic() + CLOSE_SECONDS
    pending = {}  # nanny -> its worker's process (distributed's AsyncProcess) and pid
    for nanny in nannies:
        process = getattr(nanny.process, "process", None)
        pid = getattr(process, "pid", None) if process is not None else None
        if pid is not None:
            pending[nanny] = (process, pid)
    while pending and closing.is_alive() and time.monotonic() < deadline:
        for nanny, (process, pid) in list(pending.items()):
            if nanny.status not in (Status.closing, Status.closed, Status.failed):
                continue
            del pending[nanny]
            # a process its nanny has not let go of is not yet reaped, so its pid is still its own
            if getattr(getattr(nanny, "process", None), "process", None) is process:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        time.sleep(0.02)
    closing.join(max(0.0, deadline - time.monotonic()))


def _dashboard(client) -> str | None:
    """The dashboard's address, or None when the scheduler serves none."""
    info = answered(lambda: client.sync(client.scheduler.identity, n_workers=0, callback_timeout=LOST_SECONDS))
    return client.dashboard_link if "dashboard" in info.get("services", {}) else None
