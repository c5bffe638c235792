"""Kept-alive HTTPS to the API server (nvcregen.rehearse.keepalive).

Found rehearsing the 16-node trainer copy: a new connection and TLS handshake per request
made kube-apiserver the busiest process of the twin. Served here by a loopback HTTPS
server with the run's own certificates (`pki.make_credentials`).
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nvcregen.rehearse.keepalive import Connections
from nvcregen.rehearse.pki import make_credentials


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def do_GET(self) -> None:
        body = f"{self.path} {id(self.connection)}".encode()
        self.send_response(404 if self.path == "/missing" else 200)
        if self.path == "/close":  # says so: `Connection: close`
            self.send_header("Connection", "close")
        if self.path == "/drop":  # closes after answering without saying so (an idle timeout)
            self.close_connection = True
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, ThreadingHTTPServer]]:
    credentials = make_credentials(tmp_path, {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(credentials.cert, credentials.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}", credentials.ca, server
    server.shutdown()
    server.server_close()


def test_requests_share_one_connection_per_thread(
    served: tuple[str, Path, ThreadingHTTPServer],
) -> None:
    url, ca, _ = served
    connections = Connections(url, ca)
    answers = [connections.send("GET", f"/n{i}", None, {}, 5.0) for i in range(5)]
    assert [code for code, _ in answers] == [200] * 5
    assert len({raw.split()[1] for _, raw in answers}) == 1  # one server-side socket
    assert connections.opened == 1
    assert connections.send("GET", "/missing", None, {}, 5.0)[0] == 404  # any status answered
    other: list[int] = []
    thread = threading.Thread(
        target=lambda: other.append(connections.send("GET", "/t", None, {}, 5.0)[0])
    )
    thread.start()
    thread.join()
    assert other == [200] and connections.opened == 2  # a thread of its own


def test_a_connection_the_server_closed_is_replaced(
    served: tuple[str, Path, ThreadingHTTPServer],
) -> None:
    url, ca, _ = served
    connections = Connections(url, ca)
    assert connections.send("GET", "/close", None, {}, 5.0)[0] == 200
    assert getattr(connections._local, "connection", None) is None  # dropped at once
    assert connections.send("GET", "/after", None, {}, 5.0)[0] == 200
    assert connections.opened == 2


def test_a_stale_reused_connection_is_retried_once_on_a_new_one(
    served: tuple[str, Path, ThreadingHTTPServer],
) -> None:
    url, ca, _ = served
    connections = Connections(url, ca)
    assert connections.send("GET", "/drop", None, {}, 5.0)[0] == 200
    assert connections._local.connection is not None  # kept: the server said nothing
    assert connections.send("GET", "/two", None, {}, 5.0)[0] == 200
    assert connections.opened == 2


def test_a_refused_fresh_connection_raises(tmp_path: Path) -> None:
    credentials = make_credentials(tmp_path, {})
    with socket.socket() as unused:  # bound, not listening: a connection is refused
        unused.bind(("127.0.0.1", 0))
        connections = Connections(f"https://127.0.0.1:{unused.getsockname()[1]}", credentials.ca)
        with pytest.raises(OSError):
            connections.send("GET", "/", None, {}, 2.0)
    assert connections.opened == 1
