"""How long Kueue keeps requeuing a run whose pods never all get ready (pure).

nvcregen configures Kueue's `waitForPodsReady` (`nvcregen.compile.queue.install`): a run
admitted whose pods are not all ready within `timeout` is evicted and requeued after a
backoff, and once it has been requeued `backoffLimitCount` times the next timeout
deactivates it (Kueue v0.19.2, `pkg/controller/core/workload_controller.go`:
`triggerDeactivation` when the requeue count + 1 exceeds the limit; `UpdateRequeueState`
waits `backoffBaseSeconds x 2^(count-1)`, at most `backoffMaxSeconds`, with a negligible
jitter). So it is deactivated `limit + 1` timeouts and `limit` backoffs after its first
admission, if every requeue is admitted again at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.core import units
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

# A cold pull of the multi-GB NCCL image can take minutes: never evict for less.
PODS_READY_FLOOR_MS = 10 * 60 * 1000
BACKOFF_BASE_S = 60
BACKOFF_MAX_S = 3600


def pods_ready_timeout_ms(site: Site, test_units: Sequence[TestUnit]) -> int:
    """`podsReadyTimeout`, else the plan's shortest test timeout, at least ten minutes.

    A run whose pods cannot all start within the time its shortest sibling may run is
    stuck (a node lost, an image missing), not slow.
    """
    written = site.spec.dependencies.kueue.pods_ready_timeout
    if written is not None:
        return units.parse_duration(written)
    shortest = min((u.timeout_ms for u in test_units), default=PODS_READY_FLOOR_MS)
    return max(PODS_READY_FLOOR_MS, shortest)


def deactivation_ms(site: Site, test_units: Sequence[TestUnit]) -> int:
    """From a run's first admission to Kueue deactivating it, its pods never all ready."""
    limit = site.spec.dependencies.kueue.requeue_limit
    backoffs_s = sum(min(BACKOFF_BASE_S * (1 << k), BACKOFF_MAX_S) for k in range(limit))
    return (limit + 1) * pods_ready_timeout_ms(site, test_units) + backoffs_s * 1000
