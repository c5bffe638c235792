"""Label, annotate and order generated objects (pure)."""

from __future__ import annotations

import dataclasses
from typing import Any

from nvcregen.core.labels import PREFIX, SITE, SOURCE
from nvcregen.core.manifest import Manifest
from nvcregen.spec.v1alpha1 import Site

MANAGED_BY = {"app.kubernetes.io/managed-by": "nvcregen"}
# Readiness objects hold results until `nvcregen collect` has archived them, so no sync
# may prune them, nor may deleting their Argo CD Application delete them: Argo CD and
# Flux each have their own opt-out.
PRUNE_PROTECTION = {
    "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
    "kustomize.toolkit.fluxcd.io/prune": "disabled",
}
PROTECTED_COMPONENTS = frozenset({"readiness"})
KIND_ORDER = (
    "CustomResourceDefinition",
    "Namespace",
    "LogProfile",
    "Certification",
    "WorkloadRun",
    "TrainingRuntime",  # before the TrainJobs that reference it
    "TrainJob",
    "Job",
)


def postprocess(manifests: list[Manifest], site: Site, source_file: str) -> list[Manifest]:
    """Return labelled, annotated copies of `manifests` in a fixed kind-then-name order."""
    return ordered([_label(m, site, source_file) for m in manifests])


def ordered(manifests: list[Manifest]) -> list[Manifest]:
    """`manifests` in postprocess's order: layer, folder, kind (as `KIND_ORDER`), name."""
    return sorted(
        manifests, key=lambda m: (m.component, m.folder, _kind_rank(m.kind), m.kind, m.name)
    )


def _label(manifest: Manifest, site: Site, source_file: str) -> Manifest:
    if not manifest.owned:
        # A partial patch of someone else's object: our labels would fight its owner's.
        return manifest
    # A new object and metadata; everything else is shared with the compiled object, which
    # nothing changes after this (a deep copy per object was a sixth of a fleet's render).
    meta = dict(manifest.obj["metadata"])
    obj = {**manifest.obj, "metadata": meta}
    labels = {**MANAGED_BY, SITE: site.metadata.name}
    labels.update(_workload_labels(obj))
    meta["labels"] = {**meta.get("labels", {}), **labels}
    annotations = {SOURCE: f"{source_file}#{manifest.source}"}
    # Deleting a namespace deletes the readiness objects in it, so namespaces are protected too.
    if manifest.component in PROTECTED_COMPONENTS or manifest.kind == "Namespace":
        annotations |= PRUNE_PROTECTION
    meta["annotations"] = {**meta.get("annotations", {}), **annotations}
    return dataclasses.replace(manifest, obj=obj)


def _workload_labels(obj: dict[str, Any]) -> dict[str, str]:
    """The nvcregen labels put on an object's TrainJobs, so the object carries them too."""
    labels = obj.get("spec", {}).get("workloadMetadata", {}).get("labels", {})
    return {k: v for k, v in labels.items() if k.startswith(PREFIX)}


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
