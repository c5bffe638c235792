"""The order a site's GitOps engine applies its rendered tree in, read from the tree (pure).

What the tree holds decides it, never one object per test, node or round. The engine's
package reads it (`gitopsplay.read_order` asks its `GitOpsPlayer`, found through the
registry), with what every engine shares here:

- **Argo CD**: the tree's Applications reading the site's folder (its replay model,
  `engines/gitops/argocd/`), in the order the parent applies them (their own sync wave,
  then name); each Application's objects wave by wave (`argocd.argoproj.io/sync-wave`), a
  step per wave (`by_waves`).
- **Flux**: the tree's Kustomizations reading the site's folder (its replay model,
  `engines/gitops/flux/`, an ExternalArtifact's folder included), in `dependsOn` order
  (ties by name); a file under several is applied by the one with the fewest
  dependencies, as the replay takes it.
- **No GitOps objects**: the whole tree wave by wave (`by_waves`), as the first engine
  that applies a bare tree would.

Each step keeps only what the twin can take without images or charts (`skip_reason`):
not a GitOps engine's own objects, each engine's player saying which are its own
(Applications, AppProjects, Flux sources, Kustomizations, HelmReleases: the twin runs
Kueue, JobSet and Trainer itself; `argocd-cm`: its health checks are run by the
rehearsal), not CRDs (the controllers' own are installed from their modules), not
monitoring objects (no Prometheus in the twin).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, runtime_checkable

from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engineapi.registry import GITOPS, parts
from nvcregen.rehearse.health import Health
from nvcregen.replay.gating import under, wave_of
from nvcregen.replay.model import TreeObject
from nvcregen.replay.runs import is_run

WAVES = "waves"  # no GitOps objects: the tree applied sync wave by sync wave
_MONITORING_GROUPS = frozenset({"monitoring.coreos.com"})


@dataclass(frozen=True)
class ApplyStep:
    """One step: what the engine applies at once, then waits on.

    Attributes:
        key: Unique in the tree (`<Application>#<wave>`, `<namespace>/<Kustomization>`).
        label: How the output names it (`wave 1 of Application x`, `Kustomization y`).
        unit: The Application or Kustomization applying it (None: a tree without GitOps).
        objects: What is applied, in apply order.
        runs: The paths of the runs among them.
        waits: Whether the engine waits for its health before the next step (Flux:
            `wait: true` or `healthChecks`; Argo CD and plain waves: always).

    """

    key: str
    label: str
    unit: TreeObject | None
    objects: tuple[TreeObject, ...]
    runs: tuple[str, ...]
    waits: bool = True


@dataclass(frozen=True)
class StepOutcome:
    """What happened to one applied step (besides its runs).

    Attributes:
        key: The step's key.
        label: How the output names the GitOps step (`wave 1 of Application x`).
        applied_s: When it was applied (None: never).
        done_s: When its health checks passed (None: never).
        refused: Objects the API server or a webhook refused, with why.
        failed: Why its health checks failed ("" when they did not).

    """

    key: str
    label: str
    applied_s: float | None
    done_s: float | None = None
    refused: tuple[str, ...] = ()
    failed: str = ""


@dataclass(frozen=True)
class Order:
    """A tree's steps in the order its engine applies them, and what was left out."""

    gitops: GitOpsEngine | None  # None: no GitOps objects, the tree applied wave by wave
    steps: tuple[ApplyStep, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why)
    health: Mapping[str, str] = field(default_factory=dict)  # Argo CD: group_kind -> Lua
    judge: Judge | None = None  # who reads a live object's health as the engine would

    @property
    def engine(self) -> str:
        """What applied the tree, as the report names it: the engine, or `waves`."""
        return self.gitops.name if self.gitops is not None else WAVES


class Judge(Protocol):
    """How an engine reads the health of the objects of its steps (`gitopsplay.GitOpsPlayer`)."""

    def health(
        self, order: Order, step: ApplyStep, item: TreeObject, live: Mapping[str, Any] | None
    ) -> Health | None:
        """The engine's health of one object (`live`: None while it does not exist yet).

        None when the engine does not wait for it.
        """
        ...


@runtime_checkable
class OwnObjects(Protocol):
    """Which objects of a tree are a GitOps engine's own (its `PLAYER`, `gitopsplay.py`)."""

    def skip_reason(self, item: TreeObject) -> str:
        """Why the rehearsal leaves the object to the engine it plays ("" if not its own)."""
        ...


def _is_own_objects(found: object) -> TypeGuard[OwnObjects]:
    return isinstance(found, OwnObjects)


def skip_reason(item: TreeObject) -> str:
    """Why the rehearsal does not apply an object ("" when it does)."""
    for engine in parts(GITOPS, "rehearse", "PLAYER", _is_own_objects):
        reason = engine.skip_reason(item)
        if reason:
            return reason
    if item.kind == "CustomResourceDefinition":
        return "a CRD (the twin installs the controllers' own CRDs from their modules)"
    if item.group in _MONITORING_GROUPS:
        return "a monitoring object (no Prometheus in the twin)"
    return ""


def apply_rank(item: TreeObject) -> tuple[int, str]:
    """Apply order within a step: namespaces first, then by path."""
    return (0 if item.kind == "Namespace" else 1, item.path)


def split_skipped(items: Sequence[TreeObject]) -> tuple[list[TreeObject], list[tuple[str, str]]]:
    """The objects the rehearsal applies, in apply order, and those it skips with why."""
    kept, skipped = [], []
    for item in sorted(items, key=apply_rank):
        reason = skip_reason(item)
        if reason:
            skipped.append((item.path, reason))
        else:
            kept.append(item)
    return kept, skipped


def by_waves(
    objects: Sequence[TreeObject],
    apps: Sequence[tuple[TreeObject, str, bool]],
    health: Mapping[str, str],
    gitops: GitOpsEngine | None,
    judge: Judge | None,
) -> Order:
    """Each unit's objects wave by wave, a step per wave; units by their own wave, then name.

    `apps` are the units (the unit, the folder it applies, whether subfolders too); a
    unit with no file (`whole`) is the tree applied without GitOps objects.
    """
    steps: list[ApplyStep] = []
    skipped: list[tuple[str, str]] = []
    claimed: set[str] = set()
    for app, base, recurse in sorted(apps, key=lambda a: (wave_of(a[0]), a[0].name)):
        covered = [
            o for o in objects if under(o.path, base, recurse=recurse) and o.path not in claimed
        ]
        claimed |= {o.path for o in covered}
        for wave in sorted({wave_of(o) for o in covered}):
            kept, left = split_skipped([o for o in covered if wave_of(o) == wave])
            skipped += left
            if not kept:
                continue
            label = f"sync wave {wave}"
            if app.file and gitops is not None:
                label = f"wave {wave} of {gitops.unit_kind} {app.name}"
            runs = tuple(o.path for o in kept if is_run(o))
            unit = app if app.file else None
            steps.append(ApplyStep(f"{app.name}#{wave}", label, unit, tuple(kept), runs))
    return Order(gitops, tuple(steps), tuple(skipped), dict(health), judge)


def whole() -> tuple[TreeObject, str, bool]:
    """The unit of a tree without GitOps objects: every folder, applied sync wave by wave."""
    return (TreeObject("", "", {"metadata": {"name": WAVES}}), "", True)
