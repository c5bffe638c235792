"""A Git server on loopback for Flux's source-controller: `git http-backend` behind HTTP.

A Flux rehearsal commits what it applies into a bare repository in its scratch folder
(`git_repository`) and serves it read-only over Git's smart HTTP protocol on 127.0.0.1
(`GitServer`, a thread of the rehearsal's process); source-controller clones it as it
would the site's repository. Each request is handed to `git http-backend` as CGI. The
body is read by its Content-Length, bounded (`MAX_BODY`): only loopback clients reach
it, but a request is still input.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MAX_BODY = 16 * 1024 * 1024  # bytes: a fetch's negotiation is a few KiB
BACKEND_TIMEOUT_S = 60
AUTHOR = {
    "GIT_AUTHOR_NAME": "nvcregen rehearsal",
    "GIT_AUTHOR_EMAIL": "rehearsal@nvcregen.invalid",
    "GIT_COMMITTER_NAME": "nvcregen rehearsal",
    "GIT_COMMITTER_EMAIL": "rehearsal@nvcregen.invalid",
    # one commit time: the same files give the same revision on every run
    "GIT_AUTHOR_DATE": "1970-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "1970-01-01T00:00:00Z",
}


class _GitHandler(http.server.BaseHTTPRequestHandler):
    """Git's smart HTTP protocol: each request handed to `git http-backend` (CGI)."""

    server: GitServer

    def do_GET(self) -> None:
        self._backend()

    def do_POST(self) -> None:
        self._backend()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the rehearsal's output is its report."""

    def _backend(self) -> None:
        path, _, query = self.path.partition("?")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.send_error(413 if length > MAX_BODY else 400)
            return
        body = self.rfile.read(length)  # go-git (source-controller) sends a length
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type") or "",
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        done = subprocess.run(
            ["git", "http-backend"],
            input=body,
            env=env,
            capture_output=True,
            timeout=BACKEND_TIMEOUT_S,
            check=False,
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status if done.returncode == 0 else 500)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class GitServer(http.server.ThreadingHTTPServer):
    """The bare repositories under `root`, served read-only on loopback.

    Each at `http://127.0.0.1:<port>/<name>.git`, in a thread of this process.
    """

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _GitHandler)
        self.root = root
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        """The loopback port it serves on."""
        return int(self.server_address[1])

    def url(self, name: str) -> str:
        """The clone URL of repository `name`."""
        return f"http://127.0.0.1:{self.port}/{name}.git"

    def stop(self) -> None:
        """Stop serving and close the socket. Idempotent."""
        if self.thread.is_alive():
            self.shutdown()
            self.thread.join()
        self.server_close()


def git_repository(root: Path, name: str, files: Mapping[str, str]) -> str:
    """A bare repository `root/<name>.git` holding `files` (path: text); its commit.

    Branch `main`, one commit; paths are relative and stay inside the work folder.
    """
    work = root / f"{name}.work"
    for path, text in files.items():
        target = (work / path).resolve()
        if not target.is_relative_to(work.resolve()) or Path(path).is_absolute():
            raise ValueError(f"{path}: not a path inside the repository")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    env = {**os.environ, **AUTHOR, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}

    def git(*args: str, cwd: Path = work) -> str:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "--quiet", "--initial-branch=main")
    git("add", "--all")
    git("commit", "--quiet", "--message=rehearsal")
    git("clone", "--quiet", "--bare", str(work), str(root / f"{name}.git"), cwd=root)
    return git("rev-parse", "HEAD")
