"""What the replay asks of a readiness engine: the runs its own objects expand into.

An engine whose objects the cluster expands into runs (NVCRE: a Certification's or a
WorkloadRun's groups) holds their model in its package (`engines/readiness/<engine>/
replay.py`, `RUNS`), found through the registry (`engineapi.registry.parts`); the runs
nvcregen writes itself (Jobs, TrainJobs) are read by `runs.py`. The replay names no
engine's kinds itself.
"""

from __future__ import annotations

from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.engineapi.registry import READINESS, parts
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.model import Run, TreeObject


@runtime_checkable
class RunModel(Protocol):
    """A readiness engine's objects as the replay expands them into runs (pure)."""

    @property
    def run_kinds(self) -> frozenset[tuple[str, str]]:
        """The (group, kind) of each object it expands into a run."""
        ...

    @property
    def queue_pointer(self) -> str:
        """Where its objects name their queue (a JSON pointer)."""
        ...

    def run(self, item: TreeObject, facts: PlanFacts, stage: str) -> Run:
        """One of its objects as the run the engine would make of it, in stage `stage`."""
        ...


def is_run_model(found: object) -> TypeGuard[RunModel]:
    """Whether an engine's `RUNS` is a run model."""
    return isinstance(found, RunModel)


def run_models() -> dict[tuple[str, str], RunModel]:
    """Each registered readiness engine's run model, by the (group, kind) it expands."""
    return {
        kind: model
        for model in parts(READINESS, "replay", "RUNS", is_run_model)
        for kind in model.run_kinds
    }
