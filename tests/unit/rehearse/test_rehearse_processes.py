"""Processes in groups of their own, ended with their owner (pure of Kubernetes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nvcregen.rehearse import processes
from nvcregen.rehearse.processes import Processes

pytestmark = pytest.mark.slow  # each test spawns processes


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process group `pid` is empty within `within` seconds (an ended member
    stays a zombie until its new parent reaps it)."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_stop_ends_each_group_and_keeps_the_scratch_environment(tmp_path: Path) -> None:
    group = Processes(tmp_path)
    group.spawn("env", ["sh", "-c", 'echo "$TMPDIR $HOME"; sleep 60 & wait'])
    deadline = time.monotonic() + 10
    while not group.log_tail("env") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert group.log_tail("env").split() == [str(tmp_path / "tmp"), str(tmp_path / "home")]
    pid = group.running["env"].pid
    assert os.getpgid(pid) == pid  # a session, so a group, of its own
    group.stop()
    assert group.running == {} and gone(pid)  # the shell and its sleep


def test_a_process_ignoring_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(processes, "STOP_TIMEOUT", 0.5)
    group = Processes(tmp_path)
    process = group.spawn("stubborn", ["sh", "-c", "trap '' TERM; echo ready; sleep 60 & wait"])
    while "ready" not in group.log_tail("stubborn"):
        time.sleep(0.05)
    began = time.monotonic()
    group.stop()
    assert process.returncode == -signal.SIGKILL
    assert time.monotonic() - began < 5 and gone(process.pid)


def test_a_killed_owner_takes_its_processes_with_it(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: SIGKILL to the owner, and its process gets SIGKILL too."""
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path;"
            "from nvcregen.rehearse.processes import Processes;"
            f"p = Processes(Path({str(tmp_path)!r})).spawn('sleep', ['sleep', '60']);"
            "print(p.pid, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    assert owner.stdout is not None
    child = int(owner.stdout.readline())
    assert not gone(child, within=0)
    owner.kill()
    owner.wait()
    assert gone(child)
