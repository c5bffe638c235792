"""Child processes in process groups of their own, ended with the process that started them.

Every binary the rehearsal starts runs in a new session (Ctrl-C in a terminal reaches only
nvcregen, which stops them in order), gets SIGKILL when nvcregen dies
(`PR_SET_PDEATHSIG`: a killed nvcregen leaves nothing behind), and is stopped by
`Processes.stop`: SIGTERM to each group, newest first, then SIGKILL to what is left.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

STOP_TIMEOUT = 15.0  # seconds a process group has to end after SIGTERM
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child before exec: on Linux, get SIGKILL when the parent dies.

    SIGKILL, not SIGTERM: a kube-apiserver whose etcd is gone waits for it on SIGTERM.
    """
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Processes:
    """The processes one owner started, by name, each logging to `<folder>/<name>.log`."""

    folder: Path
    running: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: list[BinaryIO] = field(default_factory=list)

    def spawn(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `argv` as `name` in a session of its own, in the folder, its output logged.

        `env` is added to nvcregen's environment, whose `TMPDIR` and `HOME` are the
        folder's `tmp/` and `home/`: what a process writes to a temporary folder or a
        cache under its home stays in the folder.
        """
        log = (self.folder / f"{name}.log").open("wb")
        self.logs.append(log)
        scratch, home = self.folder / "tmp", self.folder / "home"
        scratch.mkdir(exist_ok=True)
        home.mkdir(exist_ok=True)
        process = subprocess.Popen(
            list(argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self.folder,
            env={**os.environ, "TMPDIR": str(scratch), "HOME": str(home), **(env or {})},
            start_new_session=True,
            preexec_fn=die_with_parent,  # noqa: PLW1509 (only prctl, before exec)
        )
        self.running[name] = process
        return process

    def exited(self, name: str) -> int | None:
        """The exit status of `name`, or None while it runs."""
        return self.running[name].poll()

    def log_tail(self, name: str, size: int = 3000) -> str:
        """The end of one process's log, for an error message."""
        path = self.folder / f"{name}.log"
        return path.read_text("utf-8", "replace")[-size:] if path.exists() else ""

    def stop(self) -> None:
        """TERM each process group (newest first), then KILL; close the logs. Idempotent."""
        for name in reversed(list(self.running)):
            stop_group(self.running.pop(name))
        while self.logs:
            self.logs.pop().close()


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """End one running process and its group: SIGTERM, then SIGKILL after STOP_TIMEOUT.

    A process that has ended (and been reaped) is left alone: its number, and so its group's,
    may belong to another process by now.
    """
    if process.poll() is not None:
        return
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
