"""Readiness runs in every state a health check must tell apart, shaped as upstream writes them.

Each object is a run nvcregen generates (a Certification, WorkloadRun, TrainJob or batch/v1
Job of the factory site), or a run's prebuilt Kueue Workload, with the status its controller
would write: NVCRE keeps exactly one
of InProgress, Succeeded and Failed True (the others False, reason NotApplicable); Trainer
and the Kubernetes Job controller add Suspended, Complete and Failed conditions, and Kueue
queues a run by setting `spec.suspend`. `tests/unit/compile/test_health_*.py` validate every
object against the vendored CRD (or core) schema, status included, so they cannot drift
from upstream shapes. Lives in `tests/` next to `sitefactory.py`, for the same reason.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

from sitefactory import site, site_yaml, units_of
from trainerfactory import compiled, trainer_text

from nvcregen.engines.readiness.nvcre.layer import readiness_manifests

Obj = dict[str, Any]

KINDS = ("Certification", "WorkloadRun", "TrainJob", "Job")
# Every state, with the Argo CD health and the Flux status it must give, per kind. Flux
# cannot evaluate an expression over a `status` that is not there: "Unknown" (it keeps
# polling until the Kustomization's timeout), never Current or Failed.
_NVCRE_RUN = {
    "not-started": ("Progressing", "Unknown"),
    "queued": ("Progressing", "InProgress"),
    "running": ("Progressing", "InProgress"),
    "succeeded": ("Healthy", "Current"),
    "failed": ("Degraded", "Failed"),
    "timed-out": ("Degraded", "Failed"),
}
# Kueue suspends TrainJobs and Jobs on create and resumes them once admitted.
_QUEUED_RUN = {
    **_NVCRE_RUN,
    "suspended-on-create": ("Suspended", "Unknown"),
    "queued": ("Suspended", "InProgress"),
}
EXPECTED: dict[str, dict[str, tuple[str, str]]] = {
    "Certification": _NVCRE_RUN,
    "WorkloadRun": _NVCRE_RUN,
    "TrainJob": _QUEUED_RUN,
    "Job": {**_QUEUED_RUN, "resumed-running": ("Progressing", "InProgress")},
}
CASES = [(kind, state) for kind in KINDS for state in EXPECTED[kind]]
# A run's prebuilt Workload (trainer mode with Kueue). Argo CD: never holds a wave (the
# run's own check does), fails it once Kueue gave up on the run. Flux: the step's gate
# (Flux's Job reader calls a queued, suspended Job Current), done only once Kueue finished
# it after the run succeeded, failed once the run failed or Kueue gave up. Kueue v0.19.2's
# states (pkg/controller/core/workload_controller.go, jobframework/reconciler.go); every
# stored Workload has spec.active (the CRD defaults it).
WORKLOAD_EXPECTED: dict[str, tuple[str, str]] = {
    "not-started": ("Healthy", "Unknown"),
    "pending": ("Healthy", "InProgress"),
    "admitted": ("Healthy", "InProgress"),
    "evicted-pods-ready-timeout": ("Healthy", "InProgress"),
    "deactivated": ("Degraded", "Failed"),
    "deactivated-while-evicted": ("Degraded", "Failed"),
    "deactivation-target": ("Healthy", "InProgress"),
    "reactivated": ("Healthy", "InProgress"),
    # spec.active set true again, before Kueue marks it Requeued: someone wants it to run
    "reactivated-not-yet-requeued": ("Healthy", "InProgress"),
    "out-of-sync": ("Degraded", "Failed"),
    "failed-to-start": ("Degraded", "Failed"),
    "finished-succeeded": ("Healthy", "Current"),
    "finished-failed": ("Healthy", "Failed"),
}
EXPECTED["Workload"] = WORKLOAD_EXPECTED
WORKLOAD_CASES = [("Workload", state) for state in WORKLOAD_EXPECTED]

T0 = "2026-10-20T10:00:00Z"
T1 = "2026-10-20T10:05:00Z"
T2 = "2026-10-20T11:05:00Z"


def condition(kind: str, status: str, reason: str, message: str = "") -> Obj:
    """A metav1.Condition as NVCRE and Trainer write it (every field the CRDs require)."""
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": T1,
    }


def job_condition(kind: str, status: str, reason: str, message: str = "") -> Obj:
    """A batch/v1 JobCondition as the Job controller writes it: with a probe time too."""
    return condition(kind, status, reason, message) | {"lastProbeTime": T1}


@cache
def _templates() -> dict[str, Obj]:
    """One generated object of each kind, without status."""
    nvcre = [m.obj for m in readiness_manifests(site(), units_of())]
    trainer = [m.obj for m in compiled(trainer_text(site_yaml()))]
    found: dict[str, Obj] = {}
    for obj in [*nvcre, *trainer]:
        found.setdefault(obj["kind"], obj)
    return found


def run(kind: str, state: str) -> Obj:
    """A generated run of `kind` in `state` (one of `EXPECTED[kind]`)."""
    obj = copy.deepcopy(_templates()[kind])
    builder = _BUILDERS[kind]
    builder(obj, state)
    return obj


def _nvcre(obj: Obj, state: str) -> None:
    """NVCRE: exactly one of InProgress, Succeeded, Failed is True."""
    active = {
        "queued": ("InProgress", "WaitingForNodes", "waiting for 2 nodes matching the target"),
        "running": ("InProgress", "WorkflowRunning", "workflow lab-node-nccl running"),
        "succeeded": ("Succeeded", "AllWorkflowsSucceeded", "all workflows succeeded"),
        "failed": ("Failed", "WorkflowFailed", "workflow lab-node-nccl failed: busbw 12.5 < 360"),
        "timed-out": ("Failed", "WorkflowFailed", "job lab-node-nccl-job timed out after 30m"),
    }
    if state == "not-started":
        return
    kind, reason, message = active[state]
    conditions = [
        condition(kind, "True", reason, message)
        if kind == name
        else condition(name, "False", "NotApplicable")
        for name in ("InProgress", "Succeeded", "Failed")
    ]
    obj["status"] = {"conditions": conditions}


def _trainjob(obj: Obj, state: str) -> None:
    """Trainer 2.2: Suspended True/False, then Complete or Failed."""
    suspended = condition("Suspended", "True", "Suspended", "TrainJob is suspended")
    resumed = condition("Suspended", "False", "Resumed", "TrainJob is resumed")
    jobs = [_jobs_status("launcher"), _jobs_status("node")]
    if state in {"suspended-on-create", "queued"}:
        obj["spec"]["suspend"] = True  # Kueue's webhook sets it on create
    by_state: dict[str, list[Obj]] = {
        "queued": [suspended],
        "running": [resumed],
        "succeeded": [resumed, condition("Complete", "True", "AllJobsCompleted", "jobs done")],
        "failed": [resumed, condition("Failed", "True", "FailedJobs", "launcher failed")],
        "timed-out": [resumed, condition("Failed", "True", "DeadlineExceeded", "deadline")],
    }
    if state in by_state:
        obj["status"] = {"conditions": by_state[state], "jobsStatus": jobs}


def _jobs_status(name: str) -> Obj:
    return {"name": name, "ready": 1, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0}


def _job(obj: Obj, state: str) -> None:
    """batch/v1: Kueue suspends on create; the Job controller reports Suspended, then the end."""
    suspended = job_condition("Suspended", "True", "JobSuspended", "Job suspended")
    resumed = job_condition("Suspended", "False", "JobResumed", "Job resumed")
    if state in {"suspended-on-create", "queued"}:
        obj["spec"]["suspend"] = True  # Kueue's webhook sets it on create
    started: Obj = {"startTime": T0}
    by_state: dict[str, Obj] = {
        "queued": {"conditions": [suspended]},
        "running": started | {"active": 1, "ready": 1},
        "resumed-running": started | {"active": 1, "ready": 1, "conditions": [resumed]},
        "succeeded": started
        | {"completionTime": T2, "succeeded": 1, "conditions": [resumed, _complete()]},
        "failed": started | {"failed": 1, "conditions": [resumed, _failed("BackoffLimitExceeded")]},
        "timed-out": started | {"failed": 1, "conditions": [resumed, _failed("DeadlineExceeded")]},
    }
    if state in by_state:
        obj["status"] = by_state[state]


def _complete() -> Obj:
    return job_condition("Complete", "True", "CompletionsReached", "Reached expected completions")


def _failed(reason: str) -> Obj:
    return job_condition("Failed", "True", reason, f"Job failed: {reason}")


_PENDING = (
    "QuotaReserved",
    "False",
    "Pending",
    "couldn't assign flavors to pod set launcher: "
    "insufficient unused quota for nvidia.com/gpu in flavor h20, 8 more needed",
)
_TIMEOUT = "Exceeded the PodsReady timeout default/lab-node-nccl"
_DEACTIVATED = (
    "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
)


def _workload(obj: Obj, state: str) -> None:
    """Kueue v0.19.2's Workload conditions, in the order it adds them."""
    obj["spec"]["active"] = state not in {"deactivated", "deactivated-while-evicted"}
    pending = condition(*_PENDING)
    admitted = [
        condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue lab"),
        condition("Admitted", "True", "Admitted", "The workload is admitted"),
    ]
    timeout = condition("Evicted", "True", "PodsReadyTimeout", _TIMEOUT)
    requeued = condition("Requeued", "False", "PodsReadyTimeout", _TIMEOUT)
    deactivated = condition("Evicted", "True", "Deactivated", _DEACTIVATED)
    target = condition(
        "DeactivationTarget", "True", "RequeuingLimitExceeded",
        "exceeding the maximum number of re-queuing retries",
    )  # fmt: skip
    by_state: dict[str, list[Obj]] = {
        "pending": [pending],
        "admitted": admitted,
        "evicted-pods-ready-timeout": [pending, timeout, requeued],
        "deactivation-target": [pending, timeout, requeued, target],
        "deactivated": [pending, deactivated, condition("Requeued", "False", "Deactivated", "")],
        "deactivated-while-evicted": [pending, timeout, requeued],
        "reactivated-not-yet-requeued": [pending, deactivated],
        "reactivated": [
            pending,
            deactivated,
            condition("Requeued", "True", "Reactivated", "The workload was reactivated"),
        ],
        "out-of-sync": [
            pending,
            condition(
                "Finished",
                "True",
                "OutOfSync",
                "The prebuilt workload is out of sync with its user job",
            ),
        ],
        "failed-to-start": [
            *admitted,
            condition("Finished", "True", "FailedToStart", "admission webhook denied the request"),
        ],
        "finished-succeeded": [
            *admitted,
            condition("Finished", "True", "Succeeded", "Job finished successfully"),
        ],
        "finished-failed": [
            *admitted,
            condition("Finished", "True", "Failed", "Job failed: launcher failed"),
        ],
    }
    if state in by_state:
        obj["status"] = {"conditions": by_state[state]}
    if state in {"evicted-pods-ready-timeout", "deactivation-target"}:
        obj["status"]["requeueState"] = {"count": 3, "requeueAt": T2}


_BUILDERS: dict[str, Callable[[Obj, str], None]] = {
    "Workload": _workload,
    "Certification": _nvcre,
    "WorkloadRun": _nvcre,
    "TrainJob": _trainjob,
    "Job": _job,
}
