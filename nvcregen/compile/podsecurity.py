"""Label every generated Namespace with the Pod Security level its pods need (pure).

The level comes from the objects the site puts in that namespace (`nvcregen.core.podsecurity`):
`privileged` where a readiness pod adds `IPC_LOCK`, runs privileged or on the host
network (and wherever NVCRE runs its catalog's MPI pods), else `baseline`. Namespaces
holding only what a chart installs (Trainer's, Kueue's) get `baseline`: their
controllers need no more. The version is pinned to the site's Kubernetes minor, so a
cluster upgrade does not change what is enforced.
"""

from __future__ import annotations

from dataclasses import replace

from nvcregen.core.manifest import Manifest
from nvcregen.core.podsecurity import namespace_labels, needed_level, rank
from nvcregen.spec.v1alpha1 import Site

DEFAULT_LEVEL = "baseline"


def label_namespaces(site: Site, manifests: list[Manifest]) -> list[Manifest]:
    """The manifests, each generated Namespace labelled with its pods' level."""
    levels: dict[str, str] = {}
    for manifest in manifests:
        namespace = (manifest.obj.get("metadata") or {}).get("namespace")
        needed = needed_level(manifest.obj)
        if namespace and needed is not None:
            current = levels.get(str(namespace), DEFAULT_LEVEL)
            levels[str(namespace)] = max(current, needed[0], key=rank)
    return [_labelled(site, m, levels) if m.kind == "Namespace" else m for m in manifests]


def _labelled(site: Site, manifest: Manifest, levels: dict[str, str]) -> Manifest:
    metadata = manifest.obj["metadata"]
    level = levels.get(str(metadata["name"]), DEFAULT_LEVEL)
    labels = {**(metadata.get("labels") or {}), **namespace_labels(level, _minor(site))}
    obj = {**manifest.obj, "metadata": {**metadata, "labels": labels}}
    note = f"pod-security.kubernetes.io/enforce: {level} (what its pods need)"
    return replace(manifest, obj=obj, notes=(*manifest.notes, note))


def _minor(site: Site) -> str:
    return site.spec.kubernetes.version
