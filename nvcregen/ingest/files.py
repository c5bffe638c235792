"""`nvcregen ingest`: read raw output files, summarize them, and say which could not be read.

Every file that parses gives runs, whatever their status (a failed run is data). A file
that cannot be read, or is not the kind of output asked for, gives an NVC700 diagnostic
at `file:1:1` and the command exits 2 after printing what the other files held. A file
that breaks a bound of `limits.py` (a number too long, JSON nested too deeply, a
measurement that is `inf` or `nan`, JSON that does not decode) gets that bound's code
(NVC713-NVC716), at its line when the reader knows it. A file, pipe or device holding
more than `MAX_LOG_BYTES` is NVC700 too, read no further than one byte past the cap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.dcgmdiag import parse_dcgm
from nvcregen.ingest.medians import summarize
from nvcregen.ingest.models import DcgmRun, Json, NcclRun, SummaryRow
from nvcregen.ingest.nccl import parse_nccl
from nvcregen.ingest.readlog import Hints, read_logs

Kind = Literal["nccl", "dcgm"]
CODE = codes.NVC700.code
_LIMIT = "no nccl-tests or DCGM output holds this: the file is damaged or was not made by them"
_TOO_LARGE = (
    "no nccl-tests or DCGM log comes close (Kubernetes keeps 10 MiB of a pod's log by"
    " default): give the log itself, not a stream or device that never ends"
)
_HINTS = {
    "nccl": "give the output of an nccl-tests binary such as all_reduce_perf",
    "dcgm": "give the output of `dcgmi diag` (its result table, or its JSON with -j)",
}


@dataclass(frozen=True)
class IngestResult:
    """What `nvcregen ingest` found in its files."""

    kind: Kind
    nccl_runs: tuple[NcclRun, ...] = ()
    dcgm_runs: tuple[DcgmRun, ...] = ()
    summary: tuple[SummaryRow, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a run read shows a failure (`ingest` exits 1): truncated is not failed."""
        runs: tuple[NcclRun | DcgmRun, ...] = (*self.nccl_runs, *self.dcgm_runs)
        return any(run.status == "failed" for run in runs)

    def to_json(self) -> Json:
        """`{"runs": [...], "summary": [...]}` for nccl; `{"runs": [...]}` for dcgm."""
        if self.kind == "dcgm":
            return {"runs": [run.to_json() for run in self.dcgm_runs]}
        return {
            "runs": [run.to_json() for run in self.nccl_runs],
            "summary": [row.to_json() for row in self.summary],
        }


def ingest_files(kind: Kind, paths: Sequence[Path], at: int | None = None) -> IngestResult:
    """Read raw nccl-tests or DCGM outputs.

    Args:
        kind: `nccl` or `dcgm`.
        paths: The files, in the order given; each is named in the result as given.
        at: Restrict the nccl summary to this message size in bytes.

    Returns:
        The runs of every readable file, the nccl summary over them, and one NVC700
        error per file that could not be read or is not that kind of output.

    """
    nccl: list[NcclRun] = []
    dcgm: list[DcgmRun] = []
    hints = Hints(_HINTS[kind], too_large=_TOO_LARGE, limit=_LIMIT)
    if kind == "nccl":
        found, diagnostics = read_logs(paths, parse_nccl, hints)
        nccl = [run for runs in found for run in runs]
    else:
        read, diagnostics = read_logs(paths, parse_dcgm, hints)
        dcgm = [run for runs in read for run in runs]
    summary = tuple(summarize(nccl, at)) if kind == "nccl" else ()
    return IngestResult(kind, tuple(nccl), tuple(dcgm), summary, tuple(diagnostics))
