"""A fault-injecting HTTP proxy in front of the real kube-apiserver (tests/kubecontrolplane.py).

The client talks plain HTTP to the proxy on 127.0.0.1; the proxy forwards each request,
headers and body unchanged, to the API server over TLS, and hands back its answer, unless
a scripted `Fault` for that request says otherwise:

- `code`: answer this status (a kube-apiserver `Status` body) instead of forwarding;
- `delay`: wait this long before forwarding (past the client's read timeout: a timeout);
- `drop`: forward, then leave out that many items of a LIST answer and its continue
  token, keeping or removing `remainingItemCount` (`keep_remaining`): a list cut short;
- `before`: run this first (e.g. change the object between collect's LIST and DELETE);
  if it raises, the error is kept in `Proxy.errors` (the `through` fixture fails on it).

A fault matches by method and by the resource's plural as a path segment (`*`: any); it
applies `times` times. Every request is recorded as (method, path).
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from kubecontrolplane import ControlPlane

FORWARDED = ("Authorization", "Content-Type", "Accept")


@dataclass
class Fault:
    """One scripted misbehaviour."""

    plural: str
    method: str = "GET"
    code: int = 0
    delay: float = 0.0
    drop: int = 0
    keep_remaining: bool = False
    before: Callable[[], None] | None = None
    times: int = 1
    on_continue: bool = False

    def matches(self, method: str, path: str) -> bool:
        """Whether a request is this fault's: its method, the plural in its path, and
        (`on_continue`) a continue token, i.e. a later page of a LIST."""
        url = urlsplit(path)
        if self.on_continue and "continue=" not in url.query:
            return False
        plural = self.plural == "*" or self.plural in url.path.split("/")
        return self.times > 0 and method == self.method and plural


@dataclass
class Proxy:
    """The faults still to apply, and every request seen."""

    plane: ControlPlane
    url: str = ""
    faults: list[Fault] = field(default_factory=list)
    seen: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, method: str, path: str) -> Fault | None:
        """The first matching fault, counted as used once."""
        with self.lock:
            self.seen.append((method, path))
            for fault in self.faults:
                if fault.matches(method, path):
                    fault.times -= 1
                    return fault
        return None

    def deletes(self) -> list[str]:
        """The paths of the DELETE requests seen."""
        return [path for method, path in self.seen if method == "DELETE"]


def _status(code: int) -> bytes:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"injected by the test proxy (HTTP {code})",
        "reason": "InternalError" if code >= 500 else "TooManyRequests",
        "code": code,
    }
    return json.dumps(body).encode()


def _cut(raw: bytes, fault: Fault) -> bytes:
    """A LIST answer with `fault.drop` items and its continue token left out."""
    body = json.loads(raw)
    if isinstance(body.get("items"), list):
        body["items"] = body["items"][: max(len(body["items"]) - fault.drop, 0)]
        meta = body.setdefault("metadata", {})
        meta.pop("continue", None)
        if not fault.keep_remaining:
            meta.pop("remainingItemCount", None)
    return json.dumps(body).encode()


class _Server(ThreadingHTTPServer):
    proxy: Proxy
    context: ssl.SSLContext
    upstream: tuple[str, int]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def do_PUT(self) -> None:
        self._forward()

    def do_PATCH(self) -> None:
        self._forward()

    def do_DELETE(self) -> None:
        self._forward()

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        fault = self.server.proxy.take(self.command, self.path)
        if fault is not None and fault.before is not None:
            try:
                fault.before()
            except Exception as exc:  # the test's own step failed: say so, answer 599
                self.server.proxy.errors.append(repr(exc))
                self._answer(599, _status(599), "application/json")
                return
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.code:
            self._answer(fault.code, _status(fault.code), "application/json")
            return
        host, port = self.server.upstream
        connection = http.client.HTTPSConnection(
            host, port, context=self.server.context, timeout=60
        )
        headers = {k: v for k in FORWARDED if (v := self.headers.get(k)) is not None}
        try:
            connection.request(self.command, self.path, body=body, headers=headers)
            answer = connection.getresponse()
            raw = answer.read()
            kind = answer.getheader("Content-Type", "application/json")
            code = answer.status
        finally:
            connection.close()
        if fault is not None and fault.drop and code == 200:
            raw = _cut(raw, fault)
        self._answer(code, raw, kind)

    def _answer(self, code: int, raw: bytes, kind: str) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and went away

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


@contextmanager
def proxy(plane: ControlPlane) -> Iterator[Proxy]:
    """Run a proxy to `plane` on 127.0.0.1 (a free port) for the duration of a test."""
    state = Proxy(plane)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.proxy = state
    server.context = ssl.create_default_context(cafile=str(plane.credentials.ca))
    upstream = urlsplit(plane.url)
    server.upstream = (str(upstream.hostname), int(upstream.port or 443))
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
