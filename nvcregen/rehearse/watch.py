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
from urllib.parse import quote

from nvcregen.core.kueuekeys import PREBUILT_LABEL
from nvcregen.rehearse.controlplane import ControlPlane, list_items
from nvcregen.replay.model import TreeObject

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
SELECTOR_VALUES = 32  # values of one label a selector names, at most
POLL_SHARE = 2.0  # the wait after a poll, at least this many times the poll's cost
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
        labels: Its labels in the tree.
        workload_labels: Its prebuilt Workload's labels in the tree (None: the tree has
            no such Workload, or the run names none).

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
    labels: Mapping[str, str] = field(default_factory=dict)
    workload_labels: Mapping[str, str] | None = None

    @property
    def label(self) -> str:
        """`Kind/name`, as the replay names runs."""
        return f"{self.kind}/{self.name}"

    @property
    def pending(self) -> bool:
        """Applied and not finished: its objects can still change."""
        return self.applied_s is not None and self.finished_s is None

    @property
    def running(self) -> bool:
        """Admitted and not finished: it holds quota."""
        return self.admitted_s is not None and self.finished_s is None


def run_states(
    runs: Iterable[TreeObject], step_of: Mapping[str, str], objects: Iterable[TreeObject] = ()
) -> list[RunState]:
    """A state per run object, with the step that applies it (`objects`: the tree's rest).

    The labels of each run and of its prebuilt Workload (found among `objects`) are kept:
    the watch lists only the objects of runs still going, by those labels.
    """
    workloads = {
        (item.namespace or "default", item.name): _labels(item.meta)
        for item in objects
        if item.kind == "Workload"
    }
    found = []
    for item in runs:
        labels = _labels(item.meta)
        prebuilt = str(labels.get(PREBUILT_LABEL) or "")
        namespace = item.namespace or "default"
        found.append(
            RunState(
                item.path,
                item.kind,
                namespace,
                item.name,
                step_of[item.path],
                prebuilt,
                labels=labels,
                workload_labels=workloads.get((namespace, prebuilt)) if prebuilt else None,
            )
        )
    return found


def _labels(meta: Mapping[str, Any]) -> dict[str, str]:
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        return {}
    return {str(k): str(v) for k, v in labels.items() if isinstance(v, str | int)}


def label_selector(labelled: Iterable[Mapping[str, str]]) -> str:
    """A label selector every one of `labelled` matches, narrow where the labels allow.

    For each key all carry, with no empty value and at most SELECTOR_VALUES values:
    `key in (v1,v2)`, the requirements joined (all must hold). "" (everything) when they
    share no such key, or when there are none. A superset: never leaves one out.
    """
    sets = list(labelled)
    if not sets:
        return ""
    keys = set.intersection(*(set(labels) for labels in sets))
    parts = []
    for key in sorted(keys):
        values = {labels[key] for labels in sets}
        if "" not in values and len(values) <= SELECTOR_VALUES:
            parts.append(f"{key} in ({','.join(sorted(values))})")
    return ",".join(parts)


def name_selector(key: str, names: Iterable[str]) -> str:
    """`key in (names)`: the pods of the named owners; "" when there are none."""
    listed = sorted(set(names))
    return f"{key} in ({','.join(listed)})" if listed else ""


def pause_s(base: float, last_poll_s: float) -> float:
    """Seconds to wait before the next poll: `base`, or POLL_SHARE x the last poll's cost.

    A poll's lists grow with the step; the watch then polls less often and keeps to
    1 / (1 + POLL_SHARE) of a core instead of crowding out the controllers it watches.
    """
    return max(base, POLL_SHARE * last_poll_s)


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
    """The runs' states, updated poll by poll; the most running at once.

    Each poll lists only what can still change: per namespace, the Workloads, Jobs and
    TrainJobs by the labels the runs still going carry in the tree (`label_selector`),
    and their pods by owner (`name_selector`); objects seen before stay as last seen.
    """

    plane: ControlPlane
    runs: list[RunState]
    began: float = field(default_factory=time.monotonic)
    at_once: dict[str, int] = field(default_factory=dict)  # by step key
    most: int = 0
    seen: dict[tuple[str, str, str], Mapping[str, Any]] = field(default_factory=dict)
    polls: int = 0
    poll_s: float = 0.0  # seconds spent polling, in all
    last_poll_s: float = 0.0

    def now(self) -> float:
        """Seconds since the watch began."""
        return time.monotonic() - self.began

    def pause(self, base: float) -> None:
        """Wait before the next poll (`pause_s`)."""
        time.sleep(pause_s(base, self.last_poll_s))

    def _items(self, path: str, selector: str = "") -> list[Mapping[str, Any]]:
        if selector:
            path += "?labelSelector=" + quote(selector, safe="")
        return list_items(self.plane, path)

    def lists(self, namespace: str) -> list[tuple[str, str, str]]:
        """(kind, path, label selector) of each list a poll sends for `namespace`."""
        pending = [r for r in self.runs if r.pending and r.namespace == namespace]
        found = []
        if pending:
            prebuilt = [r.workload_labels for r in pending]
            known = [labels for labels in prebuilt if labels is not None]
            # A Workload Kueue made itself carries none of the tree's labels: all of them.
            selector = label_selector(known) if len(known) == len(prebuilt) else ""
            found.append(("Workload", f"{KUEUE}/namespaces/{namespace}/workloads", selector))
        for kind, path in (
            ("Job", f"/apis/batch/v1/namespaces/{namespace}/jobs"),
            ("TrainJob", f"{TRAINER}/namespaces/{namespace}/trainjobs"),
        ):
            mine = [r for r in pending if r.kind == kind]
            if mine:
                found.append((kind, path, label_selector(r.labels for r in mine)))
        for kind, key in _OWNER_LABELS.items():
            names = name_selector(key, (r.name for r in pending if r.kind == kind))
            if names:
                found.append(("Pod", f"/api/v1/namespaces/{namespace}/pods", names))
        return found

    def snapshot(self) -> Snapshot:
        """List what can still change in every run's namespace; the objects as last seen."""
        began = time.monotonic()
        pods: list[Mapping[str, Any]] = []
        for namespace in sorted({r.namespace for r in self.runs}):
            for kind, path, selector in self.lists(namespace):
                if kind == "Pod":
                    pods += self._items(path, selector)
                    continue
                # A list's items of a built-in kind carry no apiVersion or kind (custom
                # resources' do): without them no health check would be found for a Job,
                # and an Argo CD wave of Jobs would pass at once.
                typed = {"apiVersion": path.split("/namespaces/")[0].removeprefix("/apis/"),
                         "kind": kind}  # fmt: skip
                for item in self._items(path, selector):
                    meta = item.get("metadata")
                    if isinstance(meta, dict):
                        self.seen[(kind, namespace, str(meta.get("name")))] = {**item, **typed}
        self.last_poll_s = time.monotonic() - began
        self.polls += 1
        self.poll_s += self.last_poll_s
        return Snapshot(self.seen, pods)

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
    return job_outcome(run)


def job_outcome(true: Mapping[str, Mapping[str, Any]]) -> str:
    """`Succeeded` (Complete), why it failed, or "" while it runs.

    `true` is a job's true conditions (`conditions`): a batch Job's, a JobSet's or a TrainJob's.
    """
    if "Failed" in true:
        failed = true["Failed"]
        return f"{failed.get('reason') or 'Failed'}: {failed.get('message') or ''}".rstrip(": ")
    if "Complete" in true:
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
