"""The nccl kind: a sweep (`sweep`) timed by `plan/physics.py`, run as MPI across ranks."""

from __future__ import annotations

from typing import ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, Sweep, TestKind
from nvcregen.kinds.nccl.params import NcclParams


class Nccl(TestKind[NcclParams]):
    """nccl-tests collectives."""

    name: ClassVar[str] = "nccl"
    params = NcclParams
    per_node = False
    one_node = False
    collective = True
    log_format = "nccl-tests"
    log_versions = "nccl"  # NCCL's, as its debug lines print it
    pod_size = "nccl"
    node_health = False

    def duration_basis(self, test: KindTest) -> str:
        """Its sweep: the hardware's memory decides the largest size."""
        nccl: NcclParams = self.block(test)
        return f"sweep {nccl.min_bytes}..{nccl.max_bytes}"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """None: the sweep model times it."""
        return None

    def sweep(self, test: KindTest) -> Sweep:
        """Its block: nccl-tests' arguments, named as the sweep model reads them."""
        nccl: NcclParams = self.block(test)
        return nccl

    def nvcre_options(self, test: KindTest) -> dict[str, object]:
        """The sweep's top, iterations and cycles."""
        nccl: NcclParams = self.block(test)
        return {
            "maxBytes": units.nccl_size_arg(units.parse_size(nccl.max_bytes)),
            "numIterations": nccl.iterations,
            "numCycles": nccl.cycles,
        }


KIND = Nccl()  # registered in `kindapi/registry.py` by this module's name
