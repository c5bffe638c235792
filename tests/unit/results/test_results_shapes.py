"""Issue #21: sweeps read for their shape (collapse, decline, rounds that disagree)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import fmean

import pytest

from nvcregen.kinds.nccl.reader import parse_nccl
from nvcregen.results.shapes import (
    COLLAPSE,
    DISAGREE,
    NOISE,
    PLATEAU,
    Point,
    collapse,
    decline,
    disagreement,
)

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "fixtures" / "real-logs" / "nccl-tests"
MIB = 1 << 20
FAULTY = {  # the two real logs whose plots show a fault, and where
    "alltoall-2node-16gpu-v2.18.3-nccl2.30.3-spcx-inplace-NA-bw-collapse.txt": 16 * MIB,
    "gather-2node-2xA100-nccl2.16.5-debug-ib-roce-gdrdma-no-summary-perf-cliff.txt": 6 << 30,
}


def points(name: str) -> list[Point]:
    (run,) = parse_nccl((LOGS / name).read_text(), name)[:1]
    by_size: dict[int, list[float]] = defaultdict(list)
    for row in run.rows:
        if row.out_of_place.busbw_gbs is not None:
            by_size[row.size_bytes].append(row.out_of_place.busbw_gbs)
    return [(size, fmean(values)) for size, values in by_size.items()]


@pytest.mark.parametrize("name", sorted(p.name for p in LOGS.glob("*.txt")))
def test_real_logs_raise_no_false_alarm(name: str) -> None:
    found = collapse(points(name))
    if name in FAULTY:
        assert found is not None and found[0][0] == FAULTY[name]
    else:
        assert found is None
    assert decline(points(name)) == []


def test_the_real_collapse_is_named_with_its_sizes() -> None:
    found = collapse(points(sorted(FAULTY)[0]))
    assert found is not None
    down, before, low = found
    assert (before, low) == (30.22, 0.79)
    assert down == [MIB << k for k in range(4, 12)]  # 16 MiB to 2 GiB, back at 4 GiB


def sweep(*busbw: float) -> list[Point]:
    return [(MIB << i, b) for i, b in enumerate(busbw)]


def test_collapse_boundary() -> None:
    assert collapse(sweep(10, 30, 30 * COLLAPSE, 30)) is None  # at the limit: not a collapse
    assert collapse(sweep(10, 30, 30 * COLLAPSE - 0.01, 30)) == ([4 * MIB], 30, 17.99)
    assert collapse(sweep(1, 2, 30, 0.5)) == ([8 * MIB], 30, 0.5)
    assert collapse([(1024, 30.0), (2048, 1.0), (MIB, 30.0)]) is None  # latency sizes unread


def test_decline_boundary() -> None:
    falling = sweep(100, 100, 90, 80, 70)
    assert decline(falling) == [4 * MIB, 8 * MIB, 16 * MIB]
    assert decline(sweep(100, 100, 90, 80, 80.01)) == []  # ends above 80 % of the best
    assert decline(sweep(100, 100, 90, 90 * (1 - NOISE), 70)) == []  # a step of NOISE: noise
    assert decline(sweep(100, 100, 100 * (1 - NOISE), 90, 80, 70)) == [8 * MIB, 16 * MIB, 32 * MIB]
    assert decline(sweep(100, 99, 98, 97, 96)) == []  # a wobble within noise


def test_disagreement_boundary() -> None:
    agree = [sweep(100.0), sweep(100.0 + 100 * DISAGREE), sweep(100.0)]
    assert disagreement(agree) == []
    apart = [sweep(100.0), sweep(100.0 + 100 * DISAGREE + 0.1), sweep(100.0)]
    ((size, spread),) = disagreement(apart)
    assert size == MIB
    assert spread == pytest.approx(DISAGREE + 0.001)
    field = [sweep(363.76), sweep(427.58), sweep(452.28)]  # the field report: 20.7 %
    assert disagreement(field) == []


def test_a_peak_of_exactly_the_plateau_share_is_the_plateau() -> None:
    """Issue #31: PLATEAU's boundary. A size at exactly half the best starts the plateau."""
    best = 100.0
    at = PLATEAU * best  # 50 GB/s: on the plateau, so falling under 60 % of it collapses
    assert collapse(sweep(at, at * COLLAPSE - 0.01, best)) == ([2 * MIB], at, 29.99)
    assert collapse(sweep(at - 0.01, (at - 0.01) * COLLAPSE - 0.01, best)) is None  # below it
    rounds = [sweep(best, at - 10), sweep(best, at), sweep(best, at + 10)]  # 40 % apart
    ((size, spread),) = disagreement(rounds)
    assert size == 2 * MIB
    assert spread == pytest.approx(20 / at)
    under = [sweep(best, at - 10.01), sweep(best, at - 0.01), sweep(best, at + 9.99)]
    assert disagreement(under) == []  # a median under half the largest is not read
