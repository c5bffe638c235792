"""How the twin adapts JobSet's and Trainer's own manifests, and kwok's stages, to run on
loopback (tests/twin.py); no process is started.

The pure helpers are checked on their own; those reading the built twin's `manifests/`
are skipped until `make twin` has run.
"""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from typing import Any

import pytest
import twin
from cryptography import x509

BUILT = pytest.mark.skipif(bool(twin.missing()), reason=twin.missing() or "built")


def test_json_patch_replaces_and_adds_in_lists_and_mappings() -> None:
    document: dict[str, Any] = {"metadata": {"name": "a"}, "webhooks": [{"n": 0}, {"n": 1}]}
    twin.json_patch(
        document,
        [
            {"op": "replace", "path": "/webhooks/1", "value": {"n": "one"}},
            {"op": "replace", "path": "/metadata/name", "value": "b"},
            {"op": "add", "path": "/webhooks/0", "value": {"n": "first"}},
            {"op": "add", "path": "/webhooks/-", "value": {"n": "last"}},
            {"op": "add", "path": "/metadata/a~1b", "value": "slash"},
        ],
    )
    assert document == {
        "metadata": {"name": "b", "a/b": "slash"},
        "webhooks": [{"n": "first"}, {"n": 0}, {"n": "one"}, {"n": "last"}],
    }


def test_json_patch_refuses_what_it_does_not_do() -> None:
    with pytest.raises(ValueError, match="unsupported JSON patch operation 'remove'"):
        twin.json_patch({"a": 1}, [{"op": "remove", "path": "/a"}])
    with pytest.raises(ValueError, match="no /b to replace"):
        twin.json_patch({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}])


def pod_stage(delay: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": "pod-ready"},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "delay": delay},
    }


def test_a_faster_pod_stage_divides_its_default_delay_and_jitter() -> None:
    from_annotation = {"expressionFrom": '.metadata.annotations["x"]'}
    stage = pod_stage(
        {
            "durationMilliseconds": 1000,
            "durationFrom": from_annotation,
            "jitterDurationMilliseconds": 5000,
        }
    )
    faster = twin.faster_stage(stage, 5.0)
    assert faster["spec"]["delay"] == {
        "durationMilliseconds": 200,
        "durationFrom": from_annotation,  # a pod's own annotation still decides
        "jitterDurationMilliseconds": 1000,
    }
    assert stage["spec"]["delay"]["durationMilliseconds"] == 1000  # a copy: kept as it was
    assert twin.faster_stage(pod_stage({}), 5.0)["spec"]["delay"] == {}


def test_a_node_stage_keeps_its_pace() -> None:
    heartbeat = pod_stage({"durationMilliseconds": 20000, "jitterDurationMilliseconds": 5000})
    heartbeat["spec"]["resourceRef"]["kind"] = "Node"
    assert twin.faster_stage(heartbeat, 5.0) == heartbeat


def test_a_pools_tolerations_become_the_taints_its_nodes_carry() -> None:
    tolerations = [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "readiness"},
        {"operator": "Exists"},  # tolerates everything, names no taint
    ]
    assert twin.taints_tolerated(tolerations) == [
        {"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "readiness", "effect": "NoSchedule"},
    ]


def test_the_webhook_certificate_is_issued_for_the_service_name(tmp_path: Path) -> None:
    ca_pem = twin.webhook_certificate(tmp_path / "certs", "jobset-webhook-service", "jobset-system")
    ca = x509.load_pem_x509_certificate(ca_pem)
    serving = x509.load_pem_x509_certificate((tmp_path / "certs" / "tls.crt").read_bytes())
    serving.verify_directly_issued_by(ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "jobset-webhook-service.jobset-system.svc" in names.get_values_for_type(x509.DNSName)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert serving.not_valid_after_utc > datetime.datetime.now(datetime.UTC)
    assert (tmp_path / "certs" / "tls.key").read_bytes().startswith(b"-----BEGIN PRIVATE KEY")


@BUILT
def test_jobsets_pod_webhooks_get_the_object_selector_its_kustomization_patches_in() -> None:
    folder = twin.cache_dir() / "manifests" / "jobset" / "config" / "components" / "webhook"
    configurations = twin.point_webhooks(
        twin.kustomized_webhooks(folder), "jobset-system", "svc", 9555, b"CA"
    )
    assert sorted(c["kind"] for c in configurations) == [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    for configuration in configurations:
        _, pods = configuration["webhooks"]
        assert pods["rules"][0]["resources"] == ["pods"]
        assert pods["objectSelector"] == {
            "matchExpressions": [{"key": "jobset.sigs.k8s.io/jobset-name", "operator": "Exists"}]
        }
        for hook in configuration["webhooks"]:
            service = hook["clientConfig"]["service"]
            assert (service["namespace"], service["name"], service["port"]) == (
                "jobset-system",
                "svc",
                9555,
            )
            assert base64.b64decode(hook["clientConfig"]["caBundle"]) == b"CA"


@BUILT
def test_trainers_webhooks_are_named_and_pointed_as_its_kustomization_says() -> None:
    folder = twin.cache_dir() / "manifests" / "trainer" / "manifests" / "base" / "webhook"
    configurations = twin.kustomized_webhooks(folder)
    assert sorted(c["metadata"]["name"] for c in configurations) == [
        "defaulter.trainer.kubeflow.org",
        "validator.trainer.kubeflow.org",
    ]
    services = {h["clientConfig"]["service"]["name"] for c in configurations for h in c["webhooks"]}
    assert services == {twin.TRAINER_SERVICE}


@BUILT
@pytest.mark.slow
def test_jobsets_crd_gets_its_conversion_webhook_and_trainers_none() -> None:
    manifests = twin.cache_dir() / "manifests"
    (jobset,) = twin.jobset_crds(manifests, "jobset-system", 9555, b"CA")
    client = jobset["spec"]["conversion"]["webhook"]["clientConfig"]
    assert client["service"] == {
        "namespace": "jobset-system",
        "name": twin.JOBSET_SERVICE,
        "port": 9555,
        "path": "/convert",
    }
    assert base64.b64decode(client["caBundle"]) == b"CA"
    trainer = twin.trainer_crds(manifests)
    assert sorted(c["spec"]["names"]["kind"] for c in trainer) == [
        "ClusterTrainingRuntime",
        "TrainJob",
        "TrainingRuntime",
    ]
    assert all("conversion" not in c["spec"] for c in trainer)
