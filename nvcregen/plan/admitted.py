"""How many nodes a pool's Kueue quota admits, and how many runs of a size run at once (pure).

`readiness.window.maxConcurrentJobs` (N) bounds the runs admitted at once. Kueue counts
resources, not runs, and every GPU pod of a readiness run holds a whole node, so a quota
of N x the nodes of the pool's smallest run admits at most N runs of any size; it is
raised to the pool's largest run when that is larger (else that run could never be
admitted) and never exceeds the pool. A quota of N x the largest run, as before issue 32,
admitted 2N one-node runs beside a two-node stage. Runs larger than the smallest then go
in fewer at once: the budget counts their waves with `runs_at_once`.
"""

from __future__ import annotations

from collections.abc import Iterable

from nvcregen.spec.v1alpha1 import Site


def manages_queues(site: Site) -> bool:
    """Whether nvcregen sizes the ClusterQueue (Kueue managed, no gang scheduler)."""
    dependencies = site.spec.dependencies
    return dependencies.gang_scheduler is None and dependencies.kueue.managed


def admitted_nodes(window: int, run_nodes: Iterable[int], pool_nodes: int | None) -> int:
    """The nodes a pool's quota holds: max(N x its smallest run, its largest), capped by the pool.

    Args:
        window: `maxConcurrentJobs`.
        run_nodes: The nodes of each run size on the pool; at least one.
        pool_nodes: The pool's nodes; None for a pool chosen by selector.

    """
    sizes = list(run_nodes)
    wanted = max(window * min(sizes), *sizes)
    return wanted if pool_nodes is None else min(wanted, pool_nodes)


def runs_at_once(window: int, quota_nodes: int, nodes_per_run: int) -> int:
    """How many runs of one size the window and a quota of `quota_nodes` admit together."""
    return max(1, min(window, quota_nodes // nodes_per_run))
