"""`dcgmi diag` outputs read by the reader the dcgm and burn-in kinds share (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvcregen.core.errors import Diagnostic
from nvcregen.ingest import parse_dcgm
from nvcregen.ingest.files import read_files
from nvcregen.ingest.models import DcgmRun, Json

HINT = "give the output of `dcgmi diag` (its result table, or its JSON with -j)"


@dataclass(frozen=True)
class DcgmFiles:
    """What `nvcregen ingest dcgm` found in its files."""

    runs: tuple[DcgmRun, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a run read shows a failure (`ingest` exits 1): truncated is not failed."""
        return any(run.status == "failed" for run in self.runs)

    def to_json(self) -> Json:
        """`{"runs": [...]}`."""
        return {"runs": [run.to_json() for run in self.runs]}


def ingest_dcgm(paths: Sequence[Path]) -> DcgmFiles:
    """Read raw `dcgmi diag` outputs: the runs of every readable file, an NVC700 per other."""
    runs, diagnostics = read_files(paths, parse_dcgm, HINT)
    return DcgmFiles(tuple(runs), tuple(diagnostics))
