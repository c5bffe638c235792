"""Flux's GitOps layer: the site's Git source and a Kustomization per layer, by dependsOn.

A GitRepository (and, reading the site's folder alone, an ArtifactGenerator's
ExternalArtifact) is the source; each layer's Kustomization depends on the one before;
with `readiness.trigger: manual` the readiness Kustomization is suspended. Its checks
(NVC341-NVC343, NVC382) are of what Flux's source accepts and follows.
"""

from __future__ import annotations

import re

from nvcregen.compile.gitops.common import (
    SOURCE,
    STARTS_GPU_WORK,
    gitops_object,
    layer_path,
    manual_trigger,
    object_metadata,
    site_path,
)
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.engineapi.registry import gitops_of
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

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
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SCP = re.compile(r"^(?P<user>[^@/\s]+)@(?P<host>[^:/\s]+):(?P<path>\S+)$")


def flux_path(site: Site, path: str) -> str:
    """A repository path as a Kustomization reads it: in the site's artifact, or the repo's."""
    if site.spec.gitops.flux_source == "repository":
        return f"./{path}"
    base = site_path(site)
    inside = path.removeprefix(f"{base}/") if base else path
    return f"./{inside}"


def flux_layer(site: Site, present: list[str]) -> list[Manifest]:
    """The site's source and a Kustomization per present layer, each after the one before."""
    manifests = [_git_repository(site)]
    if site.spec.gitops.flux_source == "artifact":
        manifests.append(_artifact_generator(site))
    previous: str | None = None
    for layer in present:
        manifests.append(_kustomization(site, layer, previous))
        if layer not in STARTS_GPU_WORK:  # the periodic layer never waits on a test run
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
        "metadata": object_metadata(site.metadata.name, FLUX_NAMESPACE),
        "spec": spec,
    }
    return gitops_object(obj)


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
        "metadata": object_metadata(site.metadata.name, FLUX_NAMESPACE),
        "spec": spec,
    }
    note = (
        f"the ExternalArtifact {site.metadata.name}: {base or 'the repository'} only, revised "
        "only when its files change; needs source-watcher and kustomize-controller's "
        "ExternalArtifact feature gate"
    )
    return gitops_object(obj, (note,))


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
    if manual_trigger(site, component):
        spec["suspend"] = True
        how = f"flux resume kustomization -n {FLUX_NAMESPACE} {name}-{component}"
        notes = (f"readiness.trigger is manual: suspended; start the tests with `{how}`",)
    obj = {
        "apiVersion": FLUX_KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": object_metadata(f"{name}-{component}", FLUX_NAMESPACE),
        "spec": spec,
    }
    return gitops_object(obj, notes)


def flux_problems(site: Site, doc: Document, url: str) -> list[Diagnostic]:
    """NVC341-NVC343 and NVC382: what Flux's source refuses or cannot follow of `url`."""
    gitops = site.spec.gitops
    found: list[Diagnostic] = []

    def add(where: str, severity: Severity, code: str, message: str, hint: str) -> None:
        found.append(Diagnostic(doc.span(where), severity, code, message, where, hint))

    engine = gitops_of(site)
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
