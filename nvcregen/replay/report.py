"""`nvcregen plan` output: the timelines as text, Markdown or JSON (pure).

Every worst case shown counts the window's retests (`plan/budget.py`): the summary names
them (`worst case 15h42m (7h51m + 1 retest)`), the `worst` column and JSON's `worst_ms`
and `worst_gpu_hours` include them, and JSON's `worst_once_*` give one attempt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nvcregen.fabric.groups import Coverage
from nvcregen.fabric.names import shown as shown_nodes
from nvcregen.plan.budget import worst_case
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


def _columns(view: PlanView) -> tuple[str, ...]:
    """The table's columns: `coverage` after `nodes` when the site's fabric is placed."""
    if not _fabric(view):
        return COLUMNS
    return (*COLUMNS[:4], "coverage", *COLUMNS[4:])


def _fabric(view: PlanView) -> bool:
    return any(c.leaf_pairs_total for c in view.coverage.values())


def _cells(row: StepRow, view: PlanView) -> tuple[str, ...]:
    covered = view.coverage.get(row.name)
    extra = ("-" if covered is None else covered.text(),) if _fabric(view) else ()
    window = view.max_concurrent_jobs
    return (
        row.name,
        str(len(row.runs)),
        str(row.jobs),
        shown_nodes(row.nodes),
        *extra,
        _when(row.start_ms),
        _when(row.expected_ms),
        _when(row.worst_case_ms),
        shown(row.timeout_ms),
        "-" if row.step_timeout_ms is None else shown(row.step_timeout_ms),
        _holds(row),
        f"{row.at_once}/{window}",
        f"{row.gpu_hours:.1f}",
        "yes" if row.fits else "NO",
    )


def _holds(row: StepRow) -> str:
    """`holds sync`: a duration, `+queue` when a run never admitted holds it on top."""
    if row.holds_ms is None:
        return "no limit"
    return shown(row.holds_ms) + ("+queue" if row.holds_queued else "")


def summary(view: PlanView) -> str:
    """One line: the plan's wall time and GPU-hours against the window, and what breaks it."""
    verdict = "fits the window" if view.fits else f"does NOT fit the window ({_broken(view)})"
    found = f"; {view.errors} errors, {view.warnings} warnings (nvcregen check)" * bool(
        view.errors or view.warnings
    )
    return (
        f"expected {_when(view.expected_ms)}, worst case {worst_wall(view)}; "
        f"{view.gpu_hours:.1f} GPU-hours, worst case {worst_gpu_hours(view)}; window "
        f"{shown(view.deadline_ms)}, {view.budget_gpu_hours:g} GPU-hours, "
        f"{view.max_concurrent_jobs} jobs at once: {verdict}{found}"
    )


def engine_lines(view: PlanView) -> list[str]:
    """What the plan asks of Kueue's admission and Flux's workers (issue 33), as lines.

    Kueue admits one workload per ClusterQueue per cycle; the cycle's expected and worst
    figures are `catalog/engines.yaml`'s, each with its source there.
    """
    load = view.load
    if load is None or not load.admissions:
        return []
    queues = sorted({a.cluster_queue for a in load.admissions})
    total = sum(a.workloads for a in load.admissions)
    busiest = max(load.admissions, key=lambda a: a.workloads)
    fits = load.expected_ms <= view.deadline_ms
    lines = [
        f"Kueue admission: {total:,} workloads in ClusterQueue {', '.join(queues)}, one per"
        f" scheduling cycle: expected {shown(load.expected_ms)}, worst {shown(load.worst_ms)}"
        f" (the most in one step: {busiest.workloads:,}, {busiest.step})"
        + ("" if fits else f"; admission alone outlasts the {shown(view.deadline_ms)} window")
    ]
    if load.flux_workers is not None:
        hold = "" if load.flux_hold_ms is None else f", each for up to {shown(load.flux_hold_ms)}"
        lines.append(
            f"Flux workers: {load.flux_workers} of kustomize-controller's {load.flux_limit}"
            f" (--concurrent) held at once{hold}"
            + (
                ": every worker, so no other Kustomization reconciles meanwhile"
                if load.flux_workers >= load.flux_limit
                else ""
            )
        )
    return lines


def periodic_line(view: PlanView) -> list[str]:
    """The periodic runs' weekly GPU-hours, their worst week and preemption's stretch."""
    cost = view.periodic
    if cost is None:
        return []
    runs = f"{cost.runs_per_week:.2f}".rstrip("0").rstrip(".")
    worst = f"{cost.worst_runs} run{'s' * (cost.worst_runs != 1)}"
    return [
        f"Periodic ({cost.schedule}, {runs} run{'s' * (runs != '1')} a week on {cost.gpus}"
        f" GPUs): {cost.expected_gpu_hours:.1f} GPU-hours a week expected, worst week"
        f" {cost.worst_gpu_hours:.1f} ({worst}, every test to its timeout);"
        f" tenants preempting its pods can stretch a week to {cost.preempted_gpu_hours:.1f}"
        " (each node's tests restarted until its Job's deadline); outside the window"
    ]


def _broken(view: PlanView) -> str:
    """Each limit the plan breaks, with its numbers: `concurrency: 128/64 at once in ...`."""
    words = []
    for limit in view.breaks:
        if limit == "deadline":
            late = _when(view.expected_ms)
            words.append(f"deadline: expected {late} > {shown(view.deadline_ms)}")
        elif limit == "admission":
            load = view.load
            assert load is not None
            words.append(
                f"admission: Kueue needs {shown(load.expected_ms)} to admit the plan's workloads"
                " at one per cycle"
            )
        elif limit == "GPU-hours":
            words.append(f"GPU-hours: {view.gpu_hours:.1f} > {view.budget_gpu_hours:g}")
        else:
            first, *more = view.crowded
            others = f" and {len(more)} more step{'s' * (len(more) > 1)}" if more else ""
            words.append(
                f"concurrency: {first.at_once}/{view.max_concurrent_jobs} at once in "
                f"{first.name}{others}"
            )
    return "; ".join(words)


def worst_wall(view: PlanView) -> str:
    """The plan's worst-case wall time with its retests named: `15h42m (7h51m + 1 retest)`."""
    if view.worst_ms is None:
        return "never"
    return worst_case(_when(view.worst_case_ms), _when(view.worst_ms), view.retests)


def worst_gpu_hours(view: PlanView) -> str:
    """The plan's worst-case GPU-hours with its retests named: `251.2 (125.6 + 1 retest)`."""
    return worst_case(
        f"{view.worst_case_gpu_hours:.1f}", f"{view.worst_gpu_hours:.1f}", view.retests
    )


def _text(view: PlanView) -> str:
    columns = _columns(view)
    rows = [columns, *(_cells(r, view) for r in view.steps)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    left = {0, 3, 4} if len(columns) > len(COLUMNS) else {0, 3}
    lines = [f"{view.site}: {summary(view)}"]
    for row in rows:
        cells = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  " + "  ".join(cells).rstrip())
    lines += [f"  {line}" for line in engine_lines(view) + periodic_line(view)]
    return "\n".join(lines) + "\n"


def _markdown(view: PlanView) -> str:
    columns = _columns(view)
    lines = [f"### {view.site}", "", summary(view), "", "| " + " | ".join(columns) + " |"]
    lines.append("|" + "|".join(" --- " for _ in columns) + "|")
    lines += ["| " + " | ".join(_cells(r, view)) + " |" for r in view.steps]
    extra = engine_lines(view) + periodic_line(view)
    lines += ["", *extra] if extra else []
    return "\n".join(lines) + "\n"


def _json(view: PlanView) -> dict[str, Any]:
    return {
        "site": view.site,
        "fits": view.fits,
        "breaks": list(view.breaks),
        "expected_ms": view.expected_ms,
        "worst_ms": view.worst_case_ms,
        "worst_once_ms": view.worst_ms,
        "gpu_hours": round(view.gpu_hours, 3),
        "worst_gpu_hours": round(view.worst_case_gpu_hours, 3),
        "worst_once_gpu_hours": round(view.worst_gpu_hours, 3),
        "retests": view.retests,
        "window": {
            "deadline_ms": view.deadline_ms,
            "gpu_hours": view.budget_gpu_hours,
            "max_concurrent_jobs": view.max_concurrent_jobs,
        },
        "problems": {"errors": view.errors, "warnings": view.warnings},
        "steps": [_json_step(s, view.coverage.get(s.name)) for s in view.steps],
        **_json_load(view),
        **_json_periodic(view),
    }


def _json_periodic(view: PlanView) -> dict[str, Any]:
    cost = view.periodic
    if cost is None:
        return {}
    return {
        "periodic": {
            "schedule": cost.schedule,
            "runs_per_week": round(cost.runs_per_week, 3),
            "worst_week_runs": cost.worst_runs,
            "gpus": cost.gpus,
            "gpu_hours_per_week": round(cost.expected_gpu_hours, 3),
            "worst_week_gpu_hours": round(cost.worst_gpu_hours, 3),
            "preempted_week_gpu_hours": round(cost.preempted_gpu_hours, 3),
        }
    }


def _json_load(view: PlanView) -> dict[str, Any]:
    load = view.load
    if load is None:
        return {}
    return {
        "admission": {
            "expected_ms": load.expected_ms,
            "worst_ms": load.worst_ms,
            "fits": load.expected_ms <= view.deadline_ms,
            "steps": [
                {
                    "step": a.step,
                    "cluster_queue": a.cluster_queue,
                    "workloads": a.workloads,
                    "expected_ms": a.expected_ms,
                    "worst_ms": a.worst_ms,
                }
                for a in load.admissions
            ],
        },
        "flux_workers": (
            None
            if load.flux_workers is None
            else {
                "at_once": load.flux_workers,
                "concurrent": load.flux_limit,
                "hold_ms": load.flux_hold_ms,
            }
        ),
    }


def _json_step(row: StepRow, covered: Coverage | None) -> dict[str, Any]:
    nodes = len(row.nodes)
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
        "worst_ms": row.worst_case_ms,
        "worst_once_ms": row.worst_ms,
        "timeout_ms": row.timeout_ms,
        "step_timeout_ms": row.step_timeout_ms,
        "holds_sync_ms": row.holds_ms,
        "holds_sync_while_queued": row.holds_queued,
        "at_once": row.at_once,
        "gpu_hours": round(row.gpu_hours, 3),
        "worst_gpu_hours": round(row.worst_case_gpu_hours, 3),
        "worst_once_gpu_hours": round(row.worst_gpu_hours, 3),
        "fits": row.fits,
        "coverage": (
            covered.to_json()
            if covered is not None
            else {
                "nodes": nodes,
                "nodesTotal": nodes,
                "leafPairs": 0,
                "leafPairsTotal": 0,
                "rounds": 1,
            }
        ),
    }
