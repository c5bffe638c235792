"""Fuzz the nvbandwidth reader: its text and JSON never raise but a refusal.

Fragments of every form nvbandwidth prints, with hostile values where the reader takes
one, and the real captures with numbers replaced: any exception but `IngestFormatError`
would be an internal error (exit 70) of `ingest nvbandwidth` and of `collect`.
"""

from __future__ import annotations

from pathlib import Path

from fuzzing import BUDGET, lines_of, mutated
from hypothesis import given
from hypothesis import strategies as st

from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.nvbandwidth.judge import judge
from nvcregen.kinds.nvbandwidth.order import parse_list
from nvcregen.kinds.nvbandwidth.physics import ceilings
from nvcregen.kinds.nvbandwidth.reader import parse_nvbandwidth

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures" / "nvbandwidth"
REAL = tuple(p.read_text() for p in sorted(CAPTURES.glob("v0.*")))
FRAGMENTS = (
    "nvbandwidth Version: v0.8",
    "Built from Git version: ",
    "CUDA Runtime Version: ",
    "Driver Version: ",
    "Device 0: NVIDIA H100 80GB HBM3 (00000000:00:06)",
    "Device ",
    "Running host_to_device_memcpy_ce.",
    "Running device_to_device_memcpy_read_ce.",
    "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
    "           0         1",
    " 0       N/A    ",
    " 1    389.09       N/A",
    "SUM host_to_device_memcpy_ce ",
    "Waived: ",
    "Waiving device_to_device_memcpy_read_ce.",
    '{"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": "Passed",',
    '"bandwidth_matrix": [["',
    '"sum": ',
    '"GPU Device list": ["0: NVIDIA H100 (00000000:00:06): (vm)"]',
    "]}]}}",
    "0, host_to_device_memcpy_ce:",
    "@@nvcregen-nvbandwidth begin node=a pod=b start=2026-12-06T00:00:00Z",
)
LIMITS = ceilings(5, 63.0, "900GB/s")


@BUDGET
@given(st.one_of(lines_of(FRAGMENTS), mutated(REAL)))
def test_fuzz_nvbandwidth_reader(text: str) -> None:
    try:
        run = parse_nvbandwidth(text, "fuzz", ["host_to_device_memcpy_ce"])
    except IngestFormatError:
        return
    judge(run, None, LIMITS, ["host_to_device_memcpy_ce"])  # judging what was read never raises
    try:
        parse_list(text)
    except IngestFormatError:
        return
