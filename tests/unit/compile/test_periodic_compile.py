"""Periodic re-certification compiled (nvcregen.engines.readiness.trainer.periodic, issue 37)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from periodicfactory import periodic_text
from sitefactory import catalog, edit, parse, plan_of
from trainerfactory import ROOT

from nvcregen.check.admission import admission_findings
from nvcregen.check.gate import check_manifests
from nvcregen.cli import main
from nvcregen.compile.layers import site_manifests
from nvcregen.compile.postprocess import postprocess
from nvcregen.compile.queue.workloads import periodic_priority_value, priority_value
from nvcregen.compile.readiness.mpi import RUN_NAME_MAX
from nvcregen.core.kueuekeys import PRIORITY_LABEL, QUEUE_LABEL
from nvcregen.core.labels import ROUND
from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.trainer.packed import node_pack_job
from nvcregen.engines.readiness.trainer.periodic import CRONJOB_NAME_MAX
from nvcregen.plan.periodic import START_SLACK_S, periodic_packs
from nvcregen.plan.resolve import plan
from nvcregen.spec.v1alpha1 import Site

Obj = dict[str, Any]
CLASS = "h20-3e-trainer-periodic"


def compiled(text: str) -> tuple[Site, list[Manifest]]:
    site, _ = parse(text)
    return site, site_manifests(plan_of(site), ROOT)


def cronjobs(found: list[Manifest]) -> list[Obj]:
    return [m.obj for m in found if m.kind == "CronJob"]


def periodic(body: str) -> str:
    return periodic_text(f"    periodic: {body}\n")


def test_a_cronjob_per_pack_and_chunk_in_a_layer_of_their_own() -> None:
    _, found = compiled(periodic_text())
    jobs = cronjobs(found)
    # the single-node stage's DCGM levels (dcgm image) and NCCL tests (nccl image)
    assert [j["metadata"]["labels"]["nvcregen.io/test"] for j in jobs] == [
        "periodic-0",
        "periodic-1",
    ]
    assert {m.component for m in found if m.kind in ("CronJob", "PriorityClass")} == {"periodic"}
    assert [j["metadata"]["annotations"]["nvcregen.io/tests"] for j in jobs] == [
        "dcgm-l1,dcgm-l2",
        "nccl-all-reduce,nccl-all-gather,nccl-alltoall",
    ]
    assert all(len(j["metadata"]["name"]) <= CRONJOB_NAME_MAX for j in jobs)
    # one chunk per node at a window of one job at a time: a CronJob per pack and chunk
    one = edit(periodic_text(), "maxConcurrentJobs: 2", "maxConcurrentJobs: 1")
    names = [j["metadata"]["name"] for j in cronjobs(compiled(one)[1])]
    assert len(names) == 4
    assert [n.rsplit("-", 1)[1] for n in names] == ["c0", "c1", "c0", "c1"]
    assert all(len(n) <= RUN_NAME_MAX for n in names)  # a period's pods stay 63-char labels


def test_the_job_template_is_the_packed_job_of_one_round() -> None:
    site, found = compiled(periodic_text())
    packs = periodic_packs(site, plan(site, catalog()))
    for pack, cron in zip(packs, cronjobs(found), strict=True):
        packed = node_pack_job(site, pack, 1, (0, pack.chunks()[0])).obj
        template = cron["spec"]["jobTemplate"]
        spec = dict(template["spec"])
        pod = dict(spec["template"]["spec"])
        assert pod.pop("priorityClassName") == CLASS
        assert pod == packed["spec"]["template"]["spec"]
        assert spec.pop("podFailurePolicy") == {
            "rules": [
                {
                    "action": "Ignore",
                    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                }
            ]
        }
        deadline = spec.pop("activeDeadlineSeconds")
        assert deadline == -(-pack.timeout_ms // 1000) + START_SLACK_S
        expected = {k: v for k, v in packed["spec"].items() if k != "activeDeadlineSeconds"}
        assert {k: v for k, v in spec.items() if k != "template"} == {
            k: v for k, v in expected.items() if k != "template"
        }
        assert ROUND not in template["metadata"]["labels"]
        assert ROUND not in spec["template"]["metadata"]["labels"]


def test_the_cronjob_forbids_overlap_keeps_history_and_a_starting_deadline() -> None:
    _, found = compiled(periodic_text())
    spec = cronjobs(found)[0]["spec"]
    assert spec["schedule"] == "0 3 * * 0"
    assert "timeZone" not in spec
    assert spec["concurrencyPolicy"] == "Forbid"
    assert spec["startingDeadlineSeconds"] == 3600
    assert spec["suspend"] is False
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 3)
    body = "{schedule: '@daily', stages: [single-node], timeZone: Etc/UTC, startingDeadline: 2h}"
    spec = cronjobs(compiled(periodic(body))[1])[0]["spec"]
    assert (spec["schedule"], spec["timeZone"]) == ("@daily", "Etc/UTC")
    assert spec["startingDeadlineSeconds"] == 7200


def test_periodic_jobs_queue_at_a_priority_exactly_below_the_lowest_and_below_0() -> None:
    site, found = compiled(periodic_text())
    labels = cronjobs(found)[0]["spec"]["jobTemplate"]["metadata"]["labels"]
    assert labels[QUEUE_LABEL] == "readiness"
    assert labels[PRIORITY_LABEL] == CLASS
    classes = {m.name: m.obj["value"] for m in found if m.kind == "WorkloadPriorityClass"}
    lowest = min(0, *(priority_value(site, i) for i in range(2)))
    assert classes == {"h20-3e-trainer-single-node": 200, "h20-3e-trainer-two-node": 100, CLASS: -1}
    assert classes[CLASS] == lowest - 1 == periodic_priority_value(site)
    (pod_class,) = [m.obj for m in found if m.kind == "PriorityClass"]
    assert (pod_class["metadata"]["name"], pod_class["value"]) == (CLASS, -1)
    assert pod_class["preemptionPolicy"] == "Never"
    assert pod_class["globalDefault"] is False


def test_without_periodic_nothing_periodic_is_made() -> None:
    _, found = compiled(periodic_text(""))
    assert not [m for m in found if m.component == "periodic" or CLASS in m.name]
    assert not [m for m in found if m.kind == "Application" and m.name.endswith("-periodic")]


@pytest.mark.parametrize("trigger", ["manual", "on-sync"])
def test_argocd_applies_the_periodic_folder_after_readiness(trigger: str) -> None:
    text = edit(periodic_text(), "trigger: manual", f"trigger: {trigger}")
    _, found = compiled(text)
    (app,) = [m.obj for m in found if m.kind == "Application" and m.name.endswith("-periodic")]
    assert app["spec"]["source"]["path"] == "out/h20-3e-trainer/periodic"
    assert app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "3"
    assert ("automated" in app["spec"]["syncPolicy"]) is (trigger == "on-sync")


@pytest.mark.parametrize("trigger", ["manual", "on-sync"])
def test_flux_applies_the_periodic_folder_after_the_queues(trigger: str) -> None:
    text = edit(periodic_text(), "trigger: manual", f"trigger: {trigger}")
    _, found = compiled(edit(text, "engine: argocd", "engine: flux"))
    (kustomization,) = [
        m.obj for m in found if m.kind == "Kustomization" and m.name.endswith("-periodic")
    ]
    spec = kustomization["spec"]
    assert spec["path"] == "./periodic"
    assert spec["dependsOn"] == [{"name": "h20-3e-trainer-queues"}]
    assert spec.get("suspend", False) is (trigger == "manual")


def test_a_cronjob_whose_jobs_name_no_queue_is_nvc625() -> None:
    _, found = compiled(periodic_text())
    cron = cronjobs(found)[0]
    assert admission_findings(cron) == []
    template = dict(cron["spec"]["jobTemplate"])
    template["metadata"] = {"labels": {"nvcregen.io/site": "x"}}
    broken = cron | {"spec": cron["spec"] | {"jobTemplate": template}}
    (finding,) = admission_findings(broken)
    assert finding.code == "NVC625"
    assert finding.pointer == "/spec/jobTemplate/metadata/labels"


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["argocd", "flux"])
def test_a_periodic_site_passes_every_render_check_in_both_engines(engine: str) -> None:
    """Schemas, CEL, Pod Security and the NVC6xx checks, as render runs them."""
    text = edit(periodic_text(), "engine: argocd", f"engine: {engine}")
    site, doc = parse(text)
    planned = plan_of(site, doc)
    built = postprocess(site_manifests(planned, ROOT), site, "sites/p.yaml")
    assert {m.component for m in built if m.kind == "CronJob"} == {"periodic"}
    assert [d for d in check_manifests(built, planned) if d.is_error] == []


@pytest.mark.slow
def test_check_reads_the_periodic_folder_with_the_run_layers_policies(tmp_path: Path) -> None:
    """`nvcregen check` of a rendered tree: clean, then NVC625 for a CronJob without a queue."""
    site = tmp_path / "site.yaml"
    site.write_text(periodic_text(), encoding="utf-8")
    out = tmp_path / "out"
    rendered = CliRunner().invoke(main, ["render", str(site), "--out", str(out)])
    assert rendered.exit_code == 0, rendered.output
    tree = out / "h20-3e-trainer"
    assert CliRunner().invoke(main, ["check", str(tree)]).exit_code == 0
    (cron, *_) = sorted((tree / "periodic").glob("cronjob-*.yaml"))
    text = cron.read_text(encoding="utf-8")
    queue = "        kueue.x-k8s.io/queue-name: readiness\n"
    assert text.count(queue) == 1  # the jobTemplate's (the CronJob's own is at 4 spaces)
    cron.write_text(text.replace(queue, ""), encoding="utf-8")
    checked = CliRunner().invoke(main, ["check", str(tree)])
    assert checked.exit_code == 1, checked.output
    assert "error[NVC625]: the CronJob's Jobs name no Kueue queue" in checked.output
