"""A real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, for fault tests and benchmarks.

:func:`cluster_processes` yields a :class:`ClusterProcesses` whose scheduler can be killed and
started again on the same port, or stopped (SIGSTOP) and let go on, as a scheduler's machine
that restarts or hangs would (its workers can be stopped too); :func:`scheduler_and_workers` yields only the address.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from ..engine.progress import Progress

__all__ = ["scheduler_and_workers", "cluster_processes", "ClusterProcesses", "KillAtLevel", "startup_seconds",
           "wait_for_workers"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def startup_seconds() -> float:
    """How long a new interpreter takes to import ``distributed`` now: the machine's speed at starting
    a scheduler or a worker (about 2 s on a quiet 2-core machine, over 20 s at a load of 30)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import distributed"], check=True, capture_output=True)
    return time.perf_counter() - started


def wait_for_workers(address: str, n: int, processes: list[subprocess.Popen], *, security=None,
                     floor: float = 120, factor: float = 40) -> None:
    """Until ``n`` workers are connected to the scheduler at ``address``, which ``processes`` (its
    scheduler and workers) start. The wait ends early, saying so, when one of them has ended, and is
    bounded by the machine's speed: past ``floor`` seconds, :func:`startup_seconds` is measured and
    the bound becomes ``factor`` times it (a fixed bound set on a quiet machine fails a loaded one
    with 0 workers; a quiet machine never pays for the measure)."""
    from distributed import Client

    started = time.monotonic()
    bound, unit = floor, None

    def check(what) -> float:
        nonlocal bound, unit
        ended = [p for p in processes if p.poll() is not None]
        if ended:
            raise RuntimeError(f"{len(ended)} of the cluster's processes ended (exit "
                               f"{', '.join(str(p.returncode) for p in ended)}) before {n} workers connected")
        if time.monotonic() - started > bound and unit is None:
            unit = startup_seconds()
            bound = max(floor, factor * unit)
        left = started + bound - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{what()} within {bound:.0f} s ({factor:g}x the {unit:.1f} s an import of "
                               f"distributed takes now, at least {floor:g} s)")
        return left

    client = None
    while client is None:
        left = check(lambda: f"no scheduler answered at {address}")
        try:
            client = Client(address, timeout=f"{max(1.0, min(left, 60.0)):.0f}s", security=security,
                            set_as_default=False)
        except (OSError, TimeoutError):
            continue
    with client:
        while True:
            left = check(lambda: f"{len(client.scheduler_info(n_workers=-1)['workers'])} of {n} workers connected")
            try:
                client.wait_for_workers(n, timeout=min(left, 5.0))
                return
            except TimeoutError:
                continue


_PR_SET_PDEATHSIG = 1  # prctl(2)
_LIBC = None  # loaded in the parent: a child between fork and exec should import nothing


def _group_leader() -> None:
    """In a cluster process before its exec: a process group of its own (:meth:`ClusterProcesses._end`
    kills the group: a nanny and its worker)."""
    os.setpgrp()


def _start_new_group():
    """The ``preexec_fn`` of a cluster process: :func:`_group_leader`, and on Linux, when the main thread
    starts it, SIGKILL when that thread ends (the parent-death signal), so a test run killed outright
    leaves no scheduler or nanny behind; a nanny's worker ends with its nanny (distributed's workers
    watch their parent). A process started by another thread (a scheduler restarted from a test's
    timer) would end with that thread, so it only leads its group."""
    global _LIBC
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return _group_leader
    if _LIBC is None:
        import ctypes

        _LIBC = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def leader_ending_with_its_parent() -> None:
        os.setpgrp()
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent ended before the signal was asked for
            os._exit(1)

    return leader_ending_with_its_parent


class ClusterProcesses:
    """A scheduler process and ``n_workers`` single-threaded worker processes (each under a nanny
    that restarts it, as ``dask worker`` runs by default, unless ``nanny`` is off)."""

    def __init__(self, n_workers: int, env: dict | None = None, nanny: bool = True):
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.n_workers = n_workers
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False", **(env or {})}
        self._options = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self.scheduler = self._start_scheduler()
        self.nanny = nanny
        self.workers = [self._start_worker() for _ in range(n_workers)]

    def _start_scheduler(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                 "--port", str(self.port), "--dashboard-address", ":0", "--no-show"],
                                preexec_fn=_start_new_group(), **self._options)

    def _start_worker(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads", "1",
                                 "--no-dashboard", "--host", "127.0.0.1", *([] if self.nanny else ["--no-nanny"])],
                                preexec_fn=_start_new_group(), **self._options)

    def wait_for_workers(self, n: int | None = None) -> None:
        """Until ``n`` (default: all) workers are connected (:func:`wait_for_workers`: bounded by the
        machine's speed, ended early by a process that ended): starting a worker process takes
        seconds on a quiet machine, over a minute at a load of 30 on 2 cores."""
        wait_for_workers(self.address, self.n_workers if n is None else n, [self.scheduler, *self.workers])

    def kill_scheduler(self) -> None:
        """SIGKILL the scheduler, as a lost machine would end it: no goodbye to anyone."""
        self.scheduler.kill()
        self.scheduler.wait()

    def restart_scheduler(self, seconds: float = 300) -> None:
        """A new scheduler on the same address (the old one killed first if it still runs), once it
        listens there: started again while it ends at once (the port may linger for a moment), within
        ``seconds``."""
        if self.scheduler.poll() is None:
            self.kill_scheduler()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.scheduler = self._start_scheduler()
            while self.scheduler.poll() is None and time.monotonic() < deadline:
                if self._listening():
                    return
                time.sleep(0.05)
        raise RuntimeError(f"cannot start a scheduler on {self.address} again within {seconds:g} s")

    def _listening(self) -> bool:
        """Whether something accepts a TCP connection at the scheduler's port."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def restart(self) -> None:
        """A new scheduler on the same address and new workers, as a deployment brings a lost
        scheduler back (a ``dask worker`` ends when its scheduler is lost: it does not reconnect)."""
        self.restart_scheduler()
        self._end(self.workers)
        self.workers = [self._start_worker() for _ in range(self.n_workers)]
        self.wait_for_workers()

    def pause_scheduler(self, stopped: bool = True) -> None:
        """SIGSTOP the scheduler (it keeps its sockets and answers nothing), or SIGCONT it."""
        os.kill(self.scheduler.pid, signal.SIGSTOP if stopped else signal.SIGCONT)

    def pause_workers(self, stopped: bool = True) -> None:
        """SIGSTOP every worker and its nanny (they keep their sockets, answer nothing and send no
        heartbeat; the scheduler lists them until its ``worker-ttl``), or SIGCONT them."""
        for worker in self.workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGSTOP if stopped else signal.SIGCONT)

    def close(self) -> None:
        """End every process, stopped ones too (:meth:`_end`)."""
        self._end([self.scheduler, *self.workers])

    @staticmethod
    def _end(procs: list) -> None:
        """SIGKILL each process's group (the process, and a nanny's worker, in its nanny's group; a
        stopped process ends too) and reap the processes. A test's cluster holds nothing to keep: a graceful
        SIGTERM close, the workers saying goodbye to a scheduler closing beside them, took 8 s a
        cluster on a quiet 2-core machine, and longer under load."""
        for p in procs:
            try:  # the group even when its leader ended: a nanny killed by a test leaves its worker
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:  # nothing of the group is left
                pass
        for p in procs:
            p.wait()


@contextmanager
def cluster_processes(n_workers: int = 2, env: dict | None = None, nanny: bool = True) -> Iterator[ClusterProcesses]:
    """Yield the :class:`ClusterProcesses` of a scheduler with ``n_workers`` workers once they are
    all connected, started with ``env`` added to this process's environment; every process is
    ended on leaving."""
    procs = ClusterProcesses(n_workers, env=env, nanny=nanny)
    try:
        procs.wait_for_workers()
        yield procs
    finally:
        procs.close()


@contextmanager
def scheduler_and_workers(n_workers: int = 2, env: dict | None = None, nanny: bool = True) -> Iterator[str]:
    """Yield the address of a scheduler with ``n_workers`` workers (:func:`cluster_processes`)."""
    with cluster_processes(n_workers, env=env, nanny=nanny) as procs:
        yield procs.address



class KillAtLevel(Progress):
    """A progress sink that SIGKILLs one worker process of ``client``'s cluster when the pass
    ``label`` ("level 2") starts (its nanny starts a new one); ``killed`` says it did."""

    def __init__(self, client, label: str):
        super().__init__(enabled=False)
        self.client, self.label, self.killed = client, label, False

    def start(self, label, total):
        super().start(label, total)
        if label == self.label and not self.killed:
            from ..engine.waits import answered, workers_of

            victim = sorted(workers_of(self.client))[0]  # bounded, as every call to the cluster here
            pid = answered(lambda: self.client.run(os.getpid, workers=[victim]))[victim]
            os.kill(pid, signal.SIGKILL)
            self.killed = True
