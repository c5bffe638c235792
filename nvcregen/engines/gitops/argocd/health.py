"""Argo CD's health checks of the readiness kinds: Lua scripts, installed in `argocd-cm`.

Argo CD can wait for a sync wave only through health checks it knows; it knows none of
the readiness kinds (`compile/gitops/healthchecks.py` says which and when each is done).
Each check is a Lua script of this package (`lua/<name>.lua`: Lua 5.1, the base, package,
table and safe os libraries only, a global `obj`), shipped as package data and installed
once per cluster as the `argocd-cm` key `resource.customizations.health.<group>_<kind>`,
the platform layer carrying a partial `argocd-cm`. The scripts are run against status
objects shaped like the upstream CRDs in `tests/unit/compile/test_health_lua.py`; why
they are what they are: docs/design/0006-stage-gating.md.
"""

from __future__ import annotations

import functools
from importlib import resources

from nvcregen.compile.gitops.common import SOURCE
from nvcregen.compile.gitops.healthchecks import COMPANION_CHECKS, HEALTH_CHECKS, HealthCheck
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.engines.gitops.argocd.layer import ARGOCD_NAMESPACE

ARGOCD_KEY_PREFIX = "resource.customizations.health."
_PACKAGE = __name__.rpartition(".")[0]  # the scripts are `lua/` of this module's package
_FOLDER = "lua"
PRELUDE = "prelude.lua"
# Argo CD only: the layer Applications' health, for the parent's sync waves. Not a readiness
# kind (no run is an Application), so it is not a check of the layer's.
APPLICATION_KEY = f"{ARGOCD_KEY_PREFIX}argoproj.io_Application"
APPLICATION_LUA = "application.lua"
ARGOCD_CM = "argocd-cm"  # the ConfigMap Argo CD reads its resource customizations from
# Argo CD reads only ConfigMaps with this label; stated so the patch also works alone.
ARGOCD_PART_OF = {"app.kubernetes.io/part-of": "argocd"}
# Server-side apply adds our keys and leaves every other field to its owner; argocd-cm
# must never be pruned or deleted with the platform Application.
ARGOCD_CM_SYNC = "ServerSideApply=true,Prune=false,Delete=false"


def argocd_key(check: HealthCheck) -> str:
    """The `argocd-cm` key of a check: `resource.customizations.health.<group>_<kind>`."""
    return f"{ARGOCD_KEY_PREFIX}{check.group}_{check.kind}"


def lua_file(check: HealthCheck) -> str:
    """The file of a check's Lua script in this package: `<name>.lua`."""
    return f"{check.name}.lua"


@functools.cache
def lua_script(name: str) -> str:
    """One Argo CD health script, e.g. "job.lua": its header, the shared prelude, its body.

    Argo CD runs one script per kind and cannot share code between them, so the helpers
    every check uses are written once, in `prelude.lua`, and joined into each script here.
    """
    header, body = _split(name)
    return f"{header}\n{_split(PRELUDE)[1].strip()}\n{body}"


def _read(name: str) -> str:
    return resources.files(_PACKAGE).joinpath(_FOLDER).joinpath(name).read_text(encoding="utf-8")


def _split(name: str) -> tuple[str, str]:
    """A script's leading comment lines, and the rest."""
    lines = _read(name).splitlines(True)
    cut = next((i for i, line in enumerate(lines) if not line.startswith("--")), len(lines))
    return "".join(lines[:cut]), "".join(lines[cut:])


def argocd_health_keys() -> dict[str, str]:
    """Every Argo CD health script, by its `argocd-cm` key: the runs' and Applications'."""
    keys = {argocd_key(c): lua_script(lua_file(c)) for c in (*HEALTH_CHECKS, *COMPANION_CHECKS)}
    keys[APPLICATION_KEY] = _read(APPLICATION_LUA)
    return keys


def argocd_health_config() -> Manifest:
    """A partial `argocd-cm` holding only the readiness health checks, for the platform layer.

    It is not nvcregen's object: applied server-side (Argo CD's field manager, or
    `kubectl apply --server-side --field-manager=nvcregen`) it adds the
    `resource.customizations.health.*` keys and leaves the rest of argocd-cm alone. It
    carries no nvcregen labels, which would contend with the labels of argocd-cm's owner.
    """
    metadata: Obj = {
        "name": ARGOCD_CM,
        "namespace": ARGOCD_NAMESPACE,
        "labels": dict(ARGOCD_PART_OF),
        "annotations": {"argocd.argoproj.io/sync-options": ARGOCD_CM_SYNC},
    }
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    obj["data"] = argocd_health_keys()
    note = "Argo CD health checks for readiness runs; merged into argocd-cm by server-side apply"
    return Manifest(obj, "platform", SOURCE, notes=(note,), owned=False)
