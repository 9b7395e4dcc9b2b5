"""An HTTP proxy that injects an object store's faults in front of a real S3-protocol server.

For the storage fault tests: the client (s3fs) talks to :attr:`FaultyProxy.endpoint`;
every request is forwarded to ``upstream`` (moto's server on 127.0.0.1) unchanged,
unless a fault is armed for it:

- :meth:`FaultyProxy.fail` answers the next ``n`` requests of a method with
  ``status`` and an S3 error body (503 ``SlowDown``: throttling; 500
  ``InternalError``), as a store under load does for a while;
- :meth:`FaultyProxy.down` answers every request with 503 until let up, as a store
  that is down does.

Counts of requests seen and faults answered are kept (:attr:`seen`, :attr:`faulted`).
"""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FaultyProxy"]

_ERROR = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
          '<RequestId>dasktree-fault</RequestId></Error>')
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


class FaultyProxy:
    """A proxy on 127.0.0.1 (any free port) in front of ``upstream`` (``http://host:port``)."""

    def __init__(self, upstream: str):
        parsed = urllib.parse.urlsplit(upstream)
        self._upstream = (parsed.hostname, parsed.port)
        self._lock = threading.Lock()
        self._plan: dict[str, list] = {}  # method -> [remaining, status, code, match]
        self._down: str | None = None  # while down: the part of a path that is answered 503
        self.seen: dict[str, int] = {}
        self.faulted = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="faulty-store")
        self._thread.start()

    def fail(self, n: int, status: int = 503, code: str = "SlowDown", method: str = "GET", match: str = "") -> None:
        """Answer the next ``n`` requests of ``method`` whose path holds ``match`` with ``status`` and
        S3 error ``code``."""
        with self._lock:
            self._plan[method] = [n, status, code, match]

    def down(self, is_down: bool = True, match: str = "") -> None:
        """Answer every request whose path holds ``match`` with 503 (``ServiceUnavailable``) until
        ``down(False)``."""
        with self._lock:
            self._down = match if is_down else None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FaultyProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _fault_for(self, method: str, path: str) -> tuple[int, str] | None:
        with self._lock:
            self.seen[method] = self.seen.get(method, 0) + 1
            if self._down is not None and self._down in path:
                self.faulted += 1
                return 503, "ServiceUnavailable"
            plan = self._plan.get(method)
            if plan and plan[0] > 0 and plan[3] in path:
                plan[0] -= 1
                self.faulted += 1
                return plan[1], plan[2]
        return None

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        fault = self._fault_for(request.command, request.path)
        if fault is not None:
            status, code = fault
            payload = _ERROR.format(code=code, message="injected by dasktree.testing.faulty_store").encode()
            request.send_response(status)
            request.send_header("Content-Type", "application/xml")
            request.send_header("Content-Length", str(len(payload)))
            request.end_headers()
            if request.command != "HEAD":
                request.wfile.write(payload)
            return
        upstream = http.client.HTTPConnection(*self._upstream, timeout=60)
        try:
            headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
            upstream.request(request.command, request.path, body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
            request.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in _HOP and key.lower() != "content-length":
                    request.send_header(key, value)
            request.send_header("Content-Length", str(len(data)))
            request.end_headers()
            if request.command != "HEAD":
                request.wfile.write(data)
        finally:
            upstream.close()
