"""Argo CD installing a chart nvcregen does not render: an Application with a Helm source.

Applied server-side, because the Trainer and JobSet CRDs are too large for client-side
apply; a chart pinned by digest is Argo CD's OCI source (`helmsource.py`). The
compiler asks for it through its `helmref.ChartReference` protocol (`CHART_REF`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from nvcregen.compile.platform.helmref import ChartPull, ChartRelease
from nvcregen.core.fields import mapping_at
from nvcregen.core.manifest import Obj
from nvcregen.engines.gitops.argocd.helmsource import (
    DIGEST_ANNOTATION,
    OCI,
    VERSION_ANNOTATION,
    app_annotations,
    chart_source,
)

ARGO_API = "argoproj.io/v1alpha1"
ARGOCD_NAMESPACE = "argocd"
IN_CLUSTER = "https://kubernetes.default.svc"


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
        metadata["annotations"] = {
            DIGEST_ANNOTATION: release.digest,
            VERSION_ANNOTATION: release.version,
        }
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


class ArgoCdChartRef:
    """Argo CD's Application installing a chart (`compile.platform.helmref.ChartReference`)."""

    def objects(self, release: ChartRelease, app_name: str, project: str) -> list[Obj]:
        """One Application `app_name` in the site's AppProject `project`."""
        return [argo_application(release, app_name, project)]

    def pulls(self, objects: Sequence[Obj]) -> Iterator[ChartPull]:
        """Each Application's chart source, by digest or version, with its `valuesObject`."""
        for obj in objects:
            spec = obj.get("spec") or {}
            group = str(obj.get("apiVersion", "")).rpartition("/")[0]
            if obj.get("kind") == "Application" and group == ARGO_API.rpartition("/")[0]:
                source = spec.get("source") or {}
                found = chart_source(source, app_annotations(obj))
                if found is not None:
                    values = (source.get("helm") or {}).get("valuesObject") or {}
                    yield found.ref, found.version, found.digest, values

    def release_values(self, obj: Mapping[str, Any]) -> tuple[str, Any] | None:
        """An Application's Helm source: its `releaseName` and `valuesObject`."""
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if obj.get("kind") != "Application" or group != ARGO_API.rpartition("/")[0]:
            return None
        helm = mapping_at(obj, "spec", "source", "helm") or {}
        return str(helm.get("releaseName")), helm.get("valuesObject")

    def installed_release(self, obj: Mapping[str, Any]) -> tuple[str, str] | None:
        """An Application's chart source: its destination and release (else the chart's name).

        `check.collisions.InstalledRelease`: NVC690 claims the release once per cluster.
        """
        spec = mapping_at(obj, "spec") or {}
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if obj.get("kind") != "Application" or group != ARGO_API.rpartition("/")[0]:
            return None
        source = mapping_at(spec, "source") or {}
        chart = chart_source(source, app_annotations(obj))
        if chart is None:
            return None
        release = (mapping_at(source, "helm") or {}).get("releaseName") or chart.chart
        return str((mapping_at(spec, "destination") or {}).get("namespace", "")), str(release)


CHART_REF = ArgoCdChartRef()
