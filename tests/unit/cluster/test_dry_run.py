"""Server-side dry-run apply through the real kubernetes client, against a local fake.

tests/realserver/ dry-runs against the real kube-apiserver; here, to assert exactly
what was sent and how scripted answers a real server cannot be made to give on demand
come back, they run the official `kubernetes` Python client, unmodified, against a
small local HTTP server (`fakeapi.py`: `http.server.ThreadingHTTPServer` on 127.0.0.1,
a random port, in a thread) that speaks the Kubernetes API for exactly the calls
nvcregen makes: group-version discovery and `PATCH` apply with `dryRun=All`. The tests
assert what the server received (path, query, content type, token, body) and how its
answers (200, 422 with causes, 404, 429, 503, 401, a refused connection) come back.
`tests/e2e/test_server_dry_run.py` does the same against a real cluster when one is set.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeapi import NVCRE, FakeApiServer, closed_port_url, serve, write_kubeconfig
from kubehttp import status

from nvcregen.check.crossref import Located
from nvcregen.check.server import field_pointer, result_findings, server_findings
from nvcregen.cluster import (
    Cluster,
    ClusterError,
    DryRunResult,
    ServerUnreachableError,
    connect,
    dry_run_apply,
)

APPLY_QUERY = {
    "dryRun": ["All"],
    "fieldManager": ["nvcregen"],
    "fieldValidation": ["Strict"],
    "force": ["true"],
}
UNKNOWN_FIELD = {
    "reason": "FieldValueInvalid",
    "message": 'unknown field "spec.foo"',
    "field": "spec.foo",
}


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with serve() as server:
        yield server


@pytest.fixture
def kubeconfig(tmp_path: Path, fake: FakeApiServer) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", fake.url, closed_port_url())


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def cluster(kubeconfig: Path, slept: list[float]) -> Cluster:
    return connect("ctx", kubeconfig, sleep=slept.append)


def certification(name: str = "lab-two-node-1a2b3c4d", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": NVCRE,
        "kind": "Certification",
        "metadata": {"name": name, "namespace": "nvcre"},
        "spec": {
            "categories": [{"domain": "communication", "options": {"gpusPerNode": 8}}],
            **spec,
        },
    }


def log_profile(name: str = "nvcregen-nccl-bandwidth") -> dict[str, Any]:
    return {"apiVersion": NVCRE, "kind": "LogProfile", "metadata": {"name": name}, "spec": {}}


# connect


def test_connect_uses_the_named_context(cluster: Cluster, fake: FakeApiServer) -> None:
    assert (cluster.context, cluster.host, cluster.namespace) == ("ctx", fake.url, "team")
    assert fake.received == []  # connecting sends nothing


def test_connect_defaults_to_the_current_context(kubeconfig: Path) -> None:
    assert connect(None, kubeconfig).context == "ctx"


def test_a_missing_context_lists_the_available_ones(kubeconfig: Path) -> None:
    with pytest.raises(
        ClusterError, match=r"context 'prod' is not in .*; available contexts: ctx, down"
    ):
        connect("prod", kubeconfig)


def test_a_missing_kubeconfig_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match=r"kubeconfig .*nope does not exist"):
        connect("ctx", tmp_path / "nope")


def test_an_unreadable_kubeconfig_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "kubeconfig").write_text("clusters: [\n")
    with pytest.raises(ClusterError, match="cannot read kubeconfig"):
        connect("ctx", tmp_path / "kubeconfig")


def test_without_the_client_the_error_says_what_to_install(
    kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # `import kubernetes` now fails
    with pytest.raises(ClusterError, match=r"pip install 'nvcregen\[cluster\]'"):
        connect("ctx", kubeconfig)


# dry-run apply


def test_a_valid_object_is_applied_as_a_strict_dry_run(
    cluster: Cluster, fake: FakeApiServer
) -> None:
    obj = certification()
    assert dry_run_apply(cluster, obj) == DryRunResult(ok=True, status_code=200)
    discovery, patch = fake.received
    assert (discovery.method, discovery.path) == ("GET", "/apis/nvcre.nvidia.com/v1alpha1")
    assert patch.method == "PATCH"
    assert patch.path == f"/apis/{NVCRE}/namespaces/nvcre/certifications/lab-two-node-1a2b3c4d"
    assert patch.query == APPLY_QUERY
    assert patch.content_type == "application/apply-patch+yaml"
    assert patch.authorization == "Bearer test-token"
    assert patch.body == obj


def test_a_cluster_scoped_kind_has_no_namespace_in_its_path(
    cluster: Cluster, fake: FakeApiServer
) -> None:
    assert dry_run_apply(cluster, log_profile()).ok
    assert fake.patches()[0].path == f"/apis/{NVCRE}/logprofiles/nvcregen-nccl-bandwidth"


def test_a_core_object_without_namespace_goes_to_the_contexts_namespace(
    cluster: Cluster, fake: FakeApiServer
) -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    assert dry_run_apply(cluster, config_map).ok
    assert [r.path for r in fake.received] == ["/api/v1", "/api/v1/namespaces/team/configmaps/c"]


def test_discovery_is_asked_once_per_group_version(cluster: Cluster, fake: FakeApiServer) -> None:
    for obj in (certification("a"), certification("b"), log_profile()):
        assert dry_run_apply(cluster, obj).ok
    assert [r.method for r in fake.received] == ["GET", "PATCH", "PATCH", "PATCH"]


def test_a_refusal_carries_the_status_message_and_causes(
    cluster: Cluster, fake: FakeApiServer
) -> None:
    message = 'Certification.nvcre.nvidia.com "bad" is invalid: spec.foo: unknown field'
    fake.reject["bad"] = (422, status(422, "Invalid", message, [UNKNOWN_FIELD]))
    result = dry_run_apply(cluster, certification("bad", foo=1))
    assert result == DryRunResult(False, 422, message, [("spec.foo", 'unknown field "spec.foo"')])


@pytest.mark.parametrize(
    ("api_version", "kind", "gets"),
    [("example.com/v1", "Widget", ["/apis/example.com/v1"]), (NVCRE, "Gadget", [f"/apis/{NVCRE}"])],
)
def test_a_kind_the_server_does_not_serve_is_not_sent(
    cluster: Cluster, fake: FakeApiServer, api_version: str, kind: str, gets: list[str]
) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}}
    result = dry_run_apply(cluster, obj)
    assert (result.ok, result.kind_known, result.status_code) == (False, False, 404)
    assert [r.path for r in fake.received] == gets  # discovery only, no PATCH


def test_a_throttled_request_is_retried_after_retry_after(
    cluster: Cluster, fake: FakeApiServer, slept: list[float]
) -> None:
    fake.throttle_once.add("busy")
    assert dry_run_apply(cluster, certification("busy")).ok
    assert [r.path.rsplit("/", 1)[-1] for r in fake.patches()] == ["busy", "busy"]
    assert slept == [1.0]  # the fake's Retry-After, read from the real client's answer


def test_server_errors_are_retried_a_bounded_number_of_times(
    cluster: Cluster, fake: FakeApiServer, slept: list[float]
) -> None:
    fake.always = (503, status(503, "ServiceUnavailable", "etcd is down"))
    result = dry_run_apply(cluster, certification())
    assert (result.ok, result.status_code) == (False, 503)
    assert "discovery of nvcre.nvidia.com/v1alpha1 failed: etcd is down" in result.message
    assert len(fake.received) == 3
    assert slept == [0.25, 0.5]


def test_a_refused_connection_is_retried_then_reported(
    kubeconfig: Path, slept: list[float]
) -> None:
    down = connect("down", kubeconfig, sleep=slept.append)
    with pytest.raises(ServerUnreachableError, match=r"did not answer: .*refused"):
        dry_run_apply(down, certification())
    assert slept == [0.25, 0.5]


def test_rejected_credentials_are_not_retried(
    cluster: Cluster, fake: FakeApiServer, slept: list[float]
) -> None:
    fake.token = "another-token"
    with pytest.raises(ServerUnreachableError, match="refused the credentials of context 'ctx'"):
        dry_run_apply(cluster, certification())
    assert (len(fake.received), slept) == (1, [])


# findings


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("spec.categories[0].options.gpusPerNode", "/spec/categories/0/options/gpusPerNode"),
        (".spec.foo", "/spec/foo"),
        ("metadata.labels[app.kubernetes.io/name]", "/metadata/labels/app.kubernetes.io~1name"),
        ('metadata.annotations["a.b"]', "/metadata/annotations/a.b"),
        ("spec.tests[2]", "/spec/tests/2"),
        ("", ""),
        ("<nil>", ""),
        ("spec..foo", ""),
    ],
)
def test_field_pointer(field: str, expected: str) -> None:
    assert field_pointer(field) == expected


def test_each_cause_is_a_finding_at_its_field() -> None:
    causes = [
        ("spec.categories[0].options.gpusPerNode", "Invalid value: 9: must be at most 8"),
        ("spec.foo", 'unknown field "spec.foo"'),
    ]
    findings = result_findings(certification("x"), DryRunResult(False, 422, "invalid", causes))
    assert [(f.code, f.pointer) for f in findings] == [
        ("NVC640", "/spec/categories/0/options/gpusPerNode"),
        ("NVC640", "/spec/foo"),
    ]
    assert findings[0].message == (
        "the API server rejects Certification nvcre/x: "
        "spec.categories[0].options.gpusPerNode: Invalid value: 9: must be at most 8"
    )
    assert "schemas/upstream" in findings[0].hint


def test_a_refusal_without_causes_points_at_the_field_its_message_names() -> None:
    message = 'strict decoding error: unknown field "spec.bar"'
    (finding,) = result_findings(certification("x"), DryRunResult(False, 400, message))
    assert (finding.code, finding.pointer) == ("NVC640", "/spec/bar")
    assert message in finding.message


def test_an_unknown_kind_is_one_finding_with_the_crd_hint() -> None:
    result = DryRunResult(False, 404, "the server does not serve Certification", kind_known=False)
    (finding,) = result_findings(certification("x"), result)
    assert (finding.code, finding.pointer) == ("NVC641", "/kind")
    assert "CRD layer first" in finding.hint


def test_server_findings_map_each_answer(cluster: Cluster, fake: FakeApiServer) -> None:
    fake.reject["bad"] = (422, status(422, "Invalid", "invalid", [UNKNOWN_FIELD]))
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    objects = [
        Located("good.yaml", certification("good")),
        Located("bad.yaml", certification("bad", foo=1)),
        Located("widget.yaml", widget),
    ]
    found = server_findings(objects, cluster)
    assert [(file, f.code, f.pointer) for file, f in found] == [
        ("bad.yaml", "NVC640", "/spec/foo"),
        ("widget.yaml", "NVC641", "/kind"),
    ]


def test_an_unreachable_server_is_one_finding_not_one_per_object(
    kubeconfig: Path, slept: list[float]
) -> None:
    down = connect("down", kubeconfig, sleep=slept.append)
    objects = [Located(f"{n}.yaml", certification(n)) for n in ("a", "b", "c")]
    ((file, finding),) = server_findings(objects, down)
    assert (file, finding.code, finding.pointer) == ("a.yaml", "NVC642", "")
    assert "dry-run stopped after 0 of 3 objects" in finding.message
    assert len(slept) == 2  # one object's attempts, not three objects'


def test_a_cel_rejection_reaches_the_user_with_the_rule_message(
    fake: FakeApiServer, cluster: Cluster
) -> None:
    """What an API server answers when an x-kubernetes-validations rule fails on apply."""
    cause = {
        "reason": "FieldValueInvalid",
        "field": "spec.workloadMetadata.labels",
        "message": 'Invalid value: "object": label keys must not use the nvcre.nvidia.com/ prefix',
    }
    body = status(422, "Invalid", 'Certification.nvcre.nvidia.com "x" is invalid', [cause])
    fake.reject["x"] = (422, body)
    findings = server_findings([Located("c.yaml", certification("x"))], cluster)
    assert [(f.code, f.pointer) for _, f in findings] == [
        ("NVC640", "/spec/workloadMetadata/labels")
    ]
    assert "must not use the nvcre.nvidia.com/ prefix" in findings[0][1].message


def test_a_conflict_is_reported_not_retried(fake: FakeApiServer, cluster: Cluster) -> None:
    fake.reject["x"] = (409, status(409, "Conflict", "Apply failed with 1 conflict"))
    findings = server_findings([Located("c.yaml", certification("x"))], cluster)
    assert [f.code for _, f in findings] == ["NVC640"]
    assert "Apply failed with 1 conflict" in findings[0][1].message
    assert "field manager" in findings[0][1].hint
    assert len(fake.patches()) == 1


def test_crds_are_dry_run_before_the_objects_that_need_them(
    fake: FakeApiServer, cluster: Cluster
) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "certifications.nvcre.nvidia.com"},
    }
    fake.served["apiextensions.k8s.io/v1"] = [
        {
            "name": "customresourcedefinitions",
            "kind": "CustomResourceDefinition",
            "namespaced": False,
        }
    ]
    objects = [Located("c.yaml", certification("x")), Located("crd.yaml", crd)]
    server_findings(objects, cluster)
    assert [p.path.split("/")[-2] for p in fake.patches()] == [
        "customresourcedefinitions",
        "certifications",
    ]
