"""The in-memory form of one generated object and where it came from."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Manifest:
    """A generated Kubernetes object, the output layer it belongs to, and its origins.

    Attributes:
        obj: The object.
        component: Its output layer (`out/<site>/<component>/`).
        source: The site pointer it comes from.
        catalog: The catalog files it comes from.
        notes: How it was derived, for `index.json`.
        folder: A folder inside the layer ("" for none), e.g. a readiness stage's
            `01-single-node` (`nvcregen.compile.gitops.steps`).
        owned: False for a partial object that patches one nvcregen does not own (Argo
            CD's `argocd-cm`): it gets none of nvcregen's labels or annotations.

    """

    obj: Obj
    component: str
    source: str
    catalog: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    folder: str = ""
    owned: bool = True

    @property
    def kind(self) -> str:
        """The object's kind."""
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        """The object's metadata.name."""
        return str(self.obj["metadata"]["name"])


def content_hash(value: object, length: int = 8) -> str:
    """Return a short, stable hash of JSON-like data (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def hashed_name(parts: list[str], digest: str, max_length: int) -> str:
    """Join name parts and a content hash into a DNS label of at most `max_length` chars.

    The readable prefix is cut (at a '-' boundary where possible) to leave room for the
    hash, which keeps names unique: specs are immutable upstream, so a changed spec must
    be a new object.
    """
    room = max_length - len(digest) - 1
    prefix = "-".join(p for p in parts if p)
    if len(prefix) > room:
        cut = prefix[:room]
        prefix = cut.rsplit("-", 1)[0] if "-" in cut[room // 2 :] else cut
    return f"{prefix.strip('-')}-{digest}"
