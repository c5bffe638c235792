"""A client for one kubeconfig context, and one HTTP request through it, as sent.

This is the only module that imports `kubernetes` (the optional `cluster` extra), and it
does so inside functions: `nvcregen --version` and every offline command run without it.
`send` makes one request and never retries; `retry.py` retries, for every caller
(`dryrun.py` for `check --server`, `nvcregen.collect`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

INSTALL_HINT = "pip install 'nvcregen[cluster]'"
TIMEOUT = (5.0, 30.0)  # connect and read timeout of one request, in seconds

Sleep = Callable[[float], None]


class ClusterError(Exception):
    """The cluster cannot be used: no client installed, or a bad kubeconfig or context."""


class ServerUnreachableError(ClusterError):
    """The API server did not answer, or refused the credentials, on every attempt.

    `reason` is why the last attempt got no answer ("" for refused credentials).
    """

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason


class Resource(NamedTuple):
    """Where the server serves a kind: its plural resource name and its scope."""

    plural: str
    namespaced: bool


@dataclass
class Cluster:
    """An API client for one kubeconfig context, with its discovery cache.

    Attributes:
        api: The `kubernetes.client.ApiClient`.
        context: The kubeconfig context's name.
        host: The API server's URL.
        namespace: The context's namespace, for namespaced objects that name none.
        sleep: How to wait between attempts (tests pass a recorder).
        discovered: apiVersion -> kind -> resource; None for a group-version the
            server does not serve.

    """

    api: Any
    context: str
    host: str
    namespace: str = "default"
    sleep: Sleep = time.sleep
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
    configuration.retries = 0  # urllib3 must not retry on its own: retry.py does, with backoff
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
    except (ValueError, RecursionError):  # not JSON, a 4300-digit number, deep nesting
        data = raw.decode("utf-8", "replace").strip()[:500]
    return Answer(int(response.status), data, response.headers.get("Retry-After"), raw)


def connection_errors() -> tuple[type[Exception], ...]:
    """What the client raises when no HTTP answer came back (refused, reset, timed out, TLS)."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    return (urllib3.exceptions.HTTPError, OSError, ApiException)


def error_reason(exc: Exception) -> str:
    """The useful part of a urllib3 error, without the connection object's repr."""
    text = str(getattr(exc, "reason", None) or exc)
    return text.split(">: ", 1)[1] if text.startswith("<") and ">: " in text else text
