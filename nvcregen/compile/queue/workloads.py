"""What each readiness run carries to reach its queue (pure).

With Kueue, every TrainJob and Job (trainer mode), and every TrainJob NVCRE creates (through
`workloadMetadata.labels` of each Certification and WorkloadRun) is labelled with the
site's LocalQueue and, when nvcregen manages Kueue, its stage's WorkloadPriorityClass.
Trainer mode's pod templates also name their topology request: one pod per node
(`kubernetes.io/hostname`), so Topology Aware Scheduling places runs on free nodes only.
With NVCRE's `gangScheduler` (KAI Scheduler) the Certifications and WorkloadRuns carry
that instead, and no Kueue label at all.
"""

from __future__ import annotations

from nvcregen.core.kueuekeys import KUEUE_PREFIX, PRIORITY_LABEL, QUEUE_LABEL
from nvcregen.core.manifest import Obj, content_hash, hashed_name
from nvcregen.plan.admitted import manages_queues as plan_manages_queues
from nvcregen.spec.v1alpha1 import Site

REQUIRED_TOPOLOGY = f"{KUEUE_PREFIX}podset-required-topology"
UNCONSTRAINED_TOPOLOGY = f"{KUEUE_PREFIX}podset-unconstrained-topology"
HOSTNAME = "kubernetes.io/hostname"
LABEL_VALUE_MAX = 63
# Earlier stages first: the staged plan's order, when runs of several stages are pending.
PRIORITY_STEP = 100


def uses_kueue(site: Site) -> bool:
    """Whether Kueue admits the site's runs (else NVCRE's gang scheduler does)."""
    return site.spec.dependencies.gang_scheduler is None


def manages_queues(site: Site) -> bool:
    """Whether nvcregen installs Kueue and generates the ClusterQueue and its flavors."""
    return plan_manages_queues(site)


def queue_labels(site: Site, stage_index: int) -> dict[str, str]:
    """The labels that put a run of a stage in the site's LocalQueue; {} with a gang scheduler."""
    if not uses_kueue(site):
        return {}
    labels = {QUEUE_LABEL: site.spec.dependencies.kueue.local_queue}
    if manages_queues(site):
        labels[PRIORITY_LABEL] = priority_class_name(site, stage_index)
    return labels


def priority_class_name(site: Site, stage_index: int) -> str:
    """`<site>-<stage>`, shortened with a hash to fit a label value."""
    parts = [site.metadata.name, site.spec.readiness.stages[stage_index].name]
    name = "-".join(parts)
    if len(name) <= LABEL_VALUE_MAX:
        return name
    return hashed_name(parts, content_hash(name), LABEL_VALUE_MAX)


def priority_value(site: Site, stage_index: int) -> int:
    """The stage's priority: the first stage highest, `PRIORITY_STEP` apart."""
    return (len(site.spec.readiness.stages) - stage_index) * PRIORITY_STEP


def periodic_priority_class_name(site: Site) -> str:
    """`<site>-periodic`: the class of the site's periodic runs (a site name is short)."""
    return f"{site.metadata.name}-periodic"


def periodic_priority_value(site: Site) -> int:
    """One below 0 and below every stage's class: tenant work at default priority goes first.

    Kueue orders and preempts by this value; a Workload of a higher priority (a tenant's
    at the default 0) may preempt a periodic run, and no periodic run preempts anything.
    """
    stages = range(len(site.spec.readiness.stages))
    return min(0, *(priority_value(site, i) for i in stages)) - 1


def topology_annotations(site: Site, pods: int, level: str | None = None) -> dict[str, str]:
    """A pod template's Topology Aware Scheduling request, when nvcregen manages the queues.

    A podset of one pod asks for one host; one that must stay in a fabric domain (a leaf
    or an NVLink domain: `level`, a label of the site's fabric Topology) asks for that
    level; any other lets Kueue spread it over free nodes (each pod needs a whole node's
    GPUs anyway). None for an external Kueue, whose flavors may have no topology: a
    podset asking for one would never be admitted there.
    """
    if not manages_queues(site):
        return {}
    if pods == 1:
        return {REQUIRED_TOPOLOGY: HOSTNAME}
    if level is not None:
        return {REQUIRED_TOPOLOGY: level}
    return {UNCONSTRAINED_TOPOLOGY: "true"}


def gang_scheduler(site: Site, *, label_key: bool = True) -> Obj | None:
    """NVCRE's `gangScheduler` block; `label_key=False` for WorkloadRuns, whose schema lacks it."""
    gang = site.spec.dependencies.gang_scheduler
    if gang is None:
        return None
    spec: Obj = {"schedulerName": gang.scheduler_name, "queue": gang.queue}
    if label_key and gang.queue_label_key is not None:
        spec["queueLabelKey"] = gang.queue_label_key
    return spec
