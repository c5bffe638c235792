"""The Helm chart an Argo CD Application source installs, in both forms nvcregen writes (pure).

- A Helm repository over OCI: `repoURL: ghcr.io/nvidia` (no scheme), `chart: nvcre`,
  `targetRevision: 0.7.0`. Argo CD pulls the chart by version; a digest nvcregen knows is
  only recorded, in the Application's `nvcregen.io/chart-digest` annotation.
- Argo CD's own OCI source (3.1 and later): `repoURL: oci://ghcr.io/nvidia/nvcre`,
  `path: .`, `targetRevision: sha256:...`. Argo CD pulls exactly that artifact; the chart
  version, which the digest does not say, is in the `nvcregen.io/chart-version` annotation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nvcregen.core.fields import mapping_at

DIGEST_ANNOTATION = "nvcregen.io/chart-digest"
VERSION_ANNOTATION = "nvcregen.io/chart-version"
OCI = "oci://"
DIGEST_PREFIX = "sha256:"


@dataclass(frozen=True)
class ChartSource:
    """A chart an Application installs.

    Attributes:
        repository: Registry and path without the chart and scheme (`ghcr.io/nvidia`).
        chart: The chart's name.
        version: The chart's version.
        digest: The OCI manifest digest, when known.
        pinned: Whether Argo CD pulls by that digest (the OCI source form).

    """

    repository: str
    chart: str
    version: str
    digest: str | None
    pinned: bool

    @property
    def ref(self) -> str:
        """`<repository>/<chart>`, as images.txt lists it."""
        return f"{self.repository}/{self.chart}"


def chart_source(source: Mapping[str, Any], annotations: Mapping[str, Any]) -> ChartSource | None:
    """The chart of one Application source and its Application's annotations, if any."""
    url = str(source.get("repoURL") or "")
    revision = str(source.get("targetRevision") or "")
    if source.get("chart"):
        digest = annotations.get(DIGEST_ANNOTATION)
        return ChartSource(url, str(source["chart"]), revision, _text(digest), pinned=False)
    if url.startswith(OCI) and VERSION_ANNOTATION in annotations and "/" in url:
        repository, chart = url.removeprefix(OCI).rsplit("/", 1)
        digest = revision if revision.startswith(DIGEST_PREFIX) else None
        version = str(annotations[VERSION_ANNOTATION])
        return ChartSource(repository, chart, version, digest, pinned=digest is not None)
    return None


def app_annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's annotations (empty when it has none or they are malformed)."""
    return mapping_at(obj, "metadata", "annotations") or {}


def _text(value: Any) -> str | None:
    return str(value) if value else None
