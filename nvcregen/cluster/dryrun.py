"""Server-side apply dry-runs against a Kubernetes API server (`nvcregen check --server`).

Discovery (`GET /api/v1`, `GET /apis/<group>/<version>`, cached per group-version) maps
an object's apiVersion and kind to its resource and scope; the object is then sent as
`PATCH <resource>/<name>?dryRun=All&fieldManager=nvcregen&fieldValidation=Strict&force=true`
with content type `application/apply-patch+yaml` (a JSON body is valid YAML). With
`dryRun=All` the server runs defaulting, validation and admission, and persists nothing.
Every request goes through `retry.py` with `DRY_RUN_POLICY`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from nvcregen.cluster.client import Answer, Cluster, Resource, ServerUnreachableError
from nvcregen.cluster.retry import RetryPolicy, send_retried

FIELD_MANAGER = "nvcregen"
APPLY_PATCH = "application/apply-patch+yaml"
DRY_RUN_QUERY = (
    ("dryRun", "All"),
    ("fieldManager", FIELD_MANAGER),
    ("fieldValidation", "Strict"),
    ("force", "true"),
)
# Three tries, 0.25 s then 0.5 s apart; never more than 5 s, whatever Retry-After asks.
DRY_RUN_POLICY = RetryPolicy(attempts=3, backoff=0.25, max_retry_after=5.0, restarts=0)


@dataclass(frozen=True)
class DryRunResult:
    """What the server answered to one dry-run apply.

    Attributes:
        ok: The server accepted the object.
        status_code: The HTTP status of the answer (404 when the kind is unknown).
        message: The `Status` message of a refusal; "" when accepted.
        causes: `(field, message)` of each `Status` cause, the field dotted as the
            server writes it (`spec.categories[0].options.gpusPerNode`).
        kind_known: False when discovery does not list the object's kind (its CRD
            is not installed), so the object was never sent.

    """

    ok: bool
    status_code: int
    message: str = ""
    causes: list[tuple[str, str]] = field(default_factory=list)
    kind_known: bool = True


def dry_run_apply(cluster: Cluster, obj: Mapping[str, Any]) -> DryRunResult:
    """Send one object through server-side apply with `dryRun=All` and strict validation.

    Args:
        cluster: A client from `connect`.
        obj: The object, as loaded from a generated file.

    Returns:
        Whether the server accepted it and, if not, its `Status` message and causes.
        A kind that discovery does not list is not sent (`kind_known=False`).

    Raises:
        ServerUnreachableError: When the server does not answer after every attempt, or
            rejects the context's credentials (401).

    """
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    served = _discover(cluster, api_version)
    if isinstance(served, DryRunResult):
        return served
    resource = served.get(kind) if served is not None else None
    if resource is None:
        message = (
            f"the API server serves no {api_version} at all, so no {kind}"
            if served is None
            else f"the API server serves {api_version}, but no kind {kind} in it"
        )
        return DryRunResult(False, 404, message, kind_known=False)
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or cluster.namespace)
    path = _object_path(api_version, resource, namespace, str(meta.get("name", "")))
    answer = _request(cluster, "PATCH", path, DRY_RUN_QUERY, dict(obj), APPLY_PATCH)
    if 200 <= answer.status < 300:
        return DryRunResult(True, answer.status)
    return _refusal(answer)


def serves(cluster: Cluster, api_version: str, kind: str) -> bool | None:
    """Whether the server serves `kind` in `api_version`; None when discovery failed.

    Raises:
        ServerUnreachableError: As `dry_run_apply`.

    """
    served = _discover(cluster, api_version)
    if isinstance(served, DryRunResult):
        return None
    return served is not None and kind in served


def _group_version_path(api_version: str) -> str:
    """`/api/v1` for the core group, `/apis/<group>/<version>` for the others."""
    return f"/apis/{quote(api_version)}" if "/" in api_version else f"/api/{quote(api_version)}"


def _object_path(api_version: str, resource: Resource, namespace: str, name: str) -> str:
    scope = f"/namespaces/{quote(namespace, safe='')}" if resource.namespaced else ""
    return f"{_group_version_path(api_version)}{scope}/{resource.plural}/{quote(name, safe='')}"


def _discover(cluster: Cluster, api_version: str) -> dict[str, Resource] | DryRunResult | None:
    """Kind -> resource of one group-version (cached); None if the server lacks it."""
    if api_version in cluster.discovered:
        return cluster.discovered[api_version]
    answer = _request(cluster, "GET", _group_version_path(api_version))
    if answer.status == 404:
        cluster.discovered[api_version] = None
        return None
    if answer.status != 200 or not isinstance(answer.body, dict):
        refusal = _refusal(answer)
        message = f"discovery of {api_version} failed: {refusal.message}"
        return DryRunResult(False, refusal.status_code, message, refusal.causes)
    served = {
        str(r.get("kind")): Resource(str(r.get("name")), bool(r.get("namespaced")))
        for r in answer.body.get("resources") or []
        if isinstance(r, dict) and "/" not in str(r.get("name"))  # not a subresource
    }
    cluster.discovered[api_version] = served
    return served


def _request(
    cluster: Cluster,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]] = (),
    body: dict[str, Any] | None = None,
    content_type: str | None = None,
) -> Answer:
    """Send one request with `DRY_RUN_POLICY`; rejected credentials stop the dry-run.

    Raises:
        ServerUnreachableError: No answer after every attempt, or 401.

    """
    answer = send_retried(
        cluster, DRY_RUN_POLICY, method, path, query, body, content_type=content_type
    )
    if answer.status == 401:
        raise ServerUnreachableError(
            f"the API server {cluster.host} refused the credentials of context "
            f"'{cluster.context}': {_refusal(answer).message}"
        )
    return answer


def _refusal(answer: Answer) -> DryRunResult:
    """A refusal from the server's `Status` body (or whatever text came back instead)."""
    body = answer.body
    if isinstance(body, dict) and body.get("kind") == "Status":
        causes = [
            (str(c.get("field", "")), str(c.get("message", "")))
            for c in (body.get("details") or {}).get("causes") or []
            if isinstance(c, dict)
        ]
        message = str(body.get("message") or body.get("reason") or "")
    else:
        causes, message = [], str(body or "")
    return DryRunResult(False, answer.status, message or f"HTTP {answer.status}", causes)
