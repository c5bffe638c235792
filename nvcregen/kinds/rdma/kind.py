"""The rdma kind: each HCA of a node on its own, in a loopback run inside the node.

One run a node (as DCGM's): for each HCA of the pool's `nics.hcas`, a perftest server
and a client on that HCA, the client's buffers in the GPU on the NIC's NUMA side. The
inter-node form (a server on one node, the client on its pair) is its own kind,
`rdmapair` (`pair.py`): the catalog entry states `scopes: [intra-node]`, so a site
asking for this one inter-node is refused by validation.
"""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, NodeRun, NodeScript, TestKind, begin_env
from nvcregen.kinds.rdma.params import RdmaParams

PORT_BASE = 18515  # perftest's default port; rail i listens on PORT_BASE + i


def perftest_values(rdma: RdmaParams, run: NodeRun) -> dict[str, object]:
    """What every perftest script of the kind reads, loopback and pair forms alike.

    The tool, its rails and settings, and each rail's share of the run's deadline.
    """
    rails = max(1, len(run.hcas))
    return {
        "tool": rdma.tool,
        "hcas": list(run.hcas),
        "size": units.parse_size(rdma.message_size),
        "use_cuda": rdma.use_cuda,
        "iterations": rdma.iterations,
        "duration_s": units.parse_duration(rdma.duration) // 1000 if rdma.duration else None,
        "qps": rdma.queue_pairs,
        "gpus": run.gpus,
        "port_base": PORT_BASE,
        "rail_deadline_s": max(1, run.outer_deadline_s // rails),
    }


_HERE = __name__.rpartition(".")[0]  # this package: its `templates/` holds the scripts


class Rdma(TestKind[RdmaParams]):
    """RDMA rails, one HCA at a time."""

    name: ClassVar[str] = "rdma"
    failed_reason: ClassVar[str] = "RailFailed"
    params = RdmaParams
    per_node = True
    one_node = True
    collective = False
    log_format = "perftest"
    pod_size = "nccl"
    node_health = False
    node_container = "rdma-rails"

    def duration_basis(self, test: KindTest) -> str:
        """Every rail of a node, as long as the catalog says."""
        rdma: RdmaParams = self.block(test)
        return f"{rdma.tool} {rdma.message_size} per HCA, {rdma.expected_duration}"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start, then every rail one after the other."""
        rdma: RdmaParams = self.block(test)
        ms = units.parse_duration(pod_start) + units.parse_duration(rdma.expected_duration)
        why = f"{pod_start} start-up + {rdma.tool} on every HCA {rdma.expected_duration}"
        return FixedTime(ms / 1000, why)

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """Each HCA in turn: a server, then a client on it, between the markers collect reads.

        Each rail's client runs under its share of the outer deadline; a rail that
        hangs is stopped and the next one still runs. The script exits non-zero when a
        rail failed or its average at the message size is below the floor.
        """
        rdma: RdmaParams = self.block(test)
        values: dict[str, object] = {
            **perftest_values(rdma, run),
            # the node fails its own run below the floor, so NVCRE mode, which reads no
            # rail, still fails it; collect judges each rail again from the figures
            "floor_gbps": round(rdma.floor * run.nic_gbps, 3) if run.nic_gbps else None,
        }
        return NodeScript("rdma-rails.sh.j2", values, package=_HERE)

    def node_env(self) -> list[dict[str, Any]]:
        """The node and the pod the script's begin line names (downward API)."""
        return begin_env()


KIND = Rdma()  # registered in `kindapi/registry.py` by this module's name
