"""Reading and checking on several cores gives exactly the serial results, in order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nvcregen.check import parallel
from nvcregen.core import forked

OUT = Path(__file__).resolve().parents[3] / "out"


def test_parallel_results_equal_serial_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(OUT.rglob("*.yaml"))
    broken = tmp_path / "broken.yaml"
    broken.write_text(files[0].read_text().replace("metadata:", "metadata:\n  bogus: 1", 1))
    not_yaml = tmp_path / "not.yaml"
    not_yaml.write_text("a: [unclosed\n")
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    shutil.copy(files[1], tmp_path / "same.yaml")
    paths = [*files, broken, not_yaml, listed, *files]
    jobs = [parallel.FileJob(p, "1.30") for p in paths]
    serial = [parallel.check_file(job) for job in jobs]
    monkeypatch.setattr(forked, "FORK_FROM", 2)
    assert parallel.check_files(jobs) == serial
    by_path = dict(zip(paths, serial, strict=False))
    assert by_path[broken].findings, "the broken object must produce findings"
    assert by_path[not_yaml].data is None
    assert by_path[listed].data == ["a", "b"]
    assert by_path[listed].findings == []
