"""Reading the cluster's Node objects, page by page, for `nvcregen inventory` and drift."""

from __future__ import annotations

from typing import Any

from nvcregen.cluster.client import Cluster, ClusterError
from nvcregen.cluster.retry import RetryPolicy, send_retried
from nvcregen.fabric.inventory import Inventory, InventoryError, from_nodes

PAGE = 500
MAX_NODES = 100_000


def list_nodes(cluster: Cluster, policy: RetryPolicy | None = None) -> list[dict[str, Any]]:
    """Every Node the context can read, in pages of 500 (at most 100,000).

    Raises:
        ClusterError: The server refused the list, or answered with something else.
        ServerUnreachableError: No answer after every retry.

    """
    chosen = policy or RetryPolicy()
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        query = [("limit", str(PAGE))] + ([("continue", token)] if token else [])
        answer = send_retried(cluster, chosen, "GET", "/api/v1/nodes", query)
        body = answer.body
        if answer.status != 200 or not isinstance(body, dict):
            raise ClusterError(f"listing nodes on {cluster.host}: HTTP {answer.status}")
        page = body.get("items")
        if not isinstance(page, list):
            raise ClusterError(f"listing nodes on {cluster.host}: the answer has no items")
        items += [i for i in page if isinstance(i, dict)]
        if len(items) > MAX_NODES:
            raise ClusterError(f"more than {MAX_NODES} nodes; nvcregen reads at most that many")
        token = str((body.get("metadata") or {}).get("continue") or "")
        if not token:
            return items


def live_inventory(cluster: Cluster, policy: RetryPolicy | None = None) -> Inventory:
    """The cluster's nodes as an inventory, to compare with a site's (`fabric.drift`).

    Raises:
        ClusterError: The nodes cannot be listed, or the answer holds no usable nodes.

    """
    try:
        return from_nodes(list_nodes(cluster, policy), f"context {cluster.context}")
    except InventoryError as exc:
        raise ClusterError(f"the nodes of {cluster.host} cannot be read: {exc}") from exc
