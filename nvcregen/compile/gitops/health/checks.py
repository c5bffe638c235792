"""The Argo CD and Flux health checks of the kinds that readiness stages wait for (pure data).

Each readiness kind maps to one Argo CD Lua script (a file next to this module) and one
Flux `healthCheckExprs` entry. Both read the same conditions: Failed wins over success, an
object still queued or running is neither, and an object with no status yet is never done.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from nvcregen.core.manifest import Obj

ARGOCD_KEY_PREFIX = "resource.customizations.health."
_PACKAGE = __name__.rpartition(".")[0]  # the scripts sit next to this module, wherever it moves
PRELUDE = "prelude.lua"


@dataclass(frozen=True)
class HealthCheck:
    """How Argo CD and Flux tell whether one kind of object is done.

    Attributes:
        api_version: The kind's apiVersion, e.g. "trainer.kubeflow.org/v1alpha1".
        kind: The kind, e.g. "TrainJob".
        lua: The Argo CD health script's file name in this package.
        current: Flux CEL: true when the object succeeded.
        failed: Flux CEL: true when the object failed; evaluated before `current`.

    """

    api_version: str
    kind: str
    lua: str
    current: str
    failed: str

    @property
    def group(self) -> str:
        """The API group ("" for the core group)."""
        return self.api_version.rpartition("/")[0]

    @property
    def argocd_key(self) -> str:
        """The `argocd-cm` key: `resource.customizations.health.<group>_<kind>`."""
        return f"{ARGOCD_KEY_PREFIX}{self.group}_{self.kind}"

    def flux_expr(self) -> Obj:
        """The check as one Flux Kustomization `healthCheckExprs` entry."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "current": self.current,
            "failed": self.failed,
        }


def _condition(kind: str) -> str:
    """CEL: a condition of this type is True. False, not an error, when there are none."""
    return (
        "has(status.conditions) && "
        f"status.conditions.exists(c, c.type == '{kind}' && c.status == 'True')"
    )


NVCRE_API = "nvcre.nvidia.com/v1alpha1"
# NVCRE: exactly one of InProgress, Succeeded and Failed is True (nvcre-api.md 1.0).
CERTIFICATION = HealthCheck(
    NVCRE_API, "Certification", "nvcre.lua", _condition("Succeeded"), _condition("Failed")
)
WORKLOAD_RUN = HealthCheck(
    NVCRE_API, "WorkloadRun", "nvcre.lua", _condition("Succeeded"), _condition("Failed")
)
# Trainer 2.2: Complete from the JobSet, Failed also for DeadlineExceeded.
TRAIN_JOB = HealthCheck(
    "trainer.kubeflow.org/v1alpha1",
    "TrainJob",
    "trainjob.lua",
    _condition("Complete"),
    _condition("Failed"),
)
# batch/v1: Suspended (queued or resumed) is neither done nor failed.
JOB = HealthCheck("batch/v1", "Job", "job.lua", _condition("Complete"), _condition("Failed"))

HEALTH_CHECKS = (CERTIFICATION, WORKLOAD_RUN, TRAIN_JOB, JOB)

# Kueue's Workload of a run (trainer mode's prebuilt workloads). For Flux it is the gate of
# the step: kustomize-controller reads a batch/v1 Job with its own status reader, ahead of
# every `healthCheckExprs` entry (`getClientAndPoller`, kustomization_controller.go; the
# first reader that supports a kind wins), and since fluxcd/pkg runtime v0.100.0
# (statusreaders/job.go, commit 077fa749) that reader calls a suspended Job Current. Kueue
# keeps a queued Job suspended, so a step of Jobs would pass at apply. The Workload is done
# only when Kueue finished it after its run succeeded (jobframework/reconciler.go sets
# Finished, reason Succeeded or Failed, from the job's own end), and failed when the run
# failed or Kueue gave up on it: deactivated (spec.active false; its Evicted-for-Deactivated
# condition outlives a reactivation, so it decides nothing), or Finished because it does not
# match its run (OutOfSync) or the run could not be started (FailedToStart). Argo CD needs
# no such gate (its Job check, job.lua, reads Suspended), so its Lua only reports giving up.
_FINISHED_SUCCEEDED = (
    "has(status.conditions) && status.conditions.exists(c, c.type == 'Finished' && "
    "c.status == 'True' && c.reason == 'Succeeded')"
)
_GAVE_UP = (
    "(has(spec.active) && spec.active == false) || (has(status.conditions) && "
    "status.conditions.exists(c, c.status == 'True' && c.type == 'Finished' && "
    "(c.reason == 'Failed' || c.reason == 'OutOfSync' || c.reason == 'FailedToStart')))"
)
WORKLOAD = HealthCheck(
    "kueue.x-k8s.io/v1beta2", "Workload", "workload.lua", _FINISHED_SUCCEEDED, _GAVE_UP
)
COMPANION_CHECKS = (WORKLOAD,)


def check_for(
    api_version: str, kind: str, checks: tuple[HealthCheck, ...] = HEALTH_CHECKS
) -> HealthCheck | None:
    """The health check of a kind among `checks` (by default the runs'), else None.

    A readiness stage waits for the runs' kinds; `COMPANION_CHECKS` are those of objects
    applied beside a run (its prebuilt Workload).
    """
    group = api_version.rpartition("/")[0]
    return next((c for c in checks if c.group == group and c.kind == kind), None)


@functools.cache
def lua_script(name: str) -> str:
    """One Argo CD health script, e.g. "job.lua": its header, the shared prelude, its body.

    Argo CD runs one script per kind and cannot share code between them, so the helpers
    every check uses are written once, in `prelude.lua`, and joined into each script here.
    """
    header, body = _split(name)
    return f"{header}\n{_split(PRELUDE)[1].strip()}\n{body}"


def _split(name: str) -> tuple[str, str]:
    """A script's leading comment lines, and the rest."""
    lines = resources.files(_PACKAGE).joinpath(name).read_text(encoding="utf-8").splitlines(True)
    cut = next((i for i, line in enumerate(lines) if not line.startswith("--")), len(lines))
    return "".join(lines[:cut]), "".join(lines[cut:])


# Argo CD only: the layer Applications' health, for the parent's sync waves. Not a readiness
# kind (no run is an Application), so it is not in HEALTH_CHECKS and has no Flux form.
APPLICATION_KEY = f"{ARGOCD_KEY_PREFIX}argoproj.io_Application"
APPLICATION_LUA = "application.lua"


def argocd_health_keys() -> dict[str, str]:
    """Every Argo CD health script, by its `argocd-cm` key: the runs' and Applications'."""
    keys = {c.argocd_key: lua_script(c.lua) for c in (*HEALTH_CHECKS, *COMPANION_CHECKS)}
    keys[APPLICATION_KEY] = resources.files(_PACKAGE).joinpath(APPLICATION_LUA).read_text("utf-8")
    return keys
