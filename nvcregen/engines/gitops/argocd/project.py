"""The Argo CD AppProject of a site, its allow lists derived from what the layers contain.

Argo CD refuses to sync an object its project does not permit ("not permitted in
project"): a cluster-scoped kind missing from `clusterResourceWhitelist`, or a namespace
missing from `destinations`. The project therefore allows exactly what the site's layers
create: the namespaces and cluster-scoped kinds of their objects, and, for each Helm
chart a layer installs through an Application of this project, what that chart version
renders with the values the Application sets (`catalog/charts/`, `nvcregen.catalog.charts`).
A chart the catalog does not know gets nothing, and the project checks (`check.py`) report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from nvcregen.catalog.charts import ChartEntry, GroupKind, chart_key
from nvcregen.core import kube
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.core.nvcre import NVCRE_GROUP
from nvcregen.engines.gitops.argocd.helmsource import ChartSource, app_annotations, chart_source
from nvcregen.spec.v1alpha1 import Site

CRD_KIND = ("apiextensions.k8s.io", "CustomResourceDefinition")
NAMESPACE_KIND = ("", "Namespace")
# Cluster-scoped kinds each layer may create, when its objects are not given.
DEFAULT_CLUSTER_KINDS: dict[str, tuple[GroupKind, ...]] = {
    "crds": (CRD_KIND,),
    "platform": (
        NAMESPACE_KIND,
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ),
    "queues": tuple(
        ("kueue.x-k8s.io", kind)
        for kind in ("ClusterQueue", "ResourceFlavor", "Topology", "WorkloadPriorityClass")
    ),
    "monitoring": (),
    "readiness": ((NVCRE_GROUP, "LogProfile"),),
    "periodic": (("scheduling.k8s.io", "PriorityClass"),),
}


@dataclass
class ProjectScope:
    """What a project must allow: namespaces, cluster-scoped kinds, repositories.

    `notes` say where chart-derived entries came from (for index.json), and which chart
    versions the catalog does not know.
    """

    namespaces: set[str] = field(default_factory=set)
    cluster_kinds: set[GroupKind] = field(default_factory=set)
    repos: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def project_scope(
    site: Site,
    present: list[str],
    layers: Sequence[Manifest],
    charts: Mapping[str, ChartEntry],
) -> ProjectScope:
    """What the site's project must allow for the given layers' objects and charts.

    A present layer none of whose objects were given gets its default cluster kinds.
    """
    scope = ProjectScope(namespaces={site.spec.nvcre.namespace})  # every layer's destination
    given = {m.component for m in layers}
    for layer in present:
        if layer not in given:
            scope.cluster_kinds.update(DEFAULT_CLUSTER_KINDS[layer])
    for manifest in layers:
        _add_object(scope, manifest)
    for app in project_applications(layers, site.metadata.name):
        _add_child(scope, app, charts)
    return scope


def _add_object(scope: ProjectScope, manifest: Manifest) -> None:
    obj = manifest.obj
    group = kube.api_group(str(obj.get("apiVersion", "")))
    namespace = (obj.get("metadata") or {}).get("namespace")
    if namespace:
        scope.namespaces.add(str(namespace))
    elif not kube.is_namespaced(group, manifest.kind):
        scope.cluster_kinds.add((group, manifest.kind))


def _add_child(scope: ProjectScope, app: Obj, charts: Mapping[str, ChartEntry]) -> None:
    """An Application of this project: its destination, repositories and chart's objects."""
    spec = app.get("spec") or {}
    destination = (spec.get("destination") or {}).get("namespace")
    if destination:
        scope.namespaces.add(str(destination))
    options = (spec.get("syncPolicy") or {}).get("syncOptions") or []
    if "CreateNamespace=true" in options:
        scope.cluster_kinds.add(NAMESPACE_KIND)
    for source in application_sources(spec):
        if source.get("repoURL"):
            scope.repos.add(str(source["repoURL"]))
        chart = chart_source(source, app_annotations(app))
        if chart is not None:
            _add_chart(scope, source, chart, charts)


def _add_chart(
    scope: ProjectScope, source: Obj, chart: ChartSource, charts: Mapping[str, ChartEntry]
) -> None:
    name, version = chart.chart, chart.version
    entry = charts.get(chart_key(name, version))
    if entry is None:
        scope.notes.append(f"chart {name} {version} is not in catalog/charts: nothing allowed")
        return
    installed = entry.installs(helm_values(source))
    scope.cluster_kinds |= installed.cluster_kinds
    scope.namespaces |= installed.namespaces
    scope.notes.append(f"allows what chart {name} {version} installs (catalog/charts)")


def project_applications(layers: Iterable[Manifest], project: str) -> Iterable[Obj]:
    """The Argo CD Applications among the layers that belong to `project`."""
    for m in layers:
        spec = m.obj.get("spec") or {}
        group = kube.api_group(str(m.obj.get("apiVersion", "")))
        if m.kind == "Application" and group == "argoproj.io" and spec.get("project") == project:
            yield m.obj


def application_sources(spec: Obj) -> list[Obj]:
    """An Application's sources: `source` and every item of `sources`."""
    found = [spec.get("source"), *(spec.get("sources") or [])]
    return [s for s in found if isinstance(s, dict)]


def helm_values(source: Obj) -> Obj:
    """The Helm values an Application source sets (`helm.valuesObject`)."""
    values = (source.get("helm") or {}).get("valuesObject")
    return values if isinstance(values, dict) else {}
