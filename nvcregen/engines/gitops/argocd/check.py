"""NVC680: every object an Argo CD Application applies is permitted by its AppProject (pure).

Argo CD refuses a sync whose objects its project does not permit: a cluster-scoped kind
not in `clusterResourceWhitelist` (or in the blacklist), a namespaced kind outside a
`namespaceResourceWhitelist` that is set, a namespace no `destinations` entry matches, a
repository not in `sourceRepos`. For an Application reading a folder of the tree (its
`source.path`, whose last element names the layer), the objects of that layer are checked;
for one installing a Helm chart, what that chart version renders with the Application's
values (`catalog/charts/`). Patterns match as Argo CD's globs do. `check` asks through
`check.engineparts.TreeChecks` (`CHECKS`), on every site's tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from nvcregen.catalog.charts import ChartEntry, GroupKind, chart_key, show_group_kind
from nvcregen.check.crossref import Located
from nvcregen.check.engineparts import Layered
from nvcregen.check.findings import Finding
from nvcregen.core import codes, kube
from nvcregen.core.fields import list_at, mapping_at
from nvcregen.engines.gitops.argocd.helmsource import ChartSource, app_annotations, chart_source

PROJECT_CODE = codes.NVC680.code
ARGO_GROUP = "argoproj.io"
_HINT = "regenerate the GitOps layer with nvcregen; the AppProject must allow it"


@dataclass(frozen=True)
class Project:
    """An AppProject's allow lists."""

    name: str
    spec: Mapping[str, Any]

    def permits_kind(self, group_kind: GroupKind, *, namespaced: bool) -> bool:
        """Whether the project allows objects of this kind (Argo CD's IsGroupKindPermitted)."""
        prefix = "namespace" if namespaced else "cluster"
        allow = self.spec.get(f"{prefix}ResourceWhitelist")
        deny = list_at(self.spec, f"{prefix}ResourceBlacklist")
        # No whitelist allows every namespaced kind and no cluster-scoped one.
        allowed = namespaced if allow is None else _listed(group_kind, list_at(allow))
        return allowed and not _listed(group_kind, deny)

    def permits_namespace(self, namespace: str) -> bool:
        """Whether a destination of the project matches the namespace."""
        return any(
            fnmatchcase(namespace, str(d.get("namespace", "")))
            for d in list_at(self.spec, "destinations")
            if isinstance(d, Mapping)
        )

    def permits_repo(self, repo: str) -> bool:
        """Whether `sourceRepos` matches the repository."""
        return any(fnmatchcase(repo, str(p)) for p in list_at(self.spec, "sourceRepos"))


def check_projects(
    objects: Iterable[Layered], charts: Mapping[str, ChartEntry]
) -> Iterator[tuple[str, Finding]]:
    """Every Application of a site, its sources and what they apply, against its project.

    `objects` are one site's objects (one cluster); `charts` what each chart version
    installs (`Catalog.charts`).
    """
    listed = list(objects)
    projects = {
        o.located.identity[3]: Project(o.located.identity[3], spec)
        for o in listed
        if _is_argo(o.located.obj, "AppProject")
        and (spec := mapping_at(o.located.obj, "spec")) is not None  # else NVC602 says so
    }
    for app in (o.located for o in listed if _is_argo(o.located.obj, "Application")):
        spec = mapping_at(app.obj, "spec")
        project = projects.get(str(spec.get("project"))) if spec is not None else None
        if spec is not None and project is not None:
            yield from _check_app(app, spec, project, listed, charts)


def _check_app(
    app: Located,
    spec: Mapping[str, Any],
    project: Project,
    objects: list[Layered],
    charts: Mapping[str, ChartEntry],
) -> Iterator[tuple[str, Finding]]:
    name = app.identity[3]
    destination = str((mapping_at(spec, "destination") or {}).get("namespace") or "")
    if destination and not project.permits_namespace(destination):
        message = f"AppProject {project.name} has no destination for namespace {destination}"
        yield app.file, Finding("/spec/destination/namespace", PROJECT_CODE, message, hint=_HINT)
    for where, source in _sources(spec):
        repo = str(source.get("repoURL", ""))
        if repo and not project.permits_repo(repo):
            message = f"AppProject {project.name} does not allow source repository {repo}"
            yield app.file, Finding(f"{where}/repoURL", PROJECT_CODE, message, hint=_HINT)
        chart = chart_source(source, app_annotations(app.obj))
        if chart is not None:
            yield from _check_chart(app, where, source, chart, destination, project, charts)
        elif source.get("path"):
            layer = str(source["path"]).rstrip("/").rsplit("/", 1)[-1]
            for obj in (o.located for o in objects if o.layer == layer):
                yield from _check_object(obj, destination, project, name)


def _check_object(
    obj: Located, destination: str, project: Project, app: str
) -> Iterator[tuple[str, Finding]]:
    group = kube.api_group(str(obj.obj.get("apiVersion", "")))
    kind = str(obj.obj.get("kind", ""))
    namespace = (mapping_at(obj.obj, "metadata") or {}).get("namespace")
    namespaced = bool(namespace) or kube.is_namespaced(group, kind)
    shown = show_group_kind((group, kind))
    if not project.permits_kind((group, kind), namespaced=namespaced):
        scope = "namespaced" if namespaced else "cluster-scoped"
        message = f"{scope} kind {shown} is not permitted by AppProject {project.name} ({app})"
        yield obj.file, Finding("/kind", PROJECT_CODE, message, hint=_HINT)
    target = str(namespace or destination)
    if namespaced and target and not project.permits_namespace(target):
        message = f"namespace {target} is not a destination of AppProject {project.name} ({app})"
        yield obj.file, Finding("/metadata/namespace", PROJECT_CODE, message, hint=_HINT)


def _check_chart(
    app: Located,
    where: str,
    source: Mapping[str, Any],
    found: ChartSource,
    destination: str,
    project: Project,
    charts: Mapping[str, ChartEntry],
) -> Iterator[tuple[str, Finding]]:
    chart, version = found.chart, found.version
    pointer = f"{where}/chart" if source.get("chart") else f"{where}/repoURL"
    entry = charts.get(chart_key(chart, version))
    if entry is None:
        message = (
            f"chart {chart} {version} is not in catalog/charts: what it installs, and so "
            f"whether AppProject {project.name} permits it, is unknown"
        )
        hint = "add catalog/charts/<chart>-<version>.yaml from the chart's templates"
        yield app.file, Finding(pointer, PROJECT_CODE, message, hint=hint)
        return
    values = mapping_at(source, "helm", "valuesObject") or {}
    installed = entry.installs(values)
    for group_kind in sorted(installed.cluster_kinds):
        if not project.permits_kind(group_kind, namespaced=False):
            message = (
                f"chart {chart} {version} installs cluster-scoped {show_group_kind(group_kind)}, "
                f"which AppProject {project.name} does not permit"
            )
            yield app.file, Finding(pointer, PROJECT_CODE, message, hint=_HINT)
    for namespace in sorted(installed.namespaces - {destination}):
        if not project.permits_namespace(namespace):
            message = (
                f"chart {chart} {version} writes to namespace {namespace}, which is not a "
                f"destination of AppProject {project.name}"
            )
            yield app.file, Finding(pointer, PROJECT_CODE, message, hint=_HINT)


def _listed(group_kind: GroupKind, entries: Iterable[Mapping[str, Any]]) -> bool:
    group, kind = group_kind
    return any(
        fnmatchcase(group, str(e.get("group", ""))) and fnmatchcase(kind, str(e.get("kind", "")))
        for e in entries
        if isinstance(e, Mapping)
    )


def _sources(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Each source of an Application with its JSON pointer."""
    found = [("/spec/source", spec.get("source"))]
    found += [(f"/spec/sources/{i}", s) for i, s in enumerate(list_at(spec, "sources"))]
    return [(where, s) for where, s in found if isinstance(s, Mapping)]


def _is_argo(obj: Mapping[str, Any], kind: str) -> bool:
    api = str(obj.get("apiVersion", ""))
    return obj.get("kind") == kind and kube.api_group(api) == ARGO_GROUP


class ProjectChecks:
    """NVC680 on a site's tree (`check.engineparts.TreeChecks`)."""

    def check(
        self, objects: Sequence[Layered], charts: Mapping[str, ChartEntry]
    ) -> Iterator[tuple[str, Finding]]:
        """Every Application of the site against its AppProject (`check_projects`)."""
        return check_projects(objects, charts)


CHECKS = ProjectChecks()
