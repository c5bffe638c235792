"""Checks of order and time: overlapping stages, unreported runs, deadlines (pure).

- NVC672: runs of two stages (or two rounds of one test) may run at the same time: they
  are in one step, or the later one's step does not wait for the earlier run.
- NVC673: nothing waits for a run at the end of the plan: the sync or chain reports
  success before it finished (Argo CD's last wave, a run no health check covers).
- NVC675: with expected durations the plan ends after the window's deadline, or never.
- NVC676 (warning): in the worst case (every workload to its timeout, every retest
  happening: `plan/budget.py`) the plan ends after the deadline; a Flux step times out
  before its runs are expected to finish (Flux retries, late).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from nvcregen.core.errors import Severity
from nvcregen.plan.budget import attempts, worst_case
from nvcregen.replay.context import (
    NEVER_ADMITTED,
    OVERLAP,
    OVERRUN,
    UNREPORTED,
    WORST_CASE,
    Context,
    shown,
)
from nvcregen.replay.model import Problem, Run
from nvcregen.replay.simulate import Timeline

GATE_HINT = (
    "give each stage (each round in trainer mode) its own step after the one before: a later "
    "sync wave or a Kustomization depending on it, with health checks for its kinds"
)


def overlapping_stages(ctx: Context) -> Iterator[Problem]:
    """NVC672, once per run: an earlier stage's (or round's) run it may overlap."""
    rivals = _Rivals(ctx)
    for run in ctx.runs:
        rival = rivals.first(run)
        if rival is not None:
            yield _overlap(ctx, rival, run)


def _round(value: str) -> int:
    return int(value) if value.isdigit() else 0


class _Rivals:
    """The first run (in run order) that belongs before a run and may overlap it.

    A run belongs before another when its stage comes earlier in the plan (an unknown
    stage after every known one, ties by name), or it is the same stage's and test's run
    of an earlier round. The answer is the one trying every run for that and for
    `ctx.may_overlap` would give, without trying every pair. Whether two runs are ordered
    depends on their paths and on the `before` set of each one's step, so runs are
    grouped by that set (a few per plan); within a group, the runs the other run's
    `before` leaves out are indexed once by stage, and by (stage, test) and round, each
    keeping its earliest run.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.sets: list[frozenset[str]] = []
        numbers: dict[frozenset[str], int] = {}
        self.group: dict[int, int] = {}
        self.runs_of: dict[int, list[int]] = {}
        for index, run in enumerate(ctx.runs):
            before = ctx.before.get(ctx.gating.step_of.get(run.source.path, ""), frozenset())
            number = numbers.setdefault(before, len(numbers))
            if number == len(self.sets):
                self.sets.append(before)
            self.group[index] = number
            self.runs_of.setdefault(number, []).append(index)
        self.indexes: dict[tuple[int, int], _Index] = {}

    def first(self, run: Run) -> Run | None:
        """The rival `overlapping_stages` reports for `run`, or None."""
        index = self.ctx.position[id(run)]
        mine = self.group[index]
        found = [
            self._index(source, mine).first(self.ctx, run)
            for source in self.runs_of
            if run.source.path not in self.sets[source]  # else `run` waits for them
        ]
        best = min((i for i in found if i is not None), default=None)
        return None if best is None else self.ctx.runs[best]

    def _index(self, source: int, target: int) -> _Index:
        """Runs of group `source` not in the `before` set of group `target`, indexed."""
        key = (source, target)
        if key not in self.indexes:
            excluded = self.sets[target]
            kept = [i for i in self.runs_of[source] if self.ctx.runs[i].source.path not in excluded]
            self.indexes[key] = _Index(self.ctx, kept)
        return self.indexes[key]


class _Index:
    """Runs by stage (earliest of each) and by (stage, test) and round (earliest so far)."""

    def __init__(self, ctx: Context, kept: list[int]) -> None:
        self.by_stage: dict[str, int] = {}
        rounds: dict[tuple[str, str], dict[int, int]] = {}
        for index in kept:  # ascending: the first seen is the earliest
            run = ctx.runs[index]
            self.by_stage.setdefault(run.stage, index)
            if run.round is not None:
                per_round = rounds.setdefault((run.stage, run.test), {})
                per_round.setdefault(_round(run.round), index)
        self.rounds: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
        for key, per_round in rounds.items():
            numbers = sorted(per_round)
            earliest, least = [], len(ctx.runs)
            for number in numbers:
                least = min(least, per_round[number])
                earliest.append(least)
            self.rounds[key] = (numbers, earliest)

    def first(self, ctx: Context, run: Run) -> int | None:
        """The earliest indexed run that `_earlier` puts before `run`."""
        rank = (ctx.facts.stage_rank(run.stage), run.stage)
        found = [
            index
            for stage, index in self.by_stage.items()
            if stage != run.stage and (ctx.facts.stage_rank(stage), stage) < rank
        ]
        if run.round is not None and (run.stage, run.test) in self.rounds:
            numbers, earliest = self.rounds[(run.stage, run.test)]
            below = bisect.bisect_left(numbers, _round(run.round))
            if below:
                found.append(earliest[below - 1])
        return min(found, default=None)


def _overlap(ctx: Context, first: Run, second: Run) -> Problem:
    same_step = ctx.gating.step_of.get(first.source.path) == ctx.gating.step_of.get(
        second.source.path
    )
    if same_step:
        reason = f"both are applied by {ctx.step_label(first)}"
    elif not ctx.gating.waited(first.source.path):
        reason = ctx.gating.unwaited[first.source.path]
    else:
        reason = f"{ctx.step_label(second)} does not wait for {ctx.step_label(first)}"
    what = f"stage '{second.stage}'" if first.stage != second.stage else f"round {second.round}"
    earlier = f"stage '{first.stage}'" if first.stage != second.stage else f"round {first.round}"
    return Problem(
        second.source.file,
        "/metadata/name",
        OVERLAP,
        f"{second.label} ({what}) may run while {first.label} ({earlier}) has not finished: "
        + reason,
        hint=GATE_HINT,
    )


def unreported(ctx: Context) -> Iterator[Problem]:
    """NVC673, once per step: runs nothing waits for when the plan ends."""
    later = {a for step in ctx.gating.steps.values() for a in _ancestors(ctx, step.key)}
    seen: set[str] = set()
    for run in ctx.runs:
        path = run.source.path
        step = ctx.gating.step_of.get(path, "")
        reason = ctx.gating.unreported.get(path)
        if reason is None and not ctx.gating.waited(path) and step not in later:
            reason = ctx.gating.unwaited[path]
        if reason is None or step in seen:
            continue
        seen.add(step)
        yield Problem(
            run.source.file,
            "/metadata/name",
            UNREPORTED,
            f"nothing waits for {run.label} at the end of the plan: {reason}",
            hint="end the plan with a step that waits: a final gate object in a later sync wave "
            "(Argo CD), `wait: true` with healthCheckExprs for its kind (Flux)",
        )


def _ancestors(ctx: Context, key: str) -> set[str]:
    found: set[str] = set()
    todo = list(ctx.gating.steps[key].after) if key in ctx.gating.steps else []
    while todo:
        step = todo.pop()
        if step not in found:
            found.add(step)
            todo += ctx.gating.steps[step].after if step in ctx.gating.steps else ()
    return found


def deadline(ctx: Context, found: list[Problem]) -> Iterator[Problem]:
    """NVC675 and NVC676: the plan against the window's deadline and Flux's step timeouts."""
    limit, retests = ctx.facts.deadline_ms, ctx.facts.retests
    if ctx.expected.end_ms is None:
        if not any(p.code == NEVER_ADMITTED for p in found):
            yield _never_ends(ctx)
        return
    if ctx.expected.end_ms > limit:
        yield _late(ctx, ctx.expected, OVERRUN, Severity.ERROR, "expected durations")
    elif ctx.worst.end_ms is not None and ctx.worst.end_ms * attempts(retests) > limit:
        case = "every job running to its timeout" + (
            f" and every retest happening ({retests})" if retests else ""
        )
        yield _late(ctx, ctx.worst, WORST_CASE, Severity.WARNING, case, retests)
    yield from _flux_timeouts(ctx)


def _late(
    ctx: Context,
    timeline: Timeline,
    code: str,
    severity: Severity,
    case: str,
    retests: int = 0,
) -> Problem:
    path, _ = max(timeline.runs.items(), key=lambda item: (item[1][1] or 0, item[0]))
    run = next(r for r in ctx.runs if r.source.path == path)
    once = timeline.end_ms or 0
    total = worst_case(shown(once * attempts(retests)), shown(once), retests)
    return Problem(
        run.source.file,
        "/metadata/name",
        code,
        f"the plan ends {total} after it starts with {case} ({run.label} last), after the "
        f"window's deadline of {shown(ctx.facts.deadline_ms)}",
        severity,
        "raise readiness.window.deadline or maxConcurrentJobs (and the quota with it), or plan "
        "fewer tests or rounds; `nvcregen plan` shows where the time goes",
    )


def _never_ends(ctx: Context) -> Problem:
    path = ctx.expected.stuck[0]
    run = next(r for r in ctx.runs if r.source.path == path)
    return Problem(
        run.source.file,
        "/metadata/name",
        OVERRUN,
        f"the plan never ends: {run.label} never starts ({ctx.step_label(run)} is never applied)",
        hint="check the steps' dependsOn for a loop or a Kustomization that never becomes Ready",
    )


def _flux_timeouts(ctx: Context) -> Iterator[Problem]:
    for key, step in ctx.gating.steps.items():
        applied, done = ctx.expected.steps.get(key, (None, None))
        if step.timeout_ms is None or applied is None or done is None:
            continue
        if done - applied > step.timeout_ms:
            yield Problem(
                step.file,
                "/spec/timeout",
                WORST_CASE,
                f"{step.label} times out after {shown(step.timeout_ms)}, but its runs are expected "
                f"to take {shown(done - applied)}: Flux reports the step failed, then retries",
                Severity.WARNING,
                "raise the step's timeout to the step's expected wall time (`nvcregen plan`)",
            )
