"""The kinds that readiness steps wait for, and when one of them is done (pure data).

A GitOps engine can only wait for an object whose health it can tell. Argo CD knows none
of the readiness kinds (NVCRE Certification and WorkloadRun, Trainer TrainJob) and calls
a batch/v1 Job that Kueue resumed healthy while it still runs; Flux takes a TrainJob,
which has no Ready condition, as ready the moment it exists. Each check here names one
kind, its `name` (the engine's own form of it is found by that name: Argo CD's Lua script
`<name>.lua`, `engines/gitops/argocd/lua/`) and its conditions as CEL over the object's
top-level fields (Flux's `healthCheckExprs`, `engines/gitops/flux/chain.py`). Every form
reads the same conditions: Failed wins over success, an object still queued or running
is neither, and an object with no status yet is never done. Why they are what they are:
docs/design/0006-stage-gating.md.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HealthCheck:
    """When one kind of object is done, as every GitOps engine's checks read it.

    Attributes:
        api_version: The kind's apiVersion, e.g. "trainer.kubeflow.org/v1alpha1".
        kind: The kind, e.g. "TrainJob".
        name: The check's name, which an engine finds its own form of it by (Argo CD's
            script `<name>.lua`); kinds that read alike share one.
        current: CEL over the top-level fields: true when the object succeeded.
        failed: CEL: true when the object failed; evaluated before `current`.

    """

    api_version: str
    kind: str
    name: str
    current: str
    failed: str

    @property
    def group(self) -> str:
        """The API group ("" for the core group)."""
        return self.api_version.rpartition("/")[0]


def _condition(kind: str) -> str:
    """CEL: a condition of this type is True. False, not an error, when there are none."""
    return (
        "has(status.conditions) && "
        f"status.conditions.exists(c, c.type == '{kind}' && c.status == 'True')"
    )


NVCRE_API = "nvcre.nvidia.com/v1alpha1"
# NVCRE: exactly one of InProgress, Succeeded and Failed is True (nvcre-api.md 1.0).
CERTIFICATION = HealthCheck(
    NVCRE_API, "Certification", "nvcre", _condition("Succeeded"), _condition("Failed")
)
WORKLOAD_RUN = HealthCheck(
    NVCRE_API, "WorkloadRun", "nvcre", _condition("Succeeded"), _condition("Failed")
)
# Trainer 2.2: Complete from the JobSet, Failed also for DeadlineExceeded.
TRAIN_JOB = HealthCheck(
    "trainer.kubeflow.org/v1alpha1",
    "TrainJob",
    "trainjob",
    _condition("Complete"),
    _condition("Failed"),
)
# batch/v1: Suspended (queued or resumed) is neither done nor failed.
JOB = HealthCheck("batch/v1", "Job", "job", _condition("Complete"), _condition("Failed"))

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
    "kueue.x-k8s.io/v1beta2", "Workload", "workload", _FINISHED_SUCCEEDED, _GAVE_UP
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
