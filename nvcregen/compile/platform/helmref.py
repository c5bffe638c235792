"""GitOps references to a Helm chart in an OCI registry: Flux or Argo CD objects.

When nvcregen does not render a chart itself, it writes the objects that make the GitOps
engine install it: for Flux an `OCIRepository` plus a `HelmRelease` (chart CRDs created on
install and replaced on upgrade, since Helm alone never upgrades `crds/`); for Argo CD an
`Application` with a Helm source, applied server-side because the Trainer and JobSet CRDs
are too large for client-side apply. A chart pinned by digest is pulled by that digest:
Flux's `OCIRepository.ref.digest`, Argo CD's OCI source (`nvcregen.core.helmsource`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nvcregen.core.helmsource import CHART_DIGEST, CHART_VERSION, OCI
from nvcregen.core.manifest import Obj
from nvcregen.engineapi.protocol import GitOpsEngine

FLUX_SOURCE_API = "source.toolkit.fluxcd.io/v1"
FLUX_HELM_API = "helm.toolkit.fluxcd.io/v2"
ARGO_API = "argoproj.io/v1alpha1"
ARGOCD_NAMESPACE = "argocd"
IN_CLUSTER = "https://kubernetes.default.svc"
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
FLUX_INTERVAL = "1h"


@dataclass(frozen=True)
class ChartRelease:
    """One Helm release of a chart from an OCI registry.

    Attributes:
        name: Name of the generated objects (and the Helm release).
        ref: `oci://host/path/chart`.
        version: Chart version (an OCI tag).
        digest: OCI manifest digest (`sha256:...`) that pins the chart, if known.
        namespace: Namespace the release is installed into.
        values: Helm values.

    """

    name: str
    ref: str
    version: str
    digest: str | None
    namespace: str
    values: Obj = field(default_factory=dict)

    @property
    def repository(self) -> str:
        """The registry and path without the chart: `oci://ghcr.io/a/b` -> `ghcr.io/a`."""
        return self.ref.removeprefix("oci://").rsplit("/", 1)[0]

    @property
    def chart(self) -> str:
        """The chart name: the last path element of the reference."""
        return self.ref.rsplit("/", 1)[-1]


def flux_objects(release: ChartRelease) -> list[Obj]:
    """An OCIRepository for the chart and the HelmRelease that installs it, in its namespace.

    The digest, when pinned, takes precedence over the tag, which stays to name the version.
    """
    ref: Obj = {"tag": release.version}
    if release.digest:
        ref["digest"] = release.digest
    source: Obj = {
        "apiVersion": FLUX_SOURCE_API,
        "kind": "OCIRepository",
        "metadata": {"name": release.name, "namespace": release.namespace},
        "spec": {
            "interval": FLUX_INTERVAL,
            "url": release.ref,
            "ref": ref,
            "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
        },
    }
    helm_release: Obj = {
        "apiVersion": FLUX_HELM_API,
        "kind": "HelmRelease",
        "metadata": {"name": release.name, "namespace": release.namespace},
        "spec": {
            "interval": FLUX_INTERVAL,
            "releaseName": release.name,
            "chartRef": {"kind": "OCIRepository", "name": release.name},
            "install": {"crds": "Create"},
            "upgrade": {"crds": "CreateReplace"},
            "values": release.values,
        },
    }
    return [source, helm_release]


def argo_application(release: ChartRelease, name: str, project: str) -> Obj:
    """An Argo CD Application `name` in `project`, installing the chart from its registry.

    A chart pinned by digest is Argo CD's OCI source (`oci://<registry>/<chart>`, `path: .`,
    the digest as `targetRevision`; Argo CD 3.1 or later), so Argo CD pulls exactly that
    artifact; the version is kept in `nvcregen.io/chart-version`. Without a digest it is a
    Helm repository over OCI (written without `oci://`, as Argo CD's Helm sources want it)
    and the version.
    """
    metadata: Obj = {"name": name, "namespace": ARGOCD_NAMESPACE}
    helm: Obj = {"releaseName": release.name, "valuesObject": release.values}
    source: Obj
    if release.digest:
        metadata["annotations"] = {CHART_DIGEST: release.digest, CHART_VERSION: release.version}
        source = {"repoURL": f"{OCI}{release.ref.removeprefix(OCI)}", "path": "."}
        source |= {"targetRevision": release.digest, "helm": helm}
    else:
        source = {"repoURL": release.repository, "chart": release.chart}
        source |= {"targetRevision": release.version, "helm": helm}
    return {
        "apiVersion": ARGO_API,
        "kind": "Application",
        "metadata": metadata,
        "spec": {
            "project": project,
            "destination": {"server": IN_CLUSTER, "namespace": release.namespace},
            "source": source,
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["CreateNamespace=true", "ServerSideApply=true"],
            },
        },
    }


def reference_objects(
    release: ChartRelease, engine: GitOpsEngine, *, app_name: str, project: str
) -> list[Obj]:
    """The objects that make `engine` install the release.

    `app_name` and `project` name the Argo CD Application and its AppProject; Flux objects
    are named after the release and live in its namespace.
    """
    if engine.kustomizations:
        return flux_objects(release)
    return [argo_application(release, app_name, project)]


def reference_notes(release: ChartRelease, engine: GitOpsEngine) -> tuple[str, ...]:
    """What a reader of index.json should know about how the chart is pinned."""
    pin = f"digest {release.digest}" if release.digest else "tag only (no chart digest pinned)"
    return (
        f"chart {release.ref} {release.version}, {pin}",
        *engine.pull_notes(release.repository, release.digest),
    )
