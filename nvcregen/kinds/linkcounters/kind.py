"""The linkcounters kind: each HCA port's health counters around RDMA traffic, per node.

One run a node, alone on it (as RDMA rails): the script snapshots every port of the
pool's HCAs (`counters/`, `hw_counters/`, the netdev's pause counters from `ethtool -S`),
runs perftest traffic on each HCA for `trafficDuration`, then snapshots them again
(docs/design/0023-link-counters.md). `collect` judges each port's growth between the
two snapshots against the catalog's limits (`logs.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import codes, units
from nvcregen.kindapi.protocol import (
    OUTER_MARGIN_S,
    FixedTime,
    KindTest,
    NodeRun,
    NodeScript,
    NvcreRefusal,
    TestKind,
    begin_env,
    outer_deadline_s,
)
from nvcregen.kinds.linkcounters.params import LinkCountersParams

_HERE = __name__.rpartition(".")[0]  # this package: its `templates/` holds the script
PORT_BASE = 18615  # the traffic's perftest servers: HCA i listens on PORT_BASE + i
CONNECT_S = 30  # the traffic's deadline beyond its -D seconds: perftest connects, warms up
SNAPSHOT_S = 30  # what the outer deadline keeps after the traffic, for the after-snapshot


def traffic_deadline_s(traffic_s: int, outer_s: int) -> int:
    """The traffic's deadline: its seconds and time to connect, within the outer deadline.

    Never past `outer_s - SNAPSHOT_S`, so that the after-snapshot still has its time.
    """
    return max(1, min(traffic_s + CONNECT_S, outer_s - SNAPSHOT_S))


class LinkCounters(TestKind[LinkCountersParams]):
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
    # the limits are applied by collect to the log, never by the node: NVCRE mode reads a
    # WorkloadRun's outcome and no log, so every port would pass unjudged
    nvcre_refusal = NvcreRefusal(
        codes.NVC333.code,
        "{name} is judged only from its log, which NVCRE mode never reads: its"
        " WorkloadRun would pass whatever the counters did",
        "run it with readiness.engine: trainer, or remove it from this stage",
    )

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

    def timeout_gap(self, test: KindTest, timeout_ms: int) -> str | None:
        """A timeout whose outer deadline cuts the traffic (or its time to connect) short.

        Every port of every node would fail its traffic then. The shortest timeout that
        fits is the traffic, its time to connect, the after-snapshot's time and the margin
        the outer deadline keeps.
        """
        block: LinkCountersParams = self.block(test)
        traffic_s = max(1, units.parse_duration(block.traffic_duration) // 1000)
        given = traffic_deadline_s(traffic_s, outer_deadline_s(timeout_ms))
        if given >= traffic_s + CONNECT_S:
            return None
        needed = traffic_s + CONNECT_S + SNAPSHOT_S + OUTER_MARGIN_S
        return (
            f"its traffic runs {traffic_s} s and needs {needed} s of run timeout"
            f" ({traffic_s} s + {CONNECT_S} s to connect + {SNAPSHOT_S} s for the after-snapshot"
            f" + the {OUTER_MARGIN_S} s the outer deadline keeps); {timeout_ms // 1000} s gives"
            f" the traffic {given} s: every node's traffic would be cut short and fail"
        )

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """Snapshot, traffic on every HCA at once (each under the deadline), snapshot."""
        block: LinkCountersParams = self.block(test)
        traffic_s = max(1, units.parse_duration(block.traffic_duration) // 1000)
        values: dict[str, object] = {
            "hcas": list(run.hcas),
            "traffic_s": traffic_s,
            "port_base": PORT_BASE,
            # the traffic never holds the run past its outer deadline: the after-snapshot
            # still has its time (a timeout too short for both is NVC791 at validate)
            "traffic_deadline_s": traffic_deadline_s(traffic_s, run.outer_deadline_s),
        }
        return NodeScript("link-counters.sh.j2", values, package=_HERE)

    def node_env(self) -> list[dict[str, Any]]:
        """The node and the pod the script's begin line names (downward API)."""
        return begin_env()


KIND = LinkCounters()  # registered in `kindapi/registry.py` by this module's name
