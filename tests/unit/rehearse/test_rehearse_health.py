"""The health each GitOps engine reads, kwok's pod stages and Kueue's configuration (pure)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcregen.engines.gitops.argocd import livehealth as argocd_live
from nvcregen.engines.gitops.argocd.livehealth import argocd_health
from nvcregen.engines.gitops.argocd.rehearse import tree_health as read_scripts
from nvcregen.engines.gitops.flux import livehealth as flux_live
from nvcregen.engines.gitops.flux.livehealth import flux_health
from nvcregen.plan.facts import PlanFacts
from nvcregen.rehearse.gitopsplay import read_order
from nvcregen.rehearse.health import FAILED, HEALTHY, WAITING
from nvcregen.rehearse.kueueconfig import kueue_configuration
from nvcregen.rehearse.podstages import COMPLETE, complete_stage_of
from nvcregen.replay.model import TreeObject

Tree = tuple[list[TreeObject], PlanFacts]
ROOT = Path(__file__).resolve().parents[3]


def run_of(objects: list[TreeObject], kind: str) -> dict[str, Any]:
    return copy.deepcopy(dict(next(o for o in objects if o.kind == kind).obj))


def with_conditions(obj: dict[str, Any], *types: str, suspend: bool = False) -> dict[str, Any]:
    obj["status"] = {
        "conditions": [{"type": t, "status": "True", "reason": t, "message": t} for t in types]
    }
    obj["spec"]["suspend"] = suspend
    return obj


def test_argo_cd_holds_a_wave_on_a_queued_job_and_passes_it_once_complete(
    argocd_tree: Tree,
) -> None:
    objects, _ = argocd_tree
    scripts = read_scripts(objects)
    job = run_of(objects, "Job")
    assert argocd_health(scripts, with_conditions(job, suspend=True)).verdict == WAITING
    complete = argocd_health(scripts, with_conditions(job, "Complete"))
    assert (complete.verdict, complete.status) == (HEALTHY, "Healthy")
    failed = argocd_health(scripts, with_conditions(job, "Failed"))
    assert (failed.verdict, failed.status) == (FAILED, "Degraded")


def test_argo_cd_calls_a_kind_without_a_check_healthy() -> None:
    health = argocd_health({}, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    assert health.verdict == HEALTHY


def test_flux_without_an_expression_calls_a_suspended_job_current(flux_tree: Tree) -> None:
    """Flux's own Job reader: what makes a Job alone no gate (design note 0019)."""
    objects, _ = flux_tree
    job = with_conditions(run_of(objects, "Job"), suspend=True)
    assert flux_health(None, job).verdict == HEALTHY
    assert flux_health(None, with_conditions(job, "Failed")).verdict == FAILED


def test_flux_with_the_kustomizations_expressions_waits_for_the_workload(
    flux_tree: Tree,
) -> None:
    objects, facts = flux_tree
    step = next(s for s in read_order(objects, facts.root).steps if s.runs)
    assert step.unit is not None
    exprs = step.unit.spec["healthCheckExprs"]
    workload = run_of(objects, "Workload")
    workload["spec"]["active"] = True
    assert flux_health(exprs, with_conditions(workload, "Admitted")).verdict == WAITING
    finished = with_conditions(workload, "Finished")
    finished["status"]["conditions"][0]["reason"] = "Succeeded"
    assert flux_health(exprs, finished).verdict == HEALTHY
    finished["status"]["conditions"][0]["reason"] = "OutOfSync"
    assert flux_health(exprs, finished).verdict == FAILED
    job = with_conditions(run_of(objects, "Job"), suspend=True)
    assert flux_health(exprs, job).verdict == WAITING  # the expression, not the Job reader


def test_a_tests_pods_complete_after_its_planned_duration() -> None:
    general = yaml.safe_load(
        "apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata: {name: pod-complete}\n"
        "spec:\n  resourceRef: {apiGroup: v1, kind: Pod}\n"
        "  selector: {matchExpressions: [{key: .status.phase, operator: In, values: [Running]}]}\n"
        "  delay: {durationMilliseconds: 1000, jitterDurationMilliseconds: 5000}\n"
    )
    stage = complete_stage_of(general, "two-node", "nccl-all-reduce", 16_500)
    assert stage["metadata"]["name"] == f"{COMPLETE}-two-node-nccl-all-reduce"
    assert stage["spec"]["delay"] == {"durationMilliseconds": 16_500}
    assert stage["spec"]["selector"]["matchExpressions"][1:] == [
        {"key": '.metadata.labels["nvcregen.io/stage"]', "operator": "In", "values": ["two-node"]},
        {
            "key": '.metadata.labels["nvcregen.io/test"]',
            "operator": "In",
            "values": ["nccl-all-reduce"],
        },
    ]
    assert general["spec"]["delay"]["jitterDurationMilliseconds"] == 5000  # unchanged


@pytest.mark.parametrize("tree", ["argocd_tree", "flux_tree"])
def test_kueue_starts_from_the_sites_rendered_configuration(
    tree: str, request: pytest.FixtureRequest
) -> None:
    objects, _ = request.getfixturevalue(tree)
    configuration = kueue_configuration(objects)
    assert configuration is not None
    assert configuration["integrations"]["frameworks"] == [
        "batch/job",
        "trainer.kubeflow.org/trainjob",
    ]
    assert configuration["waitForPodsReady"]["blockAdmission"] is False
    assert kueue_configuration([o for o in objects if o.path.startswith("queues/")]) is None


def test_an_argo_cd_check_runs_again_only_on_an_object_that_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    runtimes: list[int] = []
    real = argocd_live.lua_module()

    class Counting:
        LuaError, lua_type = real.LuaError, real.lua_type

        @staticmethod
        def LuaRuntime(**options: Any) -> Any:  # noqa: N802 - lupa's name
            runtimes.append(1)
            return real.LuaRuntime(**options)

    monkeypatch.setattr(argocd_live, "lua_module", lambda: Counting)
    monkeypatch.setattr(argocd_live, "_ARGOCD_SEEN", {})
    scripts = {"batch_Job": 'return {status = obj.status.phase, message = ""}'}

    def job(version: str, phase: str, uid: str = "u1") -> dict[str, Any]:
        meta = {"name": "j", "uid": uid, "resourceVersion": version}
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "status": {"phase": phase},
        }

    assert argocd_health(scripts, job("1", "Progressing")).verdict == WAITING
    assert argocd_health(scripts, job("1", "Progressing")).verdict == WAITING
    assert len(runtimes) == 1  # the same version: its verdict kept
    assert argocd_health(scripts, job("2", "Healthy")).verdict == HEALTHY  # changed: run
    assert argocd_health(scripts, job("2", "Healthy", uid="u2")).verdict == HEALTHY
    assert len(runtimes) == 3
    unversioned = job("", "Healthy")
    argocd_health(scripts, unversioned)
    argocd_health(scripts, unversioned)
    assert len(runtimes) == 5  # no resourceVersion: never kept
    other = {"batch_Job": 'return {status = "Degraded", message = "x"}'}
    assert argocd_health(other, job("2", "Healthy")).verdict == FAILED  # another script
    monkeypatch.setattr(argocd_live, "SEEN_LIMIT", 1)
    argocd_health(scripts, job("3", "Healthy"))
    assert len(argocd_live._ARGOCD_SEEN) == 1  # bounded: cleared when full


def test_a_flux_expression_that_does_not_compile_holds_the_step_and_is_compiled_once(
    flux_tree: Tree,
) -> None:
    """Found by review: each object and poll compiled every expression again, and one that
    did not compile ended the rehearsal with a traceback."""
    objects, _ = flux_tree
    job = with_conditions(run_of(objects, "Job"), "Complete")
    broken = [{"apiVersion": "batch/v1", "kind": "Job", "current": "status.(("}]
    found = flux_health(broken, job)
    assert (found.verdict, found.status) == (WAITING, "Unknown")
    assert "current does not compile" in found.message
    good = [{"apiVersion": "batch/v1", "kind": "Job", "current": "status.succeeded == 1"}]
    flux_live._flux_program.cache_clear()
    for _ in range(3):
        flux_health(good, job)
    assert flux_live._flux_program.cache_info().misses == 1
