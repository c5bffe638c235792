"""`make bench`'s fleet part (tools/bench_fleet.py): a missed goal or a failing command
fails the bench instead of printing MISSED and exiting 0."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tools import bench_fleet


@pytest.mark.parametrize("met", [True, False])
def test_the_fleet_bench_exits_non_zero_when_a_goal_is_missed(
    monkeypatch: pytest.MonkeyPatch, met: bool
) -> None:
    monkeypatch.setattr(bench_fleet, "run_fleet", lambda *_: met)
    monkeypatch.setattr(sys, "argv", ["bench_fleet", "--sizes", "64"])
    if met:
        bench_fleet.main()
        return
    with pytest.raises(SystemExit) as stopped:
        bench_fleet.main()
    assert stopped.value.code == 1


@pytest.mark.parametrize("code", [1, 2])
def test_a_command_that_found_problems_is_not_timed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: int
) -> None:
    """check or plan exiting 1 (findings) would time a failing command: refused."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho problems >&2\nexit {code}\n", "utf-8")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    with pytest.raises(SystemExit, match="problems"):
        bench_fleet.measured(tmp_path, "check", "out-1")


def test_a_clean_command_is_timed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 0\n", "utf-8")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    sample = bench_fleet.measured(tmp_path, "plan", "x.yaml")
    assert sample.seconds > 0 and sample.peak_bytes > 0
