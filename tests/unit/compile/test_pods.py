"""Readiness pods: cpu and memory from the catalog, the pool's tolerations, Pod Security.

Issue 12 item 3: no pod was sized (BestEffort), none tolerated GPU node taints, and the
namespaces carried no Pod Security label although `IPC_LOCK` is beyond `baseline`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from sitefactory import POOL, catalog, load, parse, plan_of, site_yaml
from trainerfactory import compiled, trainer_text

from nvcregen.check.crossref import Located
from nvcregen.check.pods import check_pod_security, request_findings
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.readiness.pods import check_tolerations
from nvcregen.core.manifest import Manifest
from nvcregen.core.podsecurity import ENFORCE, needed_level, pod_specs
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.engines.readiness.nvcre.preview import preview_manifests
from nvcregen.plan.resolve import plan
from nvcregen.spec.parse import parse_model
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.schema import validate_schema

TAINTED = (
    POOL + "  tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
)
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _nvcre(text: str) -> list[Manifest]:
    site, _ = parse(text)
    readiness = readiness_manifests(site, plan(site, catalog()))
    return readiness + preview_manifests(readiness)


def _all(text: str) -> list[Manifest]:
    site, _ = parse(text)
    return site_manifests(plan_of(site), root=Path())


# requests and limits


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_every_readiness_pod_is_sized(mode: str) -> None:
    text = site_yaml() if mode == "nvcre" else trainer_text(site_yaml())
    found = _nvcre(text) if mode == "nvcre" else compiled(text)
    readiness = [m for m in found if m.component == "readiness"]
    assert readiness
    for manifest in readiness:
        assert request_findings(manifest.obj) == [], manifest.name


def test_a_pod_without_requests_is_nvc683() -> None:
    job = next(m.obj for m in compiled(trainer_text(site_yaml())) if m.kind == "Job")
    bare = copy.deepcopy(job)
    del bare["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    bare["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"].pop("cpu")
    (finding,) = request_findings(bare)
    assert (finding.code, finding.pointer) == ("NVC683", "/spec/template/spec/containers/0")
    assert "requests no cpu" in finding.message
    # What trainer mode wrote before issue 12: GPUs only.
    train_job = next(m.obj for m in compiled(trainer_text(site_yaml())) if m.kind == "TrainJob")
    old = copy.deepcopy(train_job)
    old["spec"]["trainer"]["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": 8}}
    assert [f.pointer for f in request_findings(old)] == ["/spec/trainer/resourcesPerNode"]


def test_workloadruns_ask_for_the_catalogs_cpu_and_memory() -> None:
    runs = [m.obj for m in _nvcre(site_yaml()) if m.kind == "WorkloadRun"]
    sizes = catalog().pods
    for run in runs:
        kind = "dcgm" if "exec" in run["spec"]["framework"] else "nccl"
        size = getattr(sizes, kind)
        assert run["spec"]["resources"]["requests"] == size.requests.as_resources()
        assert run["spec"]["resources"]["limits"]["nvidia.com/gpu"] == 8  # named, not derived


# tolerations


def test_trainer_mode_pods_tolerate_the_pools_taints() -> None:
    found = compiled(trainer_text(site_yaml(pools=TAINTED)))
    pods = [pod for m in found for _, pod in pod_specs(m.obj)]
    assert pods
    assert all(pod["tolerations"] == [TOLERATION] for pod in pods)
    untainted = compiled(trainer_text(site_yaml()))
    assert not any("tolerations" in pod for m in untainted for _, pod in pod_specs(m.obj))


def test_nvcre_mode_names_the_taints_and_the_preview_shows_the_tolerations() -> None:
    found = _nvcre(site_yaml(pools=TAINTED))
    for manifest in found:
        if manifest.kind in {"Certification", "WorkloadRun"}:
            assert manifest.obj["spec"]["target"]["taintSelectors"] == [
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
            ]
    preview = [pod for m in found if m.component == "preview" for _, pod in pod_specs(m.obj)]
    assert preview and all(pod["tolerations"] == [TOLERATION] for pod in preview)


def _nvc374(text: str) -> list[tuple[str, str]]:
    site, doc = parse(text)
    return [(d.severity.value, d.path) for d in check_tolerations(site, doc)]


def test_nvcre_mode_warns_when_keyed_tolerations_drop_a_keyless_one() -> None:
    keyless = TAINTED + "    - {operator: Exists}\n"
    assert _nvc374(site_yaml(pools=keyless)) == [("warning", "/spec/nodePools/0/tolerations/1")]
    alone = POOL + "  tolerations:\n    - {operator: Exists}\n"
    assert _nvc374(site_yaml(pools=alone)) == []  # NVCRE's blanket toleration covers it
    assert _nvc374(site_yaml(pools=TAINTED)) == []
    assert _nvc374(trainer_text(site_yaml(pools=keyless))) == []  # written as they are


@pytest.mark.parametrize(
    "toleration",
    ["{key: a, operator: Exists, value: b}", "{operator: Equal, value: b}", "{effect: Sometimes}"],
)
def test_inconsistent_tolerations_are_refused(toleration: str) -> None:
    text = site_yaml(pools=POOL + f"  tolerations: [{toleration}]\n")
    doc = load(text)
    schema = validate_schema(doc)
    parsed, diags = parse_model(doc, Site)
    assert any(d.is_error for d in schema + diags)
    assert parsed is None or any(d.is_error for d in schema)


# Pod Security


def _namespaces(found: list[Manifest]) -> dict[str, dict[str, str]]:
    return {m.name: m.obj["metadata"]["labels"] for m in found if m.kind == "Namespace"}


@pytest.mark.parametrize("mode", ["nvcre", "trainer"])
def test_the_readiness_namespace_is_privileged_and_controllers_baseline(mode: str) -> None:
    text = site_yaml() if mode == "nvcre" else trainer_text(site_yaml())
    labels = _namespaces(_all(text))
    assert labels["nvcre"][ENFORCE] == "privileged"  # IPC_LOCK
    assert labels["nvcre"]["pod-security.kubernetes.io/enforce-version"] == "v1.30"
    assert labels["kubeflow-system"][ENFORCE] == "baseline"


def test_ipc_lock_and_host_network_need_privileged() -> None:
    runtime = next(
        m.obj for m in compiled(trainer_text(site_yaml())) if m.kind == "TrainingRuntime"
    )
    assert needed_level(runtime) == ("privileged", ["capability IPC_LOCK"])
    job = next(m.obj for m in compiled(trainer_text(site_yaml())) if m.kind == "Job")
    assert needed_level(job) == ("baseline", [])
    job = copy.deepcopy(job)
    job["spec"]["template"]["spec"]["hostNetwork"] = True
    assert needed_level(job) == ("privileged", ["hostNetwork: true"])
    assert needed_level({"apiVersion": "v1", "kind": "ConfigMap"}) is None


def _located(found: list[Manifest]) -> list[Located]:
    return [Located(f"{m.component}/{m.kind}-{m.name}", m.obj) for m in found]


def test_a_namespace_too_strict_for_its_pods_is_nvc682() -> None:
    found = _all(trainer_text(site_yaml()))
    assert list(check_pod_security(_located(found))) == []
    strict: list[Manifest] = []
    for m in found:
        if m.kind == "Namespace" and m.name == "nvcre":
            obj: dict[str, Any] = copy.deepcopy(m.obj)
            obj["metadata"]["labels"][ENFORCE] = "baseline"
            m = Manifest(obj, m.component, m.source)  # noqa: PLW2901
        strict.append(m)
    problems = [f for _, f in check_pod_security(_located(strict))]
    assert problems and {f.code for f in problems} == {"NVC682"}
    assert "need Pod Security level privileged (capability IPC_LOCK)" in problems[0].message


def test_a_namespace_without_a_level_is_nvc682() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nvcre"}}
    ((_, finding),) = check_pod_security([Located("ns.yaml", namespace)])
    assert finding.code == "NVC682" and finding.pointer == "/metadata/labels"


def test_a_pools_tolerations_read_as_kubernetes_writes_them() -> None:
    parsed, _ = parse(site_yaml(pools=TAINTED))
    assert parsed.spec.node_pools[0].tolerations[0].as_toleration() == TOLERATION
