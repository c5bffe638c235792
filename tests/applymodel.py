"""A small model of how the API server applies an object: client-side and server-side.

Enough of `kubectl apply` (client-side, the last-applied annotation) and of server-side
apply (field managers) to replay a GitOps controller's second sync of an object as Kueue and
Trainer leave it (issue 19, item 1). It is a model, kept small on purpose; a later issue
replays the same cases on a real kube-apiserver. What it follows:

- **Client-side apply** (kubectl's three-way merge, what Argo CD does without
  `ServerSideApply=true`): the patch deletes what the last-applied annotation had and the
  new manifest has not, and sets every field of the manifest that differs from the live
  object. Custom resources get a JSON merge patch (RFC 7386: every list is replaced whole);
  built-in kinds a strategic merge patch, whose lists merge by key only where the
  Kubernetes types say so (`x-kubernetes-patch-strategy: merge` and its merge key).
- **Server-side apply** (Argo CD with `ServerSideApply=true`, Flux's kustomize-controller
  always): every leaf field has owners (`managedFields`). A list is merged per item when the
  schema declares `x-kubernetes-list-type: map` (items keyed by `x-kubernetes-list-map-keys`),
  otherwise it is one atomic field; so is a map with `x-kubernetes-map-type: atomic`.
  Applying a value another manager owns is a conflict; `force` (what both controllers
  use) takes the field over. A field the applier owned and no longer applies is removed
  unless another manager owns it too. An update (a controller's PUT or PATCH) takes over
  every field whose value it changes. A mutating webhook's changes are owned by nobody:
  the API server records managed fields before mutating admission
  (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`, kubernetes#87672).
- **Admission**: the rules that make a changed field a failed sync: Trainer v2.2.1 refuses a
  `runtimePatches` change unless the TrainJob is suspended before or after it
  (`pkg/runtime/framework/plugins/jobset/jobset.go`, `checkRuntimePatchesImmutability`);
  a batch/v1 Job's pod template is immutable once it may have started (it is mutable only
  while suspended and never started); NVCRE's specs are immutable (`self == oldSelf`); a
  Kueue Workload's pod sets are immutable once it holds quota (`workload_webhook.go`).

Not modelled: defaulting (the same either way here), `managedFields` timestamps and
operations, conversion between versions, `$patch` directives beyond deleting list items,
`retainKeys`, sets (`x-kubernetes-list-type: set`), and the server's own schema fetching.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from nvcregen.kubeschema import builtin

Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ROOT = Path(__file__).resolve().parent.parent
_CRDS = {
    ("trainer.kubeflow.org", "TrainJob"): (
        "kubeflow-trainer/v2.2.1/crds/trainer.kubeflow.org_trainjobs.yaml"
    ),
    ("trainer.kubeflow.org", "TrainingRuntime"): (
        "kubeflow-trainer/v2.2.1/crds/trainer.kubeflow.org_trainingruntimes.yaml"
    ),
    ("kueue.x-k8s.io", "Workload"): "kueue/v0.19.2/crds/kueue.x-k8s.io_workloads.yaml",
}
_IMMUTABLE_SPEC = frozenset({"Certification", "WorkloadRun"})


class RejectedError(Exception):
    """The API server refused the request (admission, validation or a field conflict)."""


# --- schema ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One schema node, resolved: what a field's value merges like."""

    raw: Mapping[str, Any]
    defs: Mapping[str, Any]

    def _resolved(self) -> Mapping[str, Any]:
        node = self.raw
        while True:
            ref = node.get("$ref")
            if ref is None and node.get("allOf"):
                ref = node["allOf"][0].get("$ref")
            if ref is None:
                return node
            node = self.defs[str(ref).rsplit("/", 1)[-1]]

    def child(self, key: str) -> Node:
        node = self._resolved()
        props = node.get("properties") or {}
        if key in props:
            return Node(props[key], self.defs)
        extra = node.get("additionalProperties")
        return Node(extra if isinstance(extra, Mapping) else {}, self.defs)

    def item(self) -> Node:
        items = self._resolved().get("items")
        return Node(items if isinstance(items, Mapping) else {}, self.defs)

    def ext(self, name: str) -> Any:
        return self.raw.get(name, self._resolved().get(name))

    def map_keys(self) -> tuple[str, ...] | None:
        """The keys of a list merged per item by server-side apply (`listType: map`)."""
        if self.ext("x-kubernetes-list-type") == "map":
            return tuple(self.ext("x-kubernetes-list-map-keys") or ())
        return None

    def merge_key(self) -> str | None:
        """The key a strategic merge patch merges this list's items by, if it does."""
        if "merge" in str(self.ext("x-kubernetes-patch-strategy") or "").split(","):
            return str(self.ext("x-kubernetes-patch-merge-key"))
        return None

    def atomic_map(self) -> bool:
        return bool(self.ext("x-kubernetes-map-type") == "atomic")


@cache
def _core_defs() -> Mapping[str, Any]:
    root = builtin.schema_root()
    assert root is not None, "kubernetes-validate's schemas are needed"
    folder = sorted(root.glob("v*-local-strict"), key=_minor)[-1]
    defs: Mapping[str, Any] = json.loads((folder / "_definitions.json").read_text())["$defs"]
    return defs


def _minor(path: Path) -> int:
    return int(path.name.split(".")[1])


@cache
def schema(group: str, kind: str) -> Node:
    """The schema objects of a kind merge by: the vendored CRD, or the core schema."""
    if (group, kind) in _CRDS:
        text = (ROOT / "schemas/upstream" / _CRDS[(group, kind)]).read_text()
        crd = yaml.safe_load(text)
        stored = next(v for v in crd["spec"]["versions"] if v.get("storage", True))
        return Node(stored["schema"]["openAPIV3Schema"], {})
    if group == "batch" and kind == "Job":
        return Node({"$ref": "#/$defs/io.k8s.api.batch.v1.Job"}, _core_defs())
    return Node({}, {})  # schemaless: maps merge per key, lists are atomic


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    api = str(obj.get("apiVersion", ""))
    return (api.rsplit("/", 1)[0] if "/" in api else "", str(obj.get("kind", "")))


def _custom(obj: Mapping[str, Any]) -> bool:
    group, _ = _group_kind(obj)
    return "." in group and not group.endswith(".k8s.io")


# --- field paths -------------------------------------------------------------------------

Path_ = tuple[Any, ...]  # map keys (str) and list-map items ("k", ((key, value), ...))


def leaves(value: Any, node: Node, prefix: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every field server-side apply tracks in `value`, with its value."""
    if isinstance(value, dict) and value and not node.atomic_map():
        for key, sub in value.items():
            yield from leaves(sub, node.child(key), (*prefix, key))
    elif isinstance(value, list) and value and (keys := node.map_keys()) is not None:
        for item in value:
            ident = ("k", tuple((k, item.get(k)) for k in keys))
            yield from leaves(item, node.item(), (*prefix, ident))
    else:
        yield prefix, value


def _schema_at(root: Node, path: Path_) -> Node:
    node = root
    for step in path:
        node = node.item() if isinstance(step, tuple) else node.child(step)
    return node


def _find(items: list[Any], ident: tuple[str, tuple[tuple[str, Any], ...]]) -> int | None:
    for index, item in enumerate(items):
        if isinstance(item, dict) and all(item.get(k) == v for k, v in ident[1]):
            return index
    return None


def _remove(obj: Obj, path: Path_) -> None:
    """Remove one leaf; containers it leaves empty go too, as the server prunes them."""
    trail: list[tuple[Any, Any]] = []
    here: Any = obj
    for step in path:
        if isinstance(step, tuple):
            index = _find(here, step) if isinstance(here, list) else None
            if index is None:
                return
            trail.append((here, index))
            here = here[index]
        else:
            if not isinstance(here, dict) or step not in here:
                return
            trail.append((here, step))
            here = here[step]
    for container, key in reversed(trail):
        del container[key]
        if container:
            break


# --- server-side apply -------------------------------------------------------------------


@dataclass
class Live:
    """An object as the API server keeps it: the value and who owns which field."""

    obj: Obj
    owners: dict[str, set[Path_]] = field(default_factory=dict)

    def node(self) -> Node:
        return schema(*_group_kind(self.obj))

    def fields(self) -> dict[Path_, Any]:
        return dict(leaves(self.obj, self.node()))

    def owned_by(self, manager: str) -> set[Path_]:
        return self.owners.setdefault(manager, set())


def _merge(live: Any, config: Any, node: Node) -> Any:
    """Server-side apply's merge of an applied configuration into the live value."""
    if isinstance(live, dict) and isinstance(config, dict) and not node.atomic_map():
        merged = dict(live)
        for key, value in config.items():
            merged[key] = _merge(live.get(key), value, node.child(key))
        return merged
    keys = node.map_keys()
    if isinstance(live, list) and isinstance(config, list) and keys is not None:
        merged_list = list(live)
        for item in config:
            index = _find(merged_list, ("k", tuple((k, item.get(k)) for k in keys)))
            if index is None:
                merged_list.append(copy.deepcopy(item))
            else:
                merged_list[index] = _merge(merged_list[index], item, node.item())
        return merged_list
    return copy.deepcopy(config)


def server_side_apply(live: Live | None, config: Obj, manager: str, *, force: bool) -> Live:
    """Apply `config` as `manager`; returns the new object (admission included)."""
    if live is None:
        created = Live(copy.deepcopy(config))
        created.owned_by(manager).update(path for path, _ in leaves(config, created.node()))
        return created
    node = live.node()
    applied = dict(leaves(config, node))
    current = live.fields()
    new = Live(copy.deepcopy(live.obj), {m: set(p) for m, p in live.owners.items()})
    for path, value in applied.items():
        others = [m for m, paths in new.owners.items() if m != manager and path in paths]
        if others and path in current and current[path] != value:
            if not force:
                raise RejectedError(f"conflict with {others} on {_show(path)}")
            for other in others:
                new.owners[other].discard(path)
    shared = set().union(*(p for m, p in new.owners.items() if m != manager))
    # deepest first: an item of a keyed list goes with its key fields, which are shallowest
    for path in sorted(new.owned_by(manager) - set(applied) - shared, key=len, reverse=True):
        _remove(new.obj, path)
    new.obj = _merge(new.obj, config, node)
    new.owners[manager] = set(applied)
    admit(live.obj, new.obj)
    return new


def update(live: Live, obj: Obj, manager: str) -> Live:
    """A controller's update: it owns every field whose value it changes."""
    before = live.fields()
    new = Live(copy.deepcopy(obj), {m: set(p) for m, p in live.owners.items()})
    after = new.fields()
    changed = {p for p, v in after.items() if before.get(p, _MISSING) != v}
    gone = set(before) - set(after)
    for manager_fields in new.owners.values():
        manager_fields.difference_update(changed | gone)
    new.owned_by(manager).update(changed)
    admit(live.obj, new.obj)
    return new


def mutate(live: Live, obj: Obj) -> Live:
    """A mutating webhook's change on create: nobody owns what it set."""
    return Live(copy.deepcopy(obj), {m: set(p) for m, p in live.owners.items()})


_MISSING = object()


def _show(path: Path_) -> str:
    return "/".join(f"[{dict(s[1])}]" if isinstance(s, tuple) else str(s) for s in path)


# --- client-side apply -------------------------------------------------------------------


def client_side_apply(live: Live | None, config: Obj) -> Live:
    """kubectl's client-side apply of `config` over `live` (three-way merge)."""
    desired = copy.deepcopy(config)
    desired.setdefault("metadata", {}).setdefault("annotations", {})[LAST_APPLIED] = json.dumps(
        config, sort_keys=True
    )
    if live is None:
        return Live(desired)
    annotations = (live.obj.get("metadata") or {}).get("annotations") or {}
    original = json.loads(annotations.get(LAST_APPLIED, "{}"))
    strategic = not _custom(config)
    node = live.node()
    patch = _three_way(original, desired, live.obj, node, strategic=strategic)
    if not patch:
        return live
    new = Live(_patched(live.obj, patch, node, strategic=strategic), live.owners)
    admit(live.obj, new.obj)
    return new


def _three_way(original: Any, modified: Obj, current: Any, node: Node, *, strategic: bool) -> Obj:
    patch: Obj = {}
    original = original if isinstance(original, dict) else {}
    current = current if isinstance(current, dict) else {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, want in modified.items():
        have = current.get(key, _MISSING)
        sub = node.child(key)
        if isinstance(want, dict) and isinstance(have, dict):
            nested = _three_way(original.get(key), want, have, sub, strategic=strategic)
            if nested:
                patch[key] = nested
        elif strategic and isinstance(want, list) and isinstance(have, list) and sub.merge_key():
            items = _list_patch(original.get(key), want, have, sub)
            if items:
                patch[key] = items
        elif have != want:
            patch[key] = copy.deepcopy(want)
    return patch


def _list_patch(original: Any, want: list[Any], have: list[Any], node: Node) -> list[Any]:
    key = node.merge_key()
    assert key is not None
    kept = {item.get(key) for item in want}
    items: list[Any] = [
        {key: item.get(key), "$patch": "delete"}
        for item in (original if isinstance(original, list) else [])
        if item.get(key) not in kept
    ]
    for item in want:
        index = _find(have, ("k", ((key, item.get(key)),)))
        if index is None:
            items.append(copy.deepcopy(item))
            continue
        old = next((o for o in original or [] if o.get(key) == item.get(key)), None)
        nested = _three_way(old, item, have[index], node.item(), strategic=True)
        if nested:
            items.append({key: item.get(key), **nested})
    return items


def _patched(current: Any, patch: Obj, node: Node, *, strategic: bool) -> Obj:
    result = dict(current) if isinstance(current, dict) else {}
    for key, value in patch.items():
        sub = node.child(key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = _patched(result.get(key), value, sub, strategic=strategic)
        elif strategic and isinstance(value, list) and sub.merge_key():
            result[key] = _patched_list(result.get(key) or [], value, sub)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _patched_list(current: list[Any], items: list[Any], node: Node) -> list[Any]:
    key = node.merge_key()
    result = copy.deepcopy(current)
    for item in items:
        index = _find(result, ("k", ((str(key), item.get(key)),)))
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
        elif index is None:
            result.append(copy.deepcopy(item))
        else:
            result[index] = _patched(result[index], item, node.item(), strategic=True)
    return result


# --- admission ---------------------------------------------------------------------------


def admit(old: Obj, new: Obj) -> None:
    """The validation an update of `old` to `new` goes through; RejectedError if refused."""
    kind = str(new.get("kind"))
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if kind in _IMMUTABLE_SPEC and old_spec != new_spec:
        raise RejectedError(f"{kind}: spec is immutable after creation")
    patches_changed = old_spec.get("runtimePatches") != new_spec.get("runtimePatches")
    suspended = old_spec.get("suspend") is True or new_spec.get("suspend") is True
    if kind == "TrainJob" and patches_changed and not suspended:
        raise RejectedError(
            "TrainJob: spec.runtimePatches: RuntimePatches can only be modified when the "
            "TrainJob is suspended before or after the update"
        )
    if kind == "Workload" and old_spec.get("podSets") != new_spec.get("podSets"):
        conditions = (old.get("status") or {}).get("conditions") or []
        reserved = any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in conditions)
        if reserved:  # Kueue's workload_webhook.go, ValidateWorkloadUpdate
            raise RejectedError("Workload: spec.podSets: field is immutable")
    if kind == "Job" and old_spec.get("template") != new_spec.get("template"):
        started = (old.get("status") or {}).get("startTime") is not None
        if old_spec.get("suspend") is not True or started:
            raise RejectedError("Job: spec.template: field is immutable")
