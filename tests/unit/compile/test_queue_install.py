"""Kueue 0.19.2 in the platform layer (nvcregen.compile.queue.install).

The Configuration is checked against the vendored upstream default, and the chart values
nvcregen sets against the vendored chart's values.yaml, so a key that Kueue 0.19.2 does
not have cannot slip in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from sitefactory import STAGES, catalog, parse, site_yaml

from nvcregen.check.objectcheck import object_findings
from nvcregen.compile.queue.install import (
    FRAMEWORKS,
    kueue_configuration,
    kueue_install,
    kueue_values,
    pods_ready_timeout,
)
from nvcregen.compile.queue.objects import queue_manifests
from nvcregen.plan.resolve import plan

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = ROOT / "schemas" / "upstream" / "kueue" / "v0.19.2"
DIGEST = "sha256:" + "e" * 64
GITOPS = "  gitops: {engine: flux, repoURL: https://git.example.com/r.git}\n"  # under spec
Obj = dict[str, Any]


def built(text: str) -> tuple[Obj, Obj]:
    """(values, Configuration) of a site."""
    site, _ = parse(text)
    units = plan(site, catalog())
    return kueue_values(site, units), kueue_configuration(site, units)


def timeout_of(text: str) -> str:
    site, _ = parse(text)
    return pods_ready_timeout(site, plan(site, catalog()))


def test_the_configuration_is_upstreams_default_but_for_two_settings() -> None:
    upstream = yaml.safe_load((UPSTREAM / "config" / "controller_manager_config.yaml").read_text())
    _, ours = built(site_yaml())
    assert set(ours) - set(upstream) == {"waitForPodsReady"}
    for key in set(upstream) - {"integrations"}:
        assert ours[key] == upstream[key], key
    assert ours["integrations"] == {"frameworks": ["batch/job", "trainer.kubeflow.org/trainjob"]}
    assert set(FRAMEWORKS) <= set(upstream["integrations"]["frameworks"])


def test_wait_for_pods_ready_requeues_a_finite_number_of_times_without_blocking() -> None:
    text = site_yaml(dependencies="kueue: {requeueLimit: 5}\n")
    _, ours = built(text)
    ready = ours["waitForPodsReady"]
    # not blocking is safe only while Kueue places every run itself: each flavor is TAS
    assert ready["blockAdmission"] is False
    site, _ = parse(text)
    flavors = [
        m.obj
        for m in queue_manifests(site, plan(site, catalog()))
        if m.obj["kind"] == "ResourceFlavor"
    ]
    assert flavors
    assert all(f["spec"]["topologyName"] for f in flavors)
    assert ready["requeuingStrategy"]["backoffLimitCount"] == 5
    assert ready["requeuingStrategy"]["timestamp"] == "Eviction"


def test_the_values_carry_the_configuration_as_yaml_text() -> None:
    values, ours = built(site_yaml())
    text = values["managerConfig"]["controllerManagerConfigYaml"]
    assert isinstance(text, str)
    assert yaml.safe_load(text) == ours


def _paths(value: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if not isinstance(value, dict):
        return {prefix}
    return {p for key, item in value.items() for p in _paths(item, (*prefix, key))}


def test_every_value_nvcregen_sets_is_a_key_of_the_chart() -> None:
    chart = yaml.safe_load((UPSTREAM / "chart" / "values.yaml").read_text())
    values, _ = built(site_yaml())
    assert _paths(values) <= _paths(chart)


def test_the_release_image_behind_the_mirror_and_pinned_by_digest() -> None:
    images = "mirror: registry.internal/m\nnccl: nvcr.io/nvidia/pytorch:26.01-py3\n"
    text = site_yaml(images=images, dependencies=f"kueue: {{imageDigest: {DIGEST}}}\n")
    image = built(text)[0]["controllerManager"]["manager"]["image"]
    assert image == {
        "repository": "registry.internal/m/registry.k8s.io/kueue/kueue",
        "tag": f"v0.19.2@{DIGEST}",
        "pullPolicy": "IfNotPresent",
    }


@pytest.mark.parametrize(
    ("stages", "dependencies", "timeout"),
    [
        # dcgm-l1 (timeout 3m: 90 s expected x 2) is the shortest test: never under ten minutes
        (None, "", "10m"),
        # dcgm-l3 alone: 30m30s expected (30 s start-up + 30m) x 2 = 1h1m
        ("- {name: diag, scope: intra-node, tests: [dcgm-l3]}\n", "", "1h1m"),
        (None, "kueue: {podsReadyTimeout: 1h30m}\n", "1h30m"),
    ],
)
def test_pods_ready_timeout_comes_from_the_plan(
    stages: str | None, dependencies: str, timeout: str
) -> None:
    text = site_yaml(dependencies=dependencies, stages=stages or STAGES)
    assert timeout_of(text) == timeout


def test_flux_installs_the_pinned_chart_and_every_object_is_valid() -> None:
    text = site_yaml(dependencies=f"kueue: {{chartDigest: {DIGEST}}}\n") + GITOPS
    site, _ = parse(text)
    found = kueue_install(site, plan(site, catalog()))
    kinds = {m.kind: m.obj for m in found}
    assert set(kinds) == {"Namespace", "OCIRepository", "HelmRelease"}
    assert kinds["OCIRepository"]["spec"]["ref"] == {"tag": "0.19.2", "digest": DIGEST}
    assert kinds["OCIRepository"]["spec"]["url"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert kinds["Namespace"]["metadata"]["name"] == "kueue-system"
    for manifest in found:
        assert object_findings(manifest.obj) == [], manifest.kind


def test_nothing_is_installed_for_an_external_kueue_or_a_gang_scheduler() -> None:
    for dependencies in (
        "kueue: {managed: false, version: 0.18.6}\n",
        "gangScheduler: {schedulerName: kai-scheduler}\n",
    ):
        site, _ = parse(site_yaml(dependencies=dependencies))
        assert kueue_install(site, plan(site, catalog())) == []
