"""The nvbandwidth kind: one run a node with every GPU, a fixed time, its own log format."""

from __future__ import annotations

from typing import Any, ClassVar

from nvcregen.core import units
from nvcregen.kindapi.protocol import FixedTime, KindTest, NodeRun, NodeScript, TestKind, begin_env
from nvcregen.kinds.nvbandwidth.params import NvbandwidthParams

_HERE = __name__.rpartition(".")[0]  # this package: its `templates/` holds the script


class Nvbandwidth(TestKind[NvbandwidthParams]):
    """nvbandwidth copy bandwidth between host and GPUs, and between GPUs."""

    name: ClassVar[str] = "nvbandwidth"
    begin_line: ClassVar[bool] = True
    params = NvbandwidthParams
    per_node = True
    one_node = True  # its figures are one node's links, whatever the stage's scope
    collective = False
    log_format = "nvbandwidth"
    pod_size = "dcgm"  # one process, a few cores: the size of a DCGM pod
    node_health = False
    node_container = "nvbandwidth"

    def duration_basis(self, test: KindTest) -> str:
        """The catalog's expected duration of its testcases."""
        nvbw: NvbandwidthParams = self.block(test)
        return f"{len(nvbw.testcases)} testcases {nvbw.expected_duration}"

    def fixed_time(self, test: KindTest, pod_start: str) -> FixedTime | None:
        """A pod start like DCGM's, then the testcases as long as the catalog says."""
        nvbw: NvbandwidthParams = self.block(test)
        ms = units.parse_duration(pod_start) + units.parse_duration(nvbw.expected_duration)
        why = f"{pod_start} start-up + nvbandwidth {len(nvbw.testcases)} testcases"
        return FixedTime(ms / 1000, f"{why} {nvbw.expected_duration}")

    def node_script(self, test: KindTest, run: NodeRun) -> NodeScript | None:
        """The nvbandwidth script: an outer deadline, JSON (`-j`) where the binary has it."""
        nvbw: NvbandwidthParams = self.block(test)
        values: dict[str, object] = {
            "gpus": run.gpus,
            "binary": nvbw.binary,
            "testcases": " ".join(nvbw.testcases),
            "buffer_mib": nvbw.buffer_size_mib,
            "iterations": nvbw.iterations,
            "deadline_s": run.outer_deadline_s,
        }
        return NodeScript("nvbandwidth.sh.j2", values, package=_HERE)

    def node_env(self) -> list[dict[str, Any]]:
        """The node and the pod the script names in its first line (downward API)."""
        return begin_env()


KIND = Nvbandwidth()  # registered in `kindapi/registry.py` by this module's name
