"""nccl-tests outputs read (`reader.py`), summarized over like rounds (`medians.py`) (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.files import read_files
from nvcregen.ingest.models import Json
from nvcregen.kinds.nccl.medians import summarize
from nvcregen.kinds.nccl.models import NcclRun, SummaryRow
from nvcregen.kinds.nccl.reader import parse_nccl

HINT = "give the output of an nccl-tests binary such as all_reduce_perf"


@dataclass(frozen=True)
class NcclFiles:
    """What `nvcregen ingest nccl` found in its files."""

    runs: tuple[NcclRun, ...] = ()
    summary: tuple[SummaryRow, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a run read shows a failure (`ingest` exits 1): truncated is not failed."""
        return any(run.status == "failed" for run in self.runs)

    def to_json(self) -> Json:
        """`{"runs": [...], "summary": [...]}`."""
        return {
            "runs": [run.to_json() for run in self.runs],
            "summary": [row.to_json() for row in self.summary],
        }


def ingest_nccl(paths: Sequence[Path], at: int | None = None) -> NcclFiles:
    """Read raw nccl-tests outputs.

    Args:
        paths: The files, in the order given; each is named in the result as given.
        at: Restrict the summary to this message size in bytes.

    Returns:
        The runs of every readable file, the summary over them, and one NVC700 error
        per file that could not be read or is no nccl-tests output.

    """
    runs, diagnostics = read_files(paths, parse_nccl, HINT)
    return NcclFiles(tuple(runs), tuple(summarize(runs, at)), tuple(diagnostics))
