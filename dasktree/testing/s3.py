"""A real S3-protocol server for tests and benchmarks: moto's server on a free port of 127.0.0.1."""

from __future__ import annotations

import socket
from contextlib import contextmanager
from typing import Iterator

__all__ = ["s3_server"]


@contextmanager
def s3_server() -> Iterator[str]:
    """moto's threaded S3 server on a free loopback port; yields its endpoint URL and stops it after.
    Needs ``moto[server]`` (the ``test`` extra)."""
    from moto import server as moto_server

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
