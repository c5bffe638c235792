"""The plan's types: a pool with its catalog facts, a compiled threshold, a test unit.

Kept apart from `resolve.py`, which builds them, so the physics model can read units
without importing the code that plans them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nvcregen.catalog.models import HardwareEntry, PodSize, TestEntry
from nvcregen.fabric.groups import Grouping
from nvcregen.fabric.inventory import Inventory
from nvcregen.fabric.placement import Placement
from nvcregen.spec.v1alpha1 import NodePool, Stage

Mode = Literal["category", "workloadrun"]
Network = Literal["rdma", "socket", "none"]


@dataclass(frozen=True)
class Pool:
    """A node pool with the facts the catalog adds to it."""

    spec: NodePool
    index: int
    hardware: HardwareEntry
    gpus_per_node: int
    product_labels: tuple[str, ...]
    catalog_file: str
    placement: Placement | None = None  # leaf and NVLink domain of each node (the inventory)
    inventory: Inventory | None = field(default=None, compare=False, repr=False)
    inventory_file: str = ""  # the site's `spec.inventory`: node-health takes versions from it

    @property
    def node_count(self) -> int | None:
        """Number of nodes: those named, else the count a selector pool states."""
        return len(self.spec.nodes) if self.spec.nodes is not None else self.spec.node_count


@dataclass(frozen=True)
class CompiledThreshold:
    """An NVCRE threshold expression and how it was derived from the site's typed one."""

    key: str
    expression: str
    derivation: str
    index: int


@dataclass(frozen=True)
class TestUnit:
    """One test of one stage, resolved to everything the readiness objects need."""

    __test__ = False  # a model, not a pytest test class (its name starts with Test)

    stage: Stage
    stage_index: int
    test: TestEntry
    pool: Pool
    mode: Mode
    network: Network
    nodes_per_job: int
    timeout_ms: int
    expected_ms: int
    image: str
    thresholds: tuple[CompiledThreshold, ...]
    test_file: str
    pod: PodSize | None = None  # cpu and memory of each GPU pod (catalog/pods.yaml)
    grouping: Grouping | None = None  # fabric-aware groups (`stage.groups`), in rounds

    @property
    def nics_per_node(self) -> int:
        """RDMA NICs each job requests per node: all of them for RDMA work, else none."""
        nics = self.pool.spec.nics
        return nics.count if self.network == "rdma" and nics is not None else 0

    @property
    def nic_resource(self) -> tuple[str, int] | None:
        """The extended resource and count each node's pod requests for RDMA NICs, if any."""
        nics = self.pool.spec.nics
        if not self.nics_per_node or nics is None or not nics.resource_name:
            return None
        return nics.resource_name, self.nics_per_node
