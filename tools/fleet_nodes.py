"""Write a `kubectl get nodes -o yaml`-shaped List of a fleet: N H100 nodes under L leaves.

For the fabric example (examples/fabric/) and benchmarks: `python -m tools.fleet_nodes
1024 32 > nodes.yaml`. Node i sits under leaf i // (N / L), spine (leaf // 8), one core,
and NVLink domain i (H100 nodes: one node per domain).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def fleet(count: int, leaves: int) -> dict[str, Any]:
    """The List of `count` nodes spread evenly over `leaves` leaves."""
    per_leaf = max(1, count // leaves)
    items = []
    for i in range(count):
        leaf = min(i // per_leaf, leaves - 1)
        labels = {
            "kubernetes.io/hostname": f"gpu-{i:04d}",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "nvidia.com/gpu.count": "8",
            "nvidia.com/cuda.driver.major": "570",
            "nvidia.com/cuda.driver.minor": "124",
            "nvidia.com/cuda.driver.rev": "06",
            "nvidia.com/cuda.runtime.major": "12",
            "nvidia.com/cuda.runtime.minor": "8",
            "network.topology.nvidia.com/accelerator": f"nvl-{i:04d}",
            "network.topology.nvidia.com/leaf": f"leaf-{leaf:02d}",
            "network.topology.nvidia.com/spine": f"spine-{leaf // 8}",
            "network.topology.nvidia.com/core": "core-0",
        }
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"gpu-{i:04d}", "labels": labels},
                "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                "status": {"capacity": {"nvidia.com/gpu": "8", "rdma/ib": "8", "cpu": "224"}},
            }
        )
    return {"apiVersion": "v1", "kind": "List", "items": items}


if __name__ == "__main__":
    print(json.dumps(fleet(int(sys.argv[1]), int(sys.argv[2]))))
