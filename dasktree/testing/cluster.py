"""A real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, for fault tests and benchmarks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator

__all__ = ["scheduler_and_workers"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def scheduler_and_workers(n_workers: int = 2, env: dict | None = None, nanny: bool = True) -> Iterator[str]:
    """Yield the address of a scheduler with ``n_workers`` single-threaded workers (each under a
    nanny that restarts it, as ``dask worker`` runs by default), started with ``env`` added to
    this process's environment; every process is ended on leaving."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False", **(env or {})}
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, preexec_fn=os.setpgrp)
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--dashboard-address", ":0", "--no-show"], **quiet)]
    try:
        for _ in range(n_workers):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                 "--no-dashboard", "--host", "127.0.0.1", *([] if nanny else ["--no-nanny"])], **quiet))
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(n_workers, timeout=60)
        yield address
    finally:
        for p in procs[::-1]:
            p.terminate()
        deadline = time.monotonic() + 30
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)  # its own process group: the nanny's worker goes with it
                p.wait()
