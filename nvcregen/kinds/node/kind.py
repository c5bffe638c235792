"""The node kind: one node a run, in any scope; its logs judged node by node."""

from __future__ import annotations

from typing import ClassVar

from nvcregen.core import units
from nvcregen.kinds.node.params import NodeHealthParams
from nvcregen.kinds.protocol import FixedTime, KindTest, TestKind


class NodeHealth(TestKind):
    """Node health and configuration."""

    name: ClassVar[str] = "node"
    params = NodeHealthParams
    per_node = True
    one_node = True
    collective = False
    node_health = True

    def duration_basis(self, test: KindTest) -> str:
        """The catalog's expected duration of nvidia-smi."""
        node: NodeHealthParams = self.block(test)
        return node.expected_duration

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start like DCGM's, then nvidia-smi as long as the catalog says."""
        node: NodeHealthParams = self.block(test)
        ms = units.parse_duration(pod_start) + units.parse_duration(node.expected_duration)
        why = f"{pod_start} start-up + nvidia-smi and kernel log {node.expected_duration}"
        return FixedTime(ms / 1000, why)
