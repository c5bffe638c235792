"""`core/regular.py`: a regular file is read whole; anything else is refused unopened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nvcregen.core import regular
from nvcregen.core.regular import NotRegularFileError, open_regular, read_regular

SIZES = [0, 1, regular._CHUNK - 1, regular._CHUNK, regular._CHUNK + 1, 3 * regular._CHUNK + 5]


@pytest.mark.parametrize("size", SIZES)
def test_a_file_is_read_whole_whatever_its_size(tmp_path: Path, size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    path = tmp_path / "f"
    path.write_bytes(data)
    assert read_regular(path) == data
    assert read_regular(str(path)) == data
    with open_regular(path) as handle:
        assert handle.read() == data


def test_a_file_that_grows_after_its_stat_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    real = os.fstat

    def grown(fd: int) -> os.stat_result:
        status = real(fd)
        path.write_bytes(b"y" * (regular._CHUNK * 2))  # written after its size was taken
        return status

    monkeypatch.setattr(os, "fstat", grown)
    assert read_regular(path) == b"y" * (regular._CHUNK * 2)


def test_a_link_to_a_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"data")
    (tmp_path / "link").symlink_to(tmp_path / "f")
    assert read_regular(tmp_path / "link") == b"data"


def test_a_fifo_and_a_folder_are_refused_unopened(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match="FIFO") as caught:
        read_regular(fifo)  # would wait for a writer forever if it were opened
    assert caught.value.kind == "FIFO"
    with pytest.raises(NotRegularFileError, match="folder"):
        read_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")


def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"data")
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(50):
        read_regular(path)
    assert len(list(Path("/proc/self/fd").iterdir())) == before
