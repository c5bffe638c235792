"""Raw nccl-tests and DCGM outputs read into records (`nvcregen ingest`).

The API other stages use:

- `parse_nccl(text, source)` -> list of `NcclRun` (rows, status, transports);
- `summarize(runs, at=None)` -> list of `SummaryRow` (medians over rounds, per figure);
- `parse_dcgm(text, source)` -> list of `DcgmRun` (per test and GPU results).

All records are frozen dataclasses with a `to_json()` giving the `--format json` form.
"""

from __future__ import annotations

from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.ingest.medians import summarize
from nvcregen.ingest.models import (
    DcgmGpuResult,
    DcgmRun,
    DcgmTest,
    IngestFormatError,
    Measurement,
    NcclRow,
    NcclRun,
    Rank,
    RunStatus,
    SummaryRow,
)
from nvcregen.ingest.nccl import parse_nccl

__all__ = [
    "DcgmGpuResult",
    "DcgmRun",
    "DcgmTest",
    "IngestFormatError",
    "Measurement",
    "NcclRow",
    "NcclRun",
    "Rank",
    "RunStatus",
    "SummaryRow",
    "parse_dcgm",
    "parse_nccl",
    "summarize",
]
