"""The rdmapair kind: each HCA between two nodes, a server on one and its client on the other.

The inter-node form of RDMA rails (docs/design/0022-rdma-rails.md). A run is a pair of
nodes as the inter-node NCCL tests pair them (`plan/resolve.py`); for each HCA of the
pool's `nics.hcas`, in turn, a perftest client on one node writes to the server on the
same HCA of its partner, both from GPU memory. The servers all listen first (one port a
rail), then the client takes the rails one after the other, so the run lasts as long as
the loopback form's on one node. It crosses what the loopback cannot: the cable, both
transceivers and the switch ports in between.
"""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import codes, units
from nvcregen.kindapi.protocol import (
    FixedTime,
    KindTest,
    NodeRun,
    NodeScript,
    NvcreRefusal,
    PairScripts,
    TestKind,
    begin_env,
)
from nvcregen.kinds.rdma.kind import perftest_values
from nvcregen.kinds.rdma.params import RdmaParams

READY_FILE = "/tmp/nvcregen-rdma-servers-listening"  # the server pod's readiness probe
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"  # JobSet's label on its pods: the TrainJob
SERVER_WAIT_S = 60  # how long the servers may take to listen before the pod is ready


_HERE = __name__.rpartition(".")[0]  # this package: its `templates/` holds the scripts


class RdmaPair(TestKind[RdmaParams]):
    """RDMA rails between the nodes of a pair, one HCA at a time."""

    name: ClassVar[str] = "rdmapair"
    begin_line: ClassVar[bool] = True
    params = RdmaParams
    per_node = False
    one_node = False
    collective = False
    pair = True
    # a WorkloadRun's `exec` framework runs one command on every node of a group, with no
    # role for either and nothing that starts one before the other; its `mpi` framework
    # runs both sides through one launcher, in one log naming neither node (nvcre-api.md
    # 1.4); a Certification category has no such test
    nvcre_refusal = NvcreRefusal(
        codes.NVC344.code,
        "{name} needs a server listening on one node before its client starts on the"
        " other, which NVCRE cannot run: its WorkloadRuns start every node alike",
        "set readiness.engine: trainer, or use rdma-rails (the loopback, intra-node)",
    )
    log_format = "perftest-pair"
    pod_size = "nccl"
    node_health = False

    def duration_basis(self, test: KindTest) -> str:
        """Every rail of a pair, one after the other, as long as the catalog says."""
        rdma: RdmaParams = self.block(test)
        return f"{rdma.tool} {rdma.message_size} per HCA pair, {rdma.expected_duration}"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start, the servers' start, then every rail one after the other."""
        rdma: RdmaParams = self.block(test)
        ms = (
            units.parse_duration(pod_start)
            + SERVER_WAIT_S * 1000
            + units.parse_duration(rdma.expected_duration)
        )
        why = (
            f"{pod_start} start-up + the servers listening (at most {SERVER_WAIT_S}s) + "
            f"{rdma.tool} on every HCA, one after the other {rdma.expected_duration}"
        )
        return FixedTime(ms / 1000, why)

    def pair_scripts(self, test: KindTest, run: NodeRun) -> PairScripts | None:
        """The servers (every HCA listening on its own port), then the client, rail by rail.

        Both sides pick the GPU for a rail as the loopback form does (the first unused GPU
        on the NIC's NUMA node). Each rail's client runs under its share of the outer
        deadline; the client exits non-zero when a rail failed or fell below the floor.
        """
        rdma: RdmaParams = self.block(test)
        common = {**perftest_values(rdma, run), "deadline_s": run.outer_deadline_s}
        server = {**common, "ready_file": READY_FILE, "wait_s": SERVER_WAIT_S}
        client = {
            **common,
            "floor_gbps": round(rdma.floor * run.nic_gbps, 3) if run.nic_gbps else None,
        }
        return PairScripts(
            NodeScript("rdma-pair-server.sh.j2", server, package=_HERE),
            NodeScript("rdma-pair-client.sh.j2", client, package=_HERE),
            READY_FILE,
        )

    def node_env(self) -> list[dict[str, Any]]:
        """The node, the pod and the TrainJob (JobSet) the scripts name (downward API)."""
        return [
            *begin_env(),
            {
                "name": "JOBSET_NAME",
                "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOBSET_NAME}']"}},
            },
        ]


KIND = RdmaPair()  # registered in `kindapi/registry.py` by this module's name
