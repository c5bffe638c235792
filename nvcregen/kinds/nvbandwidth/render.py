"""`nvcregen ingest nvbandwidth`'s text: versions, devices, testcases, verdicts.

Per run its versions and devices, each testcase's status and SUM, and with `--model`
each GPU and pair judged (failures first).
"""

from __future__ import annotations

from nvcregen.kinds.nvbandwidth.files import NvbwIngest
from nvcregen.kinds.nvbandwidth.judge import RunVerdict
from nvcregen.kinds.nvbandwidth.models import NvbwRun


def render_nvbw(result: NvbwIngest) -> str:
    """Every run read, as text (names and figures as the files print them)."""
    out: list[str] = []
    for run, verdict in zip(result.runs, result.verdicts, strict=True):
        out += _run(run)
        if verdict is not None:
            out += _verdict(verdict)
    return "".join(line + "\n" for line in out)


def _run(run: NvbwRun) -> list[str]:
    host = f" on {run.host}" if run.host else ""
    lines = [
        f"{run.file}: nvbandwidth {run.version} ({run.form}){host}, CUDA runtime"
        f" {run.cuda_runtime}, driver {run.driver}",
    ]
    for device in run.devices:
        bus = f" ({device.bus_id})" if device.bus_id else ""
        lines.append(f"  device {device.index}: {device.name}{bus}")
    for test in run.testcases:
        name = test.name or "(unnamed)"
        if test.status == "waived":
            lines.append(f"  {name}: waived")
            continue
        shape = ""
        if test.matrix is not None:
            shape = f" {len(test.matrix.rows)}x{len(test.matrix.columns)}"
        total = "" if test.sum is None else f" SUM {test.sum:g} {test.unit or ''}".rstrip()
        lines.append(f"  {name}: {test.status}{shape}{total}")
    return lines


def _verdict(verdict: RunVerdict) -> list[str]:
    lines = [f"  verdict: {'passed' if verdict.passed else 'FAILED'}"]
    lines += [f"    problem: {p}" for p in verdict.problems]
    order = {"impossible": 0, "failed": 1, "passed": 2}
    for cell in sorted(verdict.cells, key=lambda c: order[c.outcome]):
        bounds = []
        if cell.floor is not None:
            bounds.append(f">= {cell.floor:g}")
        if cell.ceiling is not None:
            bounds.append(f"<= {cell.ceiling:g}")
        within = f" ({', '.join(bounds)} GB/s)" if bounds else ""
        lines.append(
            f"    {cell.outcome}: {cell.testcase} {cell.where} {cell.value:g} GB/s{within}"
        )
    return lines
