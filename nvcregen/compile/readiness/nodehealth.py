"""The `node-health` test's script and environment, shared by both engines (pure).

The script prints `nvidia-smi -q -x` and the kernel's NVRM lines between the markers
`nvcregen.ingest.node_log` reads, naming its node through the downward API. The CUDA
images nvcregen runs set `NVIDIA_DRIVER_CAPABILITIES=compute,utility`; it is stated here
too, so that the NVIDIA container toolkit mounts `nvidia-smi` whatever the image says.
"""

from __future__ import annotations

from nvcregen.compile.templating import render_template
from nvcregen.core.manifest import Obj
from nvcregen.plan.model import TestUnit

CONTAINER = "node-health"
KERNEL_LINES = 2000  # the newest NVRM lines; a storm of one Xid does not need more


def node_health_script(unit: TestUnit) -> str:
    """The script of one node-health run, its nvidia-smi call well inside the job's timeout."""
    seconds = unit.timeout_ms // 1000
    return render_template(
        "node-health.sh.j2",
        gpus=unit.pool.gpus_per_node,
        deadline_s=max(1, min(60, seconds // 2)),
        kernel_lines=KERNEL_LINES,
    )


def node_health_env() -> list[Obj]:
    """The node's name (downward API) and the driver capabilities that bring nvidia-smi."""
    return [
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
    ]
