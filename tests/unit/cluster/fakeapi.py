"""A stand-in for kube-apiserver that speaks exactly the calls nvcregen's dry-run makes.

tests/realserver/test_cp_check_server.py and test_cp_cel.py dry-run against the real
kube-apiserver; this stand-in stays for answers a real server cannot be made to give on
demand (429 with Retry-After once, 503 on every try, a 422 with chosen causes, a server
serving a chosen set of kinds) and to assert every request byte. Tests drive the
real `kubernetes` client against this small HTTP server (`http.server` on 127.0.0.1, a
random port, in a thread). It answers:

- discovery: `GET /api/v1` and `GET /apis/<group>/<version>` with an `APIResourceList`
  (404 `Status` for a group-version it does not serve). nvcregen never asks for `/api`
  or `/apis`: it looks up one group-version at a time;
- server-side apply: `PATCH <group-version>[/namespaces/<ns>]/<plural>/<name>`, which it
  only accepts as a dry-run apply patch. It echoes a valid object (200), answers a
  configured refusal (e.g. 422 with `details.causes`), 404 for a resource it does not
  serve, and 429 once for names in `throttle_once`.

Every request is recorded (method, path, query, content type, authorization, body), so
tests assert what the client really sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubehttp import Received, serve_app, status

TOKEN = "test-token"
NVCRE = "nvcre.nvidia.com/v1alpha1"


def resource(plural: str, kind: str, *, namespaced: bool) -> dict[str, Any]:
    """One entry of an APIResourceList, as kube-apiserver writes it."""
    return {
        "name": plural,
        "singularName": kind.lower(),
        "namespaced": namespaced,
        "kind": kind,
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    }


def served_by_default() -> dict[str, list[dict[str, Any]]]:
    """Core v1, RBAC, NVCRE (one with a status subresource), Argo CD, Flux, Prometheus,
    JobSet, Kueue."""
    nvcre = [
        resource("certifications", "Certification", namespaced=True),
        resource("certifications/status", "Certification", namespaced=True),
        resource("workloadruns", "WorkloadRun", namespaced=True),
        resource("logprofiles", "LogProfile", namespaced=False),
    ]
    core = [
        resource("namespaces", "Namespace", namespaced=False),
        resource("configmaps", "ConfigMap", namespaced=True),
        resource("serviceaccounts", "ServiceAccount", namespaced=True),
        resource("secrets", "Secret", namespaced=True),
    ]
    rbac = [
        resource("clusterroles", "ClusterRole", namespaced=False),
        resource("clusterrolebindings", "ClusterRoleBinding", namespaced=False),
        resource("roles", "Role", namespaced=True),
        resource("rolebindings", "RoleBinding", namespaced=True),
    ]
    argo = [
        resource("applications", "Application", namespaced=True),
        resource("appprojects", "AppProject", namespaced=True),
    ]
    flux_sources = [
        resource("gitrepositories", "GitRepository", namespaced=True),
        resource("ocirepositories", "OCIRepository", namespaced=True),
    ]
    return {
        "v1": core,
        "rbac.authorization.k8s.io/v1": rbac,
        NVCRE: nvcre,
        "argoproj.io/v1alpha1": argo,
        "source.toolkit.fluxcd.io/v1": flux_sources,
        "kustomize.toolkit.fluxcd.io/v1": [
            resource("kustomizations", "Kustomization", namespaced=True)
        ],
        "helm.toolkit.fluxcd.io/v2": [resource("helmreleases", "HelmRelease", namespaced=True)],
        "monitoring.coreos.com/v1": [
            resource("servicemonitors", "ServiceMonitor", namespaced=True),
            resource("prometheusrules", "PrometheusRule", namespaced=True),
        ],
        # JobSet installed outside the sites (their dependencies.jobset.managed: false)
        "jobset.x-k8s.io/v1alpha2": [resource("jobsets", "JobSet", namespaced=True)],
        "kueue.x-k8s.io/v1beta2": [
            resource("clusterqueues", "ClusterQueue", namespaced=False),
            resource("localqueues", "LocalQueue", namespaced=True),
            resource("resourceflavors", "ResourceFlavor", namespaced=False),
            resource("topologies", "Topology", namespaced=False),
            resource("workloadpriorityclasses", "WorkloadPriorityClass", namespaced=False),
        ],
    }


@dataclass
class FakeApiServer:
    """What the server serves and refuses, and every request it received."""

    url: str = ""
    token: str = TOKEN
    served: dict[str, list[dict[str, Any]]] = field(default_factory=served_by_default)
    reject: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    throttle_once: set[str] = field(default_factory=set)
    always: tuple[int, dict[str, Any]] | None = None
    received: list[Received] = field(default_factory=list)

    def patches(self) -> list[Received]:
        """The PATCH requests received, in order."""
        return [r for r in self.received if r.method == "PATCH"]

    def handle(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        """Record the request and answer it; a 429 asks the client to wait one second."""
        self.received.append(request)
        code, body = self.answer(request)
        return code, body, ({"Retry-After": "1"} if code == 429 else {})

    def answer(self, request: Received) -> tuple[int, dict[str, Any]]:
        """The status and JSON body for one request."""
        if request.authorization != f"Bearer {self.token}":
            return 401, status(401, "Unauthorized", "Unauthorized")
        if self.always is not None:
            return self.always
        gv, rest = _split(request.path)
        if gv not in self.served:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        if request.method == "GET" and not rest:
            listing = {"kind": "APIResourceList", "groupVersion": gv, "resources": self.served[gv]}
            return 200, listing
        if request.method == "PATCH":
            return self._apply(gv, rest, request)
        return 405, status(405, "MethodNotAllowed", f"{request.method} is not supported here")

    def _apply(self, gv: str, rest: list[str], request: Received) -> tuple[int, dict[str, Any]]:
        namespaced = len(rest) == 4 and rest[0] == "namespaces"
        plural, name = (rest[2], rest[3]) if namespaced else (rest[0], rest[-1])
        known = {(r["name"], r["namespaced"]) for r in self.served[gv]}
        if len(rest) not in {2, 4} or (plural, namespaced) not in known:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        if request.content_type != "application/apply-patch+yaml":
            return 415, status(415, "UnsupportedMediaType", request.content_type)
        if request.query.get("dryRun") != ["All"]:
            return 500, status(500, "InternalError", "this fake server only does dry-runs")
        if name in self.throttle_once:
            self.throttle_once.discard(name)
            return 429, status(429, "TooManyRequests", "too many requests, try again")
        if name in self.reject:
            return self.reject[name]
        return 200, request.body


def _split(path: str) -> tuple[str, list[str]]:
    """`/apis/g/v/namespaces/ns/p/n` -> (`g/v`, [`namespaces`, `ns`, `p`, `n`])."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        return parts[1], parts[2:]
    if parts[:1] == ["apis"] and len(parts) >= 3:
        return f"{parts[1]}/{parts[2]}", parts[3:]
    return "", parts


@contextmanager
def serve() -> Iterator[FakeApiServer]:
    """Run a fake API server on 127.0.0.1 (a free port) for the duration of a test."""
    fake = FakeApiServer()
    with serve_app(fake) as url:
        fake.url = url
        yield fake


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connections are refused)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def write_kubeconfig(path: Path, url: str, down_url: str) -> Path:
    """A kubeconfig with two contexts: `ctx` (the fake server, namespace `team`, current)
    and `down` (a closed port). JSON is YAML, so it is written as JSON."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "ctx",
        "clusters": [
            {"name": "fake", "cluster": {"server": url, "insecure-skip-tls-verify": True}},
            {"name": "gone", "cluster": {"server": down_url, "insecure-skip-tls-verify": True}},
        ],
        "users": [{"name": "tester", "user": {"token": TOKEN}}],
        "contexts": [
            {"name": "ctx", "context": {"cluster": "fake", "user": "tester", "namespace": "team"}},
            {"name": "down", "context": {"cluster": "gone", "user": "tester"}},
        ],
    }
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path
