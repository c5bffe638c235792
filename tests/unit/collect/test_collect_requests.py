"""What collect reads and deletes for a site (pure), and that the collector's RBAC allows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from labstate import find, lab_state

from nvcregen.collect.requests import (
    DeleteRequest,
    ListRequest,
    owner_requests,
    reclaim_requests,
    result_requests,
)
from nvcregen.compile.platform.layer import collector_rbac
from nvcregen.spec.v1alpha1 import Site

SITE_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "collect" / "site.yaml"


@pytest.fixture(scope="module")
def site() -> Site:
    return Site.model_validate(yaml.safe_load(SITE_FILE.read_text()))


def test_the_first_pass_lists_the_sites_objects_by_label(site: Site) -> None:
    assert [(r.kind, r.namespace, r.label_selector) for r in owner_requests(site)] == [
        ("Certification", "nvcre", "nvcregen.io/site=lab"),
        ("WorkloadRun", "nvcre", "nvcregen.io/site=lab"),
        ("Workflow", "nvcre", ""),
    ]


def test_the_second_pass_follows_the_workflows_job_namespaces(site: Site) -> None:
    workflows = [
        {"spec": {"namespace": "nvcre-jobs-a"}, "status": {"namespace": "nvcre-jobs-a"}},
        {"spec": {}, "status": {"namespace": "nvcre-jobs-b"}},
    ]
    requests = result_requests(site, workflows)
    assert [(r.kind, r.namespace) for r in requests] == [
        ("BandwidthMeasurement", "nvcre"),
        ("BandwidthMeasurement", "nvcre-jobs-a"),
        ("BandwidthMeasurement", "nvcre-jobs-b"),
        ("GoodputMeasurement", "nvcre"),
        ("GoodputMeasurement", "nvcre-jobs-a"),
        ("GoodputMeasurement", "nvcre-jobs-b"),
        ("ConfigMap", "nvcre"),
        ("ReportExport", "nvcre"),
    ]
    assert all(not r.label_selector for r in requests)


def test_list_requests_are_paginated_paths() -> None:
    request = ListRequest("Certification", "nvcre", "nvcregen.io/site=lab", limit=2)
    assert request.path() == "/apis/nvcre.nvidia.com/v1alpha1/namespaces/nvcre/certifications"
    assert request.query() == [("limit", "2"), ("labelSelector", "nvcregen.io/site=lab")]
    assert request.query("tok")[-1] == ("continue", "tok")
    assert ListRequest("ConfigMap", "nvcre").path() == "/api/v1/namespaces/nvcre/configmaps"
    assert ListRequest("Workflow", None).path() == "/apis/nvcre.nvidia.com/v1alpha1/workflows"


def test_a_delete_pins_the_archived_uid_and_version_and_orphans_the_rest() -> None:
    request = DeleteRequest("Certification", "nvcre", "lab-two-node-0002", "uid-cert-2", "712")
    assert (
        request.path()
        == "/apis/nvcre.nvidia.com/v1alpha1/namespaces/nvcre/certifications/lab-two-node-0002"
    )
    assert request.body() == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Orphan",
        "preconditions": {"uid": "uid-cert-2", "resourceVersion": "712"},
    }


def test_reclaim_deletes_only_this_sites_labelled_owners(site: Site) -> None:
    objects = lab_state()
    moved = find(objects, "Certification", "lab-single-node-0001")
    moved["metadata"]["namespace"] = "elsewhere"  # labelled, but not in the site's namespace
    unsaved = find(objects, "WorkloadRun", "lab-single-node-dcgm-l1-0003")
    del unsaved["metadata"]["uid"]  # not read from a cluster
    deletes = reclaim_requests(site, objects)
    owners = [(d.kind, d.name) for d in deletes if d.kind in {"Certification", "WorkloadRun"}]
    assert owners == [
        ("Certification", "lab-two-node-0002"),
        ("WorkloadRun", "lab-two-node-nccl-all-reduce-tcp-0004"),
    ]
    # What they own comes first, each naming its owner; the other site's objects never.
    depth = {d.uid: i for i, d in enumerate(deletes)}
    assert all(depth[owner] > depth[d.uid] for d in deletes for owner in d.owners)
    assert {d.kind for d in deletes} == {
        "Certification",
        "WorkloadRun",
        "Workflow",
        "BandwidthMeasurement",
        "GoodputMeasurement",
        "ConfigMap",
    }
    every = {d.name for d in reclaim_requests(site, lab_state())}
    assert not {n for n in every if n.startswith("other-site")}
    assert "snapshot-r-lab-two-node" not in every  # a ReportExport's, not a Certification's
    wf = next(d for d in deletes if d.name == "lab-two-node-0002-communication-nccl-all-reduce")
    assert wf.owners == ("uid-cert-2",)


def _allows(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(
        group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules
    )


def test_the_collectors_rbac_allows_every_list_collect_makes(site: Site) -> None:
    objects = {m.obj["kind"]: m.obj for m in collector_rbac(site)}
    cluster_rules = objects["ClusterRole"]["rules"]
    namespace_rules = objects["Role"]["rules"]
    assert objects["Role"]["metadata"]["namespace"] == site.spec.nvcre.namespace
    workflows = [{"status": {"namespace": "nvcre-jobs"}}]
    for request in (*owner_requests(site), *result_requests(site, workflows)):
        group = request.api_version.rpartition("/")[0]
        allowed = _allows(cluster_rules, group, request.plural, "list") or (
            request.namespace == site.spec.nvcre.namespace
            and _allows(namespace_rules, group, request.plural, "list")
        )
        assert allowed, f"the collector may not list {request}"


def test_the_collectors_rbac_is_read_only(site: Site) -> None:
    verbs = {
        v for m in collector_rbac(site) for rule in m.obj.get("rules", []) for v in rule["verbs"]
    }
    assert verbs <= {"get", "list", "watch"}
