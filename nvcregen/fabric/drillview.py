"""`nvcregen drill` output: text for a terminal, JSON for tools (pure)."""

from __future__ import annotations

import json
from typing import Any

from nvcregen.fabric.drill import Drill, RoundResult
from nvcregen.fabric.names import compress

RAIL_NOTE = (
    "a rail is found as its node: each run of the node's RDMA tests measures every rail of it,"
    " and their verdicts name the HCA (and its switch port)"
)


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'s' * (number != 1)}"


def _hours(ms: int) -> str:
    minutes = round(ms / 60_000)
    return f"{minutes // 60}h{minutes % 60:02d}m"


def totals(drill: Drill) -> dict[str, Any]:
    """Rounds, jobs, GPU-hours and wall time: of the plan until it failed, and of the retests."""
    wall = sum(r.wall_ms for r in drill.retests)
    return {
        "planRounds": len(drill.plan_rounds),
        "planJobs": sum(len(r.groups) for r in drill.plan_rounds),
        "retestRounds": len(drill.retests),
        "retestJobs": drill.retest_jobs,
        "retestGpuHours": round(sum(r.gpu_hours for r in drill.retests), 3),
        "retestWallMs": wall,
        "gpuHours": round(sum(r.gpu_hours for r in (*drill.plan_rounds, *drill.retests)), 3),
        "wallMs": sum(r.wall_ms for r in drill.plan_rounds) + wall,
    }


def drill_text(drill: Drill) -> str:
    """The drill as lines: the verdict, the totals, then the rounds from the first failure."""
    found = totals(drill)
    verdict = "named" if drill.found else "NOT named"
    lines = [
        f"injected {drill.fault.shown}: {verdict} ({drill.named})",
        f"  plan: {_count(found['planJobs'], 'job')} in {_count(found['planRounds'], 'round')}"
        " until the first failing round",
        f"  retests: {_count(found['retestJobs'], 'job')} in"
        f" {_count(found['retestRounds'], 'round')},"
        f" {found['retestGpuHours']:g} GPU-hours, {_hours(found['retestWallMs'])}",
        f"  total: {found['gpuHours']:g} GPU-hours, {_hours(found['wallMs'])}",
    ]
    if drill.fault.hca:
        lines.append(f"  {RAIL_NOTE}")
    failing = drill.plan_rounds[-1] if drill.plan_rounds else None
    for result in ([failing] if failing else []) + list(drill.retests):
        lines.append(f"  {result.label}:")
        lines += [
            f"    {'FAIL' if bad else 'pass'} {compress(group)}"
            for group, bad in zip(result.groups, result.failed, strict=True)
            if bad or result is not failing
        ]
    return "\n".join(lines) + "\n"


def _round(result: RoundResult) -> dict[str, Any]:
    return {
        "round": result.label,
        "jobs": [
            {"nodes": compress(g), "size": len(g), "failed": bad}
            for g, bad in zip(result.groups, result.failed, strict=True)
        ],
        "wallMs": result.wall_ms,
        "gpuHours": round(result.gpu_hours, 3),
    }


def drill_json(drill: Drill) -> str:
    """The drill as one JSON object."""
    data = {
        "fault": str(drill.fault),
        "named": drill.named,
        "found": drill.found,
        **totals(drill),
        "firstFailingRound": _round(drill.plan_rounds[-1]) if drill.plan_rounds else None,
        "retests": [_round(r) for r in drill.retests],
    }
    if drill.fault.hca:  # only for a rail: a node's or a link's drill prints as it did
        data["rail"] = {"node": drill.fault.node, "hca": drill.fault.hca,
                        "switchPort": drill.fault.port.strip(" ()") or None}  # fmt: skip
    return json.dumps(data, indent=2) + "\n"
