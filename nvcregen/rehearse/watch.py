"""What the controllers did with each run, read from the API server poll by poll.

A run is a Job or TrainJob of the tree (`replay/runs.py`). Its Workload is Kueue's: the
prebuilt one it names (`kueue.x-k8s.io/prebuilt-workload-name`), else the one it owns.
Each poll lists, per namespace of the runs, the Workloads, Jobs, TrainJobs and pods
(one list each: one moment), and records the first poll each run's Workload was
`Admitted`, the first it was `Finished` (or the run Complete or Failed), the nodes its
pods were bound to (a Job's pods by `batch.kubernetes.io/job-name`, a TrainJob's by the
JobSet Trainer names after it), and how many runs held quota at once, per step and in all.
Times are seconds from the watch's start. The API server's answers are read as untrusted:
every field is checked for its type before it is used.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.rehearse.controlplane import ControlPlane
from nvcregen.replay.model import TreeObject

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
_OWNER_LABELS = {
    "Job": "batch.kubernetes.io/job-name",
    "TrainJob": "jobset.sigs.k8s.io/jobset-name",
}


def conditions(obj: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    """The True conditions of an object, by type."""
    status = (obj or {}).get("status")
    listed = status.get("conditions") if isinstance(status, dict) else None
    return {
        str(c.get("type")): c
        for c in listed or []
        if isinstance(c, dict) and c.get("status") == "True"
    }


@dataclass
class RunState:
    """One run as observed.

    Attributes:
        path: Its file in the site folder.
        kind: `Job` or `TrainJob` (or another run kind the tree holds).
        namespace: Its namespace.
        name: Its name.
        step: The key of the step applying it.
        workload: The prebuilt Workload it names ("" when it names none).
        applied_s: When its step was applied (None: never).
        admitted_s: The first poll its Workload was Admitted (None: never).
        finished_s: The first poll it was finished (None: not yet).
        outcome: `Succeeded`, or what failed (its reason and message).
        nodes: The nodes its pods were bound to.
        waiting: While it is not admitted: why, in Kueue's words (its Workload's
            `QuotaReserved` condition), or that Kueue has made or adopted no Workload.

    """

    path: str
    kind: str
    namespace: str
    name: str
    step: str
    workload: str = ""
    applied_s: float | None = None
    admitted_s: float | None = None
    finished_s: float | None = None
    outcome: str = ""
    nodes: set[str] = field(default_factory=set)
    waiting: str = ""

    @property
    def label(self) -> str:
        """`Kind/name`, as the replay names runs."""
        return f"{self.kind}/{self.name}"

    @property
    def running(self) -> bool:
        """Admitted and not finished: it holds quota."""
        return self.admitted_s is not None and self.finished_s is None


def run_states(runs: Iterable[TreeObject], step_of: Mapping[str, str]) -> list[RunState]:
    """A state per run object, with the step that applies it."""
    found = []
    for item in runs:
        prebuilt = (item.meta.get("labels") or {}).get(PREBUILT_LABEL)
        found.append(
            RunState(
                item.path,
                item.kind,
                item.namespace or "default",
                item.name,
                step_of[item.path],
                str(prebuilt or ""),
            )
        )
    return found


@dataclass
class Snapshot:
    """One poll's live objects: by (kind, namespace, name), and the pods."""

    objects: dict[tuple[str, str, str], Mapping[str, Any]]
    pods: list[Mapping[str, Any]]

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """A live object of the poll, or None."""
        return self.objects.get((kind, namespace, name))


@dataclass
class Watch:
    """The runs' states, updated poll by poll; the most running at once."""

    plane: ControlPlane
    runs: list[RunState]
    began: float = field(default_factory=time.monotonic)
    at_once: dict[str, int] = field(default_factory=dict)  # by step key
    most: int = 0

    def now(self) -> float:
        """Seconds since the watch began."""
        return time.monotonic() - self.began

    def _items(self, path: str) -> list[Mapping[str, Any]]:
        code, body = self.plane.request("GET", path)
        items = body.get("items") if code == 200 and isinstance(body, dict) else None
        return [i for i in items or [] if isinstance(i, dict)]

    def snapshot(self) -> Snapshot:
        """List the Workloads, Jobs, TrainJobs and pods of every run's namespace."""
        objects: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        pods: list[Mapping[str, Any]] = []
        for namespace in sorted({r.namespace for r in self.runs}):
            for kind, path in (
                ("Workload", f"{KUEUE}/namespaces/{namespace}/workloads"),
                ("Job", f"/apis/batch/v1/namespaces/{namespace}/jobs"),
                ("TrainJob", f"{TRAINER}/namespaces/{namespace}/trainjobs"),
            ):
                # A list's items of a built-in kind carry no apiVersion or kind (custom
                # resources' do): without them no health check would be found for a Job,
                # and an Argo CD wave of Jobs would pass at once.
                typed = {"apiVersion": path.split("/namespaces/")[0].removeprefix("/apis/"),
                         "kind": kind}  # fmt: skip
                for item in self._items(path):
                    meta = item.get("metadata")
                    if isinstance(meta, dict):
                        objects[(kind, namespace, str(meta.get("name")))] = {**item, **typed}
            pods += self._items(f"/api/v1/namespaces/{namespace}/pods")
        return Snapshot(objects, pods)

    def poll(self) -> Snapshot:
        """One round: record admissions, ends, placements and concurrency; the snapshot."""
        snapshot = self.snapshot()
        now = self.now()
        owned = _owned_workloads(snapshot)
        for run in self.runs:
            if run.applied_s is None:
                continue
            workload = (
                snapshot.get("Workload", run.namespace, run.workload) if run.workload else None
            )
            workload = workload or owned.get((run.namespace, run.kind, run.name))
            true = conditions(workload)
            if run.admitted_s is None and "Admitted" in true:
                run.admitted_s = now
            if run.admitted_s is None:
                run.waiting = pending_reason(workload)
            if run.finished_s is None:
                outcome = _outcome(
                    true.get("Finished"),
                    conditions(snapshot.get(run.kind, run.namespace, run.name)),
                )
                if outcome:
                    run.finished_s, run.outcome = now, outcome
                    if run.admitted_s is None and outcome == "Succeeded":
                        run.admitted_s = now  # admitted and done between two polls
        _place(self.runs, snapshot.pods)
        running: dict[str, int] = {}
        for run in self.runs:
            if run.running:
                running[run.step] = running.get(run.step, 0) + 1
        for step, count in running.items():
            self.at_once[step] = max(self.at_once.get(step, 0), count)
        self.most = max(self.most, sum(running.values()))
        return snapshot


def pending_reason(workload: Mapping[str, Any] | None) -> str:
    """Why Kueue has not admitted a Workload yet: its `QuotaReserved` message."""
    if workload is None:
        return "no Workload: Kueue has not adopted the prebuilt one (or made its own) yet"
    status = workload.get("status")
    listed = status.get("conditions") if isinstance(status, dict) else None
    for found in listed or []:
        if isinstance(found, dict) and found.get("type") == "QuotaReserved":
            return f"{found.get('reason') or 'Pending'}: {found.get('message') or ''}".rstrip(": ")
    return "pending: Kueue has not considered it yet"


def _owned_workloads(snapshot: Snapshot) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """Workloads by (namespace, owner kind, owner name)."""
    found: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for (kind, namespace, _), item in snapshot.objects.items():
        if kind != "Workload":
            continue
        owners = (item.get("metadata") or {}).get("ownerReferences") or []
        for owner in owners if isinstance(owners, list) else []:
            if isinstance(owner, dict):
                found[(namespace, str(owner.get("kind")), str(owner.get("name")))] = item
    return found


def _outcome(finished: Mapping[str, Any] | None, run: Mapping[str, Mapping[str, Any]]) -> str:
    """`Succeeded`, what failed, or "" while it runs (the Workload's word first)."""
    if finished is not None:
        reason = str(finished.get("reason") or "")
        if reason == "Succeeded":
            return "Succeeded"
        return f"{reason or 'Finished'}: {finished.get('message') or ''}".rstrip(": ")
    if "Failed" in run:
        failed = run["Failed"]
        return f"{failed.get('reason') or 'Failed'}: {failed.get('message') or ''}".rstrip(": ")
    if "Complete" in run:
        return "Succeeded"
    return ""


def _place(runs: Iterable[RunState], pods: Iterable[Mapping[str, Any]]) -> None:
    by_owner: dict[tuple[str, str, str], set[str]] = {}
    for pod in pods:
        meta, spec = pod.get("metadata"), pod.get("spec")
        if not isinstance(meta, dict) or not isinstance(spec, dict) or not spec.get("nodeName"):
            continue
        pod_labels = meta.get("labels") or {}
        for kind, key in _OWNER_LABELS.items():
            owner = pod_labels.get(key) if isinstance(pod_labels, dict) else None
            if owner:
                entry = (kind, str(meta.get("namespace")), str(owner))
                by_owner.setdefault(entry, set()).add(str(spec["nodeName"]))
    for run in runs:
        run.nodes |= by_owner.get((run.kind, run.namespace, run.name), set())
