"""Continuous re-certification: a site's single-node stages as CronJobs (pure; issue 37).

With `readiness.periodic`, each listed stage's tests (on named nodes, one node per test)
become node packs (`nvcregen.plan.packs.Pack`, one per image, as `packing: packed` groups
them), and each pack's chunk of at most 64 nodes one batch/v1 CronJob whose `jobTemplate`
is exactly that chunk's packed Job (`packed.node_pack_job`, one round), so every period's
pods and log sections are those of a one-shot packed run:

- `concurrencyPolicy: Forbid`: a period still running (or queued) skips the next;
- `startingDeadlineSeconds` (default 1h): a period missed by more is skipped, and the
  controller never starts a backlog of them;
- history limits: the last 3 succeeded and 3 failed Jobs stay for `collect`;
- `suspend: false`: the layer's GitOps object follows `readiness.trigger` instead (manual:
  applied only when an operator syncs it), because a suspend flag patched by hand would be
  reverted by the engine's self-heal;
- each Job queues in the site's LocalQueue at `<site>-periodic`, a WorkloadPriorityClass
  below 0 and below every stage's (`queue.workloads.periodic_priority_value`); its pods
  carry the PriorityClass of the same name and value, `preemptionPolicy: Never`, so the
  kube-scheduler evicts them for any tenant pod at the default priority 0, and they never
  evict anything;
- no prebuilt Workload: a CronJob's Jobs are named per period by the controller
  (`<cronjob>-<minutes since the epoch>`), so no name can be written ahead of them; Kueue
  creates their Workloads as it does for any Job. The Job's name and the controller's
  `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation are the period's run id.

Each Job's `activeDeadlineSeconds` is the pack's worst case (every test to its timeout)
plus `plan.periodic.START_SLACK_S` for the image pull and pod start, not the one-shot
window; its `podFailurePolicy` ignores a pod evicted for a tenant's (`DisruptionTarget`),
so that node's tests start over when it is free again, within that deadline.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.compile.queue.workloads import (
    periodic_priority_class_name,
    periodic_priority_value,
    queue_labels,
)
from nvcregen.compile.readiness.components import PERIODIC as COMPONENT
from nvcregen.core import units
from nvcregen.core.kueuekeys import PRIORITY_LABEL
from nvcregen.core.labels import PERIODIC_LABEL, ROUND
from nvcregen.core.manifest import Manifest, Obj, content_hash
from nvcregen.engines.readiness.trainer.packed import node_pack_job, pack_run_name
from nvcregen.plan.model import TestUnit
from nvcregen.plan.packs import Pack
from nvcregen.plan.periodic import job_deadline_s, periodic_packs
from nvcregen.spec.v1alpha1 import Periodic, Site

PERIODIC_SOURCE = "/spec/readiness/periodic"
CRONJOB_NAME_MAX = 52  # the API's limit: the controller appends `-<minutes>` to its Jobs' names
HISTORY = 3
STARTING_DEADLINE_S = 3600


def pod_failure_policy() -> Obj:
    """A pod evicted for a tenant's is no failed test: its node's index starts over.

    Kube-scheduler preemption (and an eviction, a drain) sets the pod's `DisruptionTarget`
    condition; `Ignore` creates a replacement that runs once the node is free, within the
    Job's deadline, without counting against `backoffLimitPerIndex: 0`.
    """
    return {
        "rules": [
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            }
        ]
    }


def periodic_of(site: Site) -> Periodic | None:
    """The site's `readiness.periodic`, or None."""
    return site.spec.readiness.periodic


def periodic_manifests(site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
    """The periodic layer: the pods' PriorityClass and a CronJob per pack and chunk."""
    periodic = periodic_of(site)
    if periodic is None:
        return []
    jobs = [
        cronjob(site, periodic, pack, (index, chunk))
        for pack in periodic_packs(site, test_units)
        for index, chunk in enumerate(pack.chunks())
    ]
    return [pod_priority_class(site), *jobs] if jobs else []


def starting_deadline_s(periodic: Periodic) -> int:
    """`startingDeadlineSeconds`: the site's `startingDeadline`, or 1h."""
    if periodic.starting_deadline is None:
        return STARTING_DEADLINE_S
    return max(1, units.parse_duration(periodic.starting_deadline) // 1000)


def cronjob(
    site: Site, periodic: Periodic, pack: Pack, chunk: tuple[int, tuple[str, ...]]
) -> Manifest:
    """The CronJob of one chunk of a periodic pack: the packed Job, once per period."""
    job = node_pack_job(site, pack, 1, chunk).obj
    labels = {k: v for k, v in job["metadata"]["labels"].items() if k != ROUND}
    labels |= queue_labels(site, pack.first.stage_index) | {PERIODIC_LABEL: "true"}
    if PRIORITY_LABEL in labels:
        labels[PRIORITY_LABEL] = periodic_priority_class_name(site)
    job_spec: Obj = dict(job["spec"])
    job_spec["activeDeadlineSeconds"] = job_deadline_s(pack)
    job_spec["podFailurePolicy"] = pod_failure_policy()
    template = dict(job_spec["template"])
    pod = dict(template["spec"])
    pod["priorityClassName"] = periodic_priority_class_name(site)
    template["spec"] = pod
    template["metadata"] = dict(template["metadata"])
    template["metadata"]["labels"] = {
        k: v for k, v in template["metadata"]["labels"].items() if k != ROUND
    } | {PERIODIC_LABEL: "true"}
    job_spec["template"] = template
    spec: Obj = {"schedule": periodic.schedule}
    if periodic.time_zone is not None:
        spec["timeZone"] = periodic.time_zone
    spec |= {
        "concurrencyPolicy": "Forbid",
        "startingDeadlineSeconds": starting_deadline_s(periodic),
        "suspend": False,
        "successfulJobsHistoryLimit": HISTORY,
        "failedJobsHistoryLimit": HISTORY,
        "jobTemplate": {
            "metadata": {"labels": labels, "annotations": job["metadata"]["annotations"]},
            "spec": job_spec,
        },
    }
    index, _ = chunk
    metadata: Obj = {
        "name": pack_run_name(site, pack, content_hash(spec), f"-c{index}"),
        "namespace": site.spec.nvcre.namespace,
        "labels": labels,
        "annotations": job["metadata"]["annotations"],
    }
    obj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": metadata, "spec": spec}
    catalog = tuple(sorted({u.pool.catalog_file for u in pack.units} | _test_files(pack)))
    notes = (
        "a CronJob's Jobs are named per period: Kueue creates their Workloads (no prebuilt "
        "name), at the site's lowest priority",
    )
    return Manifest(obj, COMPONENT, PERIODIC_SOURCE, catalog, notes)


def _test_files(pack: Pack) -> set[str]:
    return {u.test_file for u in pack.units}


def pod_priority_class(site: Site) -> Manifest:
    """The periodic pods' PriorityClass: below 0, never preempting (`preemptionPolicy`)."""
    obj: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": periodic_priority_class_name(site)},
        "value": periodic_priority_value(site),
        "preemptionPolicy": "Never",
        "globalDefault": False,
        "description": (
            f"nvcregen periodic re-certification of site {site.metadata.name}: "
            "evicted for tenant pods, evicts none"
        ),
    }
    return Manifest(obj, COMPONENT, PERIODIC_SOURCE)
