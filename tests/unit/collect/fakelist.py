"""A stand-in for kube-apiserver that speaks exactly the calls `nvcregen collect` makes.

The real kube-apiserver runs in tests/realserver/test_cp_collect.py (faults through
tests/faultproxy.py); this stand-in stays for what a real server cannot be made to send
(hostile names and bodies, a 404 for a served kind, a token that repeats, a Retry-After
of its choosing) and for the many fast fault-combination runs, so the tests drive the
real `kubernetes` client against this small HTTP server (`http.server` on 127.0.0.1, a
random port, in a thread). It answers:

- LIST: `GET /api/v1[/namespaces/<ns>]/configmaps` and
  `GET /apis/nvcre.nvidia.com/v1alpha1[/namespaces/<ns>]/<plural>`, with `labelSelector`
  (`key=value` and `key` terms, comma-separated), `limit` and `continue` (an opaque
  offset token; items sorted by namespace and name, as etcd returns them). Built-in list
  items carry no apiVersion or kind, custom resources do, as the real server does;
- trainer mode: LISTs of `trainer.kubeflow.org/v1alpha1` trainjobs, `batch/v1` jobs and
  `v1` pods, and `GET /api/v1/namespaces/<ns>/pods/<pod>/log?container=<c>` answering
  the text in `logs` (404 when there is none);
- DELETE: `DELETE <collection>/<name>` with `DeleteOptions`; `preconditions.uid` and
  `preconditions.resourceVersion` that do not match answer 409 Conflict. Then garbage
  collection, as the real control plane does it (at once here, not later): with
  `propagationPolicy` Background or Foreground (or none) every object whose
  ownerReferences reach the deleted one goes too, whatever its version; with Orphan
  those references are removed and each dependent gets a new resourceVersion.
  `before_delete` runs before each DELETE is answered: a test changes an object there,
  as a controller could between the listing and the delete.

Faults are scripted per collection: an HTTP status (500, 429 with a Retry-After header,
410 Gone for a request with a continue token), a delay before answering (a client read
timeout), or a list cut short (no continue token, with or without `remainingItemCount`,
items left out). API discovery (`GET /api/v1`, `GET /apis/<group>/<version>`) lists the
served resources, and answers 404 for a group/version with none. Every request is
recorded, so tests assert what was really sent.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubehttp import Received, serve_app, status

TOKEN = "collector-token"
NVCRE = "nvcre.nvidia.com/v1alpha1"
PLURALS = {
    "certifications": "Certification",
    "workloadruns": "WorkloadRun",
    "workflows": "Workflow",
    "bandwidthmeasurements": "BandwidthMeasurement",
    "goodputmeasurements": "GoodputMeasurement",
    "reportexports": "ReportExport",
    "configmaps": "ConfigMap",
    "trainjobs": "TrainJob",
    "jobs": "Job",
    "pods": "Pod",
}
APIS = {"configmaps": "v1", "pods": "v1", "jobs": "batch/v1"}
APIS["trainjobs"] = "trainer.kubeflow.org/v1alpha1"
BUILT_IN = frozenset({"configmaps", "pods", "jobs"})
DISCOVERY = {
    "/api/v1": "v1",
    "/apis/batch/v1": "batch/v1",
    "/apis/trainer.kubeflow.org/v1alpha1": "trainer.kubeflow.org/v1alpha1",
    f"/apis/{NVCRE}": NVCRE,
}


@dataclass
class Fault:
    """A scripted misbehaviour for requests to one collection (by plural)."""

    plural: str
    code: int = 0  # 0: answer normally (after `delay`)
    times: int = 1
    method: str = "GET"
    on_continue: bool = False  # only requests that carry a continue token
    retry_after: str | None = None
    delay: float = 0.0
    truncate: bool = False  # answer 200 but end the list here: no continue token
    keep_remaining: bool = False  # with truncate: still announce remainingItemCount
    drop: int = 0  # with truncate: leave out this many items of the page too


@dataclass
class FakeKube:
    """Objects served, faults to inject, and every request received."""

    url: str = ""
    objects: list[dict[str, Any]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    served: set[str] = field(default_factory=lambda: set(PLURALS))
    received: list[Received] = field(default_factory=list)
    deleted: list[tuple[str, str, str]] = field(default_factory=list)
    collected: list[tuple[str, str, str]] = field(default_factory=list)  # by garbage collection
    before_delete: Callable[[FakeKube, Received], None] | None = None
    resource_version: str = "1000"
    logs: dict[tuple[str, str, str], bytes] = field(default_factory=dict)  # ns, pod, container
    lock: threading.Lock = field(default_factory=threading.Lock)

    def lists(self, plural: str | None = None) -> list[Received]:
        """The GET requests received (for one plural)."""
        return [
            r
            for r in self.received
            if r.method == "GET" and (plural is None or r.path.endswith(f"/{plural}"))
        ]

    def deletes(self) -> list[Received]:
        """The DELETE requests received."""
        return [r for r in self.received if r.method == "DELETE"]

    def handle(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        """Record the request and answer it."""
        self.received.append(request)
        return self.answer(request, request.authorization)

    def answer(self, request: Received, authorization: str) -> tuple[int, Any, dict[str, str]]:
        """Status, body (JSON, or bytes for a log) and extra headers for one request."""
        if request.path.endswith("/log") and authorization == f"Bearer {TOKEN}":
            return self._log(request)
        if request.path in DISCOVERY and authorization == f"Bearer {TOKEN}":
            return self._discovery(request)
        return self._api(request, authorization)

    def _api(self, request: Received, authorization: str) -> tuple[int, Any, dict[str, str]]:
        if authorization != f"Bearer {TOKEN}":
            return 401, status(401, "Unauthorized", "Unauthorized"), {}
        route = _route(request.path)
        if route is None or route[1] not in self.served:
            return 404, status(404, "NotFound", "the server could not find the resource"), {}
        namespace, plural, name = route
        fault = self._fault(request, plural)
        if fault is not None:
            injected = self._injected(fault, request, namespace, plural)
            if injected is not None:
                return injected
        if request.method == "GET" and name is None:
            return self._list(request, namespace, plural)
        if request.method == "DELETE" and name is not None and namespace is not None:
            return self._delete(request, namespace, plural, name)
        return 405, status(405, "MethodNotAllowed", request.method), {}

    def _injected(
        self, fault: Fault, request: Received, namespace: str | None, plural: str
    ) -> tuple[int, Any, dict[str, str]] | None:
        """The answer a fault makes (None: answer normally, after its delay)."""
        if fault.truncate:
            return self._cut_short(fault, self._list(request, namespace, plural))
        time.sleep(fault.delay)
        if not fault.code:
            return None
        headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
        return fault.code, status(fault.code, "Injected", f"injected {fault.code}"), headers

    @staticmethod
    def _cut_short(
        fault: Fault, answer: tuple[int, Any, dict[str, str]]
    ) -> tuple[int, Any, dict[str, str]]:
        """A page that ends the list early: no continue token, maybe no count, fewer items."""
        code, body, headers = answer
        meta = body["metadata"]
        meta.pop("continue", None)
        if not fault.keep_remaining:
            meta.pop("remainingItemCount", None)
        body["items"] = body["items"][: max(0, len(body["items"]) - fault.drop)]
        return code, body, headers

    def _discovery(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        """`GET /api/v1` or `/apis/<group>/<version>`: the served resources of that API."""
        api = DISCOVERY[request.path]
        names = sorted(p for p in self.served if APIS.get(p, NVCRE) == api)
        fault = self._fault(request, "discovery")
        if fault is not None and fault.code:
            return fault.code, status(fault.code, "Injected", f"injected {fault.code}"), {}
        if not names:
            return 404, status(404, "NotFound", "the server could not find the resource"), {}
        resources = [{"name": n, "kind": PLURALS[n], "namespaced": True} for n in names]
        body = {"kind": "APIResourceList", "groupVersion": api, "resources": resources}
        return 200, body, {}

    def _fault(self, request: Received, plural: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if (
                    fault.times > 0
                    and fault.plural == plural
                    and fault.method == request.method
                    and (not fault.on_continue or "continue" in request.query)
                ):
                    fault.times -= 1
                    return fault
        return None

    def _log(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        """A pod's log as text (bytes are sent as they are), or 404."""
        parts = request.path.split("/")  # /api/v1/namespaces/<ns>/pods/<pod>/log
        if parts[1:3] != ["api", "v1"] or len(parts) != 8:
            return 404, status(404, "NotFound", "no such path"), {}
        container = (request.query.get("container") or [""])[0]
        fault = self._fault(request, "pods/log")
        if fault is not None and fault.code:
            return fault.code, status(fault.code, "Injected", f"injected {fault.code}"), {}
        found = self.logs.get((parts[4], parts[6], container))
        if found is None:
            return 404, status(404, "NotFound", f'pods "{parts[6]}" not found'), {}
        return 200, found, {}

    def _list(
        self, request: Received, namespace: str | None, plural: str
    ) -> tuple[int, Any, dict[str, str]]:
        selector = (request.query.get("labelSelector") or [""])[0]
        items = sorted(
            (o for o in self.objects if _matches(o, plural, namespace, selector)),
            key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]),
        )
        token = (request.query.get("continue") or [""])[0]
        start = json.loads(base64.b64decode(token))["offset"] if token else 0
        limit = int((request.query.get("limit") or ["0"])[0]) or len(items)
        page = items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": self.resource_version}
        if start + limit < len(items):
            meta["continue"] = base64.b64encode(
                json.dumps({"offset": start + limit}).encode()
            ).decode()
            meta["remainingItemCount"] = len(items) - start - limit
        if plural in BUILT_IN:  # built-in list items leave out apiVersion and kind
            page = [{k: v for k, v in o.items() if k not in {"apiVersion", "kind"}} for o in page]
        kind = PLURALS[plural]
        api = APIS.get(plural, "nvcre.nvidia.com/v1alpha1")
        return 200, {"apiVersion": api, "kind": f"{kind}List", "metadata": meta, "items": page}, {}

    def _delete(
        self, request: Received, namespace: str, plural: str, name: str
    ) -> tuple[int, Any, dict[str, str]]:
        if self.before_delete is not None:
            self.before_delete(self, request)
        with self.lock:
            found = [
                o
                for o in self.objects
                if _matches(o, plural, namespace, "") and o["metadata"]["name"] == name
            ]
            if not found:
                return 404, status(404, "NotFound", f'{plural} "{name}" not found'), {}
            obj = found[0]
            pre = (request.body or {}).get("preconditions") or {}
            meta = obj["metadata"]
            for key in ("uid", "resourceVersion"):
                if key in pre and pre[key] != meta.get(key):
                    message = f"Precondition failed: {key} in precondition: {pre[key]}, "
                    message += f"{key} in object meta: {meta.get(key)}"
                    return 409, status(409, "Conflict", message), {}
            self.objects.remove(obj)
            self.deleted.append((PLURALS[plural], namespace, name))
            policy = (request.body or {}).get("propagationPolicy") or "Background"
            self._collect_garbage(str(meta["uid"]), orphan=policy == "Orphan")
            return 200, obj, {}

    def _collect_garbage(self, uid: str, *, orphan: bool) -> None:
        """Delete (or orphan) what the object of `uid` owns, transitively."""
        gone = {uid}
        for obj in list(self.objects):
            meta = obj["metadata"]
            refs = meta.get("ownerReferences") or []
            if not any(ref["uid"] in gone for ref in refs):
                continue
            if orphan:
                meta["ownerReferences"] = [ref for ref in refs if ref["uid"] != uid]
                meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
            else:
                self.objects.remove(obj)
                self.collected.append((obj["kind"], meta.get("namespace", ""), meta["name"]))
                gone.add(meta["uid"])
        if not orphan and len(gone) > 1:  # dependents of dependents, later in the list
            for child in gone - {uid}:
                self._collect_garbage(child, orphan=False)


def _route(path: str) -> tuple[str | None, str, str | None] | None:
    """(namespace, plural, name) of a collection or object path."""
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"] and "/".join(parts[1:3]) in {*APIS.values(), NVCRE}:
        rest = parts[3:]
    else:
        return None
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 2 or rest[0] not in PLURALS:
        return None
    return namespace, rest[0], rest[1] if len(rest) == 2 else None


def _matches(obj: dict[str, Any], plural: str, namespace: str | None, selector: str) -> bool:
    meta = obj.get("metadata") or {}
    if obj.get("kind") != PLURALS[plural]:
        return False
    if namespace is not None and meta.get("namespace") != namespace:
        return False
    labels = meta.get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if key not in labels or ("=" in term and labels[key] != value):
            return False
    return True


@contextmanager
def serve(objects: list[dict[str, Any]]) -> Iterator[FakeKube]:
    """Run a fake API server on 127.0.0.1 (a free port) serving `objects`."""
    fake = FakeKube(objects=objects)
    with serve_app(fake) as url:
        fake.url = url
        yield fake


def write_kubeconfig(path: Path, url: str) -> Path:
    """A kubeconfig whose current context `lab` talks to the fake server."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "lab",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "users": [{"name": "collector", "user": {"token": TOKEN}}],
        "contexts": [{"name": "lab", "context": {"cluster": "fake", "user": "collector"}}],
    }
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path
