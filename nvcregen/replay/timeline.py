"""The plan as a timeline: what `nvcregen plan` prints and `diff` compares (pure).

Each row is a step of the replay (a stage, or a round of one in trainer mode): its runs,
the nodes its workloads used, when it applies and how long it takes with expected
durations and with every workload to its timeout, the longest timeout of one job, how
long its GitOps step waits (Flux's `timeout`), the longest a stuck step can hold a sync
(`holds_ms`: Flux gives up at the step's timeout; Argo CD has no sync timeout, but in
trainer mode each run's prebuilt Workload turns Degraded once Kueue deactivates the run,
which ends the sync: at most the step's worst case plus the time Kueue takes to give up
on a run whose pods never get ready (`PlanFacts.deactivation_ms`), `holds_queued` because
a run Kueue never admits still holds it; without prebuilt Workloads, with NVCRE or an
existing Kueue it is None: no limit), the most workloads running at once, and
GPU-hours (GPUs held x time held). A step fits the
window when it never runs more than `maxConcurrentJobs` at once and ends before the
deadline.

The worst case is the budget's (`plan/budget.py`): every workload to its timeout and
every retest happening, so `worst_case_ms` is one attempt's replayed `worst_ms` times
1 + `readiness.window.retests`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nvcregen.catalog.engines import engine_facts
from nvcregen.fabric.groups import Coverage
from nvcregen.plan.budget import attempts
from nvcregen.plan.periodic import PeriodicCost
from nvcregen.replay.context import Context
from nvcregen.replay.engineload import EngineLoad, engine_load
from nvcregen.replay.model import Run
from nvcregen.replay.simulate import Slot, Timeline
from nvcregen.replay.site import Replay

_MS_PER_HOUR = 3_600_000


@dataclass(frozen=True)
class StepRow:
    """One step of the timeline; times in ms from the plan's start (None: never)."""

    name: str
    applied_by: str
    stages: tuple[str, ...]
    runs: tuple[str, ...]
    jobs: int
    nodes: tuple[str, ...]
    start_ms: int | None
    end_ms: int | None
    expected_ms: int | None
    worst_ms: int | None  # one attempt: every job to its timeout, no retest
    timeout_ms: int
    step_timeout_ms: int | None
    holds_ms: int | None
    at_once: int
    gpu_hours: float
    worst_gpu_hours: float
    fits: bool
    retests: int = 0

    @property
    def holds_queued(self) -> bool:
        """Argo CD: a run never admitted holds the sync on top of `holds_ms`.

        Wherever Argo CD's hold has a bound (Kueue gives up on a run that ran), nothing
        gives up on a run that never ran.
        """
        return self.step_timeout_ms is None and self.holds_ms is not None

    @property
    def worst_case_ms(self) -> int | None:
        """The step's worst case: one attempt (`worst_ms`) and every retest."""
        return None if self.worst_ms is None else self.worst_ms * attempts(self.retests)

    @property
    def worst_case_gpu_hours(self) -> float:
        """The step's worst-case GPU-hours: one attempt's (`worst_gpu_hours`) and every retest's."""
        return self.worst_gpu_hours * attempts(self.retests)


@dataclass(frozen=True)
class PlanView:
    """A site's timeline and its totals against the window."""

    site: str
    steps: tuple[StepRow, ...]
    expected_ms: int | None
    worst_ms: int | None  # one attempt: every job to its timeout, no retest
    gpu_hours: float
    worst_gpu_hours: float  # one attempt
    deadline_ms: int
    budget_gpu_hours: float
    max_concurrent_jobs: int
    errors: int
    warnings: int
    coverage: Mapping[str, Coverage] = field(default_factory=dict)  # by step name
    retests: int = 0
    load: EngineLoad | None = None  # Kueue's admission and Flux's workers (issue 33)
    periodic: PeriodicCost | None = None  # `readiness.periodic`'s weekly cost (issue 37)

    @property
    def worst_case_ms(self) -> int | None:
        """The plan's worst case: one attempt (`worst_ms`) and every retest."""
        return None if self.worst_ms is None else self.worst_ms * attempts(self.retests)

    @property
    def worst_case_gpu_hours(self) -> float:
        """The worst case's GPU-hours: one attempt's (`worst_gpu_hours`) and every retest's."""
        return self.worst_gpu_hours * attempts(self.retests)

    @property
    def fits(self) -> bool:
        """Whether the expected plan ends before the deadline, every step within the window."""
        return not self.breaks

    @property
    def breaks(self) -> tuple[str, ...]:
        """The limits of the window the expected plan breaks, in this order (empty: it fits).

        `deadline` (the plan, or a step, ends after it or never), `GPU-hours` (more than
        the window's), `concurrency` (a step runs more than `maxConcurrentJobs` at once),
        `admission` (Kueue, one workload per cycle at its expected pace, takes longer than
        the window to admit the plan's workloads: it never ends in time).
        """
        late = self.expected_ms is None or self.expected_ms > self.deadline_ms
        late = late or any(s.end_ms is None or s.end_ms > self.deadline_ms for s in self.steps)
        found = (
            ("deadline", late),
            ("GPU-hours", self.gpu_hours > self.budget_gpu_hours),
            ("concurrency", bool(self.crowded)),
            ("admission", self.load is not None and self.load.expected_ms > self.deadline_ms),
        )
        return tuple(name for name, broken in found if broken)

    @property
    def crowded(self) -> tuple[StepRow, ...]:
        """The steps running more than `maxConcurrentJobs` at once, most first."""
        over = [s for s in self.steps if s.at_once > self.max_concurrent_jobs]
        return tuple(sorted(over, key=lambda s: -s.at_once))


def plan_view(replay: Replay) -> PlanView:
    """The timeline of a replayed site."""
    facts = replay.facts
    members = replay.gating.members(replay.runs)  # once: a fleet has thousands of runs
    rows = [_row(replay, key, members[key]) for key in replay.gating.steps if members.get(key)]
    rows.sort(key=lambda r: (r.start_ms is None, r.start_ms or 0, r.name))
    severities = [p.severity.value for p in replay.problems]
    load = engine_load(replay, rows, engine_facts())
    return PlanView(
        facts.site,
        tuple(rows),
        replay.expected.end_ms,
        replay.worst.end_ms,
        _gpu_hours(replay.expected.slots),
        _gpu_hours(replay.worst.slots),
        facts.deadline_ms,
        facts.gpu_hours,
        facts.max_concurrent_jobs,
        severities.count("error"),
        severities.count("warning"),
        retests=facts.retests,
        load=load,
    )


def _row(replay: Replay, key: str, runs: list[Run]) -> StepRow:
    paths = {r.source.path for r in runs}
    slots = [s for s in replay.expected.slots if s.run in paths]
    worst = [s for s in replay.worst.slots if s.run in paths]
    start, end = _span(replay.expected, paths)
    worst_start, worst_end = _span(replay.worst, paths)
    at_once = _at_once(slots)
    limit = replay.facts.deadline_ms
    worst_ms = None if worst_start is None or worst_end is None else worst_end - worst_start
    return StepRow(
        name=_row_name(runs),
        applied_by=replay.gating.steps[key].label,
        stages=tuple(dict.fromkeys(r.stage for r in runs)),
        runs=tuple(r.label for r in runs),
        jobs=sum(len(r.workloads) for r in runs),
        nodes=tuple(sorted({n for s in slots for n in s.nodes})),
        start_ms=start,
        end_ms=end,
        expected_ms=None if start is None or end is None else end - start,
        worst_ms=worst_ms,
        timeout_ms=max((w.timeout_ms for r in runs for w in r.workloads), default=0),
        step_timeout_ms=replay.gating.steps[key].timeout_ms,
        holds_ms=_holds_ms(replay, key, runs, worst_ms),
        at_once=at_once,
        gpu_hours=_gpu_hours(slots),
        worst_gpu_hours=_gpu_hours(worst),
        fits=end is not None and end <= limit and at_once <= replay.facts.max_concurrent_jobs,
        retests=replay.facts.retests,
    )


def step_worst_ms(ctx: Context) -> dict[str, int]:
    """Each step's `worst_ms` by its row's name, from the worst clock alone.

    As `plan_view` reads it (the expected clock never runs): a step with no runs has no
    row, and one whose runs never all end is left out.
    """
    found = {}
    for key in ctx.gating.steps:
        members = ctx.members.get(key, [])
        start, end = _span(ctx.worst, {r.source.path for r in members})
        if members and start is not None and end is not None:
            found[_row_name(members)] = end - start
    return found


def _row_name(runs: Sequence[Run]) -> str:
    """A row's name: the step folders of its runs."""
    return ", ".join(sorted({_folder(r.source.path) for r in runs}))


def _holds_ms(replay: Replay, key: str, runs: list[Run], worst_ms: int | None) -> int | None:
    """The longest a stuck step holds its sync; None: until someone ends it (see above)."""
    step_timeout = replay.gating.steps[key].timeout_ms
    if step_timeout is not None:  # Flux
        return step_timeout
    deactivation = replay.facts.deactivation_ms
    if deactivation is None or worst_ms is None or not _seen(replay, runs):
        return None
    return worst_ms + deactivation


def _seen(replay: Replay, runs: list[Run]) -> bool:
    """Whether Argo CD would see Kueue deactivate each run (`Gating.deactivation_seen`)."""
    return bool(runs) and all(r.source.path in replay.gating.deactivation_seen for r in runs)


def _span(timeline: Timeline, paths: set[str]) -> tuple[int | None, int | None]:
    """When the first of these runs started and the last ended (None: never)."""
    times = [timeline.runs[p] for p in paths if p in timeline.runs]
    starts = [s for s, _ in times if s is not None]
    ends = [e for _, e in times]
    start = min(starts) if starts else None
    end = (
        None if not ends or any(e is None for e in ends) else max(e for e in ends if e is not None)
    )
    return start, end


def _folder(path: str) -> str:
    """A run's step folder: its folder below the layer (`01-single-node/round-1`)."""
    parts = path.split("/")[1:-1]
    return "/".join(parts) or path


def _at_once(slots: list[Slot]) -> int:
    """The most workloads running at the same moment."""
    events = sorted([(s.start_ms, 1) for s in slots] + [(s.end_ms, -1) for s in slots])
    peak = running = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


def _gpu_hours(slots: tuple[Slot, ...] | list[Slot]) -> float:
    return sum(s.gpus * (s.end_ms - s.start_ms) for s in slots) / _MS_PER_HOUR
