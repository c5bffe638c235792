"""`make bench`'s rehearsal part (tools/bench_rehearse.py): its pure figures and its skip."""

from __future__ import annotations

from typing import Any

import pytest

from tools import bench_rehearse
from tools.bench_rehearse import Rehearsed, admission_rate, sizes, table


def step(admitted: Any, first: Any, last: Any) -> dict[str, Any]:
    observed = {"admitted": admitted, "first_admission_s": first, "last_admission_s": last}
    return {"observed": observed}


def test_admissions_per_second_are_counted_within_each_step() -> None:
    report = {
        "steps": [
            step(0, None, None),  # a step without runs
            step(1, 5.0, 5.0),  # one run: no pace to read
            step(8, 10.0, 45.0),  # 7 after the first in 35 s
            step(8, 100.0, 135.0),  # the gap between steps is the plan's gating
        ]
    }
    admitted, rate = admission_rate(report)
    assert admitted == 17
    assert rate == pytest.approx(14 / 70)


def test_an_admission_rate_of_a_hostile_or_empty_report_is_zero() -> None:
    assert admission_rate({}) == (0, 0.0)
    assert admission_rate({"steps": "x"}) == (0, 0.0)
    assert admission_rate({"steps": [1, {"observed": []}, step(True, 0, 1)]}) == (0, 0.0)
    assert admission_rate({"steps": [step(2, "0", 1.0)]}) == (2, 0.0)
    assert admission_rate({"steps": [step(2, 3.0, 3.0)]}) == (2, 0.0)  # same moment


def test_the_table_gives_ratios_against_the_smallest_size() -> None:
    rows = [
        Rehearsed(16, 180.0, 20.0, 30, 30, 0.2, True),
        Rehearsed(64, 540.0, 25.0, 102, 100, 0.1, False),
    ]
    lines = table(rows)
    assert "1.00x" in lines[1] and "yes (30/30 admitted)" in lines[1]
    assert "3.00x" in lines[2] and "1.25x" in lines[2] and "0.50x" in lines[2]
    assert lines[2].endswith("NO (100/102 admitted)")


def test_sizes_come_from_the_flag_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bench_rehearse.ENV, raising=False)
    assert sizes(None) == (16, 64)
    monkeypatch.setenv(bench_rehearse.ENV, "16,64,256,1024")
    assert sizes(None) == (16, 64, 256, 1024)
    assert sizes("8") == (8,)


def test_without_the_twin_the_section_is_one_skipped_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("nvcregen.rehearse.locate.missing", lambda: "the twin is not built")
    monkeypatch.setattr(bench_rehearse, "rehearse", lambda *_: pytest.fail("rehearsed"))
    bench_rehearse.main(["--sizes", "16"])
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == "skipped: the twin is not built"
