"""The order a site's GitOps engine applies its rendered tree in, read from the tree (pure).

What the tree holds decides it, never one object per test, node or round:

- **Argo CD**: the tree's Applications reading the site's folder (its replay model,
  `engines/gitops/argocd/`), in the order the parent applies them (their own sync wave,
  then name); each Application's objects wave by wave (`argocd.argoproj.io/sync-wave`), a
  step per wave.
- **Flux**: the tree's Kustomizations reading the site's folder (its replay model,
  `engines/gitops/flux/`, an ExternalArtifact's folder included), in `dependsOn` order
  (ties by name); a file under several is applied by the one with the fewest
  dependencies, as the replay takes it.
- **No GitOps objects**: the whole tree wave by wave.

Each step keeps only what the twin can take without images or charts (`skip_reason`):
not the GitOps engine's own objects (Applications, AppProjects, Flux sources,
Kustomizations, HelmReleases: the twin runs Kueue, JobSet and Trainer itself), not
`argocd-cm` (its health checks are run by the rehearsal), not CRDs (the controllers' own
are installed from their modules), not monitoring objects (no Prometheus in the twin).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nvcregen.compile.gitops.health.checks import ARGOCD_KEY_PREFIX, argocd_health_keys
from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.replay.gating import under, wave_of
from nvcregen.replay.gitopsmodel import read_units
from nvcregen.replay.model import TreeObject
from nvcregen.replay.runs import is_run

WAVES = "waves"  # no GitOps objects: the tree applied sync wave by sync wave
_ENGINE_GROUPS = frozenset(
    {
        "argoproj.io",
        "source.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
        "source.extensions.fluxcd.io",
    }
)
_MONITORING_GROUPS = frozenset({"monitoring.coreos.com"})
ARGOCD_CONFIG = "argocd-cm"


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
class Order:
    """A tree's steps in the order its engine applies them, and what was left out."""

    gitops: GitOpsEngine | None  # None: no GitOps objects, the tree applied wave by wave
    steps: tuple[ApplyStep, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why)
    health: Mapping[str, str] = field(default_factory=dict)  # Argo CD: group_kind -> Lua

    @property
    def engine(self) -> str:
        """What applied the tree, as the report names it: the engine, or `waves`."""
        return self.gitops.name if self.gitops is not None else WAVES


def skip_reason(item: TreeObject) -> str:
    """Why the rehearsal does not apply an object ("" when it does)."""
    if item.group in _ENGINE_GROUPS:
        return "the GitOps engine's own object (the rehearsal plays the engine and its charts)"
    if item.kind == "CustomResourceDefinition":
        return "a CRD (the twin installs the controllers' own CRDs from their modules)"
    if item.group in _MONITORING_GROUPS:
        return "a monitoring object (no Prometheus in the twin)"
    if item.kind == "ConfigMap" and item.name == ARGOCD_CONFIG:
        return "Argo CD's configuration (the rehearsal runs its health checks itself)"
    return ""


def apply_rank(item: TreeObject) -> tuple[int, str]:
    """Apply order within a step: namespaces first, then by path."""
    return (0 if item.kind == "Namespace" else 1, item.path)


def read_order(
    objects: Sequence[TreeObject], root: str, *, checks_elsewhere: bool = False
) -> Order:
    """The steps of a tree as its engine applies them (see the module's docstring).

    `checks_elsewhere`: the site's Argo CD health checks are installed outside the tree
    (`gitops.healthChecks: existing`, the replay's `external_health_checks`); the
    rehearsal then runs nvcregen's own, as the replay takes every kind to be checked.
    """
    found = read_units(objects, root)
    if found and found[0].kustomizations:
        return _flux(objects, found[0], [(unit, base) for unit, base, _ in found[2]])
    health = installed_health() if checks_elsewhere else argocd_health(objects)
    if found:
        return _argocd(objects, found[2], health, found[0])
    whole = [(TreeObject("", "", {"metadata": {"name": "waves"}}), "", True)]
    return _argocd(objects, whole, health, None)


def installed_health() -> dict[str, str]:
    """The Argo CD health checks nvcregen writes, by `<group>_<kind>` (as `argocd-cm` has them)."""
    return {k.removeprefix(ARGOCD_KEY_PREFIX): v for k, v in argocd_health_keys().items()}


def argocd_health(objects: Sequence[TreeObject]) -> dict[str, str]:
    """The Lua health checks of the tree's `argocd-cm`, by `<group>_<kind>`."""
    prefix = ARGOCD_KEY_PREFIX
    scripts: dict[str, str] = {}
    for item in objects:
        if item.kind == "ConfigMap" and item.name == ARGOCD_CONFIG:
            data = item.obj.get("data") or {}
            scripts |= {
                k.removeprefix(prefix): str(v) for k, v in data.items() if k.startswith(prefix)
            }
    return scripts


def _split(items: Sequence[TreeObject]) -> tuple[list[TreeObject], list[tuple[str, str]]]:
    kept, skipped = [], []
    for item in sorted(items, key=apply_rank):
        reason = skip_reason(item)
        if reason:
            skipped.append((item.path, reason))
        else:
            kept.append(item)
    return kept, skipped


def _argocd(
    objects: Sequence[TreeObject],
    apps: Sequence[tuple[TreeObject, str, bool]],
    health: Mapping[str, str],
    gitops: GitOpsEngine | None,
) -> Order:
    steps: list[ApplyStep] = []
    skipped: list[tuple[str, str]] = []
    claimed: set[str] = set()
    for app, base, recurse in sorted(apps, key=lambda a: (wave_of(a[0]), a[0].name)):
        covered = [
            o for o in objects if under(o.path, base, recurse=recurse) and o.path not in claimed
        ]
        claimed |= {o.path for o in covered}
        for wave in sorted({wave_of(o) for o in covered}):
            kept, left = _split([o for o in covered if wave_of(o) == wave])
            skipped += left
            if not kept:
                continue
            label = f"wave {wave} of Application {app.name}" if app.file else f"sync wave {wave}"
            runs = tuple(o.path for o in kept if is_run(o))
            unit = app if app.file else None
            steps.append(ApplyStep(f"{app.name}#{wave}", label, unit, tuple(kept), runs))
    return Order(gitops, tuple(steps), tuple(skipped), dict(health))


def _flux(
    objects: Sequence[TreeObject], engine: GitOpsEngine, found: Sequence[tuple[TreeObject, str]]
) -> Order:
    after = {_key(k): tuple(_depends(k)) for k, _ in found}
    depth = {key: len(_ancestors(key, after, set())) for key in after}
    owner: dict[str, TreeObject] = {}
    for item in objects:
        covering = [(depth[_key(k)], k.name, k) for k, base in found if under(item.path, base)]
        if covering:
            owner[item.path] = min(covering, key=lambda c: (c[0], c[1]))[2]
    steps: list[ApplyStep] = []
    skipped: list[tuple[str, str]] = []
    for unit in _topological(found, after):
        kept, left = _split([o for o in objects if owner.get(o.path) is unit])
        skipped += left
        if not kept:
            continue
        waits = bool(unit.spec.get("wait")) or bool(unit.spec.get("healthChecks"))
        runs = tuple(o.path for o in kept if is_run(o))
        label = f"Kustomization {unit.name}"
        steps.append(ApplyStep(_key(unit), label, unit, tuple(kept), runs, waits))
    return Order(engine, tuple(steps), tuple(skipped))


def _key(item: TreeObject) -> str:
    return f"{item.namespace}/{item.name}"


def _depends(item: TreeObject) -> list[str]:
    return [
        f"{d.get('namespace') or item.namespace}/{d.get('name')}"
        for d in item.spec.get("dependsOn") or []
        if isinstance(d, dict)
    ]


def _ancestors(key: str, after: Mapping[str, tuple[str, ...]], seen: set[str]) -> set[str]:
    for earlier in after.get(key, ()):
        if earlier not in seen:
            seen.add(earlier)
            _ancestors(earlier, after, seen)
    return seen


def _topological(
    found: Sequence[tuple[TreeObject, str]], after: Mapping[str, tuple[str, ...]]
) -> list[TreeObject]:
    """Kustomizations in dependency order, ties by name; a loop is broken by name."""
    units = {_key(k): k for k, _ in found}
    done: set[str] = set()
    ordered: list[TreeObject] = []
    while len(ordered) < len(units):
        ready = [
            key
            for key in sorted(units, key=lambda k: units[k].name)
            if key not in done and all(d in done or d not in units for d in after[key])
        ]
        pending = [k for k in sorted(units, key=lambda k: units[k].name) if k not in done]
        key = ready[0] if ready else pending[0]
        done.add(key)
        ordered.append(units[key])
    return ordered
