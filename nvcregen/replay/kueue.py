"""Kueue as the replay models it: queues read from the tree, admission by quota (pure).

A workload naming a LocalQueue goes to the LocalQueue's ClusterQueue. It is admitted
whole when, in each resource group covering something it asks for, one flavor (the first
that fits, in order) matches its node rules on the flavor's `nodeLabels` keys and has
nominal quota for all of it; the sum of pod requests times counts, `pods` included when
covered. Asking for a resource no group covers makes it inadmissible for good (Kueue's
default `BlockUndeclared`). A flavor naming a Topology makes admission topology-aware:
every pod must also fit a free node before anything is admitted
(docs/design/0007-admission.md).
Borrowing, cohorts, preemption and `waitForPodsReady` evictions are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from nvcregen.core.fields import list_at, mapping_at
from nvcregen.plan.facts import PlanFacts
from nvcregen.replay.model import PODS, TreeObject, Workload
from nvcregen.replay.selectors import quantity

KUEUE = "kueue.x-k8s.io"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Flavor:
    """A ResourceFlavor: the node labels it stands for; `tas` when it names a Topology."""

    name: str
    node_labels: Mapping[str, str]
    tas: bool


@dataclass(frozen=True)
class Group:
    """A resource group: what it covers and each flavor's nominal quota, in order."""

    covered: frozenset[str]
    flavors: tuple[tuple[str, Mapping[str, int]], ...]


@dataclass(frozen=True)
class ClusterQueue:
    """A ClusterQueue of the tree."""

    name: str
    file: str
    groups: tuple[Group, ...]
    namespaces: frozenset[str] | None = None
    strict_fifo: bool = False

    @property
    def covered(self) -> frozenset[str]:
        """Every resource some group covers."""
        return frozenset().union(*(g.covered for g in self.groups))

    @cached_property
    def quota(self) -> Mapping[tuple[str, str], int]:
        """Each (flavor, resource) nominal quota of its groups (the last group's, if twice).

        Read for every pending job at every step of the clock: built once per queue.
        """
        return {
            (f, r): q for g in self.groups for f, quotas in g.flavors for r, q in quotas.items()
        }


@dataclass(frozen=True)
class Queues:
    """The Kueue objects of a tree."""

    local: Mapping[tuple[str, str], str] = field(default_factory=dict)
    cluster: Mapping[str, ClusterQueue] = field(default_factory=dict)
    flavors: Mapping[str, Flavor] = field(default_factory=dict)
    priorities: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Admission:
    """How one workload is admitted.

    Attributes:
        queue: The ClusterQueue whose quota it takes; None when no quota is known (no
            queue, a gang scheduler, or a ClusterQueue outside the tree).
        usage: What it takes of that quota, by (flavor, resource).
        node_labels: The labels of its flavors, which its pods' nodes must also carry.
        tas: Whether something places all its pods before any starts.
        refusal: Why it can never be admitted, with a hint; None when it can be.

    """

    queue: ClusterQueue | None = None
    usage: Mapping[tuple[str, str], int] = field(default_factory=dict)
    node_labels: Mapping[str, str] = field(default_factory=dict)
    tas: bool = False
    refusal: tuple[str, str] | None = None


def read_queues(objects: Iterable[TreeObject]) -> Queues:
    """The LocalQueues, ClusterQueues, ResourceFlavors and priority classes of a tree."""
    local: dict[tuple[str, str], str] = {}
    cluster: dict[str, ClusterQueue] = {}
    flavors: dict[str, Flavor] = {}
    priorities: dict[str, int] = {}
    for item in objects:
        if item.group != KUEUE:
            continue
        if item.kind == "LocalQueue":
            local[(item.namespace, item.name)] = str(item.spec.get("clusterQueue", ""))
        elif item.kind == "ClusterQueue":
            cluster[item.name] = _cluster_queue(item)
        elif item.kind == "ResourceFlavor":
            node_labels = mapping_at(item.spec, "nodeLabels") or {}
            labels = {str(k): str(v) for k, v in node_labels.items()}
            flavors[item.name] = Flavor(item.name, labels, bool(item.spec.get("topologyName")))
        elif item.kind == "WorkloadPriorityClass":
            value = item.obj.get("value")
            priorities[item.name] = value if isinstance(value, int) else 0
    return Queues(local, cluster, flavors, priorities)


def _cluster_queue(item: TreeObject) -> ClusterQueue:
    groups = []
    for group in list_at(item.spec, "resourceGroups"):
        flavors = []
        for flavor in (f for f in list_at(group, "flavors") if isinstance(f, Mapping)):
            quota = {}
            for resource in list_at(flavor, "resources"):
                if not isinstance(resource, Mapping):
                    continue  # the schema reports it (NVC602)
                name = str(resource.get("name"))
                try:
                    quota[name] = quantity(name, resource.get("nominalQuota", 0))
                except ValueError:
                    quota[name] = 0
            flavors.append((str(flavor.get("name")), quota))
        groups.append(
            Group(frozenset(map(str, list_at(group, "coveredResources"))), tuple(flavors))
        )
    selector = mapping_at(item.spec, "namespaceSelector", "matchLabels") or {}
    namespace = selector.get(NAMESPACE_LABEL)
    return ClusterQueue(
        item.name,
        item.file,
        tuple(groups),
        frozenset({str(namespace)}) if namespace else None,
        item.spec.get("queueingStrategy") == "StrictFIFO",
    )


def admit(workload: Workload, namespace: str, queues: Queues, facts: PlanFacts) -> Admission:
    """How a workload of a run in `namespace` is admitted, or why it never is."""
    if workload.admitter != "kueue":
        return Admission(tas=workload.admitter == "gang")
    found = _cluster_queue_of(workload, namespace, queues, facts)
    return found if isinstance(found, Admission) else _by_quota(workload, found, queues)


def _cluster_queue_of(
    workload: Workload, namespace: str, queues: Queues, facts: PlanFacts
) -> ClusterQueue | Admission:
    """The ClusterQueue behind a workload's LocalQueue; an Admission when there is none."""
    key = (namespace, workload.queue or "")
    if key not in queues.local:
        if key in facts.external_queues:
            return Admission(tas=True)
        return _refused(
            f"its LocalQueue '{workload.queue}' does not exist in namespace '{namespace}': "
            "Kueue keeps it pending for good",
            "generate the LocalQueue (dependencies.kueue), or name one that exists",
        )
    name = queues.local[key]
    queue = queues.cluster.get(name)
    if queue is None:
        if facts.external_cluster_queues:
            return Admission(tas=True)
        return _refused(
            f"LocalQueue '{workload.queue}' points at ClusterQueue '{name}', which is not in "
            "the tree",
            "apply the ClusterQueue with the site (dependencies.kueue.managed: true)",
        )
    if queue.namespaces is not None and namespace not in queue.namespaces:
        return _refused(
            f"ClusterQueue '{name}' admits workloads from namespace "
            f"{', '.join(sorted(queue.namespaces))} only, not '{namespace}'",
            "open the ClusterQueue's namespaceSelector to the readiness namespace",
        )
    return queue


def _by_quota(workload: Workload, queue: ClusterQueue, queues: Queues) -> Admission:
    """Pick a flavor per resource group; refuse what no flavor's quota can hold."""
    usage = workload.usage
    asked = {r for r, amount in usage.items() if amount and r != PODS}
    missing = sorted(asked - queue.covered)
    if missing:
        return _refused(
            f"it requests {', '.join(missing)}, which ClusterQueue '{queue.name}' does not "
            "cover: Kueue (quotaCheckStrategy BlockUndeclared) never admits it",
            f"add {', '.join(missing)} to the ClusterQueue's coveredResources and quota",
        )
    taken: dict[tuple[str, str], int] = {}
    labels: dict[str, str] = {}
    tas = False
    for group in queue.groups:
        wanted = {r: usage[r] for r in group.covered if usage.get(r)}
        if not wanted:
            continue
        chosen = _flavor(workload, group, wanted, queues)
        if isinstance(chosen, tuple):
            return _refused(*chosen)
        flavor = queues.flavors.get(chosen)
        labels.update(flavor.node_labels if flavor else {})
        tas = tas or bool(flavor and flavor.tas)
        taken.update({(chosen, r): amount for r, amount in wanted.items()})
    return Admission(queue, taken, labels, tas)


def _flavor(
    workload: Workload, group: Group, wanted: Mapping[str, int], queues: Queues
) -> str | tuple[str, str]:
    """The first flavor that matches and holds `wanted`, or why none does."""
    shortfall: tuple[str, str] | None = None
    for name, quota in group.flavors:
        flavor = queues.flavors.get(name)
        node_labels = flavor.node_labels if flavor else {}
        if not all(p.constraint.allows_flavor(node_labels) for p in workload.podsets):
            continue
        short = [
            (r, amount, quota.get(r, 0)) for r, amount in wanted.items() if amount > quota.get(r, 0)
        ]
        if not short:
            return name
        if shortfall is None:
            resource, amount, has = sorted(short)[0]
            shortfall = (
                f"it needs {amount} {resource} at once, more than the nominal quota of flavor "
                f"'{name}' ({has}): Kueue admits a workload whole or not at all",
                "raise the flavor's nominalQuota to at least one run's usage",
            )
    return shortfall or (
        "no flavor of its ClusterQueue matches its node selector and affinity",
        "give the ClusterQueue a flavor whose nodeLabels the run's nodes carry",
    )


def _refused(message: str, hint: str) -> Admission:
    return Admission(refusal=(message, hint))
