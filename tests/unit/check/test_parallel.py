"""Checking on several cores gives exactly the serial results, in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcregen.check import parallel
from nvcregen.spec.fast import parse_fast

OUT = Path(__file__).resolve().parents[3] / "out"


def test_parallel_results_equal_serial_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = [parse_fast(p.read_bytes()) for p in sorted(OUT.rglob("*.yaml"))]
    broken = {**objects[0], "spec": {**objects[0]["spec"], "unknownField": 1}}
    jobs = [parallel.Job(o, "1.30", False, None) for o in [*objects, broken, *objects]]
    serial = [parallel._run(job) for job in jobs]
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 2)
    assert parallel.check_objects(jobs) == serial
    assert any(serial), "the broken object must produce findings"
