"""Server-side apply dry-runs against a Kubernetes API server, via the official client.

This is the only module that imports `kubernetes` (the optional `cluster` extra), and it
does so inside functions: `nvcregen --version` and every offline command run without it.

Discovery (`GET /api/v1`, `GET /apis/<group>/<version>`, cached per group-version) maps
an object's apiVersion and kind to its resource and scope; the object is then sent as
`PATCH <resource>/<name>?dryRun=All&fieldManager=nvcregen&fieldValidation=Strict&force=true`
with content type `application/apply-patch+yaml` (a JSON body is valid YAML). With
`dryRun=All` the server runs defaulting, validation and admission, and persists nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple
from urllib.parse import quote

INSTALL_HINT = "pip install 'nvcregen[cluster]'"
FIELD_MANAGER = "nvcregen"
APPLY_PATCH = "application/apply-patch+yaml"
DRY_RUN_QUERY = (
    ("dryRun", "All"),
    ("fieldManager", FIELD_MANAGER),
    ("fieldValidation", "Strict"),
    ("force", "true"),
)
RETRYABLE = frozenset({429, 500, 502, 503, 504})
ATTEMPTS = 3
BACKOFF = 0.25  # seconds before the second attempt, doubled before each later one
MAX_RETRY_AFTER = 5.0  # never wait longer than this, whatever Retry-After asks
TIMEOUT = (5.0, 30.0)  # connect and read timeout of one request, in seconds

Sleep = Callable[[float], None]


class ClusterError(Exception):
    """The cluster cannot be used: no client installed, or a bad kubeconfig or context."""


class ServerUnreachableError(ClusterError):
    """The API server did not answer, or refused the credentials, on every attempt."""


class Resource(NamedTuple):
    """Where the server serves a kind: its plural resource name and its scope."""

    plural: str
    namespaced: bool


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


@dataclass
class Cluster:
    """An API client for one kubeconfig context, with its discovery cache.

    Attributes:
        api: The `kubernetes.client.ApiClient`.
        context: The kubeconfig context's name.
        host: The API server's URL.
        namespace: The context's namespace, for namespaced objects that name none.
        sleep: How to wait between attempts (tests pass a recorder).
        attempts: How many times one request is tried at most.
        discovered: apiVersion -> kind -> resource; None for a group-version the
            server does not serve.

    """

    api: Any
    context: str
    host: str
    namespace: str = "default"
    sleep: Sleep = time.sleep
    attempts: int = ATTEMPTS
    discovered: dict[str, dict[str, Resource] | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """An HTTP answer as the server sent it: status, parsed body, Retry-After, raw bytes."""

    status: int
    body: Any
    retry_after: str | None = None
    raw: bytes = b""


def connect(
    context: str | None, kubeconfig: Path | None = None, *, sleep: Sleep = time.sleep
) -> Cluster:
    """Build a client for one kubeconfig context; nothing is sent to the server yet.

    Args:
        context: The context's name; None for the kubeconfig's current context.
        kubeconfig: The kubeconfig file; None for `$KUBECONFIG` or `~/.kube/config`.
        sleep: How to wait between the attempts of a retried request.

    Returns:
        The client, with an empty discovery cache.

    Raises:
        ClusterError: When the kubernetes client is not installed, the kubeconfig
            cannot be read, or it has no such context (the error lists those it has).

    """
    k8s_client, k8s_config = _kubernetes()
    shown = str(kubeconfig) if kubeconfig else os.environ.get("KUBECONFIG", "~/.kube/config")
    name, namespace = _context(k8s_config, context, kubeconfig, shown)
    configuration = k8s_client.Configuration()
    configuration.retries = 0  # urllib3 must not retry on its own: _request does, with backoff
    try:
        api = k8s_config.new_client_from_config(
            config_file=str(kubeconfig) if kubeconfig else None,
            context=name,
            persist_config=False,
            client_configuration=configuration,
        )
    except k8s_config.ConfigException as exc:
        raise ClusterError(f"context '{name}' in {shown} cannot be used: {exc}") from exc
    return Cluster(api, name, str(configuration.host), namespace, sleep)


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


def _kubernetes() -> tuple[ModuleType, ModuleType]:
    """The `kubernetes.client` and `kubernetes.config` modules, or a clear error."""
    try:
        from kubernetes import client, config
    except ImportError as exc:
        raise ClusterError(
            f"checking against a cluster needs the official kubernetes client: {INSTALL_HINT}"
        ) from exc
    return client, config


def _context(
    k8s_config: ModuleType, wanted: str | None, kubeconfig: Path | None, shown: str
) -> tuple[str, str]:
    """The name and namespace of the wanted (or current) context of a kubeconfig."""
    import yaml  # a dependency of kubernetes, which parses kubeconfigs with it

    if kubeconfig is not None and not kubeconfig.is_file():
        raise ClusterError(f"kubeconfig {shown} does not exist")
    try:
        contexts, current = k8s_config.list_kube_config_contexts(
            str(kubeconfig) if kubeconfig else None
        )
    except (k8s_config.ConfigException, OSError, yaml.YAMLError) as exc:
        raise ClusterError(f"cannot read kubeconfig {shown}: {exc}") from exc
    by_name = {str(c.get("name")): c for c in contexts or [] if isinstance(c, dict)}
    chosen = by_name.get(wanted) if wanted else current
    if not isinstance(chosen, dict):
        what = f"context '{wanted}' is not" if wanted else "no current context is set"
        available = ", ".join(sorted(by_name)) or "none"
        raise ClusterError(f"{what} in {shown}; available contexts: {available}")
    namespace = (chosen.get("context") or {}).get("namespace") or "default"
    return str(chosen.get("name")), str(namespace)


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
    """Send one request, retrying connection errors, 429 and 5xx a bounded number of times."""
    failures = connection_errors()
    attempt = 1
    while True:
        answer: Answer | None = None
        try:
            answer = send(cluster, method, path, query, body, content_type=content_type)
        except failures as exc:
            if attempt >= cluster.attempts:
                raise ServerUnreachableError(
                    f"the API server {cluster.host} (context '{cluster.context}') "
                    f"did not answer: {error_reason(exc)}"
                ) from exc
        if answer is not None and (answer.status not in RETRYABLE or attempt >= cluster.attempts):
            if answer.status == 401:
                raise ServerUnreachableError(
                    f"the API server {cluster.host} refused the credentials of context "
                    f"'{cluster.context}': {_refusal(answer).message}"
                )
            return answer
        cluster.sleep(_delay(answer, attempt))
        attempt += 1


def send(
    cluster: Cluster,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]] = (),
    body: dict[str, Any] | None = None,
    *,
    content_type: str | None = None,
    accept: str = "application/json",
    timeout: tuple[float, float] = TIMEOUT,
) -> Answer:
    """Send one request through the client's `ApiClient` as plain HTTP; no retries.

    The status and `Retry-After` header come back as the server sent them; a JSON body
    is parsed, anything else kept as (at most 500 characters of) text.

    Raises:
        Exception: one of `connection_errors()` when no answer came back.

    """
    headers = {"Accept": accept}
    if content_type or body is not None:
        headers["Content-Type"] = content_type or "application/json"
    request = cluster.api.param_serialize(
        method=method,
        resource_path=path,
        query_params=list(query),
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    response = cluster.api.call_api(*request, _request_timeout=timeout)
    raw = response.read() or b""
    try:
        data: Any = json.loads(raw)
    except ValueError:
        data = raw.decode("utf-8", "replace").strip()[:500]
    return Answer(int(response.status), data, response.headers.get("Retry-After"), raw)


def connection_errors() -> tuple[type[Exception], ...]:
    """What the client raises when no HTTP answer came back (refused, reset, timed out, TLS)."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    return (urllib3.exceptions.HTTPError, OSError, ApiException)


def retry_after(answer: Answer | None, cap: float) -> float | None:
    """The server's Retry-After in seconds, capped; None when absent or an HTTP date."""
    if answer is None or not answer.retry_after:
        return None
    try:
        return min(max(float(answer.retry_after), 0.0), cap)
    except ValueError:
        return None


def _delay(answer: Answer | None, attempt: int) -> float:
    """Seconds to wait before the next attempt: Retry-After (capped) or exponential backoff."""
    wait = retry_after(answer, MAX_RETRY_AFTER)
    return wait if wait is not None else BACKOFF * 2.0 ** (attempt - 1)


def error_reason(exc: Exception) -> str:
    """The useful part of a urllib3 error, without the connection object's repr."""
    text = str(getattr(exc, "reason", None) or exc)
    return text.split(">: ", 1)[1] if text.startswith("<") and ">: " in text else text


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
