"""The queues layer: the Kueue objects that admit a site's readiness runs (pure).

With `dependencies.kueue.managed: true`: a Topology with one level, the node
(`kubernetes.io/hostname`); a ResourceFlavor per pool some test runs on, selecting the
pool's GPU nodes by label and naming that Topology, so the ClusterQueue is TAS-only and
Kueue admits a run only when nodes with free GPUs can take every pod of it; the
ClusterQueue `<site>-readiness`, open to the readiness namespace only, its quota per
flavor sized by the window (`shape.pool_quota`); the LocalQueue the runs name; and a
WorkloadPriorityClass per stage, so pending runs of earlier stages go first.
With `managed: false` only the LocalQueue, and only when `clusterQueue` names the
existing ClusterQueue to bind it to.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.compile.queue.shape import PoolQuota, format_cpu, format_memory, pool_quotas
from nvcregen.compile.queue.workloads import (
    HOSTNAME,
    periodic_priority_class_name,
    periodic_priority_value,
    priority_class_name,
    priority_value,
    uses_kueue,
)
from nvcregen.compile.readiness.mpi import GPU, GPU_PRESENT, GPU_PRODUCT
from nvcregen.core.manifest import Manifest, Obj, content_hash, hashed_name
from nvcregen.plan.model import Pool, TestUnit
from nvcregen.spec.v1alpha1 import Site

COMPONENT = "queues"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
SOURCE = "/spec/dependencies/kueue"
NAME_MAX = 63
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
FIXED_RESOURCES = ("cpu", "memory", GPU)


def queue_manifests(site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
    """The queues layer of a site; [] when NVCRE's gang scheduler admits its runs."""
    if not uses_kueue(site):
        return []
    kueue = site.spec.dependencies.kueue
    if not kueue.managed:
        if kueue.cluster_queue is None:
            return []  # the LocalQueue exists already: the runs only name it
        return [local_queue(site, kueue.cluster_queue)]
    quotas = pool_quotas(site, test_units)
    flavors = [resource_flavor(site, q.pool) for q in quotas]
    fabric = [fabric_topology(site, levels)] if (levels := fabric_levels(site)) else []
    manifests = [topology(site), *fabric, *flavors, cluster_queue(site, quotas, flavors)]
    manifests.append(local_queue(site, cluster_queue_name(site)))
    return manifests + priority_classes(site)


def topology_name(site: Site) -> str:
    """The site's Topology: `<site>-nodes`."""
    return f"{site.metadata.name}-nodes"


def fabric_topology_name(site: Site) -> str:
    """The Topology of the site's fabric pools: `<site>-fabric`."""
    return f"{site.metadata.name}-fabric"


def fabric_levels(site: Site) -> tuple[str, ...]:
    """The fabric's node labels, highest first, from the first pool naming a fabric (or ())."""
    for pool in site.spec.node_pools:
        if pool.fabric is not None:
            return pool.fabric.levels.keys()
    return ()


def fabric_topology(site: Site, levels: tuple[str, ...]) -> Manifest:
    """A Topology of the fabric's levels, top down, then the node: runs can ask for a domain.

    A leaf group asks for its leaf (`podset-required-topology`), an NVLink group for its
    domain; pools with a fabric have their flavor on this Topology.
    """
    spec = {"levels": [{"nodeLabel": label} for label in (*levels, HOSTNAME)]}
    obj = _object("Topology", fabric_topology_name(site), spec)
    notes = ("TAS over the fabric: runs that must stay in a leaf or NVLink domain ask for it",)
    index = next(i for i, p in enumerate(site.spec.node_pools) if p.fabric is not None)
    return Manifest(obj, COMPONENT, f"/spec/nodePools/{index}/fabric", notes=notes)


def cluster_queue_name(site: Site) -> str:
    """The generated ClusterQueue, `clusterQueue` when the site names it."""
    return site.spec.dependencies.kueue.cluster_queue or f"{site.metadata.name}-readiness"


def topology(site: Site) -> Manifest:
    """A Topology whose only level is the node: Kueue places pods on nodes with room."""
    obj = _object("Topology", topology_name(site), {"levels": [{"nodeLabel": HOSTNAME}]})
    notes = ("TAS at the node level: a run is admitted only when free nodes can hold it",)
    return Manifest(obj, COMPONENT, SOURCE, notes=notes)


def flavor_labels(pool: Pool) -> dict[str, str]:
    """The node labels that select a pool's nodes: GPU nodes, its selector, its product.

    A ResourceFlavor's labels have one value each, so the product label is used only when
    the pool has one; nodes named in the pool are told apart by each run's own affinity.
    """
    labels = {GPU_PRESENT: "true", **(pool.spec.selector or {})}
    if len(pool.product_labels) == 1:
        labels[GPU_PRODUCT] = pool.product_labels[0]
    return labels


def resource_flavor(site: Site, pool: Pool) -> Manifest:
    """The ResourceFlavor of one pool, on the site's Topology.

    Its labels and topology are immutable upstream, so its name ends in their hash.
    """
    named = fabric_topology_name(site) if pool.spec.fabric is not None else topology_name(site)
    spec = {"nodeLabels": flavor_labels(pool), "topologyName": named}
    name = hashed_name([site.metadata.name, pool.spec.name], content_hash(spec), NAME_MAX)
    source = f"/spec/nodePools/{pool.index}"
    return Manifest(_object("ResourceFlavor", name, spec), COMPONENT, source, (pool.catalog_file,))


def cluster_queue(site: Site, quotas: list[PoolQuota], flavors: list[Manifest]) -> Manifest:
    """The ClusterQueue: one resource group, a flavor per pool, quota from the window."""
    nic_names = sorted({q.nic_resource for q in quotas if q.nic_resource})
    covered = [*FIXED_RESOURCES, *nic_names, "pods"]
    entries = [
        {"name": flavor.name, "resources": _resources(quota, covered)}
        for quota, flavor in zip(quotas, flavors, strict=True)
    ]
    spec: Obj = {
        "namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: site.spec.nvcre.namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {"withinClusterQueue": "Never", "reclaimWithinCohort": "Never"},
        "resourceGroups": [{"coveredResources": covered, "flavors": entries}],
    }
    notes = tuple(note for q in quotas for note in q.notes)
    obj = _object("ClusterQueue", cluster_queue_name(site), spec)
    return Manifest(obj, COMPONENT, f"{SOURCE}/managed", notes=notes)


def _resources(quota: PoolQuota, covered: list[str]) -> list[Obj]:
    """Every covered resource's nominal quota in one flavor (0 for another pool's NICs)."""
    amounts: dict[str, int | str] = {
        "cpu": format_cpu(quota.cpu_m),
        "memory": format_memory(quota.memory),
        GPU: quota.gpus,
        "pods": quota.pods,
    }
    if quota.nic_resource:
        amounts[quota.nic_resource] = quota.nics
    return [{"name": name, "nominalQuota": amounts.get(name, 0)} for name in covered]


def local_queue(site: Site, cluster_queue: str) -> Manifest:
    """The LocalQueue in the readiness namespace that every run names."""
    kueue = site.spec.dependencies.kueue
    obj: Obj = {
        "apiVersion": KUEUE_API,
        "kind": "LocalQueue",
        "metadata": {"name": kueue.local_queue, "namespace": site.spec.nvcre.namespace},
        "spec": {"clusterQueue": cluster_queue},
    }
    return Manifest(obj, COMPONENT, f"{SOURCE}/localQueue")


def priority_classes(site: Site) -> list[Manifest]:
    """A WorkloadPriorityClass per stage, and `<site>-periodic` below them all and below 0.

    Queue order only (the ClusterQueue never preempts): pending one-shot runs go before
    periodic ones; the periodic pods' own PriorityClass lets tenants evict them.
    """
    manifests: list[Manifest] = []
    for index, stage in enumerate(site.spec.readiness.stages):
        obj: Obj = {
            "apiVersion": KUEUE_API,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": priority_class_name(site, index)},
            "value": priority_value(site, index),
            "description": f"nvcregen readiness stage {stage.name} of site {site.metadata.name}",
        }
        manifests.append(Manifest(obj, COMPONENT, f"/spec/readiness/stages/{index}"))
    if site.spec.readiness.periodic is not None:
        obj = {
            "apiVersion": KUEUE_API,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": periodic_priority_class_name(site)},
            "value": periodic_priority_value(site),
            "description": f"nvcregen periodic re-certification of site {site.metadata.name}",
        }
        notes = ("below 0 and every stage: tenant work at the default priority goes first",)
        manifests.append(Manifest(obj, COMPONENT, "/spec/readiness/periodic", notes=notes))
    return manifests


def _object(kind: str, name: str, spec: Obj) -> Obj:
    return {"apiVersion": KUEUE_API, "kind": kind, "metadata": {"name": name}, "spec": spec}
