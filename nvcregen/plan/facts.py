"""What the replay needs from the site that the tree does not say: nodes, window, durations.

A rendered tree names its runs, queues and GitOps objects, but not the cluster's nodes,
the window or how long each run takes. Those come from the site and its plan (the
physics model): `plan_facts` reads them once, and the replay takes nothing else from the
site, so a hand-edited tree is replayed as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from nvcregen.core import units
from nvcregen.plan.model import Pool, TestUnit
from nvcregen.plan.packs import site_packs
from nvcregen.plan.requeue import deactivation_ms
from nvcregen.spec.v1alpha1 import Site

GPU = "nvidia.com/gpu"
GPU_PRESENT = "nvidia.com/gpu.present"
GPU_PRODUCT = "nvidia.com/gpu.product"
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Node:
    """One node as the scheduler sees it: its labels and what it can give pods.

    Attributes:
        name: `metadata.name` (also its `kubernetes.io/hostname` label).
        pool: The site pool it belongs to.
        labels: Its labels (GPU present, product, the pool's selector, hostname).
        capacity: Extended resources it offers (GPUs, RDMA NICs); cpu, memory and pods
            are not modelled (unbounded).

    """

    name: str
    pool: str
    labels: Mapping[str, str]
    capacity: Mapping[str, int]

    def __hash__(self) -> int:  # equal nodes have equal names; the mappings are not hashable
        return hash(self.name)


@dataclass(frozen=True)
class Timing:
    """How long one job of a test runs: expected (physics) and its timeout (worst case)."""

    expected_ms: int
    timeout_ms: int


@dataclass(frozen=True)
class PlanFacts:
    """Everything the replay takes from the site.

    Attributes:
        site: The site's name.
        nodes: Every node of every pool, by name.
        max_concurrent_jobs: `readiness.window.maxConcurrentJobs`.
        deadline_ms: `readiness.window.deadline`.
        gpu_hours: `readiness.window.gpuHours`.
        root: The folder of the site's tree in the GitOps repository (`gitops.path`).
        timings: Per (stage, test) and per (stage, NVCRE variant).
        stages: The stage names in plan order.
        external_queues: LocalQueues (namespace, name) that exist outside the tree.
        external_cluster_queues: Whether ClusterQueues outside the tree are expected (an
            existing Kueue): their quota is the platform team's, not checked here.
        external_health_checks: Whether Argo CD's health checks come from outside the tree
            (`gitops.healthChecks: existing`): taken as configured for every kind.
        retests: `readiness.window.retests`: the worst case repeats each step that often.
        deactivation_ms: With the Kueue nvcregen configures: how long after its first
            admission Kueue deactivates a run whose pods never all get ready
            (`nvcregen.plan.requeue`); None for an existing Kueue (its settings are unknown).

    """

    site: str
    nodes: tuple[Node, ...]
    max_concurrent_jobs: int
    deadline_ms: int
    gpu_hours: float
    root: str
    timings: Mapping[tuple[str, str], Timing] = field(default_factory=dict)
    stages: tuple[str, ...] = ()
    external_queues: frozenset[tuple[str, str]] = frozenset()
    external_cluster_queues: bool = False
    external_health_checks: bool = False
    retests: int = 0
    deactivation_ms: int | None = None

    def timing(self, stage: str | None, test: str | None) -> Timing | None:
        """The timing of a stage's test (or NVCRE variant); None when the plan has none."""
        return self.timings.get((stage or "", test or ""))

    def stage_rank(self, stage: str) -> int:
        """A stage's place in the plan; unknown stages after every known one."""
        return self._ranks.get(stage, len(self.stages))

    @cached_property
    def _ranks(self) -> dict[str, int]:
        ranks: dict[str, int] = {}
        for rank, stage in enumerate(self.stages):
            ranks.setdefault(stage, rank)
        return ranks


def plan_facts(site: Site, test_units: Sequence[TestUnit]) -> PlanFacts:
    """The replay's facts of a planned site."""
    window = site.spec.readiness.window
    kueue = site.spec.dependencies.kueue
    external = not kueue.managed and site.spec.dependencies.gang_scheduler is None
    namespace = site.spec.nvcre.namespace
    pools: dict[str, Pool] = {u.pool.spec.name: u.pool for u in test_units}
    return PlanFacts(
        site=site.metadata.name,
        nodes=tuple(n for pool in pools.values() for n in pool_nodes(pool)),
        max_concurrent_jobs=window.max_concurrent_jobs,
        deadline_ms=units.parse_duration(window.deadline),
        gpu_hours=window.gpu_hours,
        root=(site.spec.gitops.path or f"out/{site.metadata.name}").removeprefix("./").rstrip("/"),
        timings=_timings(site, test_units),
        stages=tuple(s.name for s in site.spec.readiness.stages),
        external_queues=(
            frozenset({(namespace, kueue.local_queue)})
            if external and kueue.cluster_queue is None
            else frozenset()
        ),
        external_cluster_queues=external,
        external_health_checks=site.spec.gitops.health_checks == "existing",
        retests=window.retests,
        deactivation_ms=deactivation_ms(site, test_units) if kueue.managed else None,
    )


def pool_nodes(pool: Pool) -> list[Node]:
    """The nodes of a pool: those named, else `<pool>-1`... for a selector pool's count."""
    names = pool.spec.nodes or [
        f"{pool.spec.name}-{i}" for i in range(1, (pool.node_count or 0) + 1)
    ]
    capacity = {GPU: pool.gpus_per_node}
    nics = pool.spec.nics
    if nics is not None and nics.resource_name and nics.count:
        capacity[nics.resource_name] = nics.count
    labels = {GPU_PRESENT: "true", **(pool.spec.selector or {})}
    if pool.product_labels:
        labels[GPU_PRODUCT] = pool.product_labels[0]
    return [
        Node(name, pool.spec.name, {**labels, HOSTNAME: name}, dict(capacity)) for name in names
    ]


def _timings(site: Site, test_units: Sequence[TestUnit]) -> dict[tuple[str, str], Timing]:
    """Per (stage, test): a run's expected time and timeout; a pack's are its tests' sums."""
    found: dict[tuple[str, str], Timing] = {}
    for pack in site_packs(site, test_units):
        found[(pack.first.stage.name, pack.name)] = Timing(pack.expected_ms, pack.timeout_ms)
    for unit in test_units:
        timing = Timing(unit.expected_ms, unit.timeout_ms)
        found[(unit.stage.name, unit.test.name)] = timing
        if unit.test.nvcre is not None:
            found.setdefault((unit.stage.name, unit.test.nvcre.variant), timing)
    return found
