"""A period's rehearsal as text and JSON, and its exit code (pure).

Exit 0 only when every periodic CronJob made one Job of one period, each admitted at its
periodic priority, finished and bound to its pinned nodes, and `collect --period` judged
the period `pass`; 1 otherwise (a period not collected is no pass).
"""

from __future__ import annotations

from typing import Any

from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import one_line
from nvcregen.rehearse.period import PeriodJob, period_change
from nvcregen.rehearse.periodrun import PeriodRehearsal
from nvcregen.rehearse.report import Collected

NAMED_NODES = 8  # a status's nodes named in the text, the rest counted (JSON has all)


def passed(rehearsal: PeriodRehearsal) -> bool:
    """Whether the period went as planned and its verdict is `pass`."""
    collected = rehearsal.collected
    word = collected.word if collected is not None else ""
    return not rehearsal.problems and word == "pass"


def exit_code(rehearsal: PeriodRehearsal) -> ExitCode:
    """0 when the period went as planned and passed, else 1."""
    return ExitCode.OK if passed(rehearsal) else ExitCode.DRIFT


def to_text(rehearsal: PeriodRehearsal) -> str:
    """What a user reads: the change, each Job, the problems, the verdict."""
    plan = rehearsal.plan
    stages = sorted({c.stage for c in plan.crons})
    lines = [
        f"Rehearsal of one period of {rehearsal.site}'s readiness.periodic (stages "
        f"{', '.join(stages)}) on the twin: kube-controller-manager's CronJob controller, "
        f"Kueue, kube-scheduler, kwok ({len(rehearsal.nodes)} nodes); pods "
        f"{rehearsal.speed:g}x faster than planned",
        f"  {period_change(plan.crons)}",
        f"  applied by the rehearsal itself (not the GitOps engine): {len(plan.objects)} "
        "objects (Namespaces, the queues layer, the periodic layer)",
        f"  twin started in {rehearsal.twin_s:.1f}s; the rehearsal took {rehearsal.wall_s:.1f}s",
    ]
    period = rehearsal.period
    lines.append(f"  period: {period if period is not None else 'none (no Job was made)'}")
    for cron in plan.crons:
        jobs = rehearsal.jobs.get(cron.name, ())
        if not jobs:
            lines.append(f"    CronJob {cron.name}: no Job")
        lines += [f"    CronJob {cron.name} -> Job {j.name}: {_job_text(j)}" for j in jobs]
    said = rehearsal.problems
    lines += [f"  as planned: {'no' if said else 'yes'}", *(f"    {p}" for p in said)]
    lines += _collected_text(rehearsal.collected)
    return "\n".join(one_line(line) for line in lines) + "\n"


def _job_text(job: PeriodJob) -> str:
    if not job.admitted:
        return f"not admitted ({job.waiting})"
    where = ", ".join(job.nodes) or "no node"
    return (
        f"scheduled {job.scheduled or '?'}, admitted at {job.priority_class or 'no class'} "
        f"({job.priority}), {job.outcome or 'not finished'}, on {where}"
    )


def _collected_text(collected: Collected | None) -> list[str]:
    if collected is None:
        return ["  verdict: none (the period was not collected)"]
    if collected.error:
        return [f"  verdict: none ({collected.error})"]
    lines = [f"  verdict: {collected.word} ({collected.served} pods' logs served)"]
    statuses: dict[str, list[str]] = {}
    for node, status in collected.nodes:
        statuses.setdefault(status, []).append(node)
    for status, nodes in statuses.items():
        more = len(nodes) - NAMED_NODES
        named = ", ".join(nodes[:NAMED_NODES]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"    {status}: {named}")
    if collected.archive:
        lines.append(f"  archive: {collected.archive}")
    lines += [f"  collect: {line}" for line in collected.lines]
    return lines


def to_json(rehearsal: PeriodRehearsal) -> dict[str, Any]:
    """The report as JSON data: `as_planned`, `period`, `jobs`, `problems`, `verdict`, ..."""
    collected = rehearsal.collected or Collected()
    return {
        "site": rehearsal.site,
        "mode": "period",
        "as_planned": not rehearsal.problems,
        "passed": passed(rehearsal),
        "change": period_change(rehearsal.plan.crons),
        "period": rehearsal.period,
        "cronjobs": [
            {
                "name": c.name,
                "schedule": c.schedule,
                "stage": c.stage,
                "pack": c.test,
                "tests": list(c.tests),
                "nodes": list(c.nodes),
                "priority_class": c.priority_class,
                "suspended": c.name in rehearsal.suspended,
                "jobs": [_job_json(j) for j in rehearsal.jobs.get(c.name, ())],
            }
            for c in rehearsal.plan.crons
        ],
        "applied": [o.path for o in rehearsal.plan.objects],
        "refused": list(rehearsal.refused),
        "problems": rehearsal.problems,
        "verdict": collected.word,
        "node_statuses": dict(collected.nodes),
        "archive": collected.archive,
        "pod_logs_served": collected.served,
        "collect_error": collected.error,
        "twin_s": round(rehearsal.twin_s, 2),
        "wall_s": round(rehearsal.wall_s, 2),
    }


def _job_json(job: PeriodJob) -> dict[str, Any]:
    return {
        "name": job.name,
        "minutes": job.minutes,
        "scheduled": job.scheduled,
        "admitted": job.admitted,
        "priority_class": job.priority_class,
        "priority": job.priority,
        "outcome": job.outcome,
        "nodes": list(job.nodes),
        "waiting": job.waiting,
    }
