"""Files written outside out/ on a full disk, a read-only folder or a link: exit 2, NVC758.

`export metrics --out`, `inventory -o`, `report --out` and `init` write through one atomic
writer (`core/atomicfile.py`); until issue #32 the first two ended in exit 70 on a full or
read-only filesystem, and `export metrics --out` left a truncated file in place of the old
one and wrote through a symbolic link.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from reportfactory import sample_run

from nvcregen.cli import main
from nvcregen.core.errors import ExitCode
from tools.fleet_nodes import fleet

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # chmod does not stop root
Command = Callable[[Path, Path], list[str]]


def names(folder: Path) -> list[str]:
    """What a folder holds, by name, sorted."""
    return sorted(p.name for p in folder.iterdir())


def export_metrics(tmp: Path, target: Path) -> list[str]:
    run = sample_run(tmp / "results")
    return ["export", "metrics", str(run), "--cluster", "lab", "--out", str(target)]


def inventory(tmp: Path, target: Path) -> list[str]:
    export = tmp / "nodes.json"
    export.write_text(json.dumps(fleet(4, 2)))
    return ["inventory", "--from", str(export), "-o", str(target)]


def report(tmp: Path, target: Path) -> list[str]:
    run = sample_run(tmp / "results")
    return ["report", str(run), "--out", str(target.parent)]


COMMANDS: dict[str, Command] = {
    "export-metrics": export_metrics,
    "inventory": inventory,
    "report": report,
}


def target_of(name: str, folder: Path) -> Path:
    return folder / ("index.html" if name == "report" else "out.txt")


def invoke(args: list[str]) -> Result:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_full_disk_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    folder = tmp_path / "dest"
    folder.mkdir()
    target = target_of(name, folder)
    target.write_text("old\n")
    args = COMMANDS[name](tmp_path, target)

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    result = invoke(args)
    monkeypatch.undo()
    assert result.exit_code == ExitCode.INVALID, result.output
    assert "error[NVC758]" in result.stderr
    assert "No space left on device (ENOSPC); the old file is unchanged" in result.stderr
    assert "hint: free space" in result.stderr
    assert target.read_text() == "old\n"
    assert not [p for p in names(folder) if p.endswith(".tmp")]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_symbolic_link_at_the_target_is_refused(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "dest"
    folder.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    target = target_of(name, folder)
    target.symlink_to(victim)
    result = invoke(COMMANDS[name](tmp_path, target))
    assert result.exit_code == ExitCode.INVALID, result.output
    assert "error[NVC758]" in result.stderr and "is a symbolic link" in result.stderr
    assert victim.read_text() == "keep\n" and target.is_symlink()


@pytest.mark.skipif(AS_ROOT, reason="root writes into a folder chmod made read-only")
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_read_only_folder_is_exit_2(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "dest"
    folder.mkdir()
    target = target_of(name, folder)
    target.write_text("old\n")
    args = COMMANDS[name](tmp_path, target)
    folder.chmod(0o555)
    try:
        result = invoke(args)
    finally:
        folder.chmod(0o755)
    assert result.exit_code == ExitCode.INVALID, result.output
    assert "error[NVC758]" in result.stderr and "(EACCES)" in result.stderr
    assert target.read_text() == "old\n"


def test_init_on_a_full_disk_writes_no_starter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    result = invoke(["init", "--model", "H20", "--name", "lab"])
    monkeypatch.undo()
    assert result.exit_code == ExitCode.INVALID
    assert "error[NVC758]" in result.stderr and "nothing was written" in result.stderr
    assert names(tmp_path / "sites") == []


def test_init_refuses_a_dangling_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "lab.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    result = invoke(["init", "--model", "H20", "--name", "lab"])
    assert result.exit_code == ExitCode.INVALID
    assert "error[NVC758]" in result.stderr and "is a symbolic link" in result.stderr
    assert not (tmp_path / "elsewhere.yaml").exists()
