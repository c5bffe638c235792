"""Tests of nvcregen.compile.postprocess: labels, annotations and a fixed order."""

from __future__ import annotations

import copy
from typing import Any

from sitefactory import edit, site, site_yaml, units_of

from nvcregen.compile.postprocess import postprocess
from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests

PRUNE = {
    "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
    "kustomize.toolkit.fluxcd.io/prune": "disabled",
}


def obj(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


def labelled_site_text() -> str:
    return edit(site_yaml(), "  name: lab\n", "  name: lab\n  labels: {team: gpu-infra}\n")


def test_readiness_objects_get_labels_annotations_and_prune_protection() -> None:
    text = labelled_site_text()
    parsed = site(text)
    found = postprocess(readiness_manifests(parsed, units_of(text)), parsed, "sites/lab.yaml")
    assert [m.kind for m in found] == ["Certification", "Certification", "WorkloadRun"]
    for m in found:
        meta = m.obj["metadata"]
        assert meta["labels"]["app.kubernetes.io/managed-by"] == "nvcregen"
        assert meta["labels"]["nvcregen.io/site"] == "lab"
        assert "team" not in meta["labels"]  # the site's own bookkeeping (its schema says so)
        assert meta["annotations"] == {"nvcregen.io/source": f"sites/lab.yaml#{m.source}", **PRUNE}
    run = found[2]
    assert run.obj["metadata"]["labels"]["nvcregen.io/stage"] == "node"
    assert run.obj["metadata"]["labels"]["nvcregen.io/test"] == "dcgm-l1"
    assert "nvcregen.io/test" not in found[0].obj["metadata"]["labels"]  # a whole stage


def test_only_nvcregen_workload_labels_are_copied_and_existing_ones_kept() -> None:
    source = obj(
        "WorkloadRun",
        "run",
        workloadMetadata={
            "labels": {
                "nvcregen.io/stage": "s",
                "nvcregen.io/test": "dcgm-l1",
                "kueue.x-k8s.io/queue-name": "gpu",
            }
        },
    )
    source["metadata"]["labels"] = {"keep": "me"}
    source["metadata"]["annotations"] = {"note": "kept"}
    (m,) = postprocess([Manifest(source, "readiness", "/x")], site(), "s.yaml")
    assert m.obj["metadata"]["labels"] == {
        "keep": "me",
        "app.kubernetes.io/managed-by": "nvcregen",
        "nvcregen.io/site": "lab",
        "nvcregen.io/stage": "s",
        "nvcregen.io/test": "dcgm-l1",
    }
    assert m.obj["metadata"]["annotations"]["note"] == "kept"


def test_prune_protection_only_for_readiness_objects() -> None:
    found = postprocess(
        [Manifest(obj("ConfigMap", "c"), "platform", "/spec/monitoring")], site(), "s.yaml"
    )
    assert found[0].obj["metadata"]["annotations"] == {
        "nvcregen.io/source": "s.yaml#/spec/monitoring"
    }


def test_order_is_component_then_kind_then_name() -> None:
    given = [
        Manifest(obj("WorkloadRun", "a-run"), "readiness", "/1"),
        Manifest(obj("Certification", "z-cert"), "readiness", "/2"),
        Manifest(obj("ConfigMap", "cm"), "readiness", "/3"),
        Manifest(obj("Certification", "b-cert"), "readiness", "/4"),
        Manifest(obj("LogProfile", "profile"), "readiness", "/5"),
        Manifest(obj("Namespace", "ns"), "base", "/6"),
        Manifest(obj("WorkloadRun", "0-run"), "readiness", "/7"),
    ]
    found = postprocess(given, site(), "s.yaml")
    assert [(m.kind, m.name) for m in found] == [
        ("Namespace", "ns"),  # component "base" sorts before "readiness"
        ("LogProfile", "profile"),
        ("Certification", "b-cert"),
        ("Certification", "z-cert"),
        ("WorkloadRun", "0-run"),
        ("WorkloadRun", "a-run"),
        ("ConfigMap", "cm"),  # kinds without a rank come last
    ]


def test_inputs_are_not_mutated_and_origins_are_kept() -> None:
    text = labelled_site_text()
    parsed = site(text)
    given = readiness_manifests(parsed, units_of(text))
    before = copy.deepcopy([m.obj for m in given])
    found = postprocess(given, parsed, "sites/lab.yaml")
    assert [m.obj for m in given] == before
    assert all("labels" not in m.obj["metadata"] for m in given)
    by_name = {m.name: m for m in given}
    for m in found:
        original = by_name[m.name]
        assert (m.component, m.source, m.catalog, m.notes) == (
            original.component,
            original.source,
            original.catalog,
            original.notes,
        )
        assert m.obj["spec"] == original.obj["spec"]
        assert m.obj["metadata"] is not original.obj["metadata"]
