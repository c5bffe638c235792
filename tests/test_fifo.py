"""A FIFO (or socket) left in `out/<site>/` is refused, never opened (issue 19).

Opening a FIFO for reading waits for a writer: `render` hung until killed, in the text
printer that quotes the line a diagnostic names, and `check` and `render --check` hung
reading the tree. Each command runs as a process under a timeout, with a real FIFO.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # nvcregen processes against FIFOs and sockets

ROOT = Path(__file__).resolve().parent.parent
SITE = "l20-pool"
# a file render writes (listed in index.json), one it does not, and the index itself
LISTED = next((ROOT / "out" / SITE).glob("readiness/01-*/certification-*.yaml"))
PLACES = ("stray.yaml", "index.json", LISTED.relative_to(ROOT / "out" / SITE).as_posix())
TIMEOUT = 120  # seconds: a hang is a failure, not a stuck test run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with the l20-pool site and its committed output."""
    (tmp_path / "sites").mkdir()
    shutil.copyfile(ROOT / "sites" / f"{SITE}.yaml", tmp_path / "sites" / f"{SITE}.yaml")
    shutil.copytree(ROOT / "out" / SITE, tmp_path / "out" / SITE)
    return tmp_path


def nvcregen(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nvcregen", *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT,
    )


def fifo_at(project: Path, place: str) -> Path:
    path = project / "out" / SITE / place
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder`: a regular file's bytes, else its kind (never opened)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else "other"
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("place", PLACES)
def test_render_refuses_a_fifo_in_the_site_folder_and_writes_nothing(
    project: Path, place: str
) -> None:
    fifo = fifo_at(project, place)
    before = snapshot(project)
    done = nvcregen(project, "render", f"sites/{SITE}.yaml")
    assert done.returncode == 2, done.stderr
    assert (
        f"out/{SITE}/{place}:1:1: error[NVC511]: this is a FIFO, not a regular file: nvcregen "
        "never opens one (reading a FIFO waits for a writer forever); refusing to replace the "
        "folder\n"
    ) in done.stderr
    assert "hint: remove it or move it out of the output folder" in done.stderr
    assert snapshot(project) == before  # nothing written, the FIFO kept
    assert fifo.is_fifo()


@pytest.mark.parametrize("place", PLACES)
def test_check_and_render_check_of_a_tree_with_a_fifo_end(project: Path, place: str) -> None:
    fifo_at(project, place)
    before = snapshot(project)
    checked = nvcregen(project, "check", "out")
    assert checked.returncode == 1, checked.stderr
    assert (
        f"out/{SITE}/{place}:1:1: error[NVC511]: this is a FIFO, not a regular file"
    ) in checked.stderr
    assert "nvcregen check does not read it" in checked.stderr
    drift = nvcregen(project, "render", "--check", f"sites/{SITE}.yaml")
    assert drift.returncode == 1, drift.stderr  # it differs from what render writes
    assert f"out/{SITE}/{place}" in drift.stdout + drift.stderr
    assert snapshot(project) == before


def test_render_refuses_a_socket_too(project: Path) -> None:
    path = project / "out" / SITE / "s.yaml"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
    except OSError:  # a path too long for a socket address here
        pytest.skip("socket path too long")
    try:
        done = nvcregen(project, "render", f"sites/{SITE}.yaml")
    finally:
        server.close()
    assert done.returncode == 2, done.stderr
    assert f"out/{SITE}/s.yaml:1:1: error[NVC511]: this is a socket, not a regular file" in (
        done.stderr
    )
