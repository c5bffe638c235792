"""GitOps objects that apply `out/<site>/`: one unit of the site's engine per output layer (pure).

Each layer (`crds`, `platform`, `queues`, `monitoring`, `readiness`) present for a site gets one
unit of its GitOps engine (an Argo CD Application, a Flux Kustomization) reading
`<gitops.path>/<layer>` from the site's repository, applied in that order. The engine's
package writes them (`engineparts.GitOpsObjects`, `engines/gitops/<engine>/objects.py`):
Argo CD orders them with sync waves and an AppProject restricted to the repository, the
in-cluster server, the namespaces the layers use and the cluster-scoped kinds they create;
Flux chains them with `dependsOn`.

Readiness starts GPU work, so with `readiness.trigger: manual` its Application has no
automated sync and its Kustomization is suspended: an operator starts it. The CRD layer is
never pruned: deleting a CRD deletes every object of its kind, readiness results included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nvcregen.catalog.charts import ChartEntry
from nvcregen.catalog.load import load_catalog
from nvcregen.compile.gitops.common import LAYERS, SOURCE
from nvcregen.compile.gitops.engineparts import objects_of
from nvcregen.core import codes
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.manifest import Manifest
from nvcregen.engineapi.registry import gitops_of
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

_NO_REPO = "no gitops.repoURL: no GitOps objects generated"


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
        The engine's objects (Argo CD: an AppProject and Applications; Flux: a
        GitRepository and Kustomizations); nothing when the site has no `gitops.repoURL`.

    Raises:
        ValueError: A component is not one of the five layers.

    """
    unknown = sorted(set(components) - set(LAYERS))
    if unknown:
        raise ValueError(f"unknown output layers {unknown}; expected some of {list(LAYERS)}")
    if site.spec.gitops.repo_url is None:
        return []
    present = [layer for layer in LAYERS if layer in components]
    known = charts if charts is not None else load_catalog().charts
    return objects_of(gitops_of(site)).layer(site, present, layers, known)


def check_gitops(site: Site, doc: Document) -> list[Diagnostic]:
    """Problems of `spec.gitops` that would make the GitOps objects useless or rejected.

    NVC340 (warning): no repoURL, so nothing is generated. The rest are the engine's own
    (`GitOpsObjects.problems`): for Flux NVC341 (error), its CRD rejects the repoURL;
    NVC342 (error), it cannot follow the target revision; NVC343 (warning), ssh without
    a credentials Secret; NVC382 (info), it reads the whole repository (`fluxSource:
    repository`), so any commit stops a running plan.
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
    return found + objects_of(gitops_of(site)).problems(site, doc, url)
