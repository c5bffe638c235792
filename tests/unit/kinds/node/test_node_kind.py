"""The node-health kind: its script's deadline, from its own package's template."""

from __future__ import annotations

import pytest

from nvcregen.catalog.load import load_catalog
from nvcregen.catalog.models import TestEntry as Entry
from nvcregen.kindapi.protocol import NodeRun, NodeScript
from nvcregen.kindapi.registry import kind_of


def entry(name: str) -> Entry:
    return load_catalog().tests[name]


def run(timeout_ms: int = 600_000, hostengine: str | None = "nv-hostengine.dcgm:5555") -> NodeRun:
    return NodeRun(gpus=8, timeout_ms=timeout_ms, outer_deadline_s=540, hostengine=hostengine)


@pytest.mark.parametrize(
    ("timeout_ms", "deadline_s"),
    [(0, 1), (1_999, 1), (3_000, 1), (4_000, 2), (120_000, 60), (121_000, 60), (600_000, 60)],
)
def test_node_healths_nvidia_smi_deadline_is_half_the_timeout_at_most_a_minute(
    timeout_ms: int, deadline_s: int
) -> None:
    health = entry("node-health")
    assert kind_of(health).node_script(health, run(timeout_ms)) == NodeScript(
        "node-health.sh.j2",
        {"gpus": 8, "deadline_s": deadline_s, "kernel_lines": 2000},
        package="nvcregen.kinds.node",  # its template is the package's own
    )
