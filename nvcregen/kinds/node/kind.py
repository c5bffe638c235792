"""The node kind: one node a run, in any scope; its logs judged node by node."""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, NodeRun, NodeScript, TestKind
from nvcregen.kinds.node.params import NodeHealthParams

KERNEL_LINES = 2000  # the newest NVRM lines; a storm of one Xid does not need more


_HERE = __name__.rpartition(".")[0]  # this package: its `templates/` holds the script


class NodeHealth(TestKind[NodeHealthParams]):
    """Node health and configuration."""

    name: ClassVar[str] = "node"
    failed_reason: ClassVar[str] = "NodeHealthFailed"
    params = NodeHealthParams
    per_node = True
    one_node = True
    collective = False
    log_format = "node-health"
    pod_size = "dcgm"
    node_health = True
    node_container = "node-health"

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

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """nvidia-smi and the kernel's NVRM lines between the markers `reader.py` reads.

        Its nvidia-smi call runs well inside the job's timeout: half of it, at most a minute.
        """
        self.block(test)
        seconds = run.timeout_ms // 1000
        values: dict[str, object] = {
            "gpus": run.gpus,
            "deadline_s": max(1, min(60, seconds // 2)),
            "kernel_lines": KERNEL_LINES,
        }
        return NodeScript("node-health.sh.j2", values, package=_HERE)

    def node_env(self) -> list[dict[str, Any]]:
        """The node's name (downward API) and the driver capabilities that bring nvidia-smi.

        The CUDA images nvcregen runs set `NVIDIA_DRIVER_CAPABILITIES=compute,utility`; it is
        stated here too, so that the NVIDIA container toolkit mounts `nvidia-smi` whatever
        the image says.
        """
        return [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
        ]


KIND = NodeHealth()  # registered in `kindapi/registry.py` by this module's name
