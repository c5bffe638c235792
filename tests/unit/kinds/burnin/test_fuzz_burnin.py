"""Fuzz the burn-in reader: DCGM's stress output never raises but a refusal.

Fragments of every line the reader takes a figure, a clocks event or a GPU from, with
hostile values, and DCGM's published JSON samples with numbers replaced: any exception
but `IngestFormatError` would be an internal error (exit 70) of `ingest burnin` and of
`collect`, and judging what was read never raises.
"""

from __future__ import annotations

from pathlib import Path

from fuzzing import BUDGET, lines_of, mutated
from hypothesis import given
from hypothesis import strategies as st

from nvcregen.ingest.models import IngestFormatError
from nvcregen.kinds.burnin.judge import Bounds, judge
from nvcregen.kinds.burnin.reader import parse_burnin

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures" / "burnin"
REAL = tuple(p.read_text() for p in sorted(CAPTURES.glob("*.json")))
FRAGMENTS = (
    '{"DCGM GPU Diagnostic": {"test_categories": [{"category": "Stress", "tests": [',
    '{"name": "targeted_stress", "results": [',
    '{"gpu_ids": "0", "status": "PASS", "info": ["GPU 0 relative stress level\\t29412"]}',
    '{"gpu_ids": "1", "status": "FAIL", "warnings": [{"warning": "Max stress level of ',
    ' did not reach desired stress level of 29250.0 for GPU 1", "error_id": 50}]}',
    '"Clocks event for GPU 2 because of clocks event starting 41.0 seconds into the test."',
    '"Detected clocks event due to thermal violation in GPU 99999."',
    '{"entity_group": "GPU", "entity_id": ',
    ']}]}], "version": "4.5.2"}}',
    "| Targeted Stress           | Fail - GPU: 0                                  |",
    "| Warning                   | GPU 0 Max stress level of 1.0 did not reach desired |",
    "Error: Unable to complete diagnostic for entities 0,1. Return: (-30) : DCGM",
    "@@nvcregen-burnin begin node=a pod=b start=2026-12-06T00:00:00Z",
    "@@nvcregen-gpu index=0 uuid=GPU-8c1e3a7d-0000-4000-8000-000000000000",
    "@@nvcregen-gpu index=99999 uuid=GPU-",
)
BOUNDS = Bounds("H100", 27787.5, 67000.0)


@BUDGET
@given(st.one_of(lines_of(FRAGMENTS), mutated(REAL)))
def test_fuzz_burnin_reader(text: str) -> None:
    try:
        run = parse_burnin(text, "fuzz")
    except IngestFormatError:
        return
    judge(run, BOUNDS, 8)
    judge(run, BOUNDS)
