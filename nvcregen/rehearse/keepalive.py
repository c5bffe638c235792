"""HTTPS to the API server over one kept-alive connection per thread.

A rehearsal sends thousands of requests (a node each, an apply per object, four lists a
poll): a new connection each, with its own TLS handshake and the CA file read into a new
SSL context, cost kube-apiserver about as much CPU as the controllers on a 2-core machine
(docs/design/0019-twin.md, "At fleet size"). The context is made once and each thread
keeps one connection (HTTP/1.1 keep-alive); a request on a reused connection the server
has closed meanwhile is sent again once on a new one (nothing was answered on it).
"""

from __future__ import annotations

import http.client
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

# What a reused connection raises when the server closed it while idle.
STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


@dataclass
class Connections:
    """Kept-alive HTTPS connections to `url`, one per thread, trusting only `ca`."""

    url: str
    ca: Path
    _local: threading.local = field(default_factory=threading.local, repr=False)
    _context: ssl.SSLContext | None = field(default=None, repr=False)
    opened: int = 0  # connections made, for the tests

    def _connection(self, timeout: float) -> tuple[http.client.HTTPSConnection, bool]:
        """The calling thread's connection, and whether it was used before."""
        found: http.client.HTTPSConnection | None = getattr(self._local, "connection", None)
        if found is not None:
            found.timeout = timeout
            if found.sock is not None:
                found.sock.settimeout(timeout)
            return found, True
        if self._context is None:
            self._context = ssl.create_default_context(cafile=str(self.ca))
        parts = urlsplit(self.url)
        made = http.client.HTTPSConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=timeout, context=self._context
        )
        self._local.connection = made
        self.opened += 1
        return made, False

    def drop(self) -> None:
        """Close this thread's connection (the next request opens a new one)."""
        found = getattr(self._local, "connection", None)
        self._local.connection = None
        if found is not None:
            found.close()

    def send(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str], timeout: float
    ) -> tuple[int, bytes]:
        """One request; its status and body (any status: the caller reads it)."""
        while True:
            connection, reused = self._connection(timeout)
            try:
                connection.request(method, path, body=data, headers=headers)
                answer = connection.getresponse()
                raw = answer.read()
            except STALE:
                self.drop()
                if reused:  # closed by the server while idle: nothing was answered
                    continue
                raise
            except BaseException:
                self.drop()
                raise
            if answer.will_close:
                self.drop()
            return answer.status, raw
