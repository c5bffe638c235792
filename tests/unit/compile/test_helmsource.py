"""The chart an Argo CD Application source installs, in both forms nvcregen writes."""

from __future__ import annotations

from typing import Any

from nvcregen.compile.platform.helmref import ChartRelease
from nvcregen.engines.gitops.argocd.chartref import argo_application
from nvcregen.engines.gitops.argocd.helmsource import app_annotations, chart_source

DIGEST = "sha256:" + "e" * 64
RELEASE = ChartRelease("kueue", "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", None, "ns")


def _source(release: ChartRelease) -> tuple[dict[str, Any], dict[str, Any]]:
    app = argo_application(release, "lab-kueue", "lab")
    return app["spec"]["source"], dict(app_annotations(app))


def test_a_chart_by_version_is_a_helm_repository_over_oci() -> None:
    source, annotations = _source(RELEASE)
    assert source["repoURL"] == "registry.k8s.io/kueue/charts"  # no oci:// for Helm sources
    assert (source["chart"], source["targetRevision"]) == ("kueue", "0.19.2")
    found = chart_source(source, annotations)
    assert found is not None
    assert (found.ref, found.version, found.digest, found.pinned) == (
        "registry.k8s.io/kueue/charts/kueue",
        "0.19.2",
        None,
        False,
    )


def test_a_chart_by_digest_is_an_oci_source_argo_cd_pulls_by_that_digest() -> None:
    pinned = ChartRelease(RELEASE.name, RELEASE.ref, RELEASE.version, DIGEST, "ns")
    source, annotations = _source(pinned)
    assert source == {
        "repoURL": "oci://registry.k8s.io/kueue/charts/kueue",
        "path": ".",
        "targetRevision": DIGEST,
        "helm": {"releaseName": "kueue", "valuesObject": {}},
    }
    found = chart_source(source, annotations)
    assert found is not None
    assert (found.ref, found.chart, found.version, found.digest, found.pinned) == (
        "registry.k8s.io/kueue/charts/kueue",
        "kueue",
        "0.19.2",
        DIGEST,
        True,
    )


def test_other_sources_are_no_chart() -> None:
    git = {"repoURL": "https://git.example.com/r.git", "path": "out/lab/platform"}
    assert chart_source(git, {}) is None
    oci = {"repoURL": "oci://ghcr.io/x/manifests", "path": ".", "targetRevision": DIGEST}
    assert chart_source(oci, {}) is None  # an OCI source nvcregen did not write as a chart
    assert app_annotations({"metadata": {"annotations": ["bad"]}}) == {}
