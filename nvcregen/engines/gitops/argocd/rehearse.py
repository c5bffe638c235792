"""Argo CD as the rehearsal plays it (`rehearse.gitopsplay.GitOpsPlayer`, `PLAYER`).

Argo CD itself is not run: the tree's Applications reading the site's folder are applied
in the order the parent applies them (their own sync wave, then name), each
Application's objects wave by wave, a step per wave; each wave's health is read with the
site's own Lua checks (`argocd-cm` in the tree, or nvcregen's own when the cluster holds
them: `gitops.healthChecks: existing`), run as Argo CD runs them (`livehealth.py`). A
tree without GitOps objects is applied the same way, wave by wave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nvcregen.engineapi.protocol import GitOpsEngine
from nvcregen.engines.gitops.argocd.health import ARGOCD_CM, ARGOCD_KEY_PREFIX, argocd_health_keys
from nvcregen.engines.gitops.argocd.livehealth import argocd_health, health_key
from nvcregen.rehearse.health import WAITING, Health
from nvcregen.rehearse.steps import ApplyStep, Order, StepOutcome, by_waves, whole
from nvcregen.rehearse.twin import Twin
from nvcregen.rehearse.watch import Watch
from nvcregen.replay.gitopsmodel import Held
from nvcregen.replay.model import TreeObject

ARGO_GROUP = "argoproj.io"  # its Applications, AppProjects (and chart Applications)


def installed_health() -> dict[str, str]:
    """The Argo CD health checks nvcregen writes, by `<group>_<kind>` (as `argocd-cm` has them)."""
    return {k.removeprefix(ARGOCD_KEY_PREFIX): v for k, v in argocd_health_keys().items()}


def tree_health(objects: Sequence[TreeObject]) -> dict[str, str]:
    """The Lua health checks of the tree's `argocd-cm`, by `<group>_<kind>`."""
    prefix = ARGOCD_KEY_PREFIX
    scripts: dict[str, str] = {}
    for item in objects:
        if item.kind == "ConfigMap" and item.name == ARGOCD_CM:
            data = item.obj.get("data") or {}
            scripts |= {
                k.removeprefix(prefix): str(v) for k, v in data.items() if k.startswith(prefix)
            }
    return scripts


def _scripts(objects: Sequence[TreeObject], checks_elsewhere: bool) -> dict[str, str]:
    return installed_health() if checks_elsewhere else tree_health(objects)


class ArgoCdPlayer:
    """Sync waves applied by nvcregen, each wave's health read with the site's Lua checks."""

    def order(
        self,
        engine: GitOpsEngine,
        objects: Sequence[TreeObject],
        units: Sequence[Held],
        checks_elsewhere: bool,
    ) -> Order:
        """Each Application's objects wave by wave, Applications in the parent's order."""
        return by_waves(objects, units, _scripts(objects, checks_elsewhere), engine, self)

    def bare(self, objects: Sequence[TreeObject], checks_elsewhere: bool) -> Order | None:
        """The whole tree wave by wave, as one Application applying it would."""
        return by_waves(objects, [whole()], _scripts(objects, checks_elsewhere), None, self)

    def health(
        self, order: Order, step: ApplyStep, item: TreeObject, live: Mapping[str, Any] | None
    ) -> Health | None:
        """The site's Lua check of the object's kind; None for a kind without one."""
        if health_key(item.obj) not in order.health:
            return None
        if live is None:
            return Health(WAITING, "Missing")
        return argocd_health(order.health, live)

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
        """None: the twin runs no Argo CD; the rehearsal applies its waves itself."""
        return None

    def skip_reason(self, item: TreeObject) -> str:
        """Its Applications and AppProjects, and the `argocd-cm` of its health checks."""
        if item.group == ARGO_GROUP:
            return "the GitOps engine's own object (the rehearsal plays the engine and its charts)"
        if item.kind == "ConfigMap" and item.name == ARGOCD_CM:
            return "Argo CD's configuration (the rehearsal runs its health checks itself)"
        return ""

    def note(self, ran: bool) -> str:
        """Argo CD never runs on the twin."""
        return (
            "Argo CD itself was not run: its sync waves were applied in order by nvcregen, "
            "each wave's health read with the site's own Lua checks"
        )


PLAYER = ArgoCdPlayer()
