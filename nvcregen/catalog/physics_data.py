"""Typed constants of the physics model (`catalog/physics.yaml`): link rates and costs.

Per-model facts (NVLink, PCIe generation, NVLink SHARP) live in the hardware entries and
per-test facts (DCGM and training durations) in the test entries; what is common to every
run is here: PCIe rates, expected efficiencies, latency floors, start-up costs and what
nccl-tests does on its own. `nvcregen.plan` turns them into durations and bounds
(docs/design/0005-physics.md).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from nvcregen.spec.v1alpha1 import Bandwidth, Duration, StrictModel

Collective = Literal["all_reduce", "all_gather", "alltoall"]
PathKind = Literal["nvlink", "nvls", "pcie", "rdma", "socket"]

Fraction = Annotated[float, Field(gt=0, le=1)]
Micros = Annotated[float, Field(gt=0, le=1_000_000)]


class PcieRate(StrictModel):
    """The per-direction data rate of an x16 PCIe link of one generation."""

    gen: Annotated[int, Field(ge=3, le=6)]
    rate: Bandwidth


class Efficiencies(StrictModel):
    """Expected bus bandwidth as a fraction of a path's bound, per collective."""

    all_reduce: Fraction
    all_gather: Fraction
    alltoall: Fraction

    def of(self, collective: Collective) -> float:
        """The fraction for one collective."""
        return {"all_reduce": self.all_reduce, "all_gather": self.all_gather}.get(
            collective, self.alltoall
        )


class PathTable(StrictModel):
    """One value per kind of link a collective's bytes can cross."""

    nvlink: Efficiencies
    nvls: Efficiencies
    pcie: Efficiencies
    rdma: Efficiencies
    socket: Efficiencies

    def of(self, path: PathKind) -> Efficiencies:
        """The row of one path."""
        row: Efficiencies = getattr(self, path)
        return row


class Latencies(StrictModel):
    """Floor of one collective call (microseconds), per path: small messages cost this."""

    nvlink: Micros
    nvls: Micros
    pcie: Micros
    rdma: Micros
    socket: Micros

    def of(self, path: PathKind) -> float:
        """The floor of one path, in microseconds."""
        value: float = getattr(self, path)
        return value


class NcclTestsDefaults(StrictModel):
    """What nccl-tests does per run that nvcregen's command line leaves at its default."""

    warmup_iterations: Annotated[int, Field(ge=0)]
    check_iterations: Annotated[int, Field(ge=0)]
    sync_iterations: Annotated[int, Field(ge=0)]
    modes: Annotated[int, Field(ge=1, le=2)]
    element_bytes: Annotated[int, Field(ge=1, le=8)]


class Startup(StrictModel):
    """Time from a job's start to its first measured step (image pulls not included)."""

    nccl: Duration
    dcgm: Duration


class PhysicsData(StrictModel):
    """Everything the physics model needs beyond the hardware and test entries."""

    pcie_x16: list[PcieRate] = Field(min_length=1)
    socket_interface: Bandwidth
    efficiency: PathTable
    latency_us: Latencies
    nccl_tests: NcclTestsDefaults
    startup: Startup
    notes: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)
