"""What every GitOps engine's objects share: the layers, their folders, object scaffolding."""

from __future__ import annotations

from nvcregen.core.manifest import Manifest, Obj
from nvcregen.spec.v1alpha1 import Site

COMPONENT = "gitops"
# The layers GitOps applies, in order: the one list (`compile/layers.py` builds them).
# "preview" (NVCRE mode: what NVCRE will create, for review) is written to
# out/<site>/preview/ but is deliberately not one of them.
LAYERS = ("crds", "platform", "queues", "monitoring", "readiness", "periodic")
SOURCE = "/spec/gitops"
STARTS_GPU_WORK = frozenset({"readiness", "periodic"})


def site_path(site: Site) -> str:
    """The repository path of the site's output folder: `gitops.path` or `out/<site>`."""
    base = site.spec.gitops.path or f"out/{site.metadata.name}"
    return base.removeprefix("./").rstrip("/")


def layer_path(site: Site, component: str) -> str:
    """The repository path of one output layer: `<gitops.path or out/<site>>/<component>`."""
    return f"{site_path(site)}/{component}"


def gitops_object(obj: Obj, notes: tuple[str, ...] = ()) -> Manifest:
    """An object of the GitOps layer, made from `spec.gitops`."""
    return Manifest(obj, COMPONENT, SOURCE, (), notes)


def object_metadata(name: str, namespace: str, annotations: dict[str, str] | None = None) -> Obj:
    """An object's name, namespace and (if any) annotations."""
    meta: Obj = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return meta


def manual_trigger(site: Site, component: str) -> bool:
    """Whether the layer waits for an operator to start it (`readiness.trigger: manual`).

    The periodic layer follows the trigger too: its CronJobs start GPU work.
    """
    return component in STARTS_GPU_WORK and site.spec.readiness.trigger == "manual"
