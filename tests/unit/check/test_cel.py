"""CEL rules of the vendored CRDs, evaluated offline (nvcregen.check.cel)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcregen.check import cel
from nvcregen.check.cel import (
    CelResult,
    compile_rule,
    evaluate_rules,
    fields_read,
    reported_rules,
)
from nvcregen.kubeschema.memo import Memo
from nvcregen.kubeschema.registry import default_registry

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "tests" / "fixtures" / "nvcre-examples"
RUNTIMES = ROOT / "schemas" / "upstream" / "kubeflow-trainer" / "v2.2.1" / "runtimes"
NVCRE = "nvcre.nvidia.com/v1alpha1"

Obj = dict[str, Any]
Mutation = Callable[[Obj], None]


def failed(results: list[CelResult]) -> list[tuple[str, str]]:
    return [(r.pointer, r.message) for r in results if r.status == "failed"]


def by_status(results: list[CelResult], status: str) -> list[CelResult]:
    return [r for r in results if r.status == status]


def labels(**extra: str) -> dict[str, str]:
    return {"team": "ml", "example.com/tier": "gold", **extra}


def resources(
    cpu: tuple[Any, Any] = ("64", "128"), memory: tuple[str, str] = ("500Gi", "800Gi")
) -> Obj:
    return {
        "requests": {"cpu": cpu[0], "memory": memory[0]},
        "limits": {"cpu": cpu[1], "memory": memory[1]},
    }


def certification() -> Obj:
    """A valid Certification that sets every field carrying a CEL rule."""
    options = {
        "nicResourceName": "rdma/hca",
        "resources": resources(cpu=(2, "4"), memory=("1Gi", "1Gi")),
        "workloadMetadata": {"labels": labels()},
    }
    return {
        "apiVersion": NVCRE,
        "kind": "Certification",
        "metadata": {"name": "h100-cert", "namespace": "nvcre"},
        "spec": {
            "target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
            "nicResourceName": "nvidia.com/mlnxnics",
            "gangScheduler": {
                "schedulerName": "kai-scheduler",
                "queueLabelKey": "kai.scheduler/queue",
            },
            "resources": resources(),
            "workloadMetadata": {"labels": labels()},
            "categories": [
                {"domain": "communication", "variant": "nccl-all-reduce", "options": options},
                {"domain": "training", "variant": "nemotron5-8b"},
            ],
        },
    }


def workload_run() -> Obj:
    return {
        "apiVersion": NVCRE,
        "kind": "WorkloadRun",
        "metadata": {"name": "torch-run", "namespace": "nvcre"},
        "spec": {
            "image": "nvcr.io/nvidia/pytorch:26.01-py3",
            "numNodes": 2,
            "nicResourceName": "rdma/hca",
            "framework": {"torch": {"script": "/workspace/train.py"}},
            "config": {"inline": {"train.yaml": "steps: 10\n"}},
            "workloadMetadata": {"labels": labels()},
        },
    }


def report_export_policy() -> Obj:
    return {
        "apiVersion": NVCRE,
        "kind": "ReportExportPolicy",
        "metadata": {"name": "to-dashboard", "namespace": "nvcre"},
        "spec": {
            "source": {"namespaces": ["nvcre"]},
            "webhook": {"url": "https://reports.example.com/hook", "timeout": "30s"},
            "retry": {"initialBackoff": "5s", "maxBackoff": "10m", "maxElapsedTime": "12h"},
            "retention": {"succeeded": "24h", "failed": "240h"},
        },
    }


def report_export() -> Obj:
    spec = copy.deepcopy(report_export_policy()["spec"])
    del spec["source"]
    spec |= {
        "sourceRef": {"name": "h100-cert", "namespace": "nvcre", "uid": "u-1"},
        "policyRef": {"name": "to-dashboard", "uid": "u-2", "generation": 1},
        "clusterID": "lab-a",
        "reportID": "r-1",
    }
    return {
        "apiVersion": NVCRE,
        "kind": "ReportExport",
        "metadata": {"name": "h100-cert-r-1", "namespace": "nvcre"},
        "spec": spec,
    }


BASES: dict[str, Callable[[], Obj]] = {
    "Certification": certification,
    "WorkloadRun": workload_run,
    "ReportExportPolicy": report_export_policy,
    "ReportExport": report_export,
}


def setter(path: str, value: Any) -> Mutation:
    """A mutation that sets a dotted path ("spec.categories.0.options.x")."""

    def mutate(obj: Obj) -> None:
        *parents, last = path.split(".")
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        node[last] = value

    return mutate


C, W, P, R = "Certification", "WorkloadRun", "ReportExportPolicy", "ReportExport"
LONG = "a" * 254  # a label key prefix one over the limit
NEG = "must be a non-negative quantity"
MANAGED = {"app.kubernetes.io/managed-by": "me"}

# (kind, dotted path set, value, pointer of the failing value ("" = the path), message).
# "@" stands for spec.categories.0.options, the per-category copy of the options.
INVALID: list[tuple[str, str, Any, str, str]] = [
    (C, "spec.nicResourceName", "kubernetes.io/nic", "", "reserved kubernetes.io"),
    (C, "spec.nicResourceName", "k8s.io/nic", "", "reserved kubernetes.io or k8s.io"),
    (C, "@.nicResourceName", "nic.k8s.io/x", "", "reserved kubernetes.io or k8s.io"),
    (C, "spec.resources", resources(cpu=("256", "128")), "", "requests.cpu must not exceed"),
    (C, "spec.resources", resources(memory=("1Ti", "800Gi")), "", "requests.memory must not"),
    (C, "@.resources", resources(cpu=("4500m", 4)), "", "requests.cpu must not exceed"),
    (C, "@.resources", resources(memory=("2Gi", "2000Mi")), "", "requests.memory must not"),
    (C, "spec.resources.limits.cpu", "-1", "", f"cpu {NEG}"),
    (C, "spec.resources.requests.cpu", -2, "", f"cpu {NEG}"),
    (C, "spec.resources.limits.memory", "-1Gi", "", f"memory {NEG}"),
    (C, "spec.resources.requests.memory", "-5M", "", f"memory {NEG}"),
    (C, "@.resources.limits.cpu", "-1m", "", f"cpu {NEG}"),
    (C, "@.resources.limits.memory", "-1", "", f"memory {NEG}"),
    (C, "@.resources.requests.cpu", -1, "", f"cpu {NEG}"),
    (C, "@.resources.requests.memory", "-1Ki", "", f"memory {NEG}"),
    (C, "spec.workloadMetadata.labels", labels(**{"nvcre.nvidia.com/x": "y"}), "", "owned"),
    (C, "spec.workloadMetadata.labels", labels(**MANAGED), "", "controller-owned keys"),
    (C, "spec.workloadMetadata.labels", labels(**{"Bad_x/y": "z"}), "", "valid Kubernetes label"),
    (C, "spec.workloadMetadata.labels", labels(**{f"{LONG}/x": "y"}), "", "prefix must be at most"),
    (C, "@.workloadMetadata.labels", {"nvcre.nvidia.com/job": "x"}, "", "controller-owned keys"),
    (C, "@.workloadMetadata.labels", MANAGED, "", "controller-owned keys"),
    (C, "@.workloadMetadata.labels", {"-x": "y"}, "", "valid Kubernetes label key"),
    (C, "@.workloadMetadata.labels", {f"{LONG}/x": "y"}, "", "prefix must be at most 253"),
    (C, "spec.gangScheduler.queueLabelKey", f"{LONG}/q", "", "queueLabelKey prefix must be"),
    (C, "spec.gangScheduler.queueLabelKey", "nvcre.nvidia.com/queue", "", "controller-owned key"),
    (C, "spec.gangScheduler.queueLabelKey", "app.kubernetes.io/managed-by", "", "controller-owned"),
    (W, "spec.framework.torch.module", "train", "/spec/framework/torch", "mutually exclusive"),
    (W, "spec.framework.torch", {"args": ["-v"]}, "", "either script or module must be set"),
    (W, "spec.config.configMapRef", {"name": "cfg"}, "/spec/config", "mutually exclusive"),
    (W, "spec.nicResourceName", "kubernetes.io/x", "", "reserved kubernetes.io or k8s.io"),
    (W, "spec.workloadMetadata.labels", {"nvcre.nvidia.com/x": "1"}, "", "controller-owned"),
    (W, "spec.workloadMetadata.labels", {"a b": "1"}, "", "valid Kubernetes label key"),
    (W, "spec.workloadMetadata.labels", {f"{LONG}/x": "1"}, "", "prefix must be at most 253"),
    (P, "spec.webhook.timeout", "10m", "", "timeout must be between 1s and 5m"),
    (P, "spec.webhook.timeout", "500ms", "", "timeout must be between 1s and 5m"),
    (P, "spec.retry.initialBackoff", "2h", "", "initialBackoff must be between 1s and 1h"),
    (P, "spec.retry.maxBackoff", "48h", "", "maxBackoff must be between 1s and 24h"),
    (P, "spec.retry.maxElapsedTime", "1000h", "", "maxElapsedTime must be between"),
    (P, "spec.retry.maxBackoff", "1s", "/spec/retry", "maxBackoff must not be less than"),
    (P, "spec.retention.succeeded", "30m", "", "succeeded retention must be between"),
    (P, "spec.retention.failed", "9000h", "", "failed retention must be between"),
    (R, "spec.webhook.timeout", "6m", "", "timeout must be between 1s and 5m"),
    (R, "spec.retry.initialBackoff", "0s", "", "initialBackoff must be between"),
    (R, "spec.retry.maxBackoff", "25h", "", "maxBackoff must be between"),
    (R, "spec.retry.maxElapsedTime", "721h", "", "maxElapsedTime must be between"),
    (R, "spec.retry", {"initialBackoff": "1m", "maxBackoff": "30s"}, "", "must not be less"),
    (R, "spec.retention.succeeded", "8761h", "", "succeeded retention must be between"),
    (R, "spec.retention.failed", "59m", "", "failed retention must be between"),
]

# Transition rules: (kind, dotted path changed, new value, message).
CHANGED: list[tuple[str, str, Any, str]] = [
    (C, "spec.categories.1.variant", "nemotron5-56b", "spec is immutable after creation"),
    (W, "spec.numNodes", 4, "spec is immutable after creation"),
    (
        R,
        "spec.webhook.url",
        "https://other.example.com/",
        "delivery inputs are immutable; only cancel and retryNonce may change",
    ),
]


def mutated(kind: str, path: str, value: Any) -> Obj:
    obj = BASES[kind]()
    setter(path.replace("@", "spec.categories.0.options"), value)(obj)
    return obj


def path_pointer(path: str) -> str:
    return "/" + path.replace("@", "spec.categories.0.options").replace(".", "/")


def nvcre_rules() -> set[tuple[str, str]]:
    registry = default_registry()
    return {
        (kind, rule.rule)
        for group, version, kind in registry.known_crds()
        if group == "nvcre.nvidia.com"
        for rule in registry.cel_rules(f"{group}/{version}", kind)
    }


def invalid_cases() -> Iterator[Any]:
    for index, (kind, path, value, at, message) in enumerate(INVALID):
        case = (kind, path, value, at or path_pointer(path), message)
        yield pytest.param(*case, id=f"{index:02d}-{kind}-{path}")


# --- every NVCRE rule ----------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BASES))
def test_valid_objects_pass_every_rule(kind: str) -> None:
    obj = BASES[kind]()
    assert default_registry().validate(obj) == []
    results = evaluate_rules(obj, old=obj)
    assert by_status(results, "passed") == results
    rules = {rule for k, rule in nvcre_rules() if k == kind}
    assert {r.rule for r in results} == rules, "the valid object must exercise every rule"


@pytest.mark.parametrize(("kind", "path", "value", "at", "message"), list(invalid_cases()))
def test_invalid_objects_fail(kind: str, path: str, value: Any, at: str, message: str) -> None:
    found = failed(evaluate_rules(mutated(kind, path, value)))
    assert [p for p, m in found if message in m] == [at], found


def test_every_nvcre_rule_has_a_failing_case() -> None:
    cases = [(k, p, v) for k, p, v, _, _ in INVALID] + [(k, p, v) for k, p, v, _ in CHANGED]
    failing: set[tuple[str, str]] = set()
    for kind, path, value in cases:
        results = evaluate_rules(mutated(kind, path, value), old=BASES[kind]())
        failing |= {(kind, r.rule) for r in by_status(results, "failed")}
    assert nvcre_rules() - failing == set()


@pytest.mark.parametrize(("kind", "path", "value", "message"), CHANGED)
def test_transition_rules(kind: str, path: str, value: Any, message: str) -> None:
    old, new = BASES[kind](), mutated(kind, path, value)
    assert failed(evaluate_rules(new, old=old)) == [("/spec", message)]
    unchanged = [r for r in evaluate_rules(old, old=old) if r.pointer == "/spec"]
    assert all(r.status == "passed" for r in unchanged) and unchanged
    created = [r for r in evaluate_rules(new) if r.message == message]
    assert [(r.pointer, r.status) for r in created] == [("/spec", "skipped")]
    assert "transition rule" in created[0].reason


def test_report_export_allows_cancel_and_retry_nonce_to_change() -> None:
    old, new = report_export(), report_export()
    new["spec"] |= {"cancel": True, "retryNonce": "again"}
    assert failed(evaluate_rules(new, old=old)) == []


def test_defaults_apply_before_rules_run() -> None:
    """initialBackoff defaults to 10s, so a 5s maxBackoff alone breaks the ordering rule."""
    policy = report_export_policy()
    policy["spec"]["retry"] = {"maxBackoff": "5s"}
    del policy["spec"]["retention"]
    results = evaluate_rules(policy)
    assert failed(results) == [("/spec/retry", "maxBackoff must not be less than initialBackoff")]
    defaulted = {r.pointer for r in results if r.pointer.startswith("/spec/retention/")}
    assert defaulted == {"/spec/retention/failed", "/spec/retention/succeeded"}


def test_messages_and_reasons() -> None:
    cert = certification()
    cert["spec"]["resources"]["limits"]["cpu"] = "lots"
    results = [r for r in evaluate_rules(cert) if r.status == "failed"]
    assert {r.pointer for r in results} == {"/spec/resources", "/spec/resources/limits/cpu"}
    assert all(r.reason.startswith("evaluation error: quantities must match") for r in results)
    ok = evaluate_rules(certification())
    assert {r.reason for r in by_status(ok, "passed")} == {"rule evaluated to true"}


# --- examples, shipped runtimes and coverage ------------------------------------------


def yaml_docs(*paths: Path) -> Iterator[Any]:
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for index, doc in enumerate(d for d in yaml.safe_load_all(handle) if d):
                yield pytest.param(doc, id=f"{path.stem}-{index}-{doc['kind']}")


EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))
RUNTIME_FILES = sorted(RUNTIMES.rglob("*.yaml"))


@pytest.mark.parametrize("doc", list(yaml_docs(*EXAMPLE_FILES, *RUNTIME_FILES)))
def test_examples_and_runtimes_fail_no_rule(doc: Obj) -> None:
    results = evaluate_rules(doc)
    assert failed(results) == []
    assert by_status(results, "unchecked") == []


def test_every_vendored_rule_compiles() -> None:
    """The coverage report: every rule of every vendored CRD, messageExpressions too."""
    registry = default_registry()
    rules = [
        (kind, rule)
        for group, version, kind in registry.known_crds()
        for rule in registry.cel_rules(f"{group}/{version}", kind)
    ]
    assert len(rules) == 172  # 98 before Kueue's 5 kinds, 1 ArtifactGenerator, 37 Workload
    unchecked = [
        f"{kind}: {text!r}: {compile_rule(text).problem}"
        for kind, rule in rules
        for text in (rule.rule, rule.message_expression)
        if text and compile_rule(text).expression is None
    ]
    assert unchecked == [], "\n".join(unchecked)


def test_rules_compile_once() -> None:
    rule = "self.size() > 0"
    assert compile_rule(rule) is compile_rule(rule)


# --- the checker's path: reported results only, remembered outcomes --------------------


def reported(results: list[CelResult]) -> list[CelResult]:
    return [r for r in results if r.status in {"failed", "unchecked"}]


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [(k, p, v) for k, p, v, _, _ in INVALID] + [(k, p, v) for k, p, v, _ in CHANGED],
)
def test_reported_rules_are_the_reported_results(kind: str, path: str, value: Any) -> None:
    new, old = mutated(kind, path, value), BASES[kind]()
    assert reported_rules(new) == reported(evaluate_rules(new))
    assert reported_rules(new, old=old) == reported(evaluate_rules(new, old=old))


def test_a_remembered_outcome_keeps_its_own_pointer() -> None:
    """Equal values bound at two places fail at both, each with its own pointer."""
    obj = certification()
    bad = {"labels": labels(**{"app.kubernetes.io/managed-by": "me"})}
    obj["spec"]["workloadMetadata"] = copy.deepcopy(bad)
    obj["spec"]["categories"][0]["options"]["workloadMetadata"] = copy.deepcopy(bad)
    first, again = failed(evaluate_rules(obj)), failed(evaluate_rules(obj))
    assert first == again
    pointers = sorted({pointer for pointer, _ in first})
    assert pointers == [
        "/spec/categories/0/options/workloadMetadata/labels",
        "/spec/workloadMetadata/labels",
    ]


@pytest.mark.parametrize(
    ("expressions", "fields"),
    [
        (("size(self.metadata.name) <= 63",), {"metadata"}),
        (("has(self.a) || self.b.c.matches('x')", "'self ' + self.d"), {"a", "b", "d"}),
        (("self.x == 'self.all(y)'",), {"x"}),  # string literals say nothing
        (("self.all(k, k != 'x')",), None),  # a method on self reads all of it
        (("size(self) > 0",), None),
        (("self[0] == 1",), None),
        (("self.?a.orValue(1) == 1",), None),
        (("self.a == oldSelf.a",), None),
        (("self.a", None), {"a"}),
    ],
)
def test_fields_read(expressions: tuple[str | None, ...], fields: set[str] | None) -> None:
    assert fields_read(*expressions) == (None if fields is None else frozenset(fields))


def everything(*_: str | None) -> None:
    return None


@pytest.mark.parametrize(
    "doc",
    [
        *[pytest.param(make(), id=kind) for kind, make in BASES.items()],
        *[pytest.param(mutated(k, p, v), id=f"{k}-{p}") for k, p, v, _, _ in INVALID],
        *yaml_docs(*EXAMPLE_FILES, *RUNTIME_FILES),
    ],
)
def test_rules_see_the_same_values_with_only_the_fields_they_read(
    doc: Obj, monkeypatch: pytest.MonkeyPatch
) -> None:
    projected = evaluate_rules(doc)
    monkeypatch.setattr(cel, "_OUTCOMES", Memo(1 << 20))
    monkeypatch.setattr(cel, "fields_read", everything)
    assert evaluate_rules(doc) == projected
