"""Talking to a real Kubernetes API server (the optional `cluster` extra).

Only `nvcregen.cluster.client` imports `kubernetes`, and only inside its functions, so
importing this package (and running any offline command) never loads the client.
"""

from __future__ import annotations

from nvcregen.cluster.client import (
    Cluster,
    ClusterError,
    DryRunResult,
    ServerUnreachableError,
    connect,
    dry_run_apply,
)

__all__ = [
    "Cluster",
    "ClusterError",
    "DryRunResult",
    "ServerUnreachableError",
    "connect",
    "dry_run_apply",
]
