"""A killed `collect` leaves `.<run>.tmp-<pid>` behind; the next one removes what it can
prove is a collection's own (issue #20): the marker it writes first, this host, and a
process that is gone. Everything else in the site folder is left as it is.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from nvcregen.results.archive import MARKER, build_archive, write_archive

ROOT = Path(__file__).resolve().parents[3]
TEXTS = dict.fromkeys(("summary.json", "bandwidth.csv", "verdicts.json", "provenance.json"), "{}\n")
KILLED = """
import os, signal, sys
from pathlib import Path
import nvcregen.results.archive as archive

real, written = archive._write_file, []
def dying(file, data):
    real(file, data)
    written.append(file)
    if len(written) == 3:  # the marker and two files: killed midway
        os.kill(os.getpid(), signal.SIGKILL)
archive._write_file = dying
names = ("summary.json", "bandwidth.csv", "verdicts.json", "provenance.json")
texts = dict.fromkeys(names, "{}\\n")
archive.write_archive(Path(sys.argv[1]), archive.build_archive("undated-0123456789ab", [], texts))
"""


def killed_collect(site: Path) -> Path:
    """Run a collection's archive writer in a process killed midway; its leftover folder."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", KILLED, str(site)], check=False, env=env)
    assert done.returncode == -9
    [left] = [p for p in site.iterdir() if p.name.startswith(".")]
    return left


def test_a_killed_collections_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    site = tmp_path / "lab"
    left = killed_collect(site)
    assert (left / MARKER).is_file()
    written = write_archive(site, build_archive("undated-0123456789ab", [], TEXTS))
    assert not left.exists()
    assert written.verified and not (written.path / MARKER).exists()
    assert written.notes == [
        f"NVC728: removed {left.name}/, left by a collection that was killed"
        f" (pid {left.name.rsplit('-', 1)[1]})"
    ]


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return int(done.stdout)


@pytest.mark.parametrize("case", ["no marker", "live process", "other host", "link", "marker link"])
def test_a_folder_not_provably_a_dead_collections_is_left(tmp_path: Path, case: str) -> None:
    site = tmp_path / "lab"
    site.mkdir()
    pid = os.getppid() if case == "live process" else _dead_pid()
    left = site / f".undated-000000000000.tmp-{pid}"
    host = "elsewhere" if case == "other host" else socket.gethostname()
    text = f"nvcregen collect pid {pid} host {host}\n"
    if case == "link":
        target = tmp_path / "target"
        target.mkdir()
        (target / MARKER).write_text(text)
        left.symlink_to(target, target_is_directory=True)
    else:
        left.mkdir()
        (left / "keep.txt").write_text("someone's\n")
        if case == "marker link":
            (tmp_path / "marker").write_text(text)
            (left / MARKER).symlink_to(tmp_path / "marker")
        elif case != "no marker":
            (left / MARKER).write_text(text)
    written = write_archive(site, build_archive("undated-0123456789ab", [], TEXTS))
    assert written.notes == []
    assert left.is_symlink() if case == "link" else (left / "keep.txt").is_file()
