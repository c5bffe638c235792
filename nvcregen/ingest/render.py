"""The text form of `nvcregen ingest`: one block per run, then the medians over rounds."""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.core.units import format_size
from nvcregen.ingest.files import IngestResult
from nvcregen.ingest.models import DcgmRun, DcgmTest, Measurement, NcclRun, SummaryRow

_ROW_HEADER = (
    "size",
    "count",
    "type",
    "redop",
    "time_us",
    "algbw",
    "busbw",
    "#wrong",
    "ip_time_us",
    "ip_algbw",
    "ip_busbw",
    "ip_#wrong",
)
_SUMMARY_HEADER = (
    "collective",
    "type",
    "redop",
    "scope",
    "transport",
    "size",
    "rounds",
    "busbw",
    "algbw",
    "time_us",
    "spread",
)


def render_text(result: IngestResult) -> str:
    """Readable tables of everything `result` holds.

    Args:
        result: What `ingest_files` returned.

    Returns:
        The text to print; bandwidths in GB/s, times in microseconds.

    """
    if result.kind == "dcgm":
        return "".join(_dcgm_run(run) for run in result.dcgm_runs)
    text = "".join(_nccl_run(run) for run in result.nccl_runs)
    if result.summary:
        text += "medians over rounds (out-of-place, GB/s)\n"
        text += _table(_SUMMARY_HEADER, [_summary_cells(row) for row in result.summary])
    return text


def _nccl_run(run: NcclRun) -> str:
    transport = ", ".join(run.transports) or "not shown"
    if not run.transports and run.networks:
        transport = f"none crossed a network (NCCL selected {', '.join(run.networks)})"
    if run.gdrdma:
        transport += " (GDRDMA)"
    avg = "none" if run.avg_busbw_gbs is None else f"{_number(run.avg_busbw_gbs)} GB/s"
    text = f"{run.file}: {run.collective} {run.status}; transport {transport}; avg busbw {avg}\n"
    if run.rows:
        cells = [
            [
                format_size(row.size_bytes),
                str(row.count),
                row.type,
                row.redop or "",
                *_measurement(row.out_of_place),
                *_measurement(row.in_place),
            ]
            for row in run.rows
        ]
        text += _table(_ROW_HEADER, cells, indent="  ")
    text += _who(run)
    text += "".join(f"  error: {error}\n" for error in run.errors)
    text += "".join(f"  warning: {warning}\n" for warning in run.warnings)
    return text + "\n"


def _who(run: NcclRun) -> str:
    """Who produced a run's numbers: ranks, hosts, GPU models, versions, where printed."""
    if not run.ranks:
        return ""
    hosts = list(dict.fromkeys(r.host for r in run.ranks))
    models = ", ".join(dict.fromkeys(r.model for r in run.ranks if r.model)) or "model not shown"
    text = f"  ranks: {len(run.ranks)} on {len(hosts)} host(s) ({', '.join(hosts)}): {models}"
    if run.nccl_versions:
        text += f"; NCCL {', '.join(run.nccl_versions)}"
    if run.cuda_driver:
        text += f"; CUDA driver {', '.join(run.cuda_driver)}"
    return text + "\n"


def _measurement(m: Measurement) -> list[str]:
    return [_number(m.time_us), _number(m.algbw_gbs), _number(m.busbw_gbs), _number(m.wrong)]


def _summary_cells(row: SummaryRow) -> list[str]:
    return [
        row.collective,
        row.type or "?",
        row.redop or "-",
        f"{row.scope} ({', '.join(row.nodes)})" if row.nodes else row.scope,
        ", ".join(row.transports) or "not shown",
        format_size(row.size_bytes),
        str(row.rounds),
        _number(row.median_busbw_gbs),
        _number(row.median_algbw_gbs),
        _number(row.median_time_us),
        "n/a" if row.spread is None else f"{row.spread:.1%}",
    ]


def _dcgm_run(run: DcgmRun) -> str:
    facts: list[str] = [run.format]
    if run.dcgm_version:
        facts.append(f"DCGM {run.dcgm_version}")
    if run.level is not None:
        facts.append(f"level {run.level}")
    text = f"{run.file}: {run.status} ({', '.join(facts)})\n"
    rows = [[t.category, t.name, t.result, _gpus(t)] for t in run.tests]
    text += _table(("category", "test", "result", "gpus"), rows, indent="  ")
    for test in run.tests:
        text += "".join(f"  {test.name}: warning: {e}\n" for e in test.errors)
        text += "".join(f"  {test.name}: info: {i}\n" for i in test.info)
    text += "".join(f"  error: {error}\n" for error in run.errors)
    return text + "\n"


def _gpus(test: DcgmTest) -> str:
    """Per-GPU results, never contradicting the test's own.

    A test DCGM failed while every GPU passed failed outside them (an internal error, a
    plugin that crashed): the cell says that instead of `4 x Pass`.
    """
    if not test.gpus:
        return ""
    if test.result == "Fail" and not any(gpu.result == "Fail" for gpu in test.gpus):
        return f"no GPU of {len(test.gpus)} failed: the test itself did"
    if all(gpu.result == test.gpus[0].result for gpu in test.gpus):
        return f"{len(test.gpus)} x {test.gpus[0].result}"
    return " ".join(f"{gpu.id}:{gpu.result}" for gpu in test.gpus)


def _number(value: float | None) -> str:
    """A figure as the log printed it: every digit kept, float noise of medians cut."""
    if value is None:
        return "N/A"
    if isinstance(value, int):
        return str(value)
    return repr(round(value, 4)).removesuffix(".0")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Columns padded to their widest cell; text left-aligned, numbers right-aligned."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = []
    for cells in (header, *rows):
        padded = [
            cell.rjust(width) if _numeric(cell) else cell.ljust(width)
            for cell, width in zip(cells, widths, strict=True)
        ]
        lines.append(indent + "  ".join(padded).rstrip())
    return "\n".join(lines) + "\n"


def _numeric(cell: str) -> bool:
    return bool(cell) and (cell[0].isdigit() or cell in ("N/A", "n/a")) and " " not in cell
