"""The Flux `healthCheckExprs`, evaluated by the CEL engine nvcregen already uses, as Flux does.

kustomize-controller (>= v1.5) evaluates a Kustomization's `healthCheckExprs` with the
object's top-level fields as variables (fluxcd/pkg `runtime/cel`): a `status.observedGeneration`
behind `metadata.generation` is InProgress; then `inProgress`, `failed` and `current` in
that order, the first true one wins; none true is InProgress; an evaluation error (a field
that is not there) leaves the object Unknown, and Flux keeps polling until its timeout.
`flux_status` below follows that order on cel-expr-python (the engine of
`nvcregen.check.cel`), against runs shaped as upstream writes them (`healthfactory`),
which are checked here against the vendored schemas, status included.
"""

from __future__ import annotations

from typing import Any

import pytest
from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import ext_optional, ext_strings  # type: ignore[import-untyped]
from healthfactory import CASES, EXPECTED, KINDS, WORKLOAD_CASES, run

from nvcregen.compile.gitops.healthchecks import (
    COMPANION_CHECKS,
    HEALTH_CHECKS,
    WORKLOAD,
    HealthCheck,
    check_for,
)
from nvcregen.engines.gitops.argocd.health import argocd_key
from nvcregen.engines.gitops.flux.chain import health_expr
from nvcregen.kubeschema.registry import default_registry

# The top-level fields of a Kubernetes object, which Flux binds as CEL variables.
TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec", "status")
ENV = cel.NewEnv(
    variables=dict.fromkeys(TOP_LEVEL, cel.Type.DYN),
    # Flux also enables the sets and encoders extensions; the expressions use neither.
    extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional()],
)


def flux_status(check: HealthCheck, obj: dict[str, Any]) -> str:
    """Current, Failed, InProgress or Unknown, in the order Flux's StatusEvaluator uses."""
    status = obj.get("status", {})
    generation = obj["metadata"].get("generation")
    if "observedGeneration" in status and generation not in {None, status["observedGeneration"]}:
        return "InProgress"
    activation = ENV.Activation({k: v for k, v in obj.items() if k in TOP_LEVEL})
    for expression, result in ((check.failed, "Failed"), (check.current, "Current")):
        value = ENV.compile(expression).eval(activation)
        if value.type() == cel.Type.ERROR:
            return "Unknown"
        assert value.type() == cel.Type.BOOL, f"{expression} is not a bool"
        if value.plain_value():
            return result
    return "InProgress"


@pytest.mark.parametrize(("kind", "state"), CASES)
def test_runs_are_shaped_as_the_upstream_schemas_say(kind: str, state: str) -> None:
    """Fixtures validate against the vendored CRD (core for Job), status included."""
    assert default_registry().validate(run(kind, state), kube_version="1.30") == []


def test_the_schema_check_catches_a_drifted_status() -> None:
    """The validation above is not vacuous: a condition upstream would reject fails it."""
    for kind in ("Certification", "TrainJob"):
        obj = run(kind, "failed")
        del obj["status"]["conditions"][-1]["reason"]
        assert default_registry().validate(obj, kube_version="1.30")
    job = run("Job", "failed")
    job["status"]["conditions"][0]["state"] = "Failed"
    assert default_registry().validate(job, kube_version="1.30")


@pytest.mark.parametrize(("kind", "state"), CASES)
def test_flux_status_of_each_state(kind: str, state: str) -> None:
    obj = run(kind, state)
    check = check_for(obj["apiVersion"], kind)
    assert check is not None
    assert flux_status(check, obj) == EXPECTED[kind][state][1]


@pytest.mark.parametrize("kind", KINDS)
def test_no_status_yet_is_never_done(kind: str) -> None:
    """Without a status the expressions cannot be evaluated: Flux waits, it never passes."""
    obj = run(kind, "not-started")
    assert "status" not in obj
    check = check_for(obj["apiVersion"], kind)
    assert check is not None
    assert flux_status(check, obj) not in {"Current", "Failed"}
    # A status with no conditions yet is plainly in progress, not an error.
    assert flux_status(check, obj | {"status": {}}) == "InProgress"


@pytest.mark.parametrize("kind", ["TrainJob", "Job"])
def test_failed_is_evaluated_before_current(kind: str) -> None:
    obj = run(kind, "succeeded")
    obj["status"]["conditions"].append(run(kind, "failed")["status"]["conditions"][-1])
    check = check_for(obj["apiVersion"], kind)
    assert check is not None
    assert flux_status(check, obj) == "Failed"


def test_a_stale_observed_generation_is_in_progress() -> None:
    obj = run("Job", "succeeded")
    obj["metadata"]["generation"] = 2
    obj["status"]["observedGeneration"] = 1
    check = check_for("batch/v1", "Job")
    assert check is not None
    assert flux_status(check, obj) == "InProgress"


def test_every_expression_compiles_and_is_a_bool_expression() -> None:
    for check in HEALTH_CHECKS:
        for expression in (check.current, check.failed):
            ENV.compile(expression)  # raises on a syntax or type error
        entry = health_expr(check)
        assert set(entry) == {"apiVersion", "kind", "current", "failed"}
        assert entry["apiVersion"] == check.api_version


def test_each_kind_matches_its_own_group_only() -> None:
    assert check_for("nvcre.nvidia.com/v1alpha1", "LogProfile") is None
    assert check_for("trainer.kubeflow.org/v1alpha1", "TrainingRuntime") is None
    assert check_for("batch/v1", "CronJob") is None
    assert check_for("nvcre.nvidia.com/v1alpha1", "Job") is None  # NVCRE's own Job kind
    job = check_for("batch/v1", "Job")
    assert job is not None
    assert argocd_key(job) == "resource.customizations.health.batch_Job"


@pytest.mark.parametrize(("kind", "state"), WORKLOAD_CASES)
def test_workloads_are_shaped_as_the_vendored_crd_says(kind: str, state: str) -> None:
    assert default_registry().validate(run(kind, state), kube_version="1.30") == []


@pytest.mark.parametrize(("kind", "state"), WORKLOAD_CASES)
def test_flux_status_of_each_workload_state(kind: str, state: str) -> None:
    obj = run(kind, state)
    assert check_for(obj["apiVersion"], kind, COMPANION_CHECKS) is WORKLOAD
    assert check_for(obj["apiVersion"], kind) is None  # not a run: no step counts it
    assert flux_status(WORKLOAD, obj) == EXPECTED[kind][state][1]


def test_a_deactivated_workload_fails_even_before_kueue_writes_a_status() -> None:
    """`||` absorbs the error of a missing status once spec.active is false."""
    obj = run("Workload", "not-started")
    obj["spec"]["active"] = False
    assert flux_status(WORKLOAD, obj) == "Failed"
