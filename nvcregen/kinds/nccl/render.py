"""The text form of `nvcregen ingest nccl`: one block per run, then the medians over rounds."""

from __future__ import annotations

from nvcregen.core.units import format_size
from nvcregen.ingest.render import number, table
from nvcregen.kinds.nccl.files import NcclFiles
from nvcregen.kinds.nccl.models import Measurement, NcclRun, SummaryRow

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


def render_nccl(result: NcclFiles) -> str:
    """Readable tables of every run `result` holds, then the medians over rounds.

    Bandwidths in GB/s, times in microseconds.
    """
    text = "".join(_nccl_run(run) for run in result.runs)
    if result.summary:
        text += "medians over rounds (out-of-place, GB/s)\n"
        text += table(_SUMMARY_HEADER, [_summary_cells(row) for row in result.summary])
    return text


def _nccl_run(run: NcclRun) -> str:
    transport = ", ".join(run.transports) or "not shown"
    if not run.transports and run.networks:
        transport = f"none crossed a network (NCCL selected {', '.join(run.networks)})"
    if run.gdrdma:
        transport += " (GDRDMA)"
    avg = "none" if run.avg_busbw_gbs is None else f"{number(run.avg_busbw_gbs)} GB/s"
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
        text += table(_ROW_HEADER, cells, indent="  ")
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
    return [number(m.time_us), number(m.algbw_gbs), number(m.busbw_gbs), number(m.wrong)]


def _summary_cells(row: SummaryRow) -> list[str]:
    return [
        row.collective,
        row.type or "?",
        row.redop or "-",
        f"{row.scope} ({', '.join(row.nodes)})" if row.nodes else row.scope,
        ", ".join(row.transports) or "not shown",
        format_size(row.size_bytes),
        str(row.rounds),
        number(row.median_busbw_gbs),
        number(row.median_algbw_gbs),
        number(row.median_time_us),
        "n/a" if row.spread is None else f"{row.spread:.1%}",
    ]
