"""Argo CD's GitOps layer: an AppProject, an Application per layer, the parent `<site>-gitops`.

Argo CD orders the layers with sync waves and an AppProject restricted to the repository,
the in-cluster server, the namespaces the layers use and the cluster-scoped kinds they
create; with `readiness.trigger: manual` the readiness Application has no automated sync.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nvcregen.catalog.charts import ChartEntry
from nvcregen.compile.gitops.common import (
    COMPONENT,
    gitops_object,
    layer_path,
    manual_trigger,
    object_metadata,
)
from nvcregen.compile.gitops.steps import SYNC_WAVE
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.engines.gitops.argocd.project import project_scope
from nvcregen.spec.v1alpha1 import Site

ARGOCD_API = "argoproj.io/v1alpha1"
ARGOCD_NAMESPACE = "argocd"
IN_CLUSTER = "https://kubernetes.default.svc"
# Lower waves first; the project exists before any Application names it.
LAYER_WAVES = {
    "project": -3,
    "crds": -2,
    "platform": -1,
    "queues": 0,
    "monitoring": 1,
    "readiness": 2,
    "periodic": 3,
}
# The parent `<site>-gitops` applies the layer Applications wave by wave and waits for each
# to be healthy (the Application health check in argocd-cm). What health cannot cover is
# retried: a webhook's Service answering a moment after its pods are ready, or the layers
# applied without the parent. The longest of those waits is Kueue's: the queues layer and
# every run pass its webhooks, and Kueue is ready only once they serve (cmd/kueue/main.go:
# readyz waits for its certificates and the webhook server); a manager whose certificates
# are not ready is restarted after 15 s + 3 x 20 s by its liveness probe, and an image pull
# comes first. The retries span at least KUEUE_WEBHOOK_START_S: 10 s doubling, at most 3 m.
KUEUE_WEBHOOK_START_S = 600
RETRY_FIRST_S, RETRY_FACTOR, RETRY_MAX_S = 10, 2, 180


def retry_span_s(limit: int) -> int:
    """How long `limit` retries with nvcregen's backoff keep trying, in seconds."""
    return sum(min(RETRY_FIRST_S * RETRY_FACTOR**n, RETRY_MAX_S) for n in range(limit))


RETRY_LIMIT = next(n for n in range(1, 64) if retry_span_s(n) >= KUEUE_WEBHOOK_START_S)
RETRY: Obj = {
    "limit": RETRY_LIMIT,
    "backoff": {
        "duration": f"{RETRY_FIRST_S}s",
        "factor": RETRY_FACTOR,
        "maxDuration": f"{RETRY_MAX_S // 60}m",
    },
}


def argocd_layer(
    site: Site, present: list[str], layers: Sequence[Manifest], charts: Mapping[str, ChartEntry]
) -> list[Manifest]:
    """The AppProject, an Application per present layer, and the parent applying them."""
    project = _app_project(site, present, layers, charts)
    apps = [_application(site, layer) for layer in present]
    return [project, *apps, _parent(site)]


def parent_name(site: Site) -> str:
    """`<site>-gitops`: the Application that applies `gitops/` (Flux has a namesake)."""
    return f"{site.metadata.name}-gitops"


def _parent(site: Site) -> Manifest:
    """`<site>-gitops`: applies the project and the layer Applications in wave order.

    It applies `gitops/` except itself (an Application that deletes itself is never what
    anyone wants). Its waves are the layers' `sync-wave`s; with the Application health
    check in argocd-cm (`health/application.lua`) each wave waits until the layers before it
    are synced and healthy, so queues start only once Kueue's webhook serves. Never pruned:
    deleting a layer Application would delete the layer.
    """
    gitops = site.spec.gitops
    name = parent_name(site)
    spec: Obj = {
        "project": site.metadata.name,
        "source": {
            "repoURL": gitops.repo_url,
            "targetRevision": gitops.target_revision,
            "path": layer_path(site, COMPONENT),
            "directory": {"exclude": f"application-{name}.yaml"},
        },
        "destination": {"server": IN_CLUSTER, "namespace": ARGOCD_NAMESPACE},
        "syncPolicy": {
            "automated": {"prune": False, "selfHeal": True},
            "syncOptions": ["Prune=false"],
            "retry": RETRY,
        },
    }
    obj = {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        "metadata": object_metadata(name, ARGOCD_NAMESPACE),
        "spec": spec,
    }
    note = "applies gitops/ (itself excluded) wave by wave, each layer healthy before the next"
    return gitops_object(obj, (note,))


def _wave(key: str) -> dict[str, str]:
    return {SYNC_WAVE: str(LAYER_WAVES[key])}  # annotations are strings: a quoted "-2"


def _app_project(
    site: Site, present: list[str], layers: Sequence[Manifest], charts: Mapping[str, ChartEntry]
) -> Manifest:
    name = site.metadata.name
    repo = site.spec.gitops.repo_url
    assert repo is not None
    own = [m for m in layers if m.component in present]
    scope = project_scope(site, present, own, charts)
    scope.namespaces.add(ARGOCD_NAMESPACE)  # `<site>-gitops` applies the project and layers
    destinations = [{"server": IN_CLUSTER, "namespace": ns} for ns in sorted(scope.namespaces)]
    spec: Obj = {
        "description": f"nvcregen: GPU readiness of site {name}",
        "sourceRepos": sorted({repo, *scope.repos}),
        "destinations": destinations,
    }
    if scope.cluster_kinds:
        spec["clusterResourceWhitelist"] = [
            {"group": group, "kind": kind} for group, kind in sorted(scope.cluster_kinds)
        ]
    obj = {
        "apiVersion": ARGOCD_API,
        "kind": "AppProject",
        "metadata": object_metadata(name, ARGOCD_NAMESPACE, _wave("project")),
        "spec": spec,
    }
    return gitops_object(obj, tuple(scope.notes))


def _application(site: Site, component: str) -> Manifest:
    gitops = site.spec.gitops
    sync: Obj = {}
    if not manual_trigger(site, component):
        # CRDs are never pruned: deleting one deletes every object of its kind.
        sync["automated"] = {"prune": component != "crds", "selfHeal": True}
    sync["syncOptions"] = _sync_options(component)
    sync["retry"] = RETRY
    spec: Obj = {
        "project": site.metadata.name,
        "source": {
            "repoURL": gitops.repo_url,
            "targetRevision": gitops.target_revision,
            "path": layer_path(site, component),
            "directory": {"recurse": True},
        },
        "destination": {"server": IN_CLUSTER, "namespace": site.spec.nvcre.namespace},
        "syncPolicy": sync,
    }
    notes: tuple[str, ...] = ()
    if manual_trigger(site, component):
        how = f"argocd app sync {site.metadata.name}-{component}"
        spec["info"] = [{"name": "trigger", "value": f"manual: start the tests with `{how}`"}]
        notes = ("readiness.trigger is manual: no automated sync",)
    name = f"{site.metadata.name}-{component}"
    obj = {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        "metadata": object_metadata(name, ARGOCD_NAMESPACE, _wave(component)),
        "spec": spec,
    }
    return gitops_object(obj, notes)


def _sync_options(component: str) -> list[str]:
    if component == "crds":
        # Several CRDs exceed the 262,144-byte annotation of client-side apply; never
        # replace (delete and recreate) a CRD.
        return ["ServerSideApply=true", "Replace=false"]
    if component == "readiness":
        # Kueue adds its own entry to a TrainJob's `runtimePatches` (a list keyed by
        # `manager`) and flips `spec.suspend`: a client-side apply replaces the list whole,
        # which Trainer refuses while the run is going and which strips Kueue's entry from
        # a queued one. Server-side apply merges per key and leaves other managers' fields
        # alone (docs/design/0006-stage-gating.md, "Applying runs twice").
        return ["ServerSideApply=true", "SkipDryRunOnMissingResource=true"]
    # This layer's CRDs come from another layer (or are installed outside nvcregen).
    return ["SkipDryRunOnMissingResource=true"]
