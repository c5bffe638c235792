"""A rehearsal judged against its plan, and printed: text tables or JSON (pure).

Planned figures are the replay's (`replay/timeline.py::plan_view`, what `nvcregen plan`
prints): each step's runs, workloads, nodes, the most at once, and its place in the plan
(steps starting together share a place). Observed figures come from the watch: when each
run was admitted and finished, where its pods ran, the most runs holding quota at once.

A run is **out of order** when it was admitted while a run of a step planned before its
own had not finished. The rehearsal went **as planned** when no run was refused, every
run was admitted and finished successfully, none out of order, and no step failed its
health checks; with the pods' logs collected (`Collected`), exit 0 only when it went
as planned and the verdict is `pass`; otherwise 1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nvcregen.core.errors import ExitCode
from nvcregen.core.terminal import one_line
from nvcregen.engineapi.registry import GITOPS
from nvcregen.rehearse.gitopsplay import player_of
from nvcregen.rehearse.steps import StepOutcome
from nvcregen.rehearse.watch import RunState
from nvcregen.replay.timeline import PlanView, StepRow


@dataclass(frozen=True)
class Collected:
    """What `collect` made of the pods' logs at the end of a rehearsal.

    Attributes:
        word: The overall verdict (`pass`, `fail`, `incomplete`), "" when not collected.
        nodes: Each node's status (`cleared`, `failed`, `suspect`, ...), in the verdict's order.
        archive: The archive's folder ("" when none was written).
        lines: What `collect` printed of its verdicts.
        error: Why nothing was collected ("" when it was).
        served: How many pods' logs kwok served.

    """

    word: str = ""
    nodes: tuple[tuple[str, str], ...] = ()
    archive: str = ""
    lines: tuple[str, ...] = ()
    error: str = ""
    served: int = 0


@dataclass(frozen=True)
class Rehearsal:
    """Everything a report says.

    Attributes:
        site: The site's name.
        engine: `argocd`, `flux` or `waves` (a tree without GitOps objects).
        speed: How much faster than planned pods complete.
        timeout_s: How long the steps had.
        plan: The replay's timeline.
        steps: Every applied (or never applied) step, in apply order.
        runs: Every run.
        most: The most runs holding quota at once, over every step.
        at_once: The most runs of each step holding quota at once, by step key.
        skipped: Objects not applied, with why.
        nodes: The fake nodes' names.
        started_s: How long the twin took to start.
        wall_s: The whole rehearsal's wall time.
        collected: The verdicts `collect` read from the pods' logs (None: not collected).
        engine_ran: The GitOps engine's own controllers applied the steps (Flux).

    """

    site: str
    engine: str
    speed: float
    timeout_s: float
    plan: PlanView
    steps: tuple[StepOutcome, ...]
    runs: tuple[RunState, ...]
    most: int = 0
    at_once: Mapping[str, int] = field(default_factory=dict)
    skipped: tuple[tuple[str, str], ...] = ()
    nodes: tuple[str, ...] = ()
    started_s: float = 0.0
    wall_s: float = 0.0
    collected: Collected | None = None
    engine_ran: bool = False


NAMED_PER_STATUS = 8  # more nodes of one status are counted, not named, in the text


def engine_note(engine: str, ran: bool = False) -> str:
    """What played the GitOps engine.

    `engine`: its name, or `waves` for none; `ran`: the engine's own controllers did.
    """
    gitops = GITOPS.get(engine)
    if gitops is None:
        return "no GitOps objects: the tree was applied wave by wave, every run waited on"
    return player_of(gitops).note(ran)


def planned_ranks(plan: PlanView) -> dict[str, int]:
    """Each planned step's place: 1 for the first; steps starting together share one."""
    starts = sorted({row.start_ms for row in plan.steps if row.start_ms is not None})
    return {
        row.name: (starts.index(row.start_ms) + 1 if row.start_ms is not None else len(starts) + 1)
        for row in plan.steps
    }


def planned_rows(plan: PlanView) -> Callable[[Sequence[RunState]], StepRow | None]:
    """The planned step holding the most of some runs (None: the plan has none of them).

    Each planned run's step is indexed once, so finding every observed step's row costs
    the runs, not the runs times the plan's steps.
    """
    row_of = {label: row for row in plan.steps for label in row.runs}
    order = {row.name: index for index, row in enumerate(plan.steps)}

    def of(runs: Sequence[RunState]) -> StepRow | None:
        counts = Counter(row_of[r.label].name for r in runs if r.label in row_of)
        if not counts:
            return None
        # the most runs; among equals the first in the plan, as `max` over its steps chose
        name = min(counts, key=lambda n: (-counts[n], order[n]))
        return next(row for row in plan.steps if row.name == name)

    return of


def out_of_order(runs: Sequence[RunState], rank_of: Mapping[str, int]) -> list[RunState]:
    """Runs admitted while a run of a step planned before theirs had not finished.

    A run not finished counts as finishing never. Per rank, the latest finish among the
    runs of every rank before it is kept, so each run is compared once (not with every
    other run: 1,632 runs at fleet size).
    """
    never = math.inf
    latest: dict[int, float] = {}  # rank -> the latest finish among runs of that rank
    for run in runs:
        rank = rank_of.get(run.path)
        if rank is not None:
            done = never if run.finished_s is None else run.finished_s
            latest[rank] = max(latest.get(rank, -never), done)
    before: dict[int, float] = {}  # rank -> the latest finish among runs of earlier ranks
    running = -never
    for rank in sorted(latest):
        before[rank] = running
        running = max(running, latest[rank])
    return [
        run
        for run in runs
        if (rank := rank_of.get(run.path)) is not None
        and run.admitted_s is not None
        and before[rank] > run.admitted_s
    ]


@dataclass(frozen=True)
class StepReport:
    """One step's planned and observed figures."""

    outcome: StepOutcome
    name: str
    row: StepRow | None
    planned_rank: int | None
    observed_rank: int | None
    runs: tuple[RunState, ...]
    at_once: int
    late: tuple[str, ...]

    @property
    def unadmitted(self) -> list[str]:
        """Runs never admitted."""
        return [r.label for r in self.runs if r.admitted_s is None]

    @property
    def unfinished(self) -> list[str]:
        """Runs admitted that never finished successfully."""
        return [r.label for r in self.runs if r.admitted_s is not None and r.outcome != "Succeeded"]

    @property
    def as_planned(self) -> bool:
        """Applied, healthy, every run admitted and finished successfully in order.

        Nothing refused or failed either. A step never applied, or whose health never
        passed (the time ran out while the engine waited on it), did not go as planned,
        with runs or without.
        """
        return not (
            self.outcome.applied_s is None
            or self.outcome.done_s is None
            or self.unadmitted
            or self.unfinished
            or self.late
            or self.outcome.refused
            or self.outcome.failed
        )


def step_reports(rehearsal: Rehearsal) -> list[StepReport]:
    """Each step's figures, in apply order."""
    ranks = planned_ranks(rehearsal.plan)
    by_step: dict[str, list[RunState]] = {}
    for run in rehearsal.runs:
        by_step.setdefault(run.step, []).append(run)
    row_for = planned_rows(rehearsal.plan)
    rows = {s.key: row_for(by_step.get(s.key, [])) for s in rehearsal.steps}
    rank_of_run = {
        run.path: ranks[row.name]
        for key, row in rows.items()
        if row is not None
        for run in by_step.get(key, [])
    }
    late = {r.path for r in out_of_order(rehearsal.runs, rank_of_run)}
    firsts = {
        key: min(r.admitted_s for r in runs if r.admitted_s is not None)
        for key, runs in by_step.items()
        if any(r.admitted_s is not None for r in runs)
    }
    seen = sorted(set(firsts.values()))
    reports = []
    for outcome in rehearsal.steps:
        runs = tuple(by_step.get(outcome.key, []))
        row = rows[outcome.key]
        first = firsts.get(outcome.key)
        reports.append(
            StepReport(
                outcome,
                row.name if row is not None else outcome.label,
                row,
                ranks[row.name] if row is not None else None,
                seen.index(first) + 1 if first is not None else None,
                runs,
                rehearsal.at_once.get(outcome.key, 0),
                tuple(r.label for r in runs if r.path in late),
            )
        )
    return reports


def exit_code(reports: Sequence[StepReport], collected: Collected | None = None) -> ExitCode:
    """0 when every step went as planned and (when collected) the verdict is `pass`, else 1."""
    passed = collected is None or collected.word == "pass"
    return ExitCode.OK if passed and all(r.as_planned for r in reports) else ExitCode.DRIFT


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def to_json(rehearsal: Rehearsal, reports: Sequence[StepReport] | None = None) -> dict[str, Any]:
    """The report as JSON data (see README: `as_planned`, `unadmitted`, `unfinished`, `steps`).

    `reports`: the rehearsal's `step_reports`, when the caller has them already.
    """
    reports = step_reports(rehearsal) if reports is None else reports
    steps = []
    for report in reports:
        row, outcome = report.row, report.outcome
        admitted = [r.admitted_s for r in report.runs if r.admitted_s is not None]
        finished = [r.finished_s for r in report.runs if r.finished_s is not None]
        planned = None
        if row is not None:
            planned = {
                "order": report.planned_rank,
                "runs": len(row.runs),
                "jobs": row.jobs,
                "at_once": row.at_once,
                "nodes": list(row.nodes),
                "start_s": None if row.start_ms is None else row.start_ms / 1000,
                "expected_s": None if row.expected_ms is None else row.expected_ms / 1000,
            }
        steps.append(
            {
                "step": report.name,
                "applied_by": outcome.label,
                "as_planned": report.as_planned,
                "planned": planned,
                "observed": {
                    "order": report.observed_rank,
                    "runs": len(report.runs),
                    "admitted": len(admitted),
                    "applied_s": _seconds(outcome.applied_s),
                    "first_admission_s": _seconds(min(admitted, default=None)),
                    "last_admission_s": _seconds(max(admitted, default=None)),
                    "admission_wall_s": _seconds(
                        max(admitted) - outcome.applied_s
                        if admitted and outcome.applied_s is not None
                        else None
                    ),
                    "last_finished_s": _seconds(max(finished, default=None)),
                    "healthy_s": _seconds(outcome.done_s),
                    "at_once": report.at_once,
                    "placement": {r.label: sorted(r.nodes) for r in report.runs},
                    "waiting": {r.label: r.waiting for r in report.runs if r.admitted_s is None},
                    "unadmitted": report.unadmitted,
                    "unfinished": report.unfinished,
                    "outcomes": {
                        r.label: r.outcome
                        for r in report.runs
                        if r.admitted_s is not None and r.outcome != "Succeeded"
                    },
                    "out_of_order": list(report.late),
                    "refused": list(outcome.refused),
                    "failed": outcome.failed,
                },
            }
        )
    return {
        "site": rehearsal.site,
        "engine": rehearsal.engine,
        "note": engine_note(rehearsal.engine, rehearsal.engine_ran),
        "as_planned": all(r.as_planned for r in reports),
        "runs": len(rehearsal.runs),
        "unadmitted": sum(len(r.unadmitted) for r in reports),
        "unfinished": sum(len(r.unfinished) for r in reports),
        "out_of_order": sum(len(r.late) for r in reports),
        "refused": sum(len(r.outcome.refused) for r in reports),
        "most_at_once": rehearsal.most,
        "max_concurrent_jobs": rehearsal.plan.max_concurrent_jobs,
        "speed": rehearsal.speed,
        "timeout_s": rehearsal.timeout_s,
        "twin_start_s": round(rehearsal.started_s, 2),
        "wall_s": round(rehearsal.wall_s, 2),
        "nodes": list(rehearsal.nodes),
        "skipped": [{"path": p, "why": why} for p, why in rehearsal.skipped],
        **_verdict_json(rehearsal.collected),
        "steps": steps,
    }


def _verdict_json(collected: Collected | None) -> dict[str, Any]:
    """`verdict` (null when not collected), each node's status, the archive, any error."""
    if collected is None:
        return {"verdict": None}
    return {
        "verdict": collected.word or None,
        "node_statuses": dict(collected.nodes),
        "archive": collected.archive or None,
        "pod_logs_served": collected.served,
        "collect_error": collected.error or None,
    }


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def to_text(rehearsal: Rehearsal, reports: Sequence[StepReport] | None = None) -> str:
    """The report as text: a summary, then a table per step (one row per run)."""
    reports = step_reports(rehearsal) if reports is None else reports
    data = to_json(rehearsal, reports)
    verdict = "as planned" if data["as_planned"] else "NOT as planned"
    lines = [
        f"{rehearsal.site}: rehearsed on the twin in {rehearsal.wall_s:.1f}s (twin start "
        f"{rehearsal.started_s:.1f}s, pods at {rehearsal.speed:g}x): {verdict}; "
        f"{data['runs']} runs, {data['unadmitted']} never admitted, {data['unfinished']} "
        f"unfinished, {data['out_of_order']} out of order, most at once "
        f"{rehearsal.most} of {rehearsal.plan.max_concurrent_jobs}",
        f"  {engine_note(rehearsal.engine, rehearsal.engine_ran)}; no GPUs, no network: "
        "placement, order, gating and admission only",
    ]
    if rehearsal.skipped:
        lines.append(
            f"  not applied: {len(rehearsal.skipped)} objects (`--format json` names them)"
        )
    for report in reports:
        lines += _step_text(report)
    lines += _verdict_text(rehearsal.collected)
    return "\n".join(one_line(line) for line in lines) + "\n"


def node_summary(nodes: Sequence[tuple[str, str]]) -> str:
    """Each node with its status, but a status many nodes share as its count.

    `node-a failed, node-b suspect, 1022 cleared`: at fleet size the nodes to act on are
    named and the rest counted (JSON `node_statuses` has every one).
    """
    by_status: dict[str, list[str]] = {}
    for node, status in nodes:
        by_status.setdefault(status, []).append(node)
    parts = []
    for status, named in by_status.items():
        if len(named) > NAMED_PER_STATUS:
            parts.append(f"{len(named)} {status}")
        else:
            parts += [f"{node} {status}" for node in named]
    return ", ".join(parts) or "none"


def _verdict_text(collected: Collected | None) -> list[str]:
    if collected is None:
        return []
    if collected.error:
        return ["", f"verdicts: not collected: {collected.error}"]
    nodes = node_summary(collected.nodes)
    lines = [
        "",
        f"verdicts: {collected.word} (collect read {collected.served} pods' logs; nodes: {nodes})",
    ]
    if collected.archive:
        lines.append(f"  archive: {collected.archive}")
    return lines + [f"  {line}" for line in collected.lines]


def _step_text(report: StepReport) -> list[str]:
    outcome, row = report.outcome, report.row
    planned = (
        f"planned #{report.planned_rank}, {row.at_once} at once"
        if row is not None
        else "not in the plan"
    )
    seen = f"seen #{report.observed_rank}" if report.observed_rank is not None else "none admitted"
    state = "ok" if report.as_planned else "NOT as planned"
    name = report.name if row is None else f"{report.name} ({outcome.label})"
    healthy = f"healthy {_fmt(outcome.done_s)}" if outcome.applied_s is not None else "not applied"
    runs = f"{planned}; {seen}, {report.at_once} at once" if report.runs else "no runs"
    head = f"{name}: {state}; applied {_fmt(outcome.applied_s)}, {healthy}; {runs}"
    lines = ["", head]
    lines += [f"  refused: {why}" for why in outcome.refused]
    if outcome.failed:
        lines.append(f"  failed: {outcome.failed}")
    if not report.runs:
        return lines
    width = max(len(r.label) for r in report.runs)
    lines.append(f"  {'run':<{width}}  admitted  finished  nodes         outcome")
    for run in report.runs:
        note = "out of order" if run.label in report.late else run.outcome or "-"
        if run.admitted_s is None:
            note = f"never admitted ({run.waiting})" if run.waiting else "never admitted"
        lines.append(
            f"  {run.label:<{width}}  {_fmt(run.admitted_s):>8}  {_fmt(run.finished_s):>8}  "
            f"{','.join(sorted(run.nodes)) or '-':<12}  {note}"
        )
    return lines
