"""Flux as the rehearsal plays it (`rehearse.gitopsplay.GitOpsPlayer`, `PLAYER`).

The tree's Kustomizations reading the site's folder (its replay model, an
ExternalArtifact's folder included), in `dependsOn` order (ties by name); a file under
several is applied by the one with the fewest dependencies, as the replay takes it. Flux's
own source-controller and kustomize-controller play them (`play.py`); played by nvcregen
instead, each step is waited on with its `healthCheckExprs` as kustomize-controller reads
them (`livehealth.py`). A tree without GitOps objects is not Flux's to apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engines.gitops.flux.livehealth import flux_health
from nvcregen.engines.gitops.flux.play import play_flux
from nvcregen.rehearse.health import WAITING, Health
from nvcregen.rehearse.steps import ApplyStep, Judge, Order, StepOutcome, split_skipped
from nvcregen.rehearse.twin import Twin
from nvcregen.rehearse.watch import Watch
from nvcregen.replay.gating import under
from nvcregen.replay.gitopsmodel import Held
from nvcregen.replay.model import TreeObject
from nvcregen.replay.runs import is_run

# Flux's own objects: its sources (GitRepository, OCIRepository, ExternalArtifact's
# ArtifactGenerator), Kustomizations and HelmReleases
FLUX_GROUPS = frozenset(
    {
        "source.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
        "source.extensions.fluxcd.io",
    }
)
FLUX_REQUEUE_S = 30.0  # kustomize-controller's --requeue-dependency default, scaled by speed


class FluxPlayer:
    """Kustomizations by dependsOn, played by Flux's own controllers on the twin."""

    def order(
        self,
        engine: GitOpsEngine,
        objects: Sequence[TreeObject],
        units: Sequence[Held],
        checks_elsewhere: bool,
    ) -> Order:
        """A step per Kustomization, in `dependsOn` order (module doc)."""
        return kustomization_order(objects, engine, [(unit, base) for unit, base, _ in units], self)

    def bare(self, objects: Sequence[TreeObject], checks_elsewhere: bool) -> Order | None:
        """None: Flux applies nothing but through a Kustomization."""
        return None

    def health(
        self, order: Order, step: ApplyStep, item: TreeObject, live: Mapping[str, Any] | None
    ) -> Health | None:
        """A Job (Flux's own reader), or a kind the step's `healthCheckExprs` names."""
        exprs = step.unit.spec.get("healthCheckExprs") if step.unit is not None else None
        checked = item.kind == "Job" or any(
            isinstance(e, dict) and e.get("kind") == item.kind for e in exprs or []
        )
        if not checked:
            return None
        return flux_health(exprs, live) if live is not None else Health(WAITING, "NotFound")

    def play(
        self,
        twin: Twin,
        objects: Sequence[TreeObject],
        root: str,
        order: Order,
        watch: Watch,
        *,
        timeout_s: float,
        poll_s: float,
        speed: float,
    ) -> list[StepOutcome] | None:
        """Flux's controllers apply the site from a Git repository on loopback (`play.py`)."""
        return play_flux(
            twin,
            objects,
            root,
            order,
            watch,
            timeout_s=timeout_s,
            poll_s=poll_s,
            requeue_s=FLUX_REQUEUE_S / speed,
        )

    def skip_reason(self, item: TreeObject) -> str:
        """Its sources, Kustomizations and HelmReleases."""
        if item.group in FLUX_GROUPS:
            return "the GitOps engine's own object (the rehearsal plays the engine and its charts)"
        return ""

    def note(self, ran: bool) -> str:
        """Flux's controllers, or (`ran` False) nvcregen in their place."""
        if ran:
            return (
                "Flux's source-controller and kustomize-controller ran the site's "
                "Kustomizations from a Git repository served on loopback (source-watcher was "
                "not: each reads the folder its artifact would hold; dependencies on what the "
                "twin does not run taken as Ready; the manual trigger resumed)"
            )
        return (
            "Flux's kustomize-controller was not run: its Kustomizations were applied in "
            "dependsOn order by nvcregen, each waited on with its healthCheckExprs"
        )


PLAYER = FluxPlayer()


def kustomization_order(
    objects: Sequence[TreeObject],
    engine: GitOpsEngine,
    found: Sequence[tuple[TreeObject, str]],
    judge: Judge,
) -> Order:
    """Kustomizations in `dependsOn` order, each applying what no earlier one applies."""
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
        kept, left = split_skipped([o for o in objects if owner.get(o.path) is unit])
        skipped += left
        if not kept:
            continue
        waits = bool(unit.spec.get("wait")) or bool(unit.spec.get("healthChecks"))
        runs = tuple(o.path for o in kept if is_run(o))
        label = f"Kustomization {unit.name}"
        steps.append(ApplyStep(_key(unit), label, unit, tuple(kept), runs, waits))
    return Order(engine, tuple(steps), tuple(skipped), judge=judge)


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
