"""Kueue's label keys nvcregen writes and reads back: spelled out once.

`compile` writes them on runs and prebuilt Workloads; `check` and the replay read them
back, as Kueue v0.19.2 does (`pkg/controller/constants`).
"""

from __future__ import annotations

KUEUE_PREFIX = "kueue.x-k8s.io/"
QUEUE_LABEL = f"{KUEUE_PREFIX}queue-name"
PRIORITY_LABEL = f"{KUEUE_PREFIX}priority-class"
PREBUILT_LABEL = f"{KUEUE_PREFIX}prebuilt-workload-name"
