"""What every check of the replay reads: the model, the clocks, and derived relations (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from nvcregen.core import codes, units
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.gating import Gating
from nvcregen.replay.kueue import Admission, Queues
from nvcregen.replay.model import Run, Workload
from nvcregen.replay.placement import Cluster
from nvcregen.replay.runmodels import run_models
from nvcregen.replay.simulate import Case, Timeline, simulate

Key = tuple[int, int, int]  # (run, batch, workload)

# Codes of the replay (docs/design/0008-replay.md).
NEVER_ADMITTED = codes.NVC670.code
PARTIAL = codes.NVC671.code
OVERLAP = codes.NVC672.code
UNREPORTED = codes.NVC673.code
CONCURRENCY = codes.NVC674.code
OVERRUN = codes.NVC675.code
WORST_CASE = codes.NVC676.code


@dataclass(frozen=True)
class Context:
    """The replayed tree: runs, steps, queues, each workload's admission, both clocks.

    Each clock runs when first read: the step timeouts read only the worst one.
    """

    facts: PlanFacts
    runs: tuple[Run, ...]
    gating: Gating
    queues: Queues
    admissions: Mapping[Key, Admission]
    blocked: frozenset[Key]
    cluster: Cluster

    @cached_property
    def expected(self) -> Timeline:
        """The clock with expected durations."""
        return self.clock("expected")

    @cached_property
    def worst(self) -> Timeline:
        """The clock with every workload to its timeout (all the step timeouts read)."""
        return self.clock("worst")

    def clock(self, case: Case) -> Timeline:
        """Run the plan on the clock, on the site's nodes all free."""
        return simulate(
            self.runs,
            self.gating,
            self.admissions,
            self.queues.priorities,
            self.cluster.fresh(),
            case=case,
            blocked=self.blocked,
        )

    def workload(self, key: Key) -> Workload:
        """The workload at a key."""
        run, batch, index = key
        return self.runs[run].batches[batch].workloads[index]

    @cached_property
    def before(self) -> dict[str, frozenset[str]]:
        """Per step, the runs that must have finished before it applies."""
        return self.gating.before(r.source.path for r in self.runs)

    def ordered(self, first: Run, second: Run) -> bool:
        """Whether `second` can only start once `first` has finished."""
        step = self.gating.step_of.get(second.source.path, "")
        return first.source.path in self.before.get(step, frozenset())

    def may_overlap(self, one: Run, other: Run) -> bool:
        """Whether two different runs can be running at the same time."""
        return one is not other and not self.ordered(one, other) and not self.ordered(other, one)

    @cached_property
    def position(self) -> dict[int, int]:
        """Each run's index in `runs`, by the run's id()."""
        return {id(run): index for index, run in enumerate(self.runs)}

    @cached_property
    def members(self) -> dict[str, list[Run]]:
        """The runs of each step, in run order (runs of no step left out)."""
        return self.gating.members(self.runs)

    def together(self, step: str) -> list[Run]:
        """The runs of a step and every run that may overlap one of them.

        `first` is ordered before every run of the step when it is in the step's `before`
        set; a run of the step is before `first` when it is in the `before` of its step.
        Whether the step's runs are all in a step's `before` is asked once per step.
        """
        members = self.members.get(step, [])
        earlier = self.before.get(step, frozenset())
        paths = {m.source.path for m in members}
        after: dict[str, bool] = {}

        def overlaps(run: Run) -> bool:
            other = self.gating.step_of.get(run.source.path)
            if other == step:
                return True
            if run.source.path in earlier:
                return False
            key = other or ""
            if key not in after:
                after[key] = paths <= self.before.get(key, frozenset())
            return not after[key]

        return [r for r in self.runs if overlaps(r)]

    def step_label(self, run: Run) -> str:
        """How messages name a run's step."""
        step = self.gating.steps.get(self.gating.step_of.get(run.source.path, ""))
        return step.label if step else "no step"


def queue_pointer(run: Run) -> str:
    """Where a run names its queue: its labels, or where its engine's run model says."""
    model = run_models().get((run.source.group, run.source.kind))
    return model.queue_pointer if model is not None else "/metadata/labels"


def shown(ms: int) -> str:
    """A duration to the second, as the site writes durations."""
    return units.format_duration(round(ms / 1000) * 1000)
