"""Negative corpus: one otherwise-valid object per upstream CEL rule, rejected by that rule.

Issue #3, part 6. Each case edits one valid base object so that it breaks exactly one
`x-kubernetes-validations` rule of a vendored CRD (Kubeflow Trainer 2.2.1, JobSet 0.11.0,
Flux), and the tables name the rule and the message the API server would give. The base
objects themselves pass every rule and the structural schema, as a create and as an
unchanged update, so each rejection is the edit's doing. Argo CD and the Prometheus
Operator CRDs carry no CEL rules in the vendored versions; that claim is tested too.

The NVCRE kinds have their own tables in tests/unit/check/test_cel.py; the coverage test
at the end reuses them to show every Certification and WorkloadRun rule fails somewhere.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from nvcregen.check.cel import CelResult, evaluate_rules, uses_old_self
from nvcregen.check.objectcheck import object_findings
from nvcregen.core.errors import Severity
from nvcregen.kubeschema.registry import CelRule, default_registry

# tests/unit/check has no __init__.py: pytest imports its modules by file name (rootdir
# "prepend" mode), so the NVCRE case tables are importable once that folder is on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent / "unit" / "check"))
from test_cel import BASES as NVCRE_BASES
from test_cel import CHANGED as NVCRE_CHANGED
from test_cel import INVALID as NVCRE_INVALID
from test_cel import mutated as nvcre_mutated
from test_cel import nvcre_rules

Obj = dict[str, Any]

TRAINER = "trainer.kubeflow.org/v1alpha1"
JOBSET = "jobset.x-k8s.io/v1alpha2"
HELM = "helm.toolkit.fluxcd.io/v2"
KUSTOMIZE = "kustomize.toolkit.fluxcd.io/v1"
SOURCE = "source.toolkit.fluxcd.io/v1"
DIGEST = "@sha256:" + "0" * 64
IMAGE = "nvcr.io/nvidia/pytorch:26.01-py3" + DIGEST


class Delete:
    """Stands for "remove this key" in a case's value column."""

    def __repr__(self) -> str:
        return "<delete>"


DELETE = Delete()


# --- valid base objects ------------------------------------------------------------------


def pod_template() -> Obj:
    container: Obj = {"name": "node", "image": IMAGE}
    return {"spec": {"template": {"spec": {"containers": [container]}}}}


def claim_policy() -> Obj:
    resources = {"requests": {"storage": "100Gi"}}
    spec = {"accessModes": ["ReadWriteOnce"], "resources": resources}
    claim = {"metadata": {"name": "scratch"}, "spec": spec}
    return {"templates": [claim], "retentionPolicy": {"whenDeleted": "Delete"}}


def train_job() -> Obj:
    """A TrainJob that sets every field an immutability rule guards, and a status."""
    env = [{"name": "NCCL_DEBUG", "value": "INFO"}]
    pod = {"spec": {"template": {"spec": {"containers": [{"name": "node", "env": env}]}}}}
    patch = {
        "manager": "nvcregen.io/readiness",
        "trainingRuntimeSpec": {
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": pod}]}}
        },
    }
    return {
        "apiVersion": TRAINER,
        "kind": "TrainJob",
        "metadata": {"name": "nccl-test", "namespace": "nvcre"},
        "spec": {
            "runtimeRef": {"name": "torch-distributed"},
            "managedBy": "kueue.x-k8s.io/multikueue",
            "activeDeadlineSeconds": 3600,
            "initializer": {"model": {"storageUri": "hf://nvidia/nemotron-mini"}},
            "trainer": {"numNodes": 2, "args": ["--steps=10"]},
            "runtimePatches": [patch],
        },
        "status": {
            "trainerStatus": {"progressPercentage": 10, "lastUpdatedTime": "2026-01-02T03:04:05Z"}
        },
    }


def training_runtime() -> Obj:
    """A namespaced runtime with the Flux policy, a JobSet network and a claim policy."""
    return {
        "apiVersion": TRAINER,
        "kind": "TrainingRuntime",
        "metadata": {"name": "flux-runtime", "namespace": "nvcre"},
        "spec": {
            "mlPolicy": {"numNodes": 2, "flux": {"numProcPerNode": 4}},
            "template": {
                "spec": {
                    "network": {"publishNotReadyAddresses": True},
                    "replicatedJobs": [{"name": "node", "template": pod_template()}],
                    "volumeClaimPolicies": [claim_policy()],
                }
            },
        },
    }


def cluster_training_runtime() -> Obj:
    """A cluster-wide torch runtime whose trainer job waits for an initializer job."""
    initializer: Obj = {"name": "model-initializer", "template": pod_template()}
    node: Obj = {
        "name": "node",
        "dependsOn": [{"name": "model-initializer", "status": "Complete"}],
        "template": pod_template(),
    }
    return {
        "apiVersion": TRAINER,
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-distributed"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [initializer, node],
                    "successPolicy": {"operator": "All", "targetReplicatedJobs": ["node"]},
                }
            },
        },
    }


def job_set() -> Obj:
    """A JobSet that sets every field an immutability rule guards."""
    return {
        "apiVersion": JOBSET,
        "kind": "JobSet",
        "metadata": {"name": "nccl", "namespace": "nvcre"},
        "spec": {
            "network": {"enableDNSHostnames": True},
            "failurePolicy": {"maxRestarts": 3},
            "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
            "successPolicy": {"operator": "All"},
            "replicatedJobs": [{"name": "workers", "replicas": 2, "template": pod_template()}],
            "volumeClaimPolicies": [claim_policy()],
        },
    }


def helm_release() -> Obj:
    """A HelmRelease from a chartRef with retrying strategies on a remote cluster."""
    retry = {"name": "RetryOnFailure", "retryInterval": "2m"}
    return {
        "apiVersion": HELM,
        "kind": "HelmRelease",
        "metadata": {"name": "nvcre", "namespace": "flux-system"},
        "spec": {
            "interval": "10m",
            "chartRef": {"kind": "OCIRepository", "name": "nvcre"},
            "install": {"strategy": dict(retry)},
            "upgrade": {"strategy": dict(retry)},
            "kubeConfig": {"secretRef": {"name": "lab-a-kubeconfig"}},
        },
    }


def kustomization() -> Obj:
    """A Kustomization applied to a remote cluster through a ConfigMap's kubeconfig."""
    return {
        "apiVersion": KUSTOMIZE,
        "kind": "Kustomization",
        "metadata": {"name": "nvcre-readiness", "namespace": "flux-system"},
        "spec": {
            "interval": "10m",
            "prune": True,
            "path": "./out/lab-a",
            "sourceRef": {"kind": "GitRepository", "name": "fleet"},
            "kubeConfig": {"configMapRef": {"name": "lab-a-kubeconfig"}},
        },
    }


def git_repository() -> Obj:
    """A GitRepository read with an Azure workload identity through a service account."""
    return {
        "apiVersion": SOURCE,
        "kind": "GitRepository",
        "metadata": {"name": "fleet", "namespace": "flux-system"},
        "spec": {
            "interval": "5m",
            "url": "https://dev.azure.com/example/fleet/_git/fleet",
            "ref": {"branch": "main"},
            "provider": "azure",
            "serviceAccountName": "flux-git",
        },
    }


TJ, TR, CTR, JS = "TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "JobSet"
HR, KS, GR = "HelmRelease", "Kustomization", "GitRepository"

BASES: dict[str, Callable[[], Obj]] = {
    TJ: train_job,
    TR: training_runtime,
    CTR: cluster_training_runtime,
    JS: job_set,
    HR: helm_release,
    KS: kustomization,
    GR: git_repository,
}

# The vendored versions the issue names; a version bump must revisit this corpus.
SOURCES = {
    TJ: "kubeflow-trainer/v2.2.1/",
    TR: "kubeflow-trainer/v2.2.1/",
    CTR: "kubeflow-trainer/v2.2.1/",
    JS: "jobset/v0.11.0/",
    HR: "flux-helm-controller/v1.6.3/",
    KS: "flux-kustomize-controller/v1.9.4/",
    GR: "flux-source-controller/v1.9.1/",
}
API_VERSIONS = {TJ: TRAINER, TR: TRAINER, CTR: TRAINER, JS: JOBSET, HR: HELM, KS: KUSTOMIZE}
API_VERSIONS[GR] = SOURCE

CHART = {"spec": {"chart": "nvcre", "sourceRef": {"kind": "HelmRepository", "name": "nvidia"}}}

# More valid objects, (kind, {dotted path: value}): the other side of each either/or.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    (HR, {"spec.chartRef": DELETE, "spec.chart": CHART}),
    (HR, {"spec.install.strategy": {"name": "RemediateOnFailure"}}),
    (HR, {"spec.upgrade.strategy": {"name": "RemediateOnFailure"}}),
    (HR, {"spec.kubeConfig": {"configMapRef": {"name": "lab-a"}}}),
    (KS, {"spec.kubeConfig": {"secretRef": {"name": "lab-a-kubeconfig", "key": "value"}}}),
    (KS, {"spec.kubeConfig": DELETE}),
    (GR, {"spec.provider": "aws"}),
    (GR, {"spec.serviceAccountName": DELETE}),
    (GR, {"spec.serviceAccountName": DELETE, "spec.provider": "generic"}),
    (JS, {"spec.startupPolicy.startupPolicyOrder": "InOrder"}),
    (TJ, {"spec.managedBy": "trainer.kubeflow.org/trainjob-controller"}),
    (TJ, {"status": DELETE}),
    (TR, {"spec.mlPolicy.flux.numProcPerNode": 1}),
    (CTR, {"spec.mlPolicy": {"numNodes": 2, "mpi": {"numProcPerNode": 8}}}),
]


def edit(obj: Obj, path: str, value: Any) -> Obj:
    """Set (or, with DELETE, remove) a dotted path such as "spec.replicatedJobs.0.name"."""
    *parents, last = path.split(".")
    node: Any = obj
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        node[int(last)] = value
    elif isinstance(value, Delete):
        del node[last]
    else:
        node[last] = value
    return obj


def variant(kind: str, edits: dict[str, Any]) -> Obj:
    obj = BASES[kind]()
    for path, value in edits.items():
        edit(obj, path, copy.deepcopy(value))
    return obj


# --- the corpus ----------------------------------------------------------------------------


class Case(NamedTuple):
    """One rejected object: the edit to a valid base, and the one rule it must break.

    Attributes:
        kind: Which base in BASES.
        path: The dotted path edited.
        value: Its new value (DELETE removes it).
        pointer: Where the rule is bound to the failing value.
        message: The vendored rule's message, as the API server reports it.
        rule: The vendored rule's CEL expression.

    """

    kind: str
    path: str
    value: Any
    pointer: str
    message: str
    rule: str


HAS_CHART = "(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))"
CHART_MESSAGE = "either chart or chartRef must be set"
INSTALL_RETRY = "!has(self.retryInterval) || self.name != 'RemediateOnFailure'"
UPGRADE_RETRY = "!has(self.retryInterval) || self.name == 'RetryOnFailure'"
KUBECONFIG_SOME = "has(self.configMapRef) || has(self.secretRef)"
KUBECONFIG_ONE = "!has(self.configMapRef) || !has(self.secretRef)"
KUBECONFIG_MESSAGE = (
    "exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified"
)
GIT_SA = (
    "!has(self.serviceAccountName) || "
    "(has(self.provider) && (self.provider == 'azure' || self.provider == 'aws'))"
)
GIT_SA_MESSAGE = "serviceAccountName can only be set when provider is 'azure' or 'aws'"
ONE_POLICY = (
    "[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)]"
    ".filter(x, x).size() <= 1"
)
STARTUP_XOR_DEPENDS = (
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
    "self.replicatedJobs.exists(x, has(x.dependsOn)))"
)
CLAIM_NAMESPACE = (
    "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)"
)
CLAIM_MESSAGE = "namespace cannot be set for VolumeClaimPolicies templates"
SAME = "self == oldSelf"
FIXED, VALUE_FIXED = "field is immutable", "Value is immutable"
TEMPLATE = "/spec/template/spec"
PATCH_POD = (
    "spec.runtimePatches.0.trainingRuntimeSpec.template.spec"
    ".replicatedJobs.0.template.spec.template.spec"
)

# Rejected on create: (kind, path, value, pointer, message, rule).
INVALID: list[Case] = [
    Case(HR, "spec.chartRef", DELETE, "/spec", CHART_MESSAGE, HAS_CHART),
    Case(HR, "spec.chart", CHART, "/spec", CHART_MESSAGE, HAS_CHART),
    Case(
        HR,
        "spec.install.strategy.name",
        "RemediateOnFailure",
        "/spec/install/strategy",
        ".retryInterval cannot be set when .name is 'RemediateOnFailure'",
        INSTALL_RETRY,
    ),
    Case(
        HR,
        "spec.upgrade.strategy.name",
        "RemediateOnFailure",
        "/spec/upgrade/strategy",
        ".retryInterval can only be set when .name is 'RetryOnFailure'",
        UPGRADE_RETRY,
    ),
    Case(HR, "spec.kubeConfig", {}, "/spec/kubeConfig", KUBECONFIG_MESSAGE, KUBECONFIG_SOME),
    Case(
        HR,
        "spec.kubeConfig.configMapRef",
        {"name": "lab-a"},
        "/spec/kubeConfig",
        KUBECONFIG_MESSAGE,
        KUBECONFIG_ONE,
    ),
    Case(KS, "spec.kubeConfig", {}, "/spec/kubeConfig", KUBECONFIG_MESSAGE, KUBECONFIG_SOME),
    Case(
        KS,
        "spec.kubeConfig.secretRef",
        {"name": "lab-a-kubeconfig"},
        "/spec/kubeConfig",
        KUBECONFIG_MESSAGE,
        KUBECONFIG_ONE,
    ),
    Case(GR, "spec.provider", DELETE, "/spec", GIT_SA_MESSAGE, GIT_SA),
    Case(GR, "spec.provider", "generic", "/spec", GIT_SA_MESSAGE, GIT_SA),
    Case(GR, "spec.provider", "github", "/spec", GIT_SA_MESSAGE, GIT_SA),
    # A status rule: the server runs it on status writes only (it resets `status` on
    # create; docs/design/0001-cel-engine.md leaves that unmodelled), nvcregen on any object.
    Case(
        TJ,
        "status.trainerStatus.lastUpdatedTime",
        DELETE,
        "/status/trainerStatus",
        "lastUpdatedTime is required when trainerStatus is present",
        "has(self.lastUpdatedTime)",
    ),
    Case(
        TR,
        "spec.mlPolicy.flux.numProcPerNode",
        0,
        "/spec/mlPolicy/flux/numProcPerNode",
        "NumProcPerNode in fluxPolicy must be >= 1",
        "self >= 1",
    ),
    Case(
        TR,
        "spec.template.spec.volumeClaimPolicies.0.templates.0.metadata.namespace",
        "nvcre",
        f"{TEMPLATE}/volumeClaimPolicies/0",
        CLAIM_MESSAGE,
        CLAIM_NAMESPACE,
    ),
    Case(
        CTR,
        "spec.mlPolicy.jax",
        {},
        "/spec/mlPolicy",
        "Only one of the policy can be configured",
        ONE_POLICY,
    ),
    Case(
        CTR,
        "spec.template.spec.startupPolicy",
        {"startupPolicyOrder": "InOrder"},
        TEMPLATE,
        "StartupPolicy and DependsOn APIs are mutually exclusive",
        STARTUP_XOR_DEPENDS,
    ),
    Case(
        JS,
        "spec.volumeClaimPolicies.0.templates.0.metadata.namespace",
        "nvcre",
        "/spec/volumeClaimPolicies/0",
        CLAIM_MESSAGE,
        CLAIM_NAMESPACE,
    ),
]

# Rejected on update from the unedited base (transition rules, `oldSelf`).
CHANGED: list[Case] = [
    Case(TJ, "spec.trainer.numNodes", 4, "/spec/trainer", FIXED, SAME),
    Case(
        TJ,
        "spec.initializer.model.storageUri",
        "hf://nvidia/nemotron-nano",
        "/spec/initializer",
        FIXED,
        SAME,
    ),
    Case(
        TJ,
        "spec.managedBy",
        "trainer.kubeflow.org/trainjob-controller",
        "/spec/managedBy",
        FIXED,
        SAME,
    ),
    Case(
        TJ,
        f"{PATCH_POD}.containers.0.env.0.value",
        "WARN",
        "/" + PATCH_POD.replace(".", "/") + "/containers",
        FIXED,
        SAME,
    ),
    Case(
        TR,
        "spec.template.spec.network.publishNotReadyAddresses",
        False,
        f"{TEMPLATE}/network",
        VALUE_FIXED,
        SAME,
    ),
    Case(
        CTR,
        "spec.template.spec.replicatedJobs.1.dependsOn.0.status",
        "Ready",
        f"{TEMPLATE}/replicatedJobs/1/dependsOn",
        VALUE_FIXED,
        SAME,
    ),
    Case(
        CTR,
        "spec.template.spec.successPolicy.operator",
        "Any",
        f"{TEMPLATE}/successPolicy",
        VALUE_FIXED,
        SAME,
    ),
    Case(JS, "spec.failurePolicy.maxRestarts", 5, "/spec/failurePolicy", VALUE_FIXED, SAME),
    Case(JS, "spec.network.enableDNSHostnames", False, "/spec/network", VALUE_FIXED, SAME),
    Case(
        JS,
        "spec.startupPolicy.startupPolicyOrder",
        "InOrder",
        "/spec/startupPolicy",
        VALUE_FIXED,
        SAME,
    ),
    Case(
        JS,
        "spec.volumeClaimPolicies.0.templates.0.spec.resources.requests.storage",
        "200Gi",
        "/spec/volumeClaimPolicies",
        VALUE_FIXED,
        SAME,
    ),
]


def case_id(case: Case) -> str:
    value = "delete" if isinstance(case.value, Delete) else "set"
    return f"{case.kind}-{case.path}-{value}"


def params(cases: list[Case]) -> Iterator[Any]:
    for index, case in enumerate(cases):
        yield pytest.param(case, id=f"{index:02d}-{case_id(case)}")


def broken(case: Case) -> Obj:
    return edit(BASES[case.kind](), case.path, copy.deepcopy(case.value))


def binds_to(object_path: str, pointer: str) -> bool:
    """Whether a rule's object path ("/spec/items/*/x") covers a pointer ("/spec/items/0/x")."""
    pattern, parts = object_path.split("/"), pointer.split("/")
    if len(pattern) != len(parts):
        return False
    return all(p in {"*", q} for p, q in zip(pattern, parts, strict=True))


def vendored(case: Case) -> CelRule:
    """The one vendored rule of the case's kind, at its pointer, with its text and message."""
    found = [
        r
        for r in default_registry().cel_rules(API_VERSIONS[case.kind], case.kind)
        if (r.rule, r.message) == (case.rule, case.message)
        and binds_to(r.object_path, case.pointer)
    ]
    assert len(found) == 1, f"{case.kind} has no rule {case.rule!r} at {case.pointer}: {found}"
    return found[0]


def failures(results: list[CelResult]) -> list[tuple[str, str, str]]:
    return [(r.pointer, r.rule, r.message) for r in results if r.status == "failed"]


def errors(obj: Obj, old: Obj | None = None) -> list[tuple[str, str, str]]:
    found = object_findings(obj, old=old)
    return [(f.pointer, f.code, f.message) for f in found if f.severity == Severity.ERROR]


def no_problems(results: list[CelResult]) -> list[CelResult]:
    return [r for r in results if r.status in {"failed", "unchecked"}]


# --- valid objects -------------------------------------------------------------------------


def valid_objects() -> Iterator[Any]:
    for kind, base in BASES.items():
        yield pytest.param(base(), id=f"{kind}-base")
    for index, (kind, edits) in enumerate(VARIANTS):
        yield pytest.param(variant(kind, edits), id=f"{kind}-variant{index:02d}")


@pytest.mark.parametrize("obj", list(valid_objects()))
def test_valid_objects_pass_schema_and_every_rule(obj: Obj) -> None:
    assert default_registry().validate(obj) == []
    created = evaluate_rules(obj)
    assert no_problems(created) == []
    updated = evaluate_rules(obj, old=copy.deepcopy(obj))
    assert {r.status for r in updated} <= {"passed"}
    assert errors(obj) == []
    assert errors(obj, old=copy.deepcopy(obj)) == []


@pytest.mark.parametrize("kind", sorted(BASES))
def test_bases_exercise_every_rule_the_corpus_targets(kind: str) -> None:
    base = BASES[kind]()
    results = evaluate_rules(base, old=BASES[kind]())
    passed = {(r.pointer, r.rule) for r in results if r.status == "passed"}
    edited = {(c.pointer, c.rule) for c in INVALID + CHANGED if c.kind == kind}
    assert edited, f"no case edits {kind}"
    assert edited - passed == set(), "each rule must pass on the value its case edits"


@pytest.mark.parametrize("kind", sorted(BASES))
def test_bases_come_from_the_named_releases(kind: str) -> None:
    crd = default_registry().crd(API_VERSIONS[kind], kind)
    assert crd is not None
    assert crd.source.startswith(SOURCES[kind])


# --- rejected objects ----------------------------------------------------------------------


@pytest.mark.parametrize("case", list(params(INVALID)))
def test_invalid_objects_are_rejected_by_their_rule(case: Case) -> None:
    rule = vendored(case)
    assert not uses_old_self(rule.rule)
    obj = broken(case)
    assert default_registry().validate(obj) == [], "only the CEL rule may object"
    assert failures(evaluate_rules(obj)) == [(case.pointer, rule.rule, rule.message)]
    # Unedited, the same rule binds to the same value and passes.
    before = evaluate_rules(BASES[case.kind]())
    bound = [r.status for r in before if (r.pointer, r.rule) == (case.pointer, rule.rule)]
    assert bound == ["passed"]
    finding = f"{rule.message} (rule: {rule.rule})"
    assert errors(obj) == [(case.pointer, "NVC610", finding)]
    assert [f.hint for f in object_findings(obj) if f.code == "NVC610"] == [""]


@pytest.mark.parametrize("case", list(params(CHANGED)))
def test_changed_objects_are_rejected_by_their_transition_rule(case: Case) -> None:
    rule = vendored(case)
    assert uses_old_self(rule.rule)
    old, new = BASES[case.kind](), broken(case)
    assert default_registry().validate(new) == []
    assert failures(evaluate_rules(new, old=old)) == [(case.pointer, rule.rule, rule.message)]
    finding = f"{rule.message} (rule: {rule.rule})"
    assert errors(new, old=old) == [(case.pointer, "NVC610", finding)]
    hints = [f.hint for f in object_findings(new, old=old) if f.code == "NVC610"]
    assert hints == ["this change needs a new object name: the field is immutable once created"]
    # As a create the rule does not run, and the unchanged update passes it.
    created = [r for r in evaluate_rules(new) if (r.pointer, r.rule) == (case.pointer, rule.rule)]
    assert [r.status for r in created] == ["skipped"]
    assert errors(new) == []
    same = evaluate_rules(old, old=BASES[case.kind]())
    assert [r.status for r in same if (r.pointer, r.rule) == (case.pointer, rule.rule)] == [
        "passed"
    ]


def test_every_case_breaks_exactly_one_rule_as_message_says() -> None:
    """The failed result's message is the vendored message, never a fallback."""
    runs: list[tuple[Case, Obj | None]] = [(case, None) for case in INVALID]
    runs += [(case, BASES[case.kind]()) for case in CHANGED]
    for case, old in runs:
        (result,) = [r for r in evaluate_rules(broken(case), old=old) if r.status == "failed"]
        assert result.message == vendored(case).message != f"failed rule: {case.rule}"
        assert result.reason == "rule evaluated to false"


def test_a_runtime_patch_manager_change_is_a_new_patch() -> None:
    """`manager` keys a map-type list: a new manager is a new item, so nothing is compared."""
    old = train_job()
    new = edit(train_job(), "spec.runtimePatches.0.manager", "example.com/other")
    manager = [r for r in evaluate_rules(new, old=old) if r.pointer.endswith("/manager")]
    assert [r.status for r in manager] == ["skipped"]
    assert errors(new, old=old) == []


# --- coverage ------------------------------------------------------------------------------


def targeted() -> set[tuple[str, CelRule]]:
    """(kind, vendored rule) of every case; `self == oldSelf` differs by where it binds."""
    return {(case.kind, vendored(case)) for case in INVALID + CHANGED}


def test_the_corpus_covers_at_least_ten_distinct_rules() -> None:
    found = targeted()
    assert len(found) >= 10
    assert len({(kind, rule.rule) for kind, rule in found}) >= 10, "not just immutability"
    assert sum(uses_old_self(rule.rule) for _, rule in found) >= 2
    families = {SOURCES[kind].split("/")[0] for kind, _ in found}
    assert families == {
        "kubeflow-trainer",
        "jobset",
        "flux-helm-controller",
        "flux-kustomize-controller",
        "flux-source-controller",
    }


def test_every_flux_rule_has_a_case() -> None:
    registry = default_registry()
    rules = {
        (kind, r) for kind in (HR, KS, GR) for r in registry.cel_rules(API_VERSIONS[kind], kind)
    }
    assert rules
    assert rules - targeted() == set()


@pytest.mark.parametrize("group", ["argoproj.io", "monitoring.coreos.com"])
def test_argo_cd_and_prometheus_operator_crds_carry_no_cel_rules(group: str) -> None:
    registry = default_registry()
    kinds = [(v, k) for g, v, k in registry.known_crds() if g == group]
    assert len(kinds) >= 3, f"no vendored CRDs of {group}"
    assert {k: registry.cel_rules(f"{group}/{v}", k) for v, k in kinds} == {k: [] for _, k in kinds}
    crds = [registry.crd(f"{group}/{v}", k) for v, k in kinds]
    release = {
        "argoproj.io": "argo-cd/v3.5.1/",
        "monitoring.coreos.com": "prometheus-operator/v0.89.0/",
    }
    assert all(crd is not None and crd.source.startswith(release[group]) for crd in crds)


def test_every_certification_and_workload_run_rule_has_a_failing_case() -> None:
    """Uses the NVCRE tables of tests/unit/check/test_cel.py."""
    cases = [(k, p, v) for k, p, v, _, _ in NVCRE_INVALID]
    cases += [(k, p, v) for k, p, v, _ in NVCRE_CHANGED]
    failing: set[tuple[str, str]] = set()
    for kind, path, value in cases:
        results = evaluate_rules(nvcre_mutated(kind, path, value), old=NVCRE_BASES[kind]())
        failing |= {(kind, r.rule) for r in results if r.status == "failed"}
    for kind in ("Certification", "WorkloadRun"):
        rules = {rule for k, rule in nvcre_rules() if k == kind}
        assert rules, f"no vendored CEL rules for {kind}"
        assert rules - {rule for k, rule in failing if k == kind} == set(), kind
