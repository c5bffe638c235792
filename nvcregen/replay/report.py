"""`nvcregen plan` output: the timelines as text, Markdown or JSON (pure)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nvcregen.replay.context import shown
from nvcregen.replay.timeline import PlanView, StepRow

COLUMNS = (
    "step",
    "runs",
    "jobs",
    "nodes",
    "starts",
    "expected",
    "worst",
    "job timeout",
    "step timeout",
    "holds sync",
    "at once",
    "GPU-h",
    "fits",
)


def render_plans(views: Sequence[PlanView], fmt: str) -> str:
    """Every site's timeline in one format: `text`, `markdown` or `json`."""
    if fmt == "json":
        return json.dumps([_json(v) for v in views], indent=2) + "\n"
    render = _markdown if fmt == "markdown" else _text
    return "\n".join(render(v) for v in views)


def _when(ms: int | None) -> str:
    return "never" if ms is None else shown(ms)


def _cells(row: StepRow, window: int) -> tuple[str, ...]:
    return (
        row.name,
        str(len(row.runs)),
        str(row.jobs),
        ",".join(row.nodes) or "-",
        _when(row.start_ms),
        _when(row.expected_ms),
        _when(row.worst_ms),
        shown(row.timeout_ms),
        "-" if row.step_timeout_ms is None else shown(row.step_timeout_ms),
        "no limit" if row.holds_ms is None else shown(row.holds_ms),
        f"{row.at_once}/{window}",
        f"{row.gpu_hours:.1f}",
        "yes" if row.fits else "NO",
    )


def summary(view: PlanView) -> str:
    """One line: the plan's wall time and GPU-hours against the window."""
    verdict = "fits the window" if view.fits else "does NOT fit the window"
    found = f"; {view.errors} errors, {view.warnings} warnings (nvcregen check)" * bool(
        view.errors or view.warnings
    )
    return (
        f"expected {_when(view.expected_ms)} (worst case {_when(view.worst_ms)}), "
        f"{view.gpu_hours:.1f} GPU-hours (worst case {view.worst_gpu_hours:.1f}); window "
        f"{shown(view.deadline_ms)}, {view.budget_gpu_hours:g} GPU-hours, "
        f"{view.max_concurrent_jobs} jobs at once: {verdict}{found}"
    )


def _text(view: PlanView) -> str:
    rows = [COLUMNS, *(_cells(r, view.max_concurrent_jobs) for r in view.steps)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [f"{view.site}: {summary(view)}"]
    for row in rows:
        cells = [
            c.ljust(w) if i in {0, 3} else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _markdown(view: PlanView) -> str:
    lines = [f"### {view.site}", "", summary(view), "", "| " + " | ".join(COLUMNS) + " |"]
    lines.append("|" + "|".join(" --- " for _ in COLUMNS) + "|")
    lines += ["| " + " | ".join(_cells(r, view.max_concurrent_jobs)) + " |" for r in view.steps]
    return "\n".join(lines) + "\n"


def _json(view: PlanView) -> dict[str, Any]:
    return {
        "site": view.site,
        "fits": view.fits,
        "expected_ms": view.expected_ms,
        "worst_ms": view.worst_ms,
        "gpu_hours": round(view.gpu_hours, 3),
        "worst_gpu_hours": round(view.worst_gpu_hours, 3),
        "window": {
            "deadline_ms": view.deadline_ms,
            "gpu_hours": view.budget_gpu_hours,
            "max_concurrent_jobs": view.max_concurrent_jobs,
        },
        "problems": {"errors": view.errors, "warnings": view.warnings},
        "steps": [_json_step(s) for s in view.steps],
    }


def _json_step(row: StepRow) -> dict[str, Any]:
    return {
        "step": row.name,
        "applied_by": row.applied_by,
        "stages": list(row.stages),
        "runs": list(row.runs),
        "jobs": row.jobs,
        "nodes": list(row.nodes),
        "start_ms": row.start_ms,
        "end_ms": row.end_ms,
        "expected_ms": row.expected_ms,
        "worst_ms": row.worst_ms,
        "timeout_ms": row.timeout_ms,
        "step_timeout_ms": row.step_timeout_ms,
        "holds_sync_ms": row.holds_ms,
        "at_once": row.at_once,
        "gpu_hours": round(row.gpu_hours, 3),
        "worst_gpu_hours": round(row.worst_gpu_hours, 3),
        "fits": row.fits,
    }
