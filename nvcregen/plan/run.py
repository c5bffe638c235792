"""One job of a readiness test, reduced to the facts the physics model needs (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from nvcregen.catalog.models import Baseline, HardwareEntry, TestEntry, TypicalNics
from nvcregen.catalog.physics_data import Collective
from nvcregen.core import units
from nvcregen.kindapi.registry import kind_of
from nvcregen.spec.v1alpha1 import Nics, NodePool, Scope

if TYPE_CHECKING:
    from nvcregen.catalog.load import Catalog
    from nvcregen.kindapi.protocol import Sweep
    from nvcregen.plan.model import TestUnit

Network = Literal["rdma", "socket", "none"]
COLLECTIVES: tuple[Collective, ...] = ("all_reduce", "all_gather", "alltoall")
_TRANSPORT_NETWORK: dict[str, Network] = {"IB": "rdma", "Socket": "socket", "NVLink": "none"}


@dataclass(frozen=True)
class Run:
    """One job: a test on `nodes` nodes of one model, and the links between them.

    `nic_*` describe each node's NICs (the pool's, else the model's typical ones; count 0
    when neither is known). `network` is the network the test's traffic crosses, as the
    plan decides it: RDMA, TCP sockets, or none (inside one node).
    """

    test: TestEntry
    hardware: HardwareEntry
    gpus_per_node: int
    nodes: int
    scope: Scope
    network: Network
    nic_count: int
    nic_speed: str
    fabric: str

    @property
    def ranks(self) -> int:
        """GPUs taking part: one nccl-tests rank each."""
        return self.nodes * self.gpus_per_node

    @property
    def sweep(self) -> Sweep | None:
        """The sweep its kind runs (`TestKind.sweep`), None for a kind that sweeps nothing."""
        return kind_of(self.test).sweep(self.test)

    @property
    def collective(self) -> Collective | None:
        """The nccl-tests collective, or None for a test that runs none."""
        sweep = self.sweep
        name = sweep.test_type if sweep is not None else None
        return name if name in COLLECTIVES else None

    @property
    def nic_speed_gbs(self) -> float:
        """One NIC's line rate in GB/s, each direction (0 without NICs)."""
        return units.parse_bandwidth(self.nic_speed).gbytes_per_s if self.nic_count else 0.0

    @property
    def nic_total_gbs(self) -> float:
        """All NICs of one node together, GB/s each direction."""
        return self.nic_count * self.nic_speed_gbs

    @property
    def nics_text(self) -> str:
        """The NICs as a person writes them: `8 x 200Gb/s roce`."""
        return f"{self.nic_count} x {self.nic_speed} {self.fabric}" if self.nic_count else "none"


def run_for(
    test: TestEntry,
    hardware: HardwareEntry,
    pool: NodePool,
    gpus_per_node: int,
    scope: Scope,
    network: Network,
    nodes: int,
) -> Run:
    """The run of `test` on `nodes` nodes of `pool` (whose NICs, else the model's, count)."""
    nics: Nics | TypicalNics | None = pool.nics or hardware.typical_nics
    count, speed, fabric = (nics.count, nics.speed, nics.fabric) if nics else (0, "0Gb/s", "none")
    return Run(test, hardware, gpus_per_node, nodes, scope, network, count, speed, fabric)


def run_of(unit: TestUnit) -> Run:
    """The run of one planned test: one of its jobs."""
    pool = unit.pool
    return run_for(
        unit.test,
        pool.hardware,
        pool.spec,
        pool.gpus_per_node,
        unit.stage.scope,
        unit.network,
        unit.nodes_per_job,
    )


def run_of_baseline(baseline: Baseline, catalog: Catalog) -> Run | None:
    """The run a baseline measured; None when its model or test left the catalog."""
    hardware = catalog.find_hardware(baseline.model)
    test = catalog.tests.get(baseline.test)
    if hardware is None or test is None:
        return None
    nics = baseline.nics or hardware.typical_nics
    count, speed, fabric = (nics.count, nics.speed, nics.fabric) if nics else (0, "0Gb/s", "none")
    network = _TRANSPORT_NETWORK[baseline.transport]
    return Run(
        test, hardware, baseline.gpus_per_node, baseline.nodes, baseline.scope, network,
        count, speed, fabric,
    )  # fmt: skip
