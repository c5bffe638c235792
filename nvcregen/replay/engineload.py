"""What a replayed site asks of Kueue's admission and Flux's workers (issue 33; pure).

Kueue admits at most one workload per ClusterQueue per scheduling cycle (Kueue 0.19,
`pkg/cache/queue/manager.go`), so a step that queues N workloads in one ClusterQueue waits
N cycles before its last run can start, however much quota is free. How long a cycle
takes grows with the cluster; `catalog/engines.yaml` gives an expected figure (Kueue's own
performance baseline) and a worst one (kueue#14477), each with its source. The replay's
clock does not include this wait; `plan` states it beside the timeline, and a plan whose
admission alone (expected) outlasts its window does not fit.

Flux reconciles `--concurrent` Kustomizations at once (4 by default), and a step with
`wait: true` holds one worker until its runs end or its timeout passes. A site's steps run
one after the other, so it holds as many workers at once as its widest step has
Kustomizations (a step split into shards has one per shard, applied together, each
holding a worker from then on, its runs queued or not); `plan` says how many and for how
long, and warns when one site alone would take every worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from nvcregen.catalog.engines import EngineFacts
from nvcregen.replay.gitopsmodel import models
from nvcregen.replay.site import Replay


class StepRow(Protocol):
    """What this module reads of a timeline's step (`replay.timeline.StepRow`)."""

    @property
    def applied_by(self) -> str:
        """The Application or Kustomization that applies the step."""
        ...

    @property
    def start_ms(self) -> int | None:
        """When the step starts (expected), from the plan's start."""
        ...

    @property
    def end_ms(self) -> int | None:
        """When the step ends (expected)."""
        ...

    @property
    def step_timeout_ms(self) -> int | None:
        """Flux's timeout of the step's Kustomization."""
        ...


@dataclass(frozen=True)
class StepAdmission:
    """The workloads one step queues in one ClusterQueue, and Kueue's time to admit them."""

    step: str
    cluster_queue: str
    workloads: int
    expected_ms: int
    worst_ms: int


@dataclass(frozen=True)
class EngineLoad:
    """Admission per step and queue, its totals, and the Flux workers a site holds.

    Attributes:
        admissions: Per step (in the timeline's order) and ClusterQueue.
        expected_ms: Admission of every step, one after the other, at the expected cycle.
        worst_ms: The same at the worst cycle observed.
        flux_workers: Flux workers the site holds at once (None: not a Flux site).
        flux_limit: Flux's `--concurrent` default.
        flux_hold_ms: The longest any one step holds a worker (its timeout).

    """

    admissions: tuple[StepAdmission, ...]
    expected_ms: int
    worst_ms: int
    flux_workers: int | None
    flux_limit: int
    flux_hold_ms: int | None


def engine_load(replay: Replay, rows: Sequence[StepRow], facts: EngineFacts) -> EngineLoad:
    """Kueue admission per step and ClusterQueue, and the Flux workers the steps hold.

    `rows` are the timeline's steps (`plan_view`): their expected spans tell how many of
    the site's Kustomizations wait at once.
    """
    members = replay.gating.members(replay.runs)
    order = {row.applied_by: i for i, row in enumerate(rows)}
    admissions: list[StepAdmission] = []
    for key, step in sorted(replay.gating.steps.items(), key=lambda s: order.get(s[1].label, 0)):
        queued: dict[str, int] = {}
        for run in members.get(key, []):
            for batch in run.batches:
                for workload in batch.workloads:
                    if workload.admitter != "kueue" or workload.queue is None:
                        continue
                    local = (run.source.namespace, workload.queue)
                    cluster = replay.queues.local.get(local, f"(LocalQueue {workload.queue})")
                    queued[cluster] = queued.get(cluster, 0) + 1
        admissions += [
            StepAdmission(
                step.label, cluster, n, n * facts.cycle_expected_ms, n * facts.cycle_worst_ms
            )
            for cluster, n in sorted(queued.items())
        ]
    workers = tuple(m.worker_steps for _, m in models() if m.worker_steps is not None)
    holding = [r for r in rows if r.applied_by.startswith(workers)]
    holds = [r.step_timeout_ms for r in holding if r.step_timeout_ms is not None]
    # a Kustomization holds its worker from when it is applied, its runs queued or not:
    # the shards of one step are applied together
    held = [
        replay.expected.steps.get(key, (None, None))
        for key, step in replay.gating.steps.items()
        if step.label.startswith(workers) and members.get(key)
    ]
    return EngineLoad(
        tuple(admissions),
        sum(a.expected_ms for a in admissions),
        sum(a.worst_ms for a in admissions),
        _widest(held) if holding else None,
        facts.flux.workers,
        max(holds, default=None),
    )


def _widest(held: Sequence[tuple[int | None, int | None]]) -> int:
    """The most steps whose expected spans overlap: Kustomizations waiting at once."""
    spans = [(start, end) for start, end in held if start is not None]
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans if e is not None])
    at_once = widest = 0
    for _, change in edges:  # an end sorts before a start at the same time
        at_once += change
        widest = max(widest, at_once)
    return max(widest, 1)
