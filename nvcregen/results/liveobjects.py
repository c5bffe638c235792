"""Kubernetes objects as read back from a cluster or a folder: identity, labels, owners."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

CLUSTER_SCOPE = "_cluster"  # the namespace part of a cluster-scoped object's key


@dataclass(frozen=True, order=True)
class ObjectKey:
    """What names one object on a cluster: kind, namespace ("" when cluster-scoped), name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(frozen=True)
class ListRecord:
    """One complete listing: what was asked and the resourceVersion it was consistent at."""

    kind: str
    namespace: str | None
    label_selector: str
    resource_version: str
    items: int
    pages: int = 1
    restarts: int = 0
    served: bool = True


@dataclass(frozen=True)
class Snapshot:
    """Every object read, and where from.

    Attributes:
        objects: The objects as read (list items get the apiVersion and kind of their
            list when they lack them, as `kubectl get -o yaml` writes them).
        origin: "context NAME" or "folder PATH", for provenance.
        listings: The listings made on a cluster (empty for a folder).
        notes: Things worth saying that are not errors (a kind the cluster lacks).

    """

    objects: tuple[Obj, ...]
    origin: str
    listings: tuple[ListRecord, ...] = ()
    notes: tuple[str, ...] = field(default=())


def metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's metadata, or an empty mapping."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    """The kind, namespace and name of an object."""
    meta = metadata(obj)
    return ObjectKey(str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta["name"]))


def uid_of(obj: Mapping[str, Any]) -> str:
    """An object's metadata.uid ("" when it has none, as in hand-written exports)."""
    return str(metadata(obj).get("uid") or "")


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """An object's labels."""
    labels = metadata(obj).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def owner_uids(obj: Mapping[str, Any]) -> set[str]:
    """The uids of an object's owners."""
    refs = metadata(obj).get("ownerReferences")
    return {str(r.get("uid")) for r in refs or [] if isinstance(r, Mapping) and r.get("uid")}


def status_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's status, or an empty mapping."""
    status = obj.get("status")
    return status if isinstance(status, Mapping) else {}


def content_digest(objects: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 of objects as canonical JSON, in key order: same objects, same digest."""
    ordered = sorted(objects, key=key_of)
    text = json.dumps(ordered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
