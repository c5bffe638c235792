"""GitOps objects that apply `out/<site>/`: Argo CD or Flux, one per output layer (pure).

Each layer (`crds`, `platform`, `queues`, `monitoring`, `readiness`) present for a site gets one
Argo CD Application or Flux Kustomization reading `<gitops.path>/<layer>` from the site's
repository, applied in that order. Argo CD orders them with sync waves and an AppProject
restricted to the repository, the in-cluster server, the namespaces the layers use and the
cluster-scoped kinds they create; Flux chains them with `dependsOn`.

Readiness starts GPU work, so with `readiness.trigger: manual` its Application has no
automated sync and its Kustomization is suspended: an operator starts it. The CRD layer is
never pruned: deleting a CRD deletes every object of its kind, readiness results included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from nvcregen.catalog.charts import ChartEntry
from nvcregen.catalog.load import load_catalog
from nvcregen.compile.gitops.project import project_scope
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.engines.registry import gitops_of
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

COMPONENT = "gitops"
LAYERS = ("crds", "platform", "queues", "monitoring", "readiness")
SOURCE = "/spec/gitops"

ARGOCD_API = "argoproj.io/v1alpha1"
ARGOCD_NAMESPACE = "argocd"
IN_CLUSTER = "https://kubernetes.default.svc"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
# Lower waves first; the project exists before any Application names it.
WAVES = {"project": -3, "crds": -2, "platform": -1, "queues": 0, "monitoring": 1, "readiness": 2}
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

FLUX_SOURCE_API = "source.toolkit.fluxcd.io/v1"
# source-watcher (Flux >= 2.7): one ExternalArtifact per site, whose revision is the digest
# of the site's files, so a commit elsewhere in the repository never changes it.
FLUX_ARTIFACT_API = "source.extensions.fluxcd.io/v1beta1"
GIT_ALIAS = "repo"
_FLUX_SOURCES = {"artifact": "ExternalArtifact", "repository": "GitRepository"}
# Files of out/<site>/ that no controller applies: kept out of the artifact, so that only a
# change to what is applied changes its revision.
NOT_APPLIED = ("index.json", "images.txt")
FLUX_KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
FLUX_NAMESPACE = "flux-system"
GIT_INTERVAL = "5m"
KUSTOMIZE_INTERVAL = "10m"
RETRY_INTERVAL = "2m"
WAIT_TIMEOUT = "5m"
WAITED_LAYERS = frozenset({"crds", "platform"})
_NO_REPO = "no gitops.repoURL: no GitOps objects generated"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SCP = re.compile(r"^(?P<user>[^@/\s]+)@(?P<host>[^:/\s]+):(?P<path>\S+)$")


def gitops_manifests(
    site: Site,
    components: list[str],
    layers: Sequence[Manifest] = (),
    charts: Mapping[str, ChartEntry] | None = None,
) -> list[Manifest]:
    """Build the GitOps layer that applies a site's other layers.

    Args:
        site: The site.
        components: The output layers present for the site ("crds", "platform", "queues",
            "monitoring", "readiness"); they are applied in that order.
        layers: Those layers' manifests, if known: the Argo CD project then allows exactly
            their namespaces and cluster-scoped kinds (otherwise a per-layer default).
        charts: What each chart version installs (`Catalog.charts`; by default the shipped
            catalog's): the project also allows what the layers' Applications' charts create.

    Returns:
        Argo CD AppProject and Applications, or a Flux GitRepository and Kustomizations;
        nothing when the site has no `gitops.repoURL`.

    Raises:
        ValueError: A component is not one of the five layers.

    """
    unknown = sorted(set(components) - set(LAYERS))
    if unknown:
        raise ValueError(f"unknown output layers {unknown}; expected some of {list(LAYERS)}")
    if site.spec.gitops.repo_url is None:
        return []
    present = [layer for layer in LAYERS if layer in components]
    if gitops_of(site).kustomizations:
        return _flux(site, present)
    known = charts if charts is not None else load_catalog().charts
    return _argocd(site, present, layers, known)


def site_path(site: Site) -> str:
    """The repository path of the site's output folder: `gitops.path` or `out/<site>`."""
    base = site.spec.gitops.path or f"out/{site.metadata.name}"
    return base.removeprefix("./").rstrip("/")


def layer_path(site: Site, component: str) -> str:
    """The repository path of one output layer: `<gitops.path or out/<site>>/<component>`."""
    return f"{site_path(site)}/{component}"


def flux_path(site: Site, path: str) -> str:
    """A repository path as a Kustomization reads it: in the site's artifact, or the repo's."""
    if site.spec.gitops.flux_source == "repository":
        return f"./{path}"
    base = site_path(site)
    inside = path.removeprefix(f"{base}/") if base else path
    return f"./{inside}"


def _manifest(obj: Obj, notes: tuple[str, ...] = ()) -> Manifest:
    return Manifest(obj, COMPONENT, SOURCE, (), notes)


def _metadata(name: str, namespace: str, annotations: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return meta


def _manual(site: Site, component: str) -> bool:
    return component == "readiness" and site.spec.readiness.trigger == "manual"


# --- Argo CD -----------------------------------------------------------------------------


def _argocd(
    site: Site, present: list[str], layers: Sequence[Manifest], charts: Mapping[str, ChartEntry]
) -> list[Manifest]:
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
        "metadata": _metadata(name, ARGOCD_NAMESPACE),
        "spec": spec,
    }
    note = "applies gitops/ (itself excluded) wave by wave, each layer healthy before the next"
    return _manifest(obj, (note,))


def _wave(key: str) -> dict[str, str]:
    return {SYNC_WAVE: str(WAVES[key])}  # annotations are strings: a quoted "-2"


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
        "metadata": _metadata(name, ARGOCD_NAMESPACE, _wave("project")),
        "spec": spec,
    }
    return _manifest(obj, tuple(scope.notes))


def _application(site: Site, component: str) -> Manifest:
    gitops = site.spec.gitops
    sync: Obj = {}
    if not _manual(site, component):
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
    if _manual(site, component):
        how = f"argocd app sync {site.metadata.name}-{component}"
        spec["info"] = [{"name": "trigger", "value": f"manual: start the tests with `{how}`"}]
        notes = ("readiness.trigger is manual: no automated sync",)
    name = f"{site.metadata.name}-{component}"
    obj = {
        "apiVersion": ARGOCD_API,
        "kind": "Application",
        "metadata": _metadata(name, ARGOCD_NAMESPACE, _wave(component)),
        "spec": spec,
    }
    return _manifest(obj, notes)


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


# --- Flux --------------------------------------------------------------------------------


def _flux(site: Site, present: list[str]) -> list[Manifest]:
    manifests = [_git_repository(site)]
    if site.spec.gitops.flux_source == "artifact":
        manifests.append(_artifact_generator(site))
    previous: str | None = None
    for layer in present:
        manifests.append(_kustomization(site, layer, previous))
        previous = layer
    return manifests


def flux_ref(target_revision: str) -> Obj:
    """The GitRepository `ref` for an Argo-CD-style target revision."""
    if _COMMIT.match(target_revision):
        return {"commit": target_revision}
    if target_revision.startswith("refs/"):
        return {"name": target_revision}
    return {"branch": target_revision}


def _git_repository(site: Site) -> Manifest:
    gitops = site.spec.gitops
    spec: Obj = {
        "interval": GIT_INTERVAL,
        "url": gitops.repo_url,
        "ref": flux_ref(gitops.target_revision),
    }
    if gitops.secret_ref:
        spec["secretRef"] = {"name": gitops.secret_ref}
    obj = {
        "apiVersion": FLUX_SOURCE_API,
        "kind": "GitRepository",
        "metadata": _metadata(site.metadata.name, FLUX_NAMESPACE),
        "spec": spec,
    }
    return _manifest(obj)


def _artifact_generator(site: Site) -> Manifest:
    """The site's folder of the repository as an ExternalArtifact named after the site.

    source-watcher rebuilds it at every new commit of the GitRepository but gives it the
    revision `latest@sha256:<digest of its files>`: a commit that changes no file of this
    site leaves the revision as it was, so no Kustomization of the site sees a new one
    and a running plan is not stopped (docs/design/0006-stage-gating.md).
    """
    base = site_path(site)
    copy: Obj = {
        "from": f"@{GIT_ALIAS}/{base}/**" if base else f"@{GIT_ALIAS}/**",
        "to": "@artifact/",
        "exclude": list(NOT_APPLIED),
    }
    spec: Obj = {
        "sources": [{"alias": GIT_ALIAS, "kind": "GitRepository", "name": site.metadata.name}],
        "artifacts": [{"name": site.metadata.name, "copy": [copy]}],
    }
    obj = {
        "apiVersion": FLUX_ARTIFACT_API,
        "kind": "ArtifactGenerator",
        "metadata": _metadata(site.metadata.name, FLUX_NAMESPACE),
        "spec": spec,
    }
    note = (
        f"the ExternalArtifact {site.metadata.name}: {base or 'the repository'} only, revised "
        "only when its files change; needs source-watcher and kustomize-controller's "
        "ExternalArtifact feature gate"
    )
    return _manifest(obj, (note,))


def flux_spec(site: Site, path: str, *, prune: bool = True) -> Obj:
    """What every Flux Kustomization of a site has: a folder of the site's ExternalArtifact.

    `path` is the folder's path in the repository; the artifact holds the site's folder only.
    """
    return {
        "interval": KUSTOMIZE_INTERVAL,
        "retryInterval": RETRY_INTERVAL,
        "path": flux_path(site, path),
        "prune": prune,
        "sourceRef": {
            "kind": _FLUX_SOURCES[site.spec.gitops.flux_source],
            "name": site.metadata.name,
        },
    }


def _kustomization(site: Site, component: str, previous: str | None) -> Manifest:
    name = site.metadata.name
    # CRDs are never pruned: deleting one deletes every object of its kind.
    spec = flux_spec(site, layer_path(site, component), prune=component != "crds")
    if previous is not None:
        spec["dependsOn"] = [{"name": f"{name}-{previous}"}]
    if component in WAITED_LAYERS:
        spec |= {"wait": True, "timeout": WAIT_TIMEOUT}
    notes: tuple[str, ...] = ()
    if _manual(site, component):
        spec["suspend"] = True
        how = f"flux resume kustomization -n {FLUX_NAMESPACE} {name}-{component}"
        notes = (f"readiness.trigger is manual: suspended; start the tests with `{how}`",)
    obj = {
        "apiVersion": FLUX_KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": _metadata(f"{name}-{component}", FLUX_NAMESPACE),
        "spec": spec,
    }
    return _manifest(obj, notes)


# --- Semantic checks ---------------------------------------------------------------------


def check_gitops(site: Site, doc: Document) -> list[Diagnostic]:
    """Problems of `spec.gitops` that would make the GitOps objects useless or rejected.

    NVC340 (warning): no repoURL, so nothing is generated. NVC341 (error): the engine's
    CRD rejects the repoURL. NVC342 (error): Flux cannot follow the target revision.
    NVC343 (warning): Flux over ssh without a credentials Secret. NVC382 (info): Flux reads
    the whole repository (`fluxSource: repository`), so any commit stops a running plan.
    """
    gitops = site.spec.gitops
    found: list[Diagnostic] = []

    def add(where: str, severity: Severity, code: str, message: str, hint: str) -> None:
        found.append(Diagnostic(doc.span(where), severity, code, message, where, hint))

    url = gitops.repo_url
    if url is None:
        hint = "set spec.gitops.repoURL to the Git repository out/ is committed to"
        add(SOURCE, Severity.WARNING, codes.NVC340.code, _NO_REPO, hint)
        return found
    engine = gitops_of(site)
    if not engine.kustomizations:  # the checks below are of Flux's objects
        return found
    if engine.repo_url is not None and not engine.repo_url.match(url):
        hint = _flux_url_hint(url)
        message = f"Flux's GitRepository rejects url '{url}': it must match ^(http|https|ssh)://"
        add(f"{SOURCE}/repoURL", Severity.ERROR, codes.NVC341.code, message, hint)
    elif url.startswith("ssh://") and gitops.secret_ref is None:
        message = "Flux cannot clone over ssh without a Secret holding identity and known_hosts"
        hint = "set spec.gitops.secretRef to that Secret's name in flux-system"
        add(f"{SOURCE}/repoURL", Severity.WARNING, codes.NVC343.code, message, hint)
    if gitops.flux_source == "repository":
        message = (
            "Flux reads the whole repository: every commit is a new revision, so a commit to "
            "any folder stops a running plan after its current step"
        )
        hint = (
            "remove fluxSource to read this site through its own ExternalArtifact (needs "
            "source-watcher: flux install --components-extra=source-watcher)"
        )
        add(f"{SOURCE}/fluxSource", Severity.INFO, codes.NVC382.code, message, hint)
    if gitops.target_revision == "HEAD":
        message = "Flux's GitRepository has no HEAD revision"
        hint = "name the branch (e.g. main), a refs/... name or a commit SHA"
        add(f"{SOURCE}/targetRevision", Severity.ERROR, codes.NVC342.code, message, hint)
    return found


def _flux_url_hint(url: str) -> str:
    scp = _SCP.match(url)
    if scp is None:
        return "use an https:// or ssh:// URL"
    return f"write the scp-style address as ssh://{scp['user']}@{scp['host']}/{scp['path']}"
