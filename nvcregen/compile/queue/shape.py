"""What each readiness run holds while admitted, and the quota the window allows (pure).

Kueue admits a run whole when the sum of its pods' requests fits the ClusterQueue's
quota. Every GPU pod of a readiness run takes all GPUs of one node (and, for RDMA tests,
all its NICs), so a run is counted in whole nodes, plus the pods that hold no GPU (the
launcher NVCRE adds to its MPI jobs). The quota of a pool's flavor holds
`readiness.window.maxConcurrentJobs` (N) of its smallest run, at least its largest run,
never more than the pool has (`plan/admitted.py`): so Kueue admits at most N runs at once.
docs/design/0007-admission.md walks through the arithmetic for the shipped sites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.core.quantity import whole_units
from nvcregen.engineapi.registry import readiness_of
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.admitted import admitted_nodes
from nvcregen.plan.model import Pool, TestUnit
from nvcregen.spec.v1alpha1 import Site

KI = 1024
GI = KI**3
# NVCRE 0.7.0's MPI launcher: limits cpu 2, memory 1Gi, which are also its requests
# (nvcre-api.md §1.4 and §4.8; engines/readiness/nvcre/preview.py, LAUNCHER_LIMITS).
MPI_LAUNCHER_CPU_M = 2000
MPI_LAUNCHER_MEMORY = 1 * GI
_MEMORY_UNITS = {"": 1, "Ki": KI, "Mi": KI**2, "Gi": GI, "Ti": KI**4}


@dataclass(frozen=True)
class Requests:
    """cpu (millicores) and memory (bytes) one pod requests."""

    cpu_m: int = 0
    memory: int = 0

    def plus(self, other: Requests) -> Requests:
        """The sum of two requests."""
        return Requests(self.cpu_m + other.cpu_m, self.memory + other.memory)

    def times(self, count: int) -> Requests:
        """`count` pods' worth."""
        return Requests(self.cpu_m * count, self.memory * count)


@dataclass(frozen=True)
class JobShape:
    """One run of a test as Kueue counts it: whole-node GPU pods and pods without GPUs."""

    nodes: int
    launchers: int
    gpus_per_node: int
    nics_per_node: int
    node_pod: Requests
    launcher_pod: Requests

    @property
    def pods(self) -> int:
        """Every pod of the run."""
        return self.nodes + self.launchers

    @property
    def gpus(self) -> int:
        """GPUs the run holds."""
        return self.nodes * self.gpus_per_node

    @property
    def nics(self) -> int:
        """RDMA NICs (of the pool's NIC resource) the run holds."""
        return self.nodes * self.nics_per_node


@dataclass(frozen=True)
class PoolQuota:
    """The nominal quota of one pool's flavor, and how it was derived (for index.json)."""

    pool: Pool
    gpus: int
    nics: int
    pods: int
    cpu_m: int
    memory: int
    notes: tuple[str, ...]

    @property
    def nic_resource(self) -> str | None:
        """The pool's RDMA resource name, if it has one."""
        nics = self.pool.spec.nics
        return nics.resource_name if nics is not None else None


def job_shape(site: Site, unit: TestUnit) -> JobShape:
    """How one run of a test is counted; `podAllowance` is added to every pod."""
    allowance = _allowance(site)
    engine = readiness_of(site)
    # NVCRE runs MPI with a separate launcher; trainer mode runs the launcher as node 0.
    kind = kind_of(unit.test)
    launchers = 1 if engine.separate_launcher and kind.collective else 0
    node_pod = Requests()
    if unit.pod is not None:  # catalog/pods.yaml: what nvcregen's pods request
        node_pod = Requests(
            parse_cpu(unit.pod.requests.cpu or "0"), parse_memory(unit.pod.requests.memory or "0")
        )
    if engine.installs_nvcre and kind.nvcre_pod is not None:  # NVCRE's catalog entry sizes the pod
        node_pod = Requests(*kind.nvcre_pod)
    nics = unit.pool.spec.nics
    counted_nics = unit.nics_per_node if nics is not None and nics.resource_name else 0
    return JobShape(
        nodes=unit.nodes_per_job,
        launchers=launchers,
        gpus_per_node=unit.pool.gpus_per_node,
        nics_per_node=counted_nics,
        node_pod=node_pod.plus(allowance),
        launcher_pod=Requests(MPI_LAUNCHER_CPU_M, MPI_LAUNCHER_MEMORY).plus(allowance),
    )


def pool_quotas(site: Site, test_units: Sequence[TestUnit]) -> list[PoolQuota]:
    """The quota of every pool some test runs on, in the site's pool order."""
    by_pool: dict[int, list[TestUnit]] = {}
    for unit in test_units:
        by_pool.setdefault(unit.pool.index, []).append(unit)
    return [pool_quota(site, by_pool[index]) for index in sorted(by_pool)]


def pool_quota(site: Site, units: Sequence[TestUnit]) -> PoolQuota:
    """What admits `maxConcurrentJobs` runs of one pool at once, and never more.

    Args:
        site: The site (its window and pod allowance).
        units: The tests that run on the pool; at least one.

    """
    pool = units[0].pool
    jobs = site.spec.readiness.window.max_concurrent_jobs
    shapes = [job_shape(site, u) for u in units]
    smallest, largest = min(s.nodes for s in shapes), max(s.nodes for s in shapes)
    nodes = admitted_nodes(jobs, (s.nodes for s in shapes), pool.node_count)
    launchers = jobs * max(s.launchers for s in shapes)
    per_node = max(s.nics_per_node for s in shapes)
    nics = min(jobs * max(s.nics for s in shapes), nodes * per_node)
    node_pod = _largest([s.node_pod for s in shapes])
    launcher_pod = _largest([s.launcher_pod for s in shapes if s.launchers])
    total = node_pod.times(nodes).plus(launcher_pod.times(launchers))
    gpus = nodes * pool.gpus_per_node
    name = pool.spec.name
    notes = (
        f"pool {name}: {nodes} node(s) = min(max({jobs} concurrent jobs x {smallest} nodes of "
        f"the smallest job, {largest} nodes of the largest), {pool.node_count} in the pool): "
        f"at most {jobs} jobs admitted at once; nvidia.com/gpu {gpus} = {nodes} x "
        f"{pool.gpus_per_node}",
        f"pool {name}: RDMA NICs {nics} = min({jobs} x {max(s.nics for s in shapes)} of the "
        f"largest RDMA job, {nodes} node(s) x {per_node})",
        f"pool {name}: pods {nodes + launchers} = {nodes} GPU pods + {launchers} "
        f"launcher(s); cpu and memory = every such pod's known requests + podAllowance",
    )
    return PoolQuota(pool, gpus, nics, nodes + launchers, total.cpu_m, total.memory, notes)


def _largest(requests: list[Requests]) -> Requests:
    if not requests:
        return Requests()
    return Requests(max(r.cpu_m for r in requests), max(r.memory for r in requests))


def _allowance(site: Site) -> Requests:
    allowance = site.spec.dependencies.kueue.pod_allowance
    return Requests(parse_cpu(allowance.cpu), parse_memory(allowance.memory))


def parse_cpu(text: str) -> int:
    """A cpu quantity (`2`, `0.5`, `500m`) in millicores."""
    return whole_units(text, millis=True)


def parse_memory(text: str) -> int:
    """A memory quantity (`4Gi`, `512Mi`, bytes) in bytes."""
    try:
        return whole_units(text)
    except ValueError:
        raise ValueError(f"not a memory quantity: {text!r}") from None


def format_cpu(millicores: int) -> str:
    """Millicores as Kubernetes writes them: whole cores when exact."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def format_memory(size: int) -> str:
    """Bytes in the largest binary unit that divides them exactly."""
    for unit in ("Ti", "Gi", "Mi", "Ki"):
        if size and size % _MEMORY_UNITS[unit] == 0:
            return f"{size // _MEMORY_UNITS[unit]}{unit}"
    return str(size)
