"""Admission of readiness runs through Kueue (or NVCRE's gang scheduler), pure.

- `shape`: what one run of a test holds while admitted, and the quota the window allows.
- `objects`: the queues layer: Topology, ResourceFlavors, ClusterQueue, LocalQueue and
  the stages' WorkloadPriorityClasses.
- `install`: Kueue 0.19.2 in the platform layer, with its controller Configuration.
- `workloads`: what each run carries to reach its queue (labels, TAS annotations,
  `gangScheduler`).

Why it is built this way: docs/design/0007-admission.md.
"""

from __future__ import annotations

from nvcregen.compile.queue.install import kueue_install
from nvcregen.compile.queue.objects import COMPONENT, queue_manifests

__all__ = ["COMPONENT", "kueue_install", "queue_manifests"]
