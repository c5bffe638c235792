"""A stand-in for kube-apiserver's Node endpoints, with server-side apply's field ownership.

It answers `GET /api/v1/nodes/<name>` and `PATCH` with `application/apply-patch+yaml`,
modelling what `nvcregen quarantine` relies on, as kube-apiserver documents it:

- a `metadata.resourceVersion` in the applied object is a precondition (409 on mismatch);
- labels and annotations are owned key by key; `spec.taints` is an atomic list, owned
  whole (`x-kubernetes-list-type: atomic`);
- an apply sets what it names and becomes an owner; a changed value takes the field from
  its other owners only with `force=true` (else 409); a field the manager owned before
  and leaves out loses that owner, and is removed when no owner is left;
- `update` writes as a non-apply manager does (kubectl taint, the node controller).

`fail_after` patches succeed, then every request answers 500 (an API failing half way);
`race` runs before the next apply is checked (another writer between read and write);
`drop_taints` makes every apply keep all but the taint list, and answer 200 (as a
mutating webhook or policy engine that strips taints from writes would).
Everything else kube-apiserver does is out of scope: tests/realserver/test_cp_quarantine.py
runs the same archives against real Nodes (where admission also adds the not-ready taint).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubehttp import Received, status

Field = tuple[str, ...]  # ("labels", key), ("annotations", key) or ("taints",)


@dataclass
class FakeNodes:
    """Nodes, their fields' owners, and the requests seen."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    owners: dict[tuple[str, Field], set[str]] = field(default_factory=dict)
    seen: list[Received] = field(default_factory=list)
    fail_after: int | None = None
    race: Callable[[FakeNodes], None] | None = None
    drop_taints: bool = False
    version: int = 100

    def add(self, name: str, labels: dict[str, str], taints: list[dict[str, str]]) -> None:
        self.nodes[name] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {}, "annotations": {}},
            "spec": {},
        }
        self.update(name, "kubelet", labels=labels, taints=taints or None)

    def update(
        self,
        name: str,
        manager: str,
        *,
        labels: dict[str, str] | None = None,
        taints: list[dict[str, str]] | None = None,
    ) -> None:
        node = self.nodes[name]
        for key, value in (labels or {}).items():
            node["metadata"]["labels"][key] = value
            self.owners[name, ("labels", key)] = {manager}
        if taints is not None:
            node["spec"]["taints"] = copy.deepcopy(taints)
            self.owners[name, ("taints",)] = {manager}
        self._bump(node)

    def handle(self, request: Received) -> tuple[int, Any, dict[str, str]]:
        self.seen.append(request)
        patches = sum(1 for r in self.seen[:-1] if r.method == "PATCH")
        if self.fail_after is not None and patches >= self.fail_after:
            return 500, status(500, "InternalError", "etcdserver: request timed out"), {}
        name = request.path.removeprefix("/api/v1/nodes/")
        if name not in self.nodes:
            return 404, status(404, "NotFound", f'nodes "{name}" not found'), {}
        if request.method == "GET":
            return 200, copy.deepcopy(self.nodes[name]), {}
        if request.method != "PATCH" or request.content_type != "application/apply-patch+yaml":
            return 415, status(415, "UnsupportedMediaType", "apply patches only"), {}
        if self.race is not None:
            race, self.race = self.race, None
            race(self)
        return self._apply(name, request)

    def _apply(self, name: str, request: Received) -> tuple[int, Any, dict[str, str]]:
        node, body = self.nodes[name], request.body
        manager = request.query["fieldManager"][0]
        force = request.query.get("force") == ["true"]
        wanted = body["metadata"].get("resourceVersion")
        if wanted is not None and wanted != node["metadata"]["resourceVersion"]:
            return 409, status(409, "Conflict", "the object has been modified"), {}
        applied = _fields(body)
        if self.drop_taints:
            applied.pop(("taints",), None)
        for (kind, *key), value in applied.items():
            others = self.owners.get((name, (kind, *key)), set()) - {manager}
            if others and _value(node, (kind, *key)) != value and not force:
                return 409, status(409, "Conflict", f"conflict with {sorted(others)}"), {}
        for path, value in applied.items():
            owners = self.owners.setdefault((name, path), set())
            if _value(node, path) != value:
                owners.clear()
                _set(node, path, value)
            owners.add(manager)
        for (node_name, path), owners in list(self.owners.items()):
            if node_name == name and manager in owners and path not in applied:
                owners.discard(manager)
                if not owners:
                    _set(node, path, None)
                    del self.owners[node_name, path]
        self._bump(node)
        return 200, copy.deepcopy(node), {}

    def _bump(self, node: dict[str, Any]) -> None:
        self.version += 1
        node["metadata"]["resourceVersion"] = str(self.version)


def _fields(body: dict[str, Any]) -> dict[Field, Any]:
    meta = body.get("metadata", {})
    found: dict[Field, Any] = {}
    for part in ("labels", "annotations"):
        for key, value in (meta.get(part) or {}).items():
            found[part, key] = value
    if "taints" in (body.get("spec") or {}):
        found["taints",] = body["spec"]["taints"]
    return found


def _value(node: dict[str, Any], path: Field) -> Any:
    if path[0] == "taints":
        return node["spec"].get("taints")
    return node["metadata"][path[0]].get(path[1])


def _set(node: dict[str, Any], path: Field, value: Any) -> None:
    if path[0] == "taints":
        if value:
            node["spec"]["taints"] = copy.deepcopy(value)
        else:
            node["spec"].pop("taints", None)
    elif value is None:
        node["metadata"][path[0]].pop(path[1], None)
    else:
        node["metadata"][path[0]][path[1]] = value
