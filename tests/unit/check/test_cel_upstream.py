"""CEL rules of the vendored Kubeflow Trainer and JobSet CRDs (nvcregen.check.cel)."""

from __future__ import annotations

from typing import Any

from nvcregen.check.cel import CelResult, evaluate_rules

Obj = dict[str, Any]


def failed(results: list[CelResult]) -> list[tuple[str, str]]:
    return [(r.pointer, r.message) for r in results if r.status == "failed"]


def train_job(**spec: Any) -> Obj:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "nccl-test", "namespace": "nvcre"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec},
    }


def test_train_job_name_rules() -> None:
    assert failed(evaluate_rules(train_job())) == []
    bad = train_job()
    bad["metadata"]["name"] = "9-" + "x" * 62
    assert failed(evaluate_rules(bad)) == [
        ("", "metadata.name must match RFC 1035 DNS label format"),
        ("", "metadata.name must be no more than 63 characters"),
    ]


def test_train_job_immutable_fields() -> None:
    old = train_job(activeDeadlineSeconds=3600)
    assert failed(evaluate_rules(train_job(activeDeadlineSeconds=3600), old=old)) == []
    changed = failed(evaluate_rules(train_job(activeDeadlineSeconds=7200), old=old))
    assert changed == [("/spec/activeDeadlineSeconds", "field is immutable")]
    added = evaluate_rules(train_job(activeDeadlineSeconds=60), old=train_job())
    deadline = [r.status for r in added if r.pointer == "/spec/activeDeadlineSeconds"]
    assert deadline == ["skipped"]  # a value new on update is not compared


def test_train_job_runtime_ref_compares_defaulted_values() -> None:
    """apiGroup and kind default, so spelling out the defaults changes nothing."""
    old = train_job()
    explicit = train_job(
        runtimeRef={
            "name": "torch-distributed",
            "apiGroup": "trainer.kubeflow.org",
            "kind": "ClusterTrainingRuntime",
        }
    )
    assert failed(evaluate_rules(explicit, old=old)) == []
    other = train_job(runtimeRef={"name": "torch-distributed", "kind": "TrainingRuntime"})
    assert failed(evaluate_rules(other, old=old)) == [("/spec/runtimeRef", "field is immutable")]


def test_train_job_managed_by() -> None:
    defaulted = evaluate_rules(train_job())
    assert [r.status for r in defaulted if r.pointer == "/spec/managedBy"] == ["passed", "skipped"]
    bad = failed(evaluate_rules(train_job(managedBy="me")))
    assert [p for p, _ in bad] == ["/spec/managedBy"]


def job_set(replicated: list[Obj], **spec: Any) -> Obj:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "nvcre"},
        "spec": {"replicatedJobs": replicated, **spec},
    }


def replicated_job(name: str, depends_on: str | None = None, status: str = "Ready") -> Obj:
    job: Obj = {"name": name, "template": {"spec": {"template": {"spec": {"containers": []}}}}}
    if depends_on:
        job["dependsOn"] = [{"name": depends_on, "status": status}]
    return job


def test_job_set_startup_policy_and_depends_on_are_exclusive() -> None:
    jobs = [replicated_job("node"), replicated_job("launcher", "node")]
    assert failed(evaluate_rules(job_set(jobs))) == []
    in_order = job_set(jobs, startupPolicy={"startupPolicyOrder": "InOrder"})
    message = "StartupPolicy and DependsOn APIs are mutually exclusive"
    assert failed(evaluate_rules(in_order)) == [("/spec", message)]


def test_job_set_depends_on_correlates_replicated_jobs_by_name() -> None:
    old = job_set([replicated_job("node"), replicated_job("launcher", "node")])
    reordered = job_set([replicated_job("launcher", "node"), replicated_job("node")])
    assert failed(evaluate_rules(reordered, old=old)) == []
    changed = job_set([replicated_job("launcher", "node", "Complete"), replicated_job("node")])
    assert failed(evaluate_rules(changed, old=old)) == [
        ("/spec/replicatedJobs/0/dependsOn", "Value is immutable")
    ]


def test_training_runtime_allows_one_ml_policy() -> None:
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "rt", "namespace": "nvcre"},
        "spec": {"mlPolicy": {"torch": {}, "mpi": {}}, "template": {"spec": {}}},
    }
    found = failed(evaluate_rules(runtime))
    assert found == [("/spec/mlPolicy", "Only one of the policy can be configured")]
