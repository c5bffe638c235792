"""Raw outputs read into records (`nvcregen ingest`): what the kinds' readers share.

The API other stages use:

- `parse_dcgm(text, source)` -> list of `DcgmRun` (per test and GPU results), the `dcgmi
  diag` reader the dcgm and burn-in kinds share;
- the records (`models.py`): DCGM's runs, and what every reader shares (`RunStatus`,
  `IngestFormatError`); nccl-tests' are the nccl kind's, in its package.

All records are frozen dataclasses with a `to_json()` giving the `--format json` form.
"""

from __future__ import annotations

from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.ingest.models import (
    DcgmGpuResult,
    DcgmRun,
    DcgmTest,
    IngestFormatError,
    RunStatus,
)

__all__ = [
    "DcgmGpuResult",
    "DcgmRun",
    "DcgmTest",
    "IngestFormatError",
    "RunStatus",
    "parse_dcgm",
]
