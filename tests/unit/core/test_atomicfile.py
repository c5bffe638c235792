"""The one writer of files outside out/: whole or not at all, never through a link (issue #32)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from nvcregen.core.atomicfile import FileWriteError, write_file

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # chmod does not stop root


def names(folder: Path) -> list[str]:
    """What a folder holds, by name, sorted."""
    return sorted(p.name for p in folder.iterdir())


def test_a_file_is_written_and_replaced_with_nothing_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "m.om"
    assert write_file(target, "first\n") == target
    write_file(target, b"second\n")
    assert target.read_bytes() == b"second\n"
    assert names(tmp_path) == ["m.om"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()  # as any new file


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_full_disk_keeps_the_old_file_and_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "m.om"
    target.write_text("old\n")
    written: list[int] = []

    def full(fd: int, data: bytes) -> int:
        if written:  # the first block goes, then the disk is full: a truncated temporary
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(len(data))
        return real(fd, bytes(data)[:3])

    real = os.write
    monkeypatch.setattr(os, "write", full)
    with pytest.raises(FileWriteError) as raised:
        write_file(target, "x" * 100)
    assert target.read_text() == "old\n"
    assert names(tmp_path) == ["m.om"]
    assert raised.value.code == "NVC758"
    assert "No space left on device (ENOSPC); the old file is unchanged" in str(raised.value)
    assert "free space" in raised.value.hint


def test_a_failed_fsync_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "m.om"
    target.write_text("old\n")

    def fails(fd: int) -> None:
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(os, "fsync", fails)
    with pytest.raises(FileWriteError, match="Disk quota exceeded"):
        write_file(target, "new\n")
    assert target.read_text() == "old\n"
    assert names(tmp_path) == ["m.om"]


def test_writes_go_through_os_write_in_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short write is continued, not taken for the whole file."""
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data)[:7]))
    write_file(tmp_path / "f", "0123456789" * 5)
    assert (tmp_path / "f").read_text() == "0123456789" * 5


@pytest.mark.skipif(AS_ROOT, reason="root writes into a folder chmod made read-only")
def test_a_read_only_folder_is_an_error_with_a_hint(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "m.om").write_text("old\n")
    folder.chmod(0o555)
    try:
        with pytest.raises(FileWriteError) as raised:
            write_file(folder / "m.om", "new\n")
    finally:
        folder.chmod(0o755)
    assert "Permission denied (EACCES); the old file is unchanged" in str(raised.value)
    assert "a folder you may write to" in raised.value.hint
    assert (folder / "m.om").read_text() == "old\n"
    assert names(folder) == ["m.om"]


def test_a_symbolic_link_at_the_target_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    link = tmp_path / "m.om"
    link.symlink_to(victim)
    for replace in (True, False):
        with pytest.raises(FileWriteError, match="is a symbolic link") as raised:
            write_file(link, "new\n", replace=replace)
        assert raised.value.code == "NVC758"
    assert victim.read_text() == "keep\n" and link.is_symlink()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileWriteError, match="is a symbolic link"):
        write_file(dangling, "new\n", replace=False)
    assert not (tmp_path / "nowhere").exists()
    assert sorted(names(tmp_path)) == ["dangling", "m.om", "victim"]


def test_a_link_made_while_writing_is_replaced_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    target = tmp_path / "m.om"
    real = os.fsync

    def swap_in_a_link(fd: int) -> None:
        real(fd)
        if not target.is_symlink():
            target.symlink_to(victim)

    monkeypatch.setattr(os, "fsync", swap_in_a_link)
    write_file(target, "new\n")
    assert victim.read_text() == "keep\n"
    assert not target.is_symlink() and target.read_text() == "new\n"


def test_a_folder_or_fifo_at_the_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(FileWriteError, match="this is a folder, not a regular file"):
        write_file(tmp_path / "d", "x")
    os.mkfifo(tmp_path / "p")
    with pytest.raises(FileWriteError, match="this is a FIFO, not a regular file"):
        write_file(tmp_path / "p", "x")


def test_without_replace_an_existing_file_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "site.yaml"
    write_file(target, "first\n", replace=False)
    with pytest.raises(FileExistsError):
        write_file(target, "second\n", replace=False)
    assert target.read_text() == "first\n"
    assert names(tmp_path) == ["site.yaml"]


def test_without_replace_a_file_made_meanwhile_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "site.yaml"
    real = os.fsync

    def someone_writes(fd: int) -> None:
        real(fd)
        target.write_text("theirs\n")

    monkeypatch.setattr(os, "fsync", someone_writes)
    with pytest.raises(FileExistsError):
        write_file(target, "mine\n", replace=False)
    assert target.read_text() == "theirs\n"
    assert names(tmp_path) == ["site.yaml"]


def test_a_missing_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(FileWriteError, match=r"No such file or directory \(ENOENT\)"):
        write_file(tmp_path / "missing" / "f", "x")
    (tmp_path / "file").write_text("")
    with pytest.raises(FileWriteError, match=r"\(ENOTDIR\); nothing was written"):
        write_file(tmp_path / "file" / "f", "x")


def test_a_read_only_filesystem_is_an_error_with_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EROFS as a read-only mount gives it (root's chmod test above is skipped)."""
    target = tmp_path / "m.om"
    target.write_text("old\n")
    real = os.open

    def read_only(path: str, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, flags, mode)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(FileWriteError) as raised:
        write_file(target, "new\n")
    assert "Read-only file system (EROFS); the old file is unchanged" in str(raised.value)
    assert "a folder you may write to" in raised.value.hint
    assert target.read_text() == "old\n" and names(tmp_path) == ["m.om"]
