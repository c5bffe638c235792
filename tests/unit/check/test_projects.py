"""NVC680: an Argo CD AppProject permits every object of its Applications (issue 12 item 1)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from sitefactory import catalog, parse, plan_of

from nvcregen.check.crossref import Located
from nvcregen.check.engineparts import Layered
from nvcregen.check.findings import Finding
from nvcregen.check.gate import check_manifests
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.core.manifest import Manifest
from nvcregen.emit.naming import manifest_path
from nvcregen.engines.gitops.argocd.check import Project, check_projects

SITES = Path(__file__).resolve().parents[3] / "sites"
# The allow list every AppProject had before it was derived from the charts.
OLD_WHITELIST = [
    {"group": "", "kind": "Namespace"},
    {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole"},
    {"group": "rbac.authorization.k8s.io", "kind": "ClusterRoleBinding"},
]


def _compiled(name: str) -> list[Manifest]:
    site, _ = parse((SITES / f"{name}.yaml").read_text(encoding="utf-8"))
    built = site_manifests(plan_of(site), root=Path())
    return postprocess(built, site, f"sites/{name}.yaml")


def _findings(manifests: list[Manifest]) -> list[tuple[str, Finding]]:
    layered = [Layered(m.component, Located(manifest_path(m), m.obj)) for m in manifests]
    return list(check_projects(layered, catalog().charts))


def _changed(manifest: Manifest, **spec: Any) -> Manifest:
    obj = copy.deepcopy(manifest.obj)
    obj["spec"].update(spec)
    return dataclasses.replace(manifest, obj=obj)


def _with_project(manifests: list[Manifest], **spec: Any) -> list[Manifest]:
    return [_changed(m, **spec) if m.kind == "AppProject" else m for m in manifests]


@pytest.mark.parametrize("name", ["h20-3e-lab", "h20-3e-trainer"])
def test_the_shipped_argocd_sites_projects_permit_everything(name: str) -> None:
    assert _findings(_compiled(name)) == []


def test_the_old_project_is_refused_for_the_charts_it_installs() -> None:
    manifests = _with_project(_compiled("h20-3e-lab"), clusterResourceWhitelist=OLD_WHITELIST)
    messages = {f.message for _, f in _findings(manifests)}
    assert (
        "chart kubeflow-trainer 2.2.1 installs cluster-scoped "
        "apiextensions.k8s.io/CustomResourceDefinition, which AppProject h20-3e-lab does not "
        "permit"
    ) in messages
    assert any("ValidatingWebhookConfiguration" in m and "kubeflow-trainer" in m for m in messages)
    assert any("MutatingWebhookConfiguration" in m and "kueue" in m for m in messages)
    assert any(
        "CustomResourceDefinition" in m and "cluster-readiness-engine" in m for m in messages
    )
    # objects of the layers themselves: the queues layer's ClusterQueue, readiness LogProfile
    assert any("kueue.x-k8s.io/ClusterQueue is not permitted" in m for m in messages)


def test_the_project_allows_what_each_chart_installs() -> None:
    project = next(m for m in _compiled("h20-3e-lab") if m.kind == "AppProject").obj["spec"]
    kinds = {(k["group"], k["kind"]) for k in project["clusterResourceWhitelist"]}
    assert ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") in kinds
    assert ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") in kinds
    assert ("apiregistration.k8s.io", "APIService") in kinds  # Kueue's visibility API
    assert ("apiextensions.k8s.io", "CustomResourceDefinition") in kinds
    # Kueue's visibility server binds a Role in kube-system
    assert "kube-system" in {d["namespace"] for d in project["destinations"]}


def test_a_namespace_without_a_destination_is_reported() -> None:
    manifests = _compiled("h20-3e-lab")
    project = next(m for m in manifests if m.kind == "AppProject").obj["spec"]
    kept = [d for d in project["destinations"] if d["namespace"] != "kube-system"]
    found = _findings(_with_project(manifests, destinations=kept))
    assert [f.message for _, f in found] == [
        "chart kueue 0.19.2 writes to namespace kube-system, which is not a destination of "
        "AppProject h20-3e-lab"
    ]


def test_a_chart_the_catalog_does_not_know_is_reported() -> None:
    """A pinned chart is an OCI source: its version is the chart-version annotation."""
    manifests = _compiled("h20-3e-trainer")
    app = next(m for m in manifests if m.kind == "Application" and m.name.endswith("-kueue"))
    assert app.obj["spec"]["source"]["targetRevision"].startswith("sha256:")
    obj = copy.deepcopy(app.obj)
    obj["metadata"]["annotations"]["nvcregen.io/chart-version"] = "0.20.0"
    manifests[manifests.index(app)] = dataclasses.replace(app, obj=obj)
    found = _findings(manifests)
    assert len(found) == 1
    assert "chart kueue 0.20.0 is not in catalog/charts" in found[0][1].message
    assert found[0][1].pointer == "/spec/source/repoURL"


def test_a_chart_by_version_is_checked_too() -> None:
    """Without a digest the source is a Helm repository over OCI, named by version."""
    manifests = _compiled("h20-3e-trainer")
    app = next(m for m in manifests if m.kind == "Application" and m.name.endswith("-kueue"))
    url = app.obj["spec"]["source"]["repoURL"].removeprefix("oci://")
    repository, chart = url.rsplit("/", 1)
    source = {"repoURL": repository, "chart": chart, "targetRevision": "0.20.0"}
    manifests[manifests.index(app)] = _changed(app, source=source)
    found = {f.pointer: f.message for _, f in _findings(manifests)}
    assert "chart kueue 0.20.0 is not in catalog/charts" in found["/spec/source/chart"]
    # the project lists the pinned OCI source, not this Helm repository
    assert found["/spec/source/repoURL"].endswith(f"does not allow source repository {repository}")


def test_project_matching_follows_argocd_globs_and_blacklists() -> None:
    spec = {
        "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        "clusterResourceBlacklist": [{"group": "", "kind": "Namespace"}],
        "namespaceResourceWhitelist": [{"group": "apps", "kind": "*"}],
        "destinations": [{"namespace": "team-*", "server": "*"}],
        "sourceRepos": ["https://git.example.com/*"],
    }
    project = Project("p", spec)
    assert project.permits_kind(("rbac.authorization.k8s.io", "ClusterRole"), namespaced=False)
    assert not project.permits_kind(("", "Namespace"), namespaced=False)
    assert project.permits_kind(("apps", "Deployment"), namespaced=True)
    assert not project.permits_kind(("", "ConfigMap"), namespaced=True)
    assert Project("q", {}).permits_kind(("", "ConfigMap"), namespaced=True)  # no whitelist
    assert not Project("q", {}).permits_kind(("", "Namespace"), namespaced=False)
    assert project.permits_namespace("team-a") and not project.permits_namespace("nvcre")
    assert project.permits_repo("https://git.example.com/x.git")


def test_render_refuses_an_object_its_project_does_not_permit() -> None:
    planned = plan_of(*parse((SITES / "h20-3e-lab.yaml").read_text(encoding="utf-8")))
    manifests = _with_project(_compiled("h20-3e-lab"), clusterResourceWhitelist=OLD_WHITELIST)
    found = check_manifests(manifests, planned)
    assert any(d.code == "NVC680" and d.is_error for d in found)
