"""Flux installing a chart nvcregen does not render: an OCIRepository and a HelmRelease.

Chart CRDs are created on install and replaced on upgrade, since Helm alone never upgrades
`crds/`; a chart pinned by digest is pulled by it (`OCIRepository.ref.digest`). The
compiler asks for them through its `helmref.ChartReference` protocol (`CHART_REF`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from nvcregen.compile.platform.helmref import ChartPull, ChartRelease
from nvcregen.core.fields import mapping_at
from nvcregen.core.manifest import Obj

FLUX_SOURCE_API = "source.toolkit.fluxcd.io/v1"
FLUX_HELM_API = "helm.toolkit.fluxcd.io/v2"
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
FLUX_INTERVAL = "1h"


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


class FluxChartRef:
    """Flux's objects installing a chart (`compile.platform.helmref.ChartReference`)."""

    def objects(self, release: ChartRelease, app_name: str, project: str) -> list[Obj]:
        """Named after the release, in its namespace (no Application, no project)."""
        return flux_objects(release)

    def pulls(self, objects: Sequence[Obj]) -> Iterator[ChartPull]:
        """Each HelmRelease's chart, from the OCIRepository its `chartRef` names."""
        oci = {
            ((o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name")): o
            for o in objects
            if o.get("kind") == "OCIRepository"
        }
        for obj in objects:
            if obj.get("kind") != "HelmRelease":
                continue
            spec = obj.get("spec") or {}
            meta = obj.get("metadata") or {}
            ref = spec.get("chartRef") or {}
            repo = oci.get((meta.get("namespace"), ref.get("name")))
            if repo is not None:
                url = str(repo["spec"]["url"]).removeprefix("oci://")
                pin = repo["spec"].get("ref") or {}
                yield url, str(pin.get("tag", "")), pin.get("digest"), spec.get("values") or {}

    def release_values(self, obj: Mapping[str, Any]) -> tuple[str, Any] | None:
        """A HelmRelease's `releaseName` and `values`."""
        if obj.get("kind") != "HelmRelease":
            return None
        spec = obj.get("spec")
        spec = spec if isinstance(spec, Mapping) else {}
        return str(spec.get("releaseName")), spec.get("values")

    def installed_release(self, obj: Mapping[str, Any]) -> tuple[str, str] | None:
        """A HelmRelease's target namespace (else its own) and release (else its name).

        `check.collisions.InstalledRelease`: NVC690 claims the release once per cluster.
        """
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if obj.get("kind") != "HelmRelease" or group != FLUX_HELM_API.rpartition("/")[0]:
            return None
        spec = mapping_at(obj, "spec") or {}
        meta = mapping_at(obj, "metadata") or {}
        namespace = spec.get("targetNamespace") or meta.get("namespace", "")
        return str(namespace), str(spec.get("releaseName") or meta.get("name"))


CHART_REF = FluxChartRef()
