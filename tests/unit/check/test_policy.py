"""nvcregen's own policies: each code fails on a bad object and stays quiet on a good one."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from nvcregen.check import policy
from nvcregen.check.crossref import (
    Located,
    PoolCounts,
    check_counts,
    check_identities,
    check_log_profiles,
)
from nvcregen.check.policy import check_policies, find_key, mentions
from nvcregen.core.errors import Severity
from nvcregen.core.labels import UNVERIFIED_TLS
from nvcregen.core.nvcre import NVCRE_API
from nvcregen.core.secrets import find_secret

DIGEST = "@sha256:" + "a" * 64


def certification(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1",
        "kind": "Certification",
        "metadata": {"name": "c", "namespace": "nvcre"},
        "spec": {"gpusPerNode": 8, "mlnxPerNode": 8, "categories": [], **spec},
    }


def codes(obj: dict[str, Any], *, strict: bool = False) -> list[tuple[str, str, Severity]]:
    return [(f.code, f.pointer, f.severity) for f in check_policies(obj, strict=strict)]


def test_a_clean_object_has_no_findings() -> None:
    assert codes(certification(image=f"nvcr.io/nvidia/pytorch:26.01-py3{DIGEST}")) == []


def test_gbps_metric_names_are_refused_anywhere() -> None:
    rule = {"groups": [{"rules": [{"expr": "max(nvcre_nccl_busbw_gbps)"}]}]}
    obj = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "r"},
        "spec": rule,
    }
    assert codes(obj) == [("NVC620", "/spec/groups/0/rules/0/expr", Severity.ERROR)]
    listed = certification(args=["nvcre_nccl_algbw_gbps"])
    assert [c[:2] for c in codes(listed)] == [("NVC620", "/spec/args/0")]


def test_tag_only_images_warn_and_fail_under_strict() -> None:
    obj = certification(categories=[{"options": {"image": "nvcr.io/nvidia/pytorch:26.01-py3"}}])
    where = "/spec/categories/0/options/image"
    assert codes(obj) == [("NVC621", where, Severity.WARNING)]
    assert codes(obj, strict=True) == [("NVC621", where, Severity.ERROR)]


def test_insecure_skip_verify_warns_only_when_true() -> None:
    endpoint = {"tlsConfig": {"insecureSkipVerify": True}}
    obj = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "m"},
        "spec": {"endpoints": [endpoint]},
    }
    assert codes(obj) == [
        ("NVC622", "/spec/endpoints/0/tlsConfig/insecureSkipVerify", Severity.WARNING)
    ]
    endpoint["tlsConfig"]["insecureSkipVerify"] = False
    assert codes(obj) == []


def test_skipping_verification_of_a_self_signed_target_says_why_instead_of_nvc622() -> None:
    # NVCRE 0.7.0's controller serves a self-signed certificate: no CA can verify it, so
    # nvcregen's ServiceMonitor states that in the object, and check takes it (issue 19).
    annotations = {UNVERIFIED_TLS: "self-signed target"}
    obj: dict[str, Any] = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "m", "annotations": annotations},
        "spec": {"endpoints": [{"tlsConfig": {"insecureSkipVerify": True}}]},
    }
    assert codes(obj) == []
    annotations[UNVERIFIED_TLS] = ""
    (finding,) = [f for f in check_policies(obj) if f.code == "NVC622"]
    assert UNVERIFIED_TLS in finding.hint and "self-signed" in finding.hint


def test_secret_values_never_reach_out() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"token": "eA=="},
    }
    assert [c[0] for c in codes(secret)] == ["NVC623"]
    assert codes({**secret, "data": {}}) == []


def test_the_pre_rename_group_is_refused() -> None:
    old = {**certification(), "apiVersion": "cre.nvidia.com/v1alpha1"}
    assert [c[:2] for c in codes(old)] == [("NVC624", "/apiVersion")]


def test_log_profile_references_must_resolve() -> None:
    run = Located(
        "wr.yaml",
        {
            "apiVersion": NVCRE_API,
            "kind": "WorkloadRun",
            "metadata": {"name": "w"},
            "spec": {"bandwidthMeasurement": {"logProfileRef": "mine"}},
        },
    )
    profile = Located("lp.yaml", {"kind": "LogProfile", "metadata": {"name": "mine"}})
    builtin = Located(
        "wr2.yaml",
        {
            "apiVersion": NVCRE_API,
            "kind": "WorkloadRun",
            "metadata": {"name": "w2"},
            "spec": {"goodputMeasurement": {"logProfileRef": "megatron-training"}},
        },
    )
    assert [(file, f.code) for file, f in check_log_profiles([run])] == [("wr.yaml", "NVC630")]
    assert list(check_log_profiles([run, profile, builtin])) == []
    # The field is NVCRE's: another API's object that happens to carry it is not searched.
    other = Located("cm.yaml", {**run.obj, "apiVersion": "v1", "kind": "ConfigMap"})
    assert list(check_log_profiles([other])) == []


def test_an_object_defined_twice_is_reported_at_the_second_file() -> None:
    first = Located("a.yaml", certification())
    second = Located("b.yaml", certification())
    assert [(file, f.code) for file, f in check_identities([first, second])] == [
        ("b.yaml", "NVC633")
    ]


def test_counts_must_be_explicit_and_match_the_pool() -> None:
    pool = PoolCounts(gpus=8, nics=8)
    good = certification(categories=[{"options": {"gpusPerNode": 8, "mlnxPerNode": 0}}])
    assert list(check_counts(Located("c.yaml", good), pool)) == []
    fallback = certification(categories=[{"options": {"mlnxPerNode": 8}}])
    assert [f.pointer for f in check_counts(Located("c.yaml", fallback), pool)] == [
        "/spec/categories/0/options/gpusPerNode"
    ]
    too_many = certification(mlnxPerNode=16)
    assert [f.pointer for f in check_counts(Located("c.yaml", too_many), pool)] == [
        "/spec/mlnxPerNode"
    ]


def test_mentions_sees_every_string_and_says_maybe_for_other_data() -> None:
    shared = "nccl_gbps"
    assert mentions({"a": [shared, {"b": shared}]}, "_gbps")  # a repeated string, once
    assert mentions({"image": 1}, "image")  # keys too
    assert mentions({"a": "größe_gbps"}, "_gbps")  # UTF-8
    assert not mentions({"a": ["x"], "b": {"c": 1.5}}, "image", "_gbps")
    assert mentions({"a": date(2026, 1, 1)}, "image")  # marshal cannot write it: maybe
    assert find_key({"x": [{"logProfileRef": "p"}]}, "logProfileRef") == [
        (("x", 0, "logProfileRef"), "p")
    ]
    assert find_key({"x": [{"other": "logProfileRef"}]}, "logProfileRef") == []


def test_a_repeated_text_is_searched_for_secrets_once_and_found_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[str] = []

    def counted(text: str) -> str | None:
        searched.append(text)
        return find_secret(text)

    monkeypatch.setattr(policy, "find_secret", counted)
    policy._remembered.cache_clear()
    token = "ghp_" + "A1b2" * 9  # a GitHub token's shape
    at_limit = "x" * (policy.SECRET_TEXT_REMEMBERED - len(token)) + token
    over = "x" + at_limit
    assert len(over) == policy.SECRET_TEXT_REMEMBERED + 1
    for text in (at_limit, over):
        objects = [{"metadata": {"name": f"o{i}"}, "data": {"k": text}} for i in range(3)]
        found = [policy.secret_strings(obj) for obj in objects]
        assert [[f.pointer for f in each] for each in found] == [["/data/k"]] * 3
    # The text at the limit is searched once and remembered; one character over, each time.
    assert searched.count(at_limit) == 1
    assert searched.count(over) == 3
