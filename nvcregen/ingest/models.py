"""Records read from raw outputs (DCGM's here; nccl-tests' in the nccl kind's package).

Field names follow the `nvcregen ingest --format json` contract of issue #5: sizes in
bytes, times in microseconds, bandwidths in GB/s as nccl-tests prints them, and `None`
(JSON null) wherever the log prints `N/A` or says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RunStatus = Literal["ok", "failed", "truncated"]
"""`ok`: the run finished and passed; `failed`: the log shows a failure; `truncated`: it
ends before the run finished (no `Avg bus bandwidth` summary, a cut row, cut JSON)."""

Json = dict[str, object]


class IngestFormatError(ValueError):
    """The text is not an output this parser reads (say, a DCGM table given to `nccl`)."""


@dataclass(frozen=True)
class DcgmGpuResult:
    """The result of one test on one GPU, where the output names the GPU."""

    id: int
    result: str
    info: tuple[str, ...] = ()

    def to_json(self) -> Json:
        """The JSON object of this GPU result."""
        return {"id": self.id, "result": self.result, "info": list(self.info)}


@dataclass(frozen=True)
class DcgmTest:
    """One DCGM diagnostic test (plugin) and its result.

    Attributes:
        name: The test name as printed (`PCIe`, `pcie`, `GPU Memory`, ...).
        category: Deployment, Integration, Hardware, Stress, Custom, ... or "".
        result: Pass, Fail, Skip or Warn (another word is kept as printed).
        gpus: Per-GPU results, when the output lists GPUs.
        errors: Warning messages of the test.
        info: Info messages of the test.

    """

    name: str
    category: str
    result: str
    gpus: tuple[DcgmGpuResult, ...] = ()
    errors: tuple[str, ...] = ()
    info: tuple[str, ...] = ()

    def to_json(self) -> Json:
        """The JSON object of this test."""
        return {
            "name": self.name,
            "category": self.category,
            "result": self.result,
            "gpus": [gpu.to_json() for gpu in self.gpus],
            "errors": list(self.errors),
            "info": list(self.info),
        }


@dataclass(frozen=True)
class DcgmRun:
    """One `dcgmi diag` result, from its JSON (`-j`) or its text table.

    Attributes:
        file: The file it came from, as named on the command line.
        format: `json` or `text`.
        status: failed when a test failed (or DCGM reported a runtime error), truncated
            when the output is cut short, else ok.
        tests: Tests in output order.
        dcgm_version: DCGM version when the output gives it.
        level: Diagnostic level (`-r N`/`--run N`) when the captured command shows it.
        errors: Run-level problems: runtime errors, truncation.

    """

    file: str
    format: Literal["json", "text"]
    status: RunStatus
    tests: tuple[DcgmTest, ...]
    dcgm_version: str | None = None
    level: int | None = None
    errors: tuple[str, ...] = ()

    def to_json(self) -> Json:
        """The JSON object of this run; `dcgm_version` and `level` only when known."""
        out: Json = {"file": self.file, "format": self.format}
        if self.dcgm_version is not None:
            out["dcgm_version"] = self.dcgm_version
        if self.level is not None:
            out["level"] = self.level
        out["status"] = self.status
        out["errors"] = list(self.errors)
        out["tests"] = [test.to_json() for test in self.tests]
        return out
