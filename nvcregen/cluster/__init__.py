"""Talking to a real Kubernetes API server (the optional `cluster` extra).

Only `nvcregen.cluster.client` imports `kubernetes`, and only inside its functions, so
importing this package (and running any offline command) never loads the client.
`client.py` connects and sends one request, `retry.py` is the one retry policy every
caller uses, and `dryrun.py` dry-runs objects for `check --server`.
"""

from __future__ import annotations

from nvcregen.cluster.client import (
    Cluster,
    ClusterError,
    ServerUnreachableError,
    connect,
)
from nvcregen.cluster.dryrun import DryRunResult, dry_run_apply
from nvcregen.cluster.retry import RetryPolicy

__all__ = [
    "Cluster",
    "ClusterError",
    "DryRunResult",
    "RetryPolicy",
    "ServerUnreachableError",
    "connect",
    "dry_run_apply",
]
