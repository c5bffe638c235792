"""Tests of the platform layer: namespace, collector RBAC, NVCRE, Trainer, NVC404."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chartfactory import JOBSET_CRD, package, platform_site, platform_text
from sitefactory import IMAGES, load, parse

from nvcregen.compile.platform.helm import HelmError, HelmRenderer, archive_sha256, select_renderer
from nvcregen.compile.platform.layer import (
    check_platform,
    nvcre_values,
    platform_manifests,
    trainer_values,
)
from nvcregen.core.errors import Severity
from nvcregen.core.manifest import Manifest
from nvcregen.kubeschema.registry import default_registry

ROOT = Path(__file__).resolve().parents[3]
MANAGER_DIGEST = "sha256:" + "c" * 64
CHART_DIGEST = "sha256:" + "d" * 64
MANAGER = "ghcr.io/nvidia/cluster-readiness-engine/manager"
READ_ONLY = {"get", "list", "watch"}


def _pinned_chart(
    tmp_path: Path, extra_crds: dict[str, bytes] | None = None, pin: str | None = None
) -> str:
    """An `nvcre:` block rendering the test chart from `tmp_path/charts/`."""
    (tmp_path / "charts").mkdir(exist_ok=True)
    archive = package(tmp_path / "charts", extra_crds)
    return (
        f"chart: {{archive: charts/{archive.name}, sha256: {pin or archive_sha256(archive)}}}\n"
        f"image: {{digest: {MANAGER_DIGEST}}}\n"
    )


@pytest.fixture(scope="module")
def renderer() -> HelmRenderer:
    chosen = select_renderer()
    if chosen is None:
        pytest.skip(
            "neither helm-python-sdk nor a helm binary is available here: install "
            "'nvcregen[helm]' to run the in-process render tests (the reference path "
            "tests below run regardless)"
        )
    return chosen


def by_kind(manifests: list[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m.kind == kind]


def one(manifests: list[Manifest], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [m.obj for m in by_kind(manifests, kind) if name is None or m.name == name]
    assert len(found) == 1, [(m.kind, m.name) for m in manifests]
    return found[0]


def assert_valid(manifests: list[Manifest], version: str) -> None:
    registry = default_registry()
    problems = {
        f"{m.kind}/{m.name}": registry.validate(m.obj, kube_version=version) for m in manifests
    }
    assert {k: v for k, v in problems.items() if v} == {}


# --- always: namespace, RBAC, references ------------------------------------------------


def test_the_namespace_and_collector_rbac_are_read_only() -> None:
    manifests = platform_manifests(platform_site(), None)
    assert one(manifests, "Namespace", "nvcre")["metadata"]["name"] == "nvcre"
    rbac = [m.obj for m in manifests if m.kind in {"ClusterRole", "Role"}]
    assert len(rbac) == 2
    verbs = {verb for role in rbac for rule in role["rules"] for verb in rule["verbs"]}
    assert verbs <= READ_ONLY
    cluster_role = one(manifests, "ClusterRole", "nvcregen-lab-collector")  # per site
    assert cluster_role["rules"] == [
        {
            "apiGroups": ["nvcre.nvidia.com"],
            "resources": [
                "certifications",
                "workflows",
                "jobs",
                "workloadruns",
                "bandwidthmeasurements",
                "goodputmeasurements",
                "reportexports",
                "logprofiles",
            ],
            "verbs": ["get", "list", "watch"],
        }
    ]
    role = one(manifests, "Role", "nvcregen-collector")
    assert role["metadata"]["namespace"] == "nvcre"
    assert {r for rule in role["rules"] for r in rule["resources"]} == {
        "configmaps",
        "pods",
        "pods/log",
        "trainjobs",  # NVCRE's TrainJobs: node-health logs are read from their pods
    }
    for binding in ("ClusterRoleBinding", "RoleBinding"):
        subjects = one(manifests, binding)["subjects"]
        assert subjects == [
            {"kind": "ServiceAccount", "name": "nvcregen-collector", "namespace": "nvcre"}
        ]
    assert {m.component for m in manifests} == {"platform"}


@pytest.mark.parametrize("engine", ["flux", "argocd"])
@pytest.mark.parametrize("version", ["1.29", "1.30", "1.34"])
def test_every_reference_object_validates(engine: str, version: str) -> None:
    site = platform_site(
        engine=engine, version=version, nvcre=f"image: {{digest: {MANAGER_DIGEST}}}"
    )
    assert_valid(platform_manifests(site, None), version)


def test_flux_references_nvcre_by_oci_repository_and_helm_release() -> None:
    site = platform_site(engine="flux", nvcre=f"image: {{digest: {MANAGER_DIGEST}}}")
    manifests = platform_manifests(site, None)
    source = one(manifests, "OCIRepository", "nvcre")
    assert source["metadata"]["namespace"] == "nvcre"
    assert source["spec"]["url"] == "oci://ghcr.io/nvidia/cluster-readiness-engine"
    assert source["spec"]["ref"] == {"tag": "0.7.0"}
    release = one(manifests, "HelmRelease", "nvcre")["spec"]
    assert release["chartRef"] == {"kind": "OCIRepository", "name": "nvcre"}
    assert release["install"] == {"crds": "Create"}
    assert release["upgrade"] == {"crds": "CreateReplace"}
    assert release["values"]["manager"]["image"] == {
        "repository": MANAGER,
        "digest": MANAGER_DIGEST,
    }
    assert release["values"]["nameOverride"] == "nvcre"


def test_a_chart_digest_pins_the_oci_repository() -> None:
    site = platform_site(engine="flux", nvcre=f"chart: {{digest: {CHART_DIGEST}}}")
    source = one(platform_manifests(site, None), "OCIRepository", "nvcre")
    assert source["spec"]["ref"] == {"tag": "0.7.0", "digest": CHART_DIGEST}  # digest wins


def test_argo_cd_references_nvcre_by_a_helm_source_without_oci_scheme() -> None:
    manifests = platform_manifests(platform_site(engine="argocd"), None)
    app = one(manifests, "Application", "lab-nvcre")
    assert app["metadata"]["namespace"] == "argocd"
    assert app["spec"]["destination"]["namespace"] == "nvcre"
    source = app["spec"]["source"]
    assert source["repoURL"] == "ghcr.io/nvidia"
    assert source["chart"] == "cluster-readiness-engine"
    assert source["targetRevision"] == "0.7.0"
    assert source["helm"]["valuesObject"]["nameOverride"] == "nvcre"
    assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"]


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_trainer_is_referenced_with_jobset_install_disabled(engine: str) -> None:
    manifests = platform_manifests(platform_site(engine=engine), None)
    if engine == "flux":
        source = one(manifests, "OCIRepository", "kubeflow-trainer")["spec"]
        assert source["url"] == "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
        assert source["ref"] == {"tag": "2.2.1"}
        spec = one(manifests, "HelmRelease", "kubeflow-trainer")["spec"]
        assert spec["upgrade"] == {"crds": "CreateReplace"}
        values = spec["values"]
    else:
        source = one(manifests, "Application", "lab-kubeflow-trainer")["spec"]["source"]
        assert (source["repoURL"], source["chart"]) == (
            "ghcr.io/kubeflow/charts",
            "kubeflow-trainer",
        )
        assert source["targetRevision"] == "2.2.1"
        values = source["helm"]["valuesObject"]
    assert values == {"jobset": {"install": False}}
    assert one(manifests, "Namespace", "kubeflow-system")
    assert not [m for m in manifests if m.kind == "CustomResourceDefinition"]


def test_the_jobset_value_name_is_the_trainer_charts_condition() -> None:
    chart = (ROOT / "schemas/upstream/kubeflow-trainer/v2.2.1/chart/Chart.yaml").read_text()
    assert "condition: jobset.install" in chart
    managed = platform_site(dependencies="jobset: {managed: true}")
    # the bundled JobSet's ServiceMonitor would need the Prometheus Operator's CRDs
    assert trainer_values(managed) == {"jobset": {"install": True, "prometheus": {"enable": False}}}
    assert trainer_values(platform_site()) == {"jobset": {"install": False}}


def test_an_unmanaged_trainer_emits_nothing_for_trainer() -> None:
    site = platform_site(dependencies="trainer: {managed: false}")
    names = {(m.kind, m.name) for m in platform_manifests(site, None)}
    assert not [name for _, name in names if "kubeflow" in name]


def test_nvcre_values_follow_the_site() -> None:
    site = platform_site(
        nvcre=f"pdb: true\nimage: {{digest: {MANAGER_DIGEST}}}",
        images=IMAGES + "mirror: registry.internal/mirror\n",
        tail=(
            "monitoring:\n  serviceMonitor:\n"
            "    labels: {release: kps}\n    interval: 30s\n    scrapeTimeout: 10s\n"
            "    honorLabels: false\n"
        ),
    )
    assert nvcre_values(site) == {
        "nameOverride": "nvcre",
        "manager": {
            "image": {"repository": f"registry.internal/mirror/{MANAGER}", "digest": MANAGER_DIGEST}
        },
        # nvcregen's monitoring layer scrapes the controller with TLS verification on.
        "metrics": {"serviceMonitor": {"enabled": False}},
        "pdb": {"enabled": True, "minAvailable": 1},
    }


# --- the chart archive: pins and renderer ---------------------------------------------


def test_a_mismatched_archive_is_refused_before_rendering(tmp_path: Path) -> None:
    wrong = "sha256:" + "0" * 64
    site = platform_site(nvcre=_pinned_chart(tmp_path, pin=wrong))
    with pytest.raises(HelmError) as caught:
        platform_manifests(site, None, base_dir=tmp_path)
    assert caught.value.code == "NVC401"
    actual = archive_sha256(tmp_path / "charts" / "cluster-readiness-engine-0.7.0.tgz")
    assert wrong in caught.value.message
    assert actual in caught.value.message


def test_a_missing_archive_is_nvc402(tmp_path: Path) -> None:
    site = platform_site(nvcre=f"chart: {{archive: charts/gone.tgz, sha256: {CHART_DIGEST}}}")
    with pytest.raises(HelmError) as caught:
        platform_manifests(site, None, base_dir=tmp_path)
    assert caught.value.code == "NVC402"


def test_a_pinned_archive_without_a_renderer_is_nvc403(tmp_path: Path) -> None:
    site = platform_site(nvcre=_pinned_chart(tmp_path))
    with pytest.raises(HelmError) as caught:
        platform_manifests(site, None, base_dir=tmp_path)
    assert caught.value.code == "NVC403"
    assert "nvcregen[helm]" in caught.value.hint


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_the_archive_renders_with_crds_apart(
    tmp_path: Path, renderer: HelmRenderer, engine: str
) -> None:
    site = platform_site(nvcre=_pinned_chart(tmp_path), engine=engine)
    manifests = platform_manifests(site, renderer, base_dir=tmp_path)
    crds = [m for m in manifests if m.component == "crds"]
    assert len(crds) == 7
    assert {m.kind for m in crds} == {"CustomResourceDefinition"}
    assert not [
        m for m in manifests if m.component != "crds" and m.kind == "CustomResourceDefinition"
    ]
    assert not by_kind(manifests, "Job")  # the hook
    assert not [
        m for m in manifests if m.name == "nvcre" and m.kind in {"HelmRelease", "Application"}
    ]
    deployment = one(manifests, "Deployment", "nvcre-manager")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"{MANAGER}@{MANAGER_DIGEST}"
    assert one(manifests, "Service", "nvcre-metrics-service")["spec"]["ports"][0] == {
        "name": "https",
        "port": 8443,
        "targetPort": "https",
        "protocol": "TCP",
    }
    assert_valid(manifests, "1.30")


@pytest.mark.slow
def test_the_charts_own_service_monitor_is_off(tmp_path: Path, renderer: HelmRenderer) -> None:
    """The chart's ServiceMonitor skips TLS verification; the monitoring layer scrapes instead."""
    site = platform_site(
        nvcre=_pinned_chart(tmp_path) + "pdb: true\n",
        tail=("monitoring:\n  serviceMonitor:\n    labels: {release: kps}\n    interval: 15s\n"),
    )
    manifests = platform_manifests(site, renderer, base_dir=tmp_path)
    assert not [m for m in manifests if m.kind == "ServiceMonitor"]
    assert one(manifests, "PodDisruptionBudget")["spec"]["minAvailable"] == 1


@pytest.mark.slow
def test_no_jobset_crd_unless_the_site_manages_jobset(
    tmp_path: Path, renderer: HelmRenderer
) -> None:
    nvcre = _pinned_chart(tmp_path, {JOBSET_CRD.name: JOBSET_CRD.read_bytes()})
    unmanaged = platform_manifests(platform_site(nvcre=nvcre), renderer, base_dir=tmp_path)
    names = {m.name for m in unmanaged if m.kind == "CustomResourceDefinition"}
    assert "jobsets.jobset.x-k8s.io" not in names
    managed_site = platform_site(nvcre=nvcre, dependencies="jobset: {managed: true}")
    managed = platform_manifests(managed_site, renderer, base_dir=tmp_path)
    assert "jobsets.jobset.x-k8s.io" in {m.name for m in managed if m.component == "crds"}


# --- NVC404: Kubernetes windows -----------------------------------------------------------


def _warnings(version: str, dependencies: str = "") -> list[str]:
    text = platform_text(version=version, dependencies=dependencies)
    site = platform_site(version=version, dependencies=dependencies)
    diags = check_platform(site, load(text))
    assert all(d.span.line == text[: text.index(f'"{version}"')].count("\n") + 1 for d in diags)
    assert all(d.code == "NVC404" and d.severity is Severity.WARNING for d in diags)
    assert all(d.path == "/spec/kubernetes/version" for d in diags)
    return [d.message for d in diags]


def test_trainer_below_its_minimum_kubernetes_warns() -> None:
    (message,) = _warnings("1.28")
    assert "Kubeflow Trainer 2.2.1 declares Kubernetes >= 1.29" in message
    assert _warnings("1.28", "trainer: {managed: false}") == []


def test_a_managed_jobset_outside_its_window_warns() -> None:
    assert _warnings("1.30") == []  # JobSet is the site's own
    (message,) = _warnings("1.30", "jobset: {managed: true}")
    assert "1.33 to 1.35" in message
    assert _warnings("1.34", "jobset: {managed: true}") == []


def test_argo_applications_join_the_sites_project_when_gitops_is_configured() -> None:
    plain = platform_manifests(platform_site(engine="argocd"), None)
    assert {m.obj["spec"]["project"] for m in by_kind(plain, "Application")} == {"default"}
    site = platform_site(engine="argocd", repo_url="https://git.example.com/gpu/readiness.git")
    apps = by_kind(platform_manifests(site, None), "Application")
    assert {m.obj["spec"]["project"] for m in apps} == {"lab"}
    assert sorted(m.name for m in apps) == ["lab-kubeflow-trainer", "lab-nvcre"]
    assert {m.obj["spec"]["source"]["helm"]["releaseName"] for m in apps} == {
        "nvcre",
        "kubeflow-trainer",
    }


# JobSet: a precondition when unmanaged, Trainer's bundled subchart when managed


def test_an_unmanaged_jobset_is_a_precondition_on_the_runs_namespace() -> None:
    manifests = platform_manifests(platform_site(), None)
    annotations = one(manifests, "Namespace", "nvcre")["metadata"]["annotations"]
    assert annotations == {"nvcregen.io/requires": "jobset.x-k8s.io/v1alpha2/JobSet"}
    managed = platform_manifests(platform_site(dependencies="jobset: {managed: true}"), None)
    assert "annotations" not in one(managed, "Namespace", "nvcre")["metadata"]


def test_a_managed_jobset_without_a_managed_trainer_is_nvc375() -> None:
    text = platform_text(dependencies="trainer: {managed: false}\njobset: {managed: true}")
    site, doc = parse(text)
    (diag,) = [d for d in check_platform(site, doc) if d.code == "NVC375"]
    assert diag.is_error and diag.path == "/spec/dependencies/jobset/managed"
