"""How long each readiness step may take: its worst case, replayed (pure).

A Flux Kustomization with `wait: true` fails once its `timeout` passes before what it
applied is healthy; the step after it then waits for the next reconciliation, and the
failure pages whoever watches Flux. A step's timeout is therefore its worst case: the
replay (docs/design/0008-replay.md) of the placed runs and their queues, every job
running to its timeout, on the site's nodes and under its Kueue quota, times the
attempts the window allows (`plan.budget.attempts`: 1 + `retests`), rounded up to a
minute. Argo CD has no step timeout; the plan ConfigMap shows the same figure there.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from nvcregen.compile.gitops.steps import Step
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path
from nvcregen.plan.budget import attempts
from nvcregen.plan.facts import PlanFacts
from nvcregen.plan.resolved import Plan
from nvcregen.replay.model import TreeObject
from nvcregen.replay.site import replay_context
from nvcregen.replay.timeline import step_worst_ms

_MINUTE_MS = 60_000


def timed_steps(plan: Plan, steps: Sequence[Step], objects: Sequence[Manifest]) -> tuple[Step, ...]:
    """`steps` with their timeouts, from the replay of `objects` (placed runs and queues)."""
    worst = worst_step_ms(objects, plan.facts)
    tries = attempts(plan.site.spec.readiness.window.retests)
    return tuple(
        dataclasses.replace(step, timeout_ms=_minutes(worst.get(step.folder, 0) * tries))
        for step in steps
    )


def worst_step_ms(objects: Sequence[Manifest], facts: PlanFacts) -> Mapping[str, int]:
    """Each step folder's worst case: from its first run's start to its last run's end.

    The objects carry no GitOps objects yet, so the replay gates them by their sync waves
    (a step's number), each wave waited for: a row of the timeline is one step folder. A
    folder whose runs never all end (a plan the render gate refuses) is left out.
    """
    tree = [TreeObject(path, path, m.obj) for m in objects for path in [manifest_path(m)]]
    # As `nvcregen plan` times it, from the worst-case clock alone; the render gate judges
    # the tree, so no checks here.
    return step_worst_ms(replay_context(tree, facts))


def _minutes(ms: int) -> int:
    """`ms` rounded up to a whole minute, at least one."""
    return max(1, math.ceil(ms / _MINUTE_MS)) * _MINUTE_MS
