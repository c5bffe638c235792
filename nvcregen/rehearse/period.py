"""One period of `readiness.periodic` made ready for the twin, and read back from it (pure).

`rehearse SITE --period` runs one period of the site's periodic layer on the real CronJob
controller (`docs/design/0021-periodic.md`, `0019-twin.md`). What it applies, from the
rendered tree, in order: the tree's Namespaces, the queues layer (the flavors, the
ClusterQueue, the LocalQueue and the WorkloadPriorityClasses, the periodic one among
them) and the periodic layer (the pods' PriorityClass and the CronJobs). The rehearsal's
one change: each CronJob's `schedule` becomes `* * * * *`, so the controller fires at the
next minute instead of, say, Sunday 03:00; the rehearsal suspends each CronJob once its
first Job exists, so one period runs. Nothing else of the objects changes: the Jobs are
the controller's, named `<cronjob>-<scheduled minutes since the epoch>` (the period's id
`collect --period` reads), queued by Kueue at the periodic priority.

Read back: each CronJob's Jobs (`ownerReferences`), their Workloads (Kueue's, owned by
the Job: no prebuilt one), the nodes their pods were bound to, and what went wrong
(`problems`): a CronJob that made no Job or more than one, Jobs of different periods, a
Job not admitted, admitted at another priority than its label's class, not finished, or
failed, or a pod bound off the Job's pinned nodes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nvcregen.compile.queue.objects import COMPONENT as QUEUES
from nvcregen.compile.readiness.components import PERIODIC
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.kueuekeys import PRIORITY_LABEL
from nvcregen.core.labels import NODES, PERIODIC_LABEL, STAGE, TEST, TESTS
from nvcregen.rehearse.steps import apply_rank, skip_reason
from nvcregen.rehearse.watch import conditions, job_outcome, pending_reason
from nvcregen.replay.model import TreeObject
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

SCHEDULE = "* * * * *"  # the rehearsal's one change: the next minute
MARGIN_S = 10.0  # CronJobs are created at least this long before a minute ends
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
READINESS = "/spec/readiness"


@dataclass(frozen=True)
class Cron:
    """One periodic CronJob of the tree, as the period is judged against it."""

    namespace: str
    name: str
    schedule: str  # the site's
    stage: str
    test: str  # its pack: `periodic-<n>`
    tests: tuple[str, ...]
    nodes: tuple[str, ...]
    priority_class: str  # the WorkloadPriorityClass its Jobs are labelled with


@dataclass(frozen=True)
class PeriodPlan:
    """What a period's rehearsal applies, in order, and what it expects of it.

    Attributes:
        objects: Namespaces, the queues layer, the periodic layer (CronJobs last, their
            schedule changed: `rescheduled`), in apply order.
        crons: The periodic CronJobs, by name.
        priorities: Each WorkloadPriorityClass of the queues layer: its value.
        expected_ms: Each pack's expected duration, by (stage, `periodic-<n>`): kwok's
            `pod-complete` of its pods.
        skipped: What of those layers the twin does not take (path, why).

    """

    objects: tuple[TreeObject, ...]
    crons: tuple[Cron, ...]
    priorities: Mapping[str, int]
    expected_ms: Mapping[tuple[str, str], int]
    skipped: tuple[tuple[str, str], ...] = ()


def period_refusal(site: Site, doc: Document) -> Diagnostic | None:
    """NVC786 for `rehearse --period` of a site without `readiness.periodic`, else None."""
    if site.spec.readiness.periodic is not None:
        return None
    return Diagnostic(
        doc.span(READINESS, key=True),
        Severity.ERROR,
        codes.NVC786.code,
        f"rehearse --period: site {site.metadata.name} has no readiness.periodic, so there "
        "is no period to rehearse",
        READINESS,
        "add readiness.periodic (docs/design/0021-periodic.md), or rehearse the one-shot "
        "plan without --period",
    )


def period_plan(
    objects: Sequence[TreeObject], expected: Mapping[tuple[str, str], int]
) -> PeriodPlan:
    """The period's objects and expectations from a rendered tree.

    `expected`: each (stage, test)'s expected milliseconds (the replay's timings); a
    pack's is the sum of its tests'.
    """
    chosen, skipped = [], []
    for item in objects:
        layer = item.path.split("/", 1)[0]
        if item.kind != "Namespace" and layer not in {QUEUES, PERIODIC}:
            continue
        reason = skip_reason(item)
        if reason:
            skipped.append((item.path, reason))
        else:
            chosen.append(item)
    crons = tuple(_cron(o) for o in chosen if _periodic_cron(o))
    durations = {
        (c.stage, c.test): sum(expected.get((c.stage, t), 0) for t in c.tests) for c in crons
    }
    others = sorted((o for o in chosen if not _periodic_cron(o)), key=apply_rank)
    ordered = [
        *others,
        *(rescheduled(o) for o in sorted(chosen, key=apply_rank) if _periodic_cron(o)),
    ]
    priorities = {
        o.name: int(o.obj.get("value", 0))
        for o in chosen
        if o.kind == "WorkloadPriorityClass" and isinstance(o.obj.get("value"), int)
    }
    return PeriodPlan(tuple(ordered), crons, priorities, durations, tuple(skipped))


def rescheduled(item: TreeObject) -> TreeObject:
    """A CronJob as the rehearsal applies it: only its schedule changed, to the next minute."""
    obj = copy.deepcopy(dict(item.obj))
    obj["spec"] = {**obj["spec"], "schedule": SCHEDULE}
    return TreeObject(item.file, item.path, obj)


def wait_before_create_s(now: datetime) -> float:
    """How long to wait so that every CronJob is created in one minute, with MARGIN_S left.

    A CronJob fires at the first minute after its creation: two created either side of a
    minute's end would fire a minute apart, as two periods.
    """
    into = now.second + now.microsecond / 1e6
    if into <= 60.0 - MARGIN_S:
        return 0.0
    return 61.0 - into  # a second into the next minute


def period_change(crons: Sequence[Cron]) -> str:
    """The rehearsal's one change to the site's objects, as the output says it."""
    schedules = ", ".join(sorted({f"'{c.schedule}'" for c in crons}))
    count = len(crons)
    return (
        f"the rehearsal's one change: the schedule of the {count} periodic "
        f"CronJob{'s' * (count != 1)} ({schedules}) is '{SCHEDULE}', the next minute, and each "
        "is suspended once its first Job exists, so one period runs"
    )


@dataclass(frozen=True)
class PeriodJob:
    """One Job the CronJob controller made, as observed.

    `minutes`: the period its name carries (None: a name not `<cronjob>-<minutes>`);
    `priority`: its Workload's class and value (("", None) before Kueue made one);
    `outcome`: `Succeeded`, what failed, or "" while it runs; `waiting`: Kueue's reason
    while not admitted.
    """

    cron: str
    name: str
    minutes: int | None
    scheduled: str
    admitted: bool
    priority_class: str
    priority: int | None
    outcome: str
    nodes: tuple[str, ...]
    waiting: str = ""


def minutes_of(cron: str, job: str) -> int | None:
    """The scheduled minutes since the epoch of a CronJob's Job name, or None."""
    match = re.fullmatch(rf"{re.escape(cron)}-(\d{{1,12}})", job)
    return int(match[1]) if match else None


def period_jobs(
    crons: Sequence[Cron],
    jobs: Iterable[Mapping[str, Any]],
    workloads: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
) -> dict[str, list[PeriodJob]]:
    """Each CronJob's Jobs (by `ownerReferences`), in name order, read from the lists."""
    owned = _owners("CronJob", jobs)
    by_job = _owners("Job", workloads)
    placed: dict[tuple[str, str], set[str]] = {}
    for pod in pods:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        job = (meta.get("labels") or {}).get("batch.kubernetes.io/job-name")
        if job and spec.get("nodeName"):
            key = (str(meta.get("namespace") or ""), str(job))
            placed.setdefault(key, set()).add(str(spec["nodeName"]))
    found: dict[str, list[PeriodJob]] = {}
    for cron in crons:
        mine = owned.get((cron.namespace, cron.name), [])
        found[cron.name] = [
            _job(
                cron,
                job,
                next(iter(by_job.get((cron.namespace, str(job["metadata"]["name"])), [])), None),
                placed.get((cron.namespace, str(job["metadata"]["name"])), set()),
            )
            for job in sorted(mine, key=lambda j: str(j["metadata"]["name"]))
        ]
    return found


def _job(
    cron: Cron,
    job: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    nodes: set[str],
) -> PeriodJob:
    meta = job["metadata"]
    name = str(meta["name"])
    spec = (workload or {}).get("spec") or {}
    ref = spec.get("priorityClassRef") or {}
    priority = spec.get("priority")
    true = conditions(workload)
    admitted = "Admitted" in true or "Finished" in true
    return PeriodJob(
        cron.name,
        name,
        minutes_of(cron.name, name),
        str((meta.get("annotations") or {}).get(SCHEDULED) or ""),
        admitted,
        str(ref.get("name") or "") if isinstance(ref, dict) else "",
        priority if isinstance(priority, int) else None,
        job_outcome(conditions(job)),
        tuple(sorted(nodes)),
        "" if admitted else pending_reason(workload),
    )


def period_of(found: Mapping[str, Sequence[PeriodJob]]) -> int | None:
    """The period the Jobs ran: the smallest minutes among them (None: no Job)."""
    minutes = [j.minutes for jobs in found.values() for j in jobs if j.minutes is not None]
    return min(minutes) if minutes else None


def problems(plan: PeriodPlan, found: Mapping[str, Sequence[PeriodJob]]) -> list[str]:
    """What kept the period from going as the site plans it ([] when it did)."""
    said: list[str] = []
    periods = sorted({j.minutes for jobs in found.values() for j in jobs if j.minutes})
    if len(periods) > 1:
        said.append(f"the Jobs are of {len(periods)} periods ({_listed(periods)}), not one")
    for cron in plan.crons:
        jobs = found.get(cron.name, [])
        if not jobs:
            said.append(f"CronJob {cron.name} made no Job")
            continue
        if len(jobs) > 1:
            said.append(f"CronJob {cron.name} made {len(jobs)} Jobs, not one")
        for job in jobs:
            said += _job_problems(plan, cron, job)
    return said


def _job_problems(plan: PeriodPlan, cron: Cron, job: PeriodJob) -> list[str]:
    if job.minutes is None:
        return [f"Job {job.name} is not named <cronjob>-<minutes>: no period id"]
    if not job.admitted:
        return [f"Job {job.name} was not admitted: {job.waiting}"]
    said = []
    value = plan.priorities.get(cron.priority_class)
    if job.priority_class != cron.priority_class or job.priority != value:
        said.append(
            f"Job {job.name} was admitted at priority {job.priority_class or 'none'} "
            f"({job.priority}), not {cron.priority_class} ({value})"
        )
    if not job.outcome:
        said.append(f"Job {job.name} did not finish in time")
    elif job.outcome != "Succeeded":
        said.append(f"Job {job.name} failed: {job.outcome}")
    off = sorted(set(job.nodes) - set(cron.nodes))
    if off:
        said.append(f"Job {job.name} ran on {_listed(off)}, pinned to {_listed(cron.nodes)}")
    return said


def _listed(items: Iterable[object]) -> str:
    return ", ".join(str(i) for i in items)


def _periodic_cron(item: TreeObject) -> bool:
    labels = item.meta.get("labels") or {}
    return item.kind == "CronJob" and labels.get(PERIODIC_LABEL) == "true"


def _cron(item: TreeObject) -> Cron:
    meta, spec = item.meta, item.obj.get("spec") or {}
    labels, notes = meta.get("labels") or {}, meta.get("annotations") or {}
    return Cron(
        str(meta.get("namespace") or "default"),
        item.name,
        str(spec.get("schedule") or ""),
        str(labels.get(STAGE) or ""),
        str(labels.get(TEST) or ""),
        tuple(t for t in str(notes.get(TESTS) or "").split(",") if t),
        tuple(n for n in str(notes.get(NODES) or "").split(",") if n),
        str(labels.get(PRIORITY_LABEL) or ""),
    )


def _owners(
    kind: str, items: Iterable[Mapping[str, Any]]
) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Items by (their namespace, the name of their owner of `kind`).

    An owner is always in its item's namespace, and two namespaces may hold owners of one name.
    """
    found: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for item in items:
        meta = item.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        for owner in meta.get("ownerReferences") or []:
            if isinstance(owner, dict) and owner.get("kind") == kind:
                found.setdefault((namespace, str(owner.get("name"))), []).append(item)
    return found
