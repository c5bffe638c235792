"""The linkcounters kind: each HCA port's health counters around RDMA traffic, per node.

One run a node, alone on it (as RDMA rails): the script snapshots every port of the
pool's HCAs (`counters/`, `hw_counters/`, the netdev's pause counters from `ethtool -S`),
runs perftest traffic on each HCA for `trafficDuration`, then snapshots them again
(docs/design/0023-link-counters.md). `collect` judges each port's growth between the
two snapshots against the catalog's limits (`results/linkcounterruns.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, NodeRun, NodeScript, TestKind, begin_env
from nvcregen.kinds.linkcounters.params import LinkCountersParams

PORT_BASE = 18615  # the traffic's perftest servers: HCA i listens on PORT_BASE + i


class LinkCounters(TestKind):
    """Link health counters of every HCA port, read around traffic on it."""

    name: ClassVar[str] = "linkcounters"
    begin_line: ClassVar[bool] = True
    failed_reason: ClassVar[str] = "LinkCountersFailed"
    params = LinkCountersParams
    per_node = True
    one_node = True
    collective = False
    log_format = "link-counters"
    pod_size = "nccl"
    node_health = False
    node_container = "link-counters"
    nvcre_judged = False  # the limits are applied by collect to the log, never by the node

    def duration_basis(self, test: KindTest) -> str:
        """Traffic on every HCA at once, between two snapshots."""
        block: LinkCountersParams = self.block(test)
        return f"counters around {block.traffic_duration} of traffic, {block.expected_duration}"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start, then the snapshots and the traffic as long as the catalog says."""
        block: LinkCountersParams = self.block(test)
        ms = units.parse_duration(pod_start) + units.parse_duration(block.expected_duration)
        why = f"{pod_start} start-up + counters around traffic {block.expected_duration}"
        return FixedTime(ms / 1000, why)

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """Snapshot, traffic on every HCA at once (each under the deadline), snapshot."""
        block: LinkCountersParams = self.block(test)
        traffic_s = max(1, units.parse_duration(block.traffic_duration) // 1000)
        values: dict[str, object] = {
            "hcas": list(run.hcas),
            "traffic_s": traffic_s,
            "port_base": PORT_BASE,
            # the traffic never holds the run past its outer deadline: the after-snapshot
            # still has its time
            "traffic_deadline_s": max(1, min(traffic_s + 30, run.outer_deadline_s - 30)),
        }
        return NodeScript("link-counters.sh.j2", values)

    def node_env(self) -> list[dict[str, Any]]:
        """The node and the pod the script's begin line names (downward API)."""
        return begin_env()


KIND = LinkCounters()  # registered in `kindapi/registry.py` by this module's name
