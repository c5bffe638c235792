"""Picking a site's objects (labels, then ownership) and putting its runs back together."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from labstate import find, lab_state, node_results

import nvcregen.plan.resolve as planning
from nvcregen.catalog.load import load_catalog
from nvcregen.chain.pipeline import Options, compile_site
from nvcregen.plan.model import TestUnit
from nvcregen.results.models import RunState
from nvcregen.results.runs import assemble_runs
from nvcregen.results.select import select_owners, select_site_objects
from nvcregen.spec.v1alpha1 import Site

ROOT = Path(__file__).resolve().parents[3]
SITE_FILE = ROOT / "tests" / "fixtures" / "collect" / "site.yaml"


@pytest.fixture(scope="module")
def site() -> Site:
    return Site.model_validate(yaml.safe_load(SITE_FILE.read_text()))


@pytest.fixture(scope="module")
def units(site: Site) -> list[TestUnit]:
    return planning.plan(site, load_catalog())


def names(objects: tuple[dict[str, object], ...]) -> set[str]:
    return {str(o["metadata"]["name"]) for o in objects}  # type: ignore[index]


def test_a_sites_objects_are_found_by_label_then_by_owner(site: Site) -> None:
    selected = select_site_objects(site, lab_state())
    assert len(selected.owners) == 4
    assert len(selected.workflows) == 5
    assert len(selected.bandwidth) == 12
    assert len(selected.goodput) == 3
    assert names(selected.exports) == {"rex-r-lab-two-node"}
    assert "snapshot-r-lab-two-node" in names(selected.configmaps)
    assert len(selected.configmaps) == 6
    everything = names(selected.all())
    assert not {n for n in everything if n.startswith("other-site")}
    assert "kube-root-ca.crt" not in everything


def test_without_owner_references_status_names_and_job_names_still_tie_objects(site: Site) -> None:
    objects = lab_state()
    for obj in objects:
        obj["metadata"].pop("ownerReferences", None)
    selected = select_site_objects(site, objects)
    assert len(selected.workflows) == 5  # named by workflowRef
    assert len(selected.bandwidth) == 12  # their jobRef names a Job of a site Workflow
    assert len(selected.goodput) == 3
    assert "snapshot-r-lab-two-node" in names(selected.configmaps)  # named by snapshotRef


def test_the_rendered_readiness_objects_carry_the_labels_collect_selects_by(site: Site) -> None:
    result = compile_site(
        SITE_FILE, "tests/fixtures/collect/site.yaml", load_catalog(), Options(root=ROOT)
    )
    assert result.tree is not None, result.diagnostics
    rendered = [
        yaml.safe_load(text) for path, text in result.tree.items() if path.startswith("readiness/")
    ]
    owners = [o for o in rendered if o["kind"] in {"Certification", "WorkloadRun"}]
    assert len(owners) == 4

    def key(obj: dict[str, Any]) -> tuple[str, str]:
        return obj["kind"], obj["metadata"]["name"]

    # Files sit in one folder per stage; collect's order is its own.
    assert sorted(select_owners(site, rendered), key=key) == sorted(owners, key=key)


def test_runs_are_put_back_together_per_planned_test(units: list[TestUnit]) -> None:
    site = Site.model_validate(yaml.safe_load(SITE_FILE.read_text()))
    runs = assemble_runs(units, select_site_objects(site, lab_state()))
    assert [(r.stage, r.test, r.state) for r in runs.runs] == [
        ("single-node", "nccl-all-reduce", RunState.SUCCEEDED),
        ("single-node", "dcgm-l1", RunState.SUCCEEDED),
        ("two-node", "nccl-all-reduce", RunState.SUCCEEDED),
        ("two-node", "nccl-all-reduce-tcp", RunState.SUCCEEDED),
        ("two-node", "training-goodput", RunState.SUCCEEDED),
    ]
    single, _, two, tcp, training = runs.runs
    assert [(m.group, m.iteration, m.nodes) for m in single.bandwidth] == [
        ("node-a", 1, ("node-a",)),
        ("node-a", 2, ("node-a",)),
        ("node-a", 3, ("node-a",)),
        ("node-b", 1, ("node-b",)),
        ("node-b", 2, ("node-b",)),
        ("node-b", 3, ("node-b",)),
    ]
    assert [m.at(1 << 30).bus_bw for m in two.bandwidth] == [363.76, 427.58, 452.28]  # type: ignore[union-attr]
    assert (two.expected_transport, tcp.expected_transport, tcp.pinned_transport) == (
        "IB",
        "Socket",
        "Socket",
    )
    assert [m.ratio for m in training.goodput] == [0.942373, 0.95, 0.93]
    assert two.succeeded_nodes == ("node-a", "node-b")
    assert runs.exports[0].verification == "verified"
    assert runs.problems == ()


def test_failed_and_excluded_nodes_come_with_their_reasons(
    site: Site, units: list[TestUnit]
) -> None:
    objects = lab_state()
    wf = find(objects, "Workflow", "lab-single-node-0001-communication-nccl-all-reduce")
    wf["status"]["orchestration"]["excludedNodes"] = ["node-c"]
    wf["status"]["orchestration"]["exclusionReason"] = "node-c is cordoned"
    wf["status"]["failedNodesRef"] = {"kind": "ConfigMap", "name": "nodes-failed"}
    wf["status"]["failedNodes"] = [
        {"name": "node-b", "reason": "ThresholdViolation", "message": "401.2 < 420"}
    ]
    rows = [
        {"name": "node-b", "reason": "ThresholdViolation", "message": "401.2 < 420"},
        {"name": "node-d", "reason": "HardwareFailureDetected", "message": "Xid 79"},
    ]
    objects.append(node_results("nodes-failed", wf, failed=rows))
    single = assemble_runs(units, select_site_objects(site, objects)).runs[0]
    assert single.excluded_nodes == ("node-c",)
    assert single.exclusion_reason == "node-c is cordoned"
    assert [(n.name, n.reason) for n in single.failed_nodes] == [
        ("node-b", "ThresholdViolation"),
        ("node-d", "HardwareFailureDetected"),
    ]


def test_a_corrupt_node_results_configmap_is_a_problem_not_a_crash(
    site: Site, units: list[TestUnit]
) -> None:
    objects = lab_state()
    cm = find(objects, "ConfigMap", "nodes-lab-two-node-0002-nccl-all-reduce-ok")
    cm["binaryData"]["succeeded-nodes.csv.gz"] = "bm90IGd6aXA="  # "not gzip"
    two = assemble_runs(units, select_site_objects(site, objects)).runs[2]
    assert two.problems and "not base64 gzip" in two.problems[0]


def test_a_planned_test_nothing_ran_is_not_found(site: Site, units: list[TestUnit]) -> None:
    objects = [o for o in lab_state() if o["metadata"]["name"] != "lab-single-node-dcgm-l1-0003"]
    dcgm = assemble_runs(units, select_site_objects(site, objects)).runs[1]
    assert (dcgm.test, dcgm.state, dcgm.reason, dcgm.source) == (
        "dcgm-l1",
        RunState.PENDING,
        "NotFound",
        None,
    )


def test_the_newest_run_of_a_stage_is_judged_and_older_ones_are_listed(
    site: Site, units: list[TestUnit]
) -> None:
    objects = lab_state()
    old = copy.deepcopy(find(objects, "Certification", "lab-single-node-0001"))
    old["metadata"].update(
        name="lab-single-node-0000", uid="uid-cert-0", creationTimestamp="2026-10-13T08:00:00Z"
    )
    old["status"]["categoryStatuses"][0]["status"] = "Failed"
    objects.append(old)
    single = assemble_runs(units, select_site_objects(site, objects)).runs[0]
    assert single.source is not None and single.source.name == "lab-single-node-0001"
    assert single.superseded == ("lab-single-node-0000",)
    assert single.state is RunState.SUCCEEDED


def test_measurements_of_jobs_the_workflow_no_longer_names_come_after_the_known_rounds(
    site: Site, units: list[TestUnit]
) -> None:
    objects = lab_state()
    bm = find(
        objects,
        "BandwidthMeasurement",
        "lab-two-node-0002-communication-nccl-all-reduce-group-0-3-job-bw",
    )
    retried = copy.deepcopy(bm)
    retried["metadata"].update(name="retried-bw", uid="uid-retried")
    retried["spec"]["jobRef"]["name"] = "a-deleted-job"
    objects.append(retried)
    two = assemble_runs(units, select_site_objects(site, objects)).runs[2]
    assert [(m.ref.name, m.group, m.iteration) for m in two.bandwidth][-1] == (
        "retried-bw",
        "group-0",
        4,
    )
    assert [m.iteration for m in two.bandwidth] == [1, 2, 3, 4]
