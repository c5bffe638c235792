"""What the replay asks of a GitOps engine: the units of a tree, and the steps they make.

Each GitOps engine's package holds its replay model (`engines/gitops/<engine>/replay.py`,
`MODEL`), found through the registry (`engineapi.registry.part_of`); the replay, the
rehearsal and the unit limits ask it through this protocol and never name the engine's
objects (an Application, a Kustomization) themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeGuard, runtime_checkable

from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engineapi.registry import GITOPS, required_part
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.gating import Gating
from nvcregen.replay.model import Run, TreeObject

# A unit of the tree: the engine's object, the site folder it applies ("" the whole site),
# and whether it applies that folder's subfolders too
Held = tuple[TreeObject, str, bool]


@runtime_checkable
class GitOpsModel(Protocol):
    """One GitOps engine as the replay models it (pure)."""

    @property
    def worker_steps(self) -> str | None:
        """How a step's label begins if its unit holds an engine worker; None if none does.

        Flux's Kustomizations each hold one of kustomize-controller's `--concurrent`
        workers while they wait.
        """
        ...

    def units(self, objects: Sequence[TreeObject], root: str) -> list[Held]:
        """The tree's units reading the site's folder `root`, in file order."""
        ...

    def gating(
        self,
        objects: Sequence[TreeObject],
        runs: Sequence[Run],
        units: Sequence[Held],
        facts: PlanFacts,
    ) -> Gating:
        """The steps the tree's units make of its runs."""
        ...

    def bare(self, objects: Sequence[TreeObject], runs: Sequence[Run]) -> Gating | None:
        """The steps of a tree holding no GitOps unit, as the engine would apply it; or None."""
        ...


def is_model(found: object) -> TypeGuard[GitOpsModel]:
    """Whether an engine's `MODEL` is a replay model."""
    return isinstance(found, GitOpsModel)


def model_of(engine: GitOpsEngine) -> GitOpsModel:
    """The engine's replay model.

    Raises:
        LookupError: The engine's package holds none (every registered engine has one).

    """
    return required_part(engine, "replay", "MODEL", is_model, "has no replay model")


def models() -> tuple[tuple[GitOpsEngine, GitOpsModel], ...]:
    """Each registered GitOps engine with its replay model, in the order the replay tries them."""
    return tuple((engine, model_of(engine)) for engine in GITOPS.values())


def read_units(
    objects: Sequence[TreeObject], root: str
) -> tuple[GitOpsEngine, GitOpsModel, list[Held]] | None:
    """The first engine (registry order) whose units read the site's folder, with them."""
    for engine, model in models():
        found = model.units(objects, root)
        if found:
            return engine, model, found
    return None


def bare_gating(objects: Sequence[TreeObject], runs: Sequence[Run]) -> Gating:
    """A tree holding no unit: the first engine's way of applying it, else no step at all."""
    for _, model in models():
        found = model.bare(objects, runs)
        if found is not None:
            return found
    return Gating({}, {})
