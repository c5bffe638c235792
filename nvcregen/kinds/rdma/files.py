"""`nvcregen ingest perftest`: perftest outputs read, summarized, and the unreadable named.

As `files.py` does for nccl-tests and DCGM: every file that parses gives runs, a failed
run is data (exit 1); a file that cannot be read or is no perftest bandwidth output is
NVC700 at `file:1:1`, a broken bound its own code (NVC713-NVC716, NVC831), and the
command exits 2 after printing what the other files held.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvcregen.core.errors import Diagnostic
from nvcregen.ingest.readlog import Hints, read_logs
from nvcregen.kinds.rdma.reader import PerftestRun, parse_perftest

SHOWN_AT = 8 * 1024 * 1024  # the size the summary line shows, if the run measured it
_HINT = (
    "give the output of ib_write_bw, ib_read_bw or ib_send_bw (its text, with or without "
    "--report_gbits, or the file --out_json writes)"
)
_LIMIT = "no perftest output holds this: the file is damaged or was not made by perftest"


@dataclass(frozen=True)
class PerftestResult:
    """What `nvcregen ingest perftest` found in its files."""

    runs: tuple[PerftestRun, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a run read failed (`ingest` exits 1); truncated is not failed."""
        return any(run.status == "failed" for run in self.runs)

    def to_json(self) -> dict[str, Any]:
        """`{"runs": [...]}`."""
        return {"runs": [run.to_json() for run in self.runs]}


def ingest_perftest(paths: Sequence[Path]) -> PerftestResult:
    """Read perftest outputs, each up to `limits.MAX_LOG_BYTES`."""
    found, diagnostics = read_logs(paths, parse_perftest, Hints(_HINT, limit=_LIMIT))
    return PerftestResult(tuple(run for runs in found for run in runs), tuple(diagnostics))


def render_perftest(result: PerftestResult) -> str:
    """One line a run: where, device, GPU or host memory, status, bandwidth at 8 MiB."""
    lines = []
    for run in result.runs:
        row = run.at(SHOWN_AT) or (run.rows[-1] if run.rows else None)
        shown = "no rows" if row is None else (
            f"avg {row.average_gbps:.2f} Gb/s at {row.size_bytes} B ({run.unit})"
        )  # fmt: skip
        memory = f"GPU {run.gpu}" if run.gpu else "host memory"
        errors = "".join(f"; {e}" for e in run.errors)
        lines.append(
            f"{run.file}:{run.line}: {run.test} on {run.device or '?'} "
            f"({run.link_type or '?'}, {memory}) {run.status}; {shown}{errors}\n"
        )
    return "".join(lines)
