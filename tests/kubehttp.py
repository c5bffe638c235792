"""HTTP plumbing shared by the tests' stand-ins for kube-apiserver.

The real kube-apiserver runs in tests/realserver/ (tests/kubecontrolplane.py). These
stand-ins stay for what a real server cannot be made to answer on demand (a malformed or
hostile body, a scripted Retry-After, an exact request sequence to assert), and for fast
unit tests: tests drive the real `kubernetes` client against small HTTP servers
(`http.server` on 127.0.0.1, a random port, in a thread). This module runs such a server
for an app that answers one request at a time; each app
(`tests/unit/cluster/fakeapi.py`, `tests/unit/collect/fakelist.py`) speaks exactly the
calls its code under test makes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit


def status(
    code: int, reason: str, message: str, causes: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    """A `Status` failure body as kube-apiserver writes it."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if causes is not None:
        body["details"] = {"causes": causes}
    return body


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    content_type: str
    authorization: str
    body: Any


class App(Protocol):
    """Answers one request: status, body (JSON data, or bytes sent as text) and headers."""

    def handle(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        """Answer `request`."""
        ...


class _Server(ThreadingHTTPServer):
    app: App


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _handle(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        request = Received(
            self.command,
            url.path,
            parse_qs(url.query),
            self.headers.get("Content-Type", ""),
            self.headers.get("Authorization", ""),
            json.loads(raw) if raw else None,
        )
        code, body, headers = self.server.app.handle(request)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        kind = "text/plain" if isinstance(body, bytes) else "application/json"
        try:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and went away

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@contextmanager
def serve_app(app: App) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 (a free port) for the duration of a test; yield its URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.app = app
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
