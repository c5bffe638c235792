"""Tests of the monitoring layer: ServiceMonitor, recording rules and the dashboard."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sitefactory import edit, line_of, load, parse, site, site_yaml, units_of

from nvcregen.check.objectcheck import object_findings
from nvcregen.compile.monitoring.alerts import workflow_pattern
from nvcregen.compile.monitoring.layer import (
    SCRAPER_TOKEN,
    SERVICE_SELECTOR,
    check_monitoring,
    monitoring_manifests,
)
from nvcregen.compile.monitoring.promql import regex_escape
from nvcregen.compile.monitoring.rules import RECORDINGS
from nvcregen.core.errors import Severity
from nvcregen.core.labels import UNVERIFIED_TLS
from nvcregen.core.manifest import Manifest
from nvcregen.engines.readiness.nvcre.layer import readiness_manifests
from nvcregen.kubeschema.registry import default_registry
from nvcregen.plan.model import TestUnit
from nvcregen.spec.parse import parse_model
from nvcregen.spec.v1alpha1 import Site
from nvcregen.validate.schema import validate_schema

ROOT = Path(__file__).resolve().parents[3]
RECORD_NAME = re.compile(r"^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$")
STAGES = """\
- name: node
  scope: intra-node
  tests: [nccl-all-reduce, nccl-all-gather]
- name: fabric
  scope: inter-node
  tests: [nccl-all-reduce, nccl-all-reduce-tcp, training-goodput]
- name: pinned
  scope: inter-node
  pinTransport: true
  tests: [nccl-all-reduce]
"""
THRESHOLDS = """\
- {test: nccl-all-reduce, scope: intra-node, at: 1GiB, busbw: ">= 2880 Gb/s"}
- {test: nccl-all-reduce, scope: inter-node, algbw: "> 20 GB/s"}
- {test: training-goodput, scope: inter-node, goodput: ">= 90%"}
"""


def with_monitoring(text: str, block: str) -> str:
    """Append a `monitoring:` section (written unindented) to a site's spec."""
    lines = "".join(f"    {line}\n" for line in block.strip("\n").splitlines())
    return f"{text}  monitoring:\n{lines}"


def lab_text(monitoring: str = "", dependencies: str = "") -> str:
    text = site_yaml(stages=STAGES, thresholds=THRESHOLDS, dependencies=dependencies)
    return with_monitoring(text, monitoring) if monitoring else text


def build(text: str | None = None) -> list[Manifest]:
    return monitoring_manifests(site(text), units_of(text))


def one(manifests: list[Manifest], kind: str) -> dict[str, Any]:
    found = [m.obj for m in manifests if m.kind == kind]
    assert len(found) == 1, [m.kind for m in manifests]
    return found[0]


def endpoint(text: str | None = None) -> dict[str, Any]:
    endpoints: list[dict[str, Any]] = one(build(text), "ServiceMonitor")["spec"]["endpoints"]
    assert len(endpoints) == 1
    return endpoints[0]


def rules_of(manifests: list[Manifest]) -> list[dict[str, Any]]:
    groups = one(manifests, "PrometheusRule")["spec"]["groups"]
    return [rule for group in groups for rule in group["rules"]]


def alerts_named(manifests: list[Manifest], name: str) -> list[dict[str, Any]]:
    return [r for r in rules_of(manifests) if r.get("alert") == name]


def dashboard_of(manifests: list[Manifest]) -> dict[str, Any]:
    data = one(manifests, "ConfigMap")["data"]
    assert list(data) == ["nvcre-readiness.json"]
    model: dict[str, Any] = json.loads(data["nvcre-readiness.json"])
    return model


def example_sites() -> list[str]:
    return sorted(p.name for p in (ROOT / "sites").glob("*.yaml"))


# What is produced, and when


def test_default_site_produces_every_monitoring_object() -> None:
    manifests = build()
    kinds = sorted(m.kind for m in manifests)
    assert kinds == sorted(
        [
            "ServiceMonitor",
            "ServiceAccount",
            "Secret",
            "ClusterRole",
            "ClusterRoleBinding",
            "PrometheusRule",
            "ConfigMap",
        ]
    )
    assert {m.component for m in manifests} == {"monitoring"}
    assert all(m.source.startswith("/spec/monitoring/") for m in manifests)


def test_without_the_operator_only_the_dashboard_remains() -> None:
    manifests = build(lab_text(dependencies="prometheus: {operator: false}"))
    assert [m.kind for m in manifests] == ["ConfigMap"]
    text = json.dumps(dashboard_of(manifests))
    assert "nvcre_nccl_busbw_gbs{" in text  # raw metrics, nothing recorded
    assert not any(r.record in text for r in RECORDINGS)


def test_switches_turn_off_rules_and_dashboards() -> None:
    no_rules = build(lab_text("recordingRules: false"))
    assert "PrometheusRule" not in [m.kind for m in no_rules]
    assert not any(r.record in json.dumps(dashboard_of(no_rules)) for r in RECORDINGS)
    no_dashboards = build(lab_text("dashboards: false"))
    assert "ConfigMap" not in [m.kind for m in no_dashboards]
    assert "PrometheusRule" in [m.kind for m in no_dashboards]


def test_given_units_and_the_default_plan_agree_and_output_is_deterministic() -> None:
    text = lab_text()
    planned = monitoring_manifests(site(text), units_of(text))
    assert planned == build(text) == build(text)


@pytest.mark.parametrize(
    "text",
    [
        None,
        lab_text(),
        lab_text("serviceMonitor: {tls: {insecureSkipVerify: true}, honorLabels: false}"),
        lab_text(
            "serviceMonitor: {interval: 90s, scrapeTimeout: 1m, "
            "tls: {certificate: platform, caSecret: ca}}"
        ),
        lab_text(dependencies="prometheus: {operator: false}"),
    ],
)
def test_every_object_is_valid_upstream(text: str | None) -> None:
    for manifest in build(text):
        assert default_registry().validate(manifest.obj) == [], manifest.name
        errors = [f for f in object_findings(manifest.obj) if f.severity is Severity.ERROR]
        assert errors == [], manifest.name


@pytest.mark.parametrize("name", example_sites())
def test_example_sites_give_valid_objects_without_gbps(name: str) -> None:
    manifests = build((ROOT / "sites" / name).read_text(encoding="utf-8"))
    assert manifests
    for manifest in manifests:
        assert default_registry().validate(manifest.obj) == [], manifest.name
        assert "_gbps" not in json.dumps(manifest.obj)


# ServiceMonitor


def test_service_monitor_selects_the_chart_metrics_service() -> None:
    monitor = one(build(), "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == "nvcre"
    assert monitor["metadata"]["labels"] == {"release": "prometheus"}
    assert monitor["spec"]["selector"] == {"matchLabels": SERVICE_SELECTOR}
    assert SERVICE_SELECTOR == {
        "app.kubernetes.io/name": "nvcre",
        "app.kubernetes.io/instance": "nvcre",
        "control-plane": "manager",
    }
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["nvcre"]}


def test_service_monitor_labels_come_from_the_site() -> None:
    text = lab_text(
        "serviceMonitor: {labels: {release: kube-prometheus-stack, team: gpu}}",
        dependencies="prometheus: {selector: {release: kube-prometheus-stack}}",
    )
    monitor = one(build(text), "ServiceMonitor")
    assert monitor["metadata"]["labels"] == {"release": "kube-prometheus-stack", "team": "gpu"}
    rule = one(build(text), "PrometheusRule")
    assert rule["metadata"]["labels"] == {"release": "kube-prometheus-stack"}


def test_endpoint_is_https_with_a_token_from_a_secret_reference() -> None:
    ep = endpoint()
    assert (ep["port"], ep["scheme"], ep["path"]) == ("https", "https", "/metrics")
    assert ep["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": SCRAPER_TOKEN, "key": "token"},
    }
    assert "bearerTokenFile" not in ep  # deprecated in Prometheus Operator v0.89.0
    assert "interval" not in ep and "scrapeTimeout" not in ep
    secret = one(build(), "Secret")
    assert secret["metadata"]["name"] == SCRAPER_TOKEN
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert "data" not in secret and "stringData" not in secret


def test_the_token_may_only_get_metrics() -> None:
    manifests = build()
    role = one(manifests, "ClusterRole")
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    binding = one(manifests, "ClusterRoleBinding")
    account = one(manifests, "ServiceAccount")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": "nvcre"}
    ]
    assert one(manifests, "Secret")["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": account["metadata"]["name"]
    }


def test_without_a_ca_verification_is_skipped_explicitly_never_left_to_fail() -> None:
    # Before issue 12 the default verified against no CA: every scrape failed.
    assert endpoint()["tlsConfig"] == {
        "serverName": "nvcre-metrics-service.nvcre.svc",
        "insecureSkipVerify": True,
    }


def test_tls_server_name_follows_the_namespace_and_ca_is_a_secret_reference() -> None:
    text = edit(site_yaml(), "  nodePools:\n", "  nvcre: {namespace: gpu-check}\n  nodePools:\n")
    monitor = "serviceMonitor: {tls: {certificate: platform, caSecret: nvcre-metrics-ca}}"
    text = with_monitoring(text, monitor)
    tls = endpoint(text)["tlsConfig"]
    assert tls["serverName"] == "nvcre-metrics-service.gpu-check.svc"
    assert tls["ca"] == {"secret": {"name": "nvcre-metrics-ca", "key": "ca.crt"}}
    assert tls["insecureSkipVerify"] is False


@pytest.mark.parametrize(
    ("ca", "expected"),
    [
        ("{secret: {name: metrics-tls}}", {"secret": {"name": "metrics-tls", "key": "ca.crt"}}),
        (
            "{configMap: {name: trust-bundle, key: bundle.pem}}",
            {"configMap": {"name": "trust-bundle", "key": "bundle.pem"}},
        ),
    ],
)
def test_the_ca_comes_from_a_secret_or_a_config_map_key(ca: str, expected: Any) -> None:
    tls = f"{{certificate: platform, ca: {ca}, serverName: m.x}}"
    text = with_monitoring(site_yaml(), f"serviceMonitor: {{tls: {tls}}}")
    assert endpoint(text)["tlsConfig"] == {
        "serverName": "m.x",
        "ca": expected,
        "insecureSkipVerify": False,
    }
    assert check_monitoring(*parse(text)) == []


@pytest.mark.parametrize(
    "tls",
    [
        "{ca: {secret: {name: a}, configMap: {name: b}}}",
        "{ca: {}}",
        "{ca: {secret: {name: a}}, caSecret: b}",
    ],
)
def test_a_ca_has_exactly_one_source(tls: str) -> None:
    text = with_monitoring(site_yaml(), f"serviceMonitor: {{tls: {tls}}}")
    doc = load(text)
    schema = validate_schema(doc)
    parsed, diags = parse_model(doc, Site)
    assert parsed is None or any(d.is_error for d in schema)
    assert any(d.is_error for d in schema + diags)


def test_no_ca_is_the_default_and_needs_no_warning_nvcre_serves_a_self_signed_certificate() -> None:
    assert check_monitoring(*parse(site_yaml())) == []


@pytest.mark.parametrize(
    ("tls", "at"),
    [
        ("{ca: {secret: {name: nvcre-metrics-cert, key: ca.crt}}}", "tls/ca"),
        ("{caSecret: nvcre-metrics-cert}", "tls/caSecret"),
        ("{certificate: self-signed, caSecret: nvcre-metrics-cert}", "tls/caSecret"),
    ],
)
def test_a_ca_for_the_self_signed_certificate_is_nvc370_an_error(tls: str, at: str) -> None:
    # Before issue 19 this verified against a CA the controller's certificate never had.
    text = with_monitoring(site_yaml(), f"serviceMonitor:\n  tls: {tls}")
    diags = check_monitoring(*parse(text))
    assert [(d.code, d.severity) for d in diags] == [("NVC370", Severity.ERROR)]
    assert diags[0].path == f"/spec/monitoring/serviceMonitor/{at}"
    assert diags[0].span.line == line_of(text, f"tls: {tls}")
    assert "self-signed" in diags[0].message
    assert "tls.certificate: platform" in diags[0].hint
    assert endpoint(text)["tlsConfig"]["insecureSkipVerify"] is True  # never verified


def test_a_platform_certificate_without_its_ca_is_nvc380() -> None:
    text = with_monitoring(site_yaml(), "serviceMonitor:\n  tls: {certificate: platform}")
    diags = check_monitoring(*parse(text))
    assert [(d.code, d.severity) for d in diags] == [("NVC380", Severity.ERROR)]
    assert diags[0].path == "/spec/monitoring/serviceMonitor/tls/certificate"


def test_a_platform_certificate_with_its_ca_is_verified_and_fine() -> None:
    text = with_monitoring(
        site_yaml(), "serviceMonitor:\n  tls: {certificate: platform, caSecret: metrics-ca}"
    )
    assert check_monitoring(*parse(text)) == []
    assert endpoint(text)["tlsConfig"]["insecureSkipVerify"] is False


@pytest.mark.parametrize("name", ["h20-3e-lab", "l20-pool"])
def test_no_shipped_site_verifies_a_certificate_the_controller_does_not_serve(name: str) -> None:
    text = (ROOT / "sites" / f"{name}.yaml").read_text(encoding="utf-8")
    site, _ = parse(text)
    assert site.spec.monitoring.service_monitor.tls.certificate == "self-signed"
    assert endpoint(text)["tlsConfig"]["insecureSkipVerify"] is True
    assert endpoint(text)["authorization"]["type"] == "Bearer"  # the token stays
    monitor = one(build(text), "ServiceMonitor")
    assert "self-signed" in monitor["metadata"]["annotations"][UNVERIFIED_TLS]
    assert [f.code for f in object_findings(monitor)] == []  # the reason is stated


def test_a_platform_certificate_states_no_reason_to_skip() -> None:
    tls = "tls: {certificate: platform, caSecret: metrics-ca}"
    monitor = one(
        build(with_monitoring(site_yaml(), f"serviceMonitor:\n  {tls}")), "ServiceMonitor"
    )
    assert UNVERIFIED_TLS not in monitor["metadata"].get("annotations", {})


def test_a_verifying_endpoint_without_a_ca_is_nvc681() -> None:
    monitor = one(build(), "ServiceMonitor")
    assert "NVC681" not in {f.code for f in object_findings(monitor)}
    monitor["spec"]["endpoints"][0]["tlsConfig"] = {"serverName": "x", "insecureSkipVerify": False}
    found = [f for f in object_findings(monitor) if f.code == "NVC681"]
    assert [(f.pointer, f.severity) for f in found] == [
        ("/spec/endpoints/0/tlsConfig", Severity.ERROR)
    ]


def test_tls_settings_from_the_site() -> None:
    text = with_monitoring(
        site_yaml(), "serviceMonitor: {tls: {insecureSkipVerify: true, serverName: m.example}}"
    )
    assert check_monitoring(*parse(text)) == []  # what the default does anyway
    assert endpoint(text)["tlsConfig"] == {"serverName": "m.example", "insecureSkipVerify": True}


@pytest.mark.parametrize("honor", [True, False])
def test_honor_labels_as_the_site_says(honor: bool) -> None:
    text = with_monitoring(site_yaml(), f"serviceMonitor: {{honorLabels: {str(honor).lower()}}}")
    assert endpoint(text)["honorLabels"] is honor


def test_interval_and_timeout_are_written_canonically() -> None:
    text = with_monitoring(site_yaml(), "serviceMonitor: {interval: 90s, scrapeTimeout: 60s}")
    ep = endpoint(text)
    assert (ep["interval"], ep["scrapeTimeout"]) == ("1m30s", "1m")


# check_monitoring


def test_matching_labels_are_fine() -> None:
    text = with_monitoring(
        site_yaml(), "serviceMonitor: {labels: {release: prometheus, team: gpu}}"
    )
    assert check_monitoring(*parse(text)) == []
    assert check_monitoring(*parse(site_yaml())) == []


def test_labels_that_miss_the_selector_are_nvc330_at_the_labels() -> None:
    text = with_monitoring(site_yaml(), "serviceMonitor:\n  labels: {release: kube-prom}")
    diags = check_monitoring(*parse(text))
    assert [(d.code, d.severity) for d in diags] == [("NVC330", Severity.ERROR)]
    assert diags[0].span.line == line_of(text, "labels: {release: kube-prom}")
    assert diags[0].path == "/spec/monitoring/serviceMonitor/labels"
    assert "release: prometheus" in diags[0].message
    assert "release: prometheus" in diags[0].hint


def test_the_l20_example_site_matches_its_prometheus_selector() -> None:
    text = (ROOT / "sites" / "l20-pool.yaml").read_text(encoding="utf-8")
    assert check_monitoring(*parse(text)) == []
    mismatched = text.replace(
        "selector: {release: kube-prometheus-stack}", "selector: {release: prom}"
    )
    assert [d.code for d in check_monitoring(*parse(mismatched))] == ["NVC330"]


def test_without_the_operator_nothing_is_checked() -> None:
    text = with_monitoring(
        site_yaml(dependencies="prometheus: {operator: false}"),
        "serviceMonitor: {labels: {a: b}, tls: {insecureSkipVerify: true}}",
    )
    assert check_monitoring(*parse(text)) == []


def test_skipping_verification_of_a_platform_certificate_is_nvc331_warning() -> None:
    tls = "tls: {certificate: platform, caSecret: c, insecureSkipVerify: true}"
    text = with_monitoring(site_yaml(), f"serviceMonitor:\n  {tls}")
    diags = check_monitoring(*parse(text))
    assert [(d.code, d.severity) for d in diags] == [("NVC331", Severity.WARNING)]
    assert diags[0].span.line == line_of(text, tls)


def test_scrape_timeout_longer_than_interval_is_nvc332() -> None:
    text = with_monitoring(site_yaml(), "serviceMonitor:\n  interval: 30s\n  scrapeTimeout: 1m")
    diags = check_monitoring(*parse(text))
    assert [d.code for d in diags] == ["NVC332"]
    assert diags[0].span.line == line_of(text, "scrapeTimeout: 1m")


def test_malformed_durations_are_nvc309() -> None:
    text = with_monitoring(site_yaml(), "serviceMonitor:\n  interval: 30s1m")
    assert [d.code for d in check_monitoring(*parse(text))] == ["NVC309"]


# PrometheusRule


def test_every_recording_rule_is_named_by_convention_and_sets_cluster() -> None:
    manifests = build(lab_text())
    records = [r for r in rules_of(manifests) if "record" in r]
    assert [r["record"] for r in records] == [r.record for r in RECORDINGS]
    for rule in records:
        assert RECORD_NAME.match(rule["record"]), rule["record"]
        assert rule["labels"] == {"cluster": "lab"}
        assert 'cluster=~"lab|"' in rule["expr"]
        assert " by (" in rule["expr"] and "cluster" not in rule["expr"].split(")")[0]


def test_every_alert_sets_cluster_and_severity() -> None:
    for rule in rules_of(build(lab_text())):
        if "alert" in rule:
            assert rule["labels"]["cluster"] == "lab"
            assert rule["labels"]["severity"] in {"warning", "critical"}
            assert set(rule["annotations"]) == {"summary", "description"}


def test_bandwidth_rules_use_gbs_and_max_over_time() -> None:
    manifests = build(lab_text())
    text = json.dumps([m.obj for m in manifests])
    assert "_gbps" not in text
    bandwidth = [r for r in rules_of(manifests) if "nccl_" in r["expr"]]
    assert bandwidth
    assert all("max_over_time(" in r["expr"] and "_gbs{" in r["expr"] for r in bandwidth)


def test_bus_bandwidth_threshold_alert_in_gb_per_s_at_the_size() -> None:
    (alert,) = alerts_named(build(lab_text()), "NvcreNcclBusBandwidthBelowThreshold")
    expr = alert["expr"]
    assert "< 360.0)" in expr  # 2880 Gb/s is 360 GB/s
    assert 'message_size_bytes="1073741824"' in expr
    assert 'nccl_test="all_reduce"' in expr
    assert 'workflow=~"lab-node-[0-9a-f]{8}-.+"' in expr
    assert "unless on (namespace, job)" in expr
    assert alert["labels"] == {
        "cluster": "lab",
        "severity": "warning",
        "test": "nccl-all-reduce",
        "scope": "intra-node",
    }
    assert "busbw >= 2880 Gb/s (>= 360.0 GB/s)" in alert["annotations"]["description"]


def test_alg_bandwidth_threshold_without_size_covers_every_inter_node_stage() -> None:
    (alert,) = alerts_named(build(lab_text()), "NvcreNcclAlgBandwidthBelowThreshold")
    assert "<= 20.0)" in alert["expr"]  # "> 20 GB/s" is violated at <= 20
    assert "message_size_bytes" not in alert["expr"]
    assert 'workflow=~"lab-fabric-[0-9a-f]{8}-.+|lab-pinned-nccl-all-reduce-' in alert["expr"]


def test_goodput_threshold_alert_only_when_the_site_has_one() -> None:
    (alert,) = alerts_named(build(lab_text()), "NvcreGoodputBelowThreshold")
    assert "nvcre_goodput_ratio{" in alert["expr"] and "< 0.9)" in alert["expr"]
    assert alerts_named(build(), "NvcreGoodputBelowThreshold") == []
    assert alerts_named(build(), "NvcreNcclBusBandwidthBelowThreshold") == []


def test_job_alerts_derive_their_durations_from_the_plan() -> None:
    manifests = build(lab_text())
    (too_long,) = alerts_named(manifests, "NvcreJobInProgressTooLong")
    assert too_long["for"] == "2h24m"  # training's 1h54m timeout and 30m of grace
    for name in ("NvcreJobFailedNodes", "NvcreJobFailed", "NvcreMetricsMissing"):
        assert len(alerts_named(manifests, name)) == 1
    (nodes,) = alerts_named(manifests, "NvcreJobFailedNodes")
    assert "max_over_time(nvcre_job_failed_nodes{" in nodes["expr"]


def test_window_covers_the_longest_nccl_job() -> None:
    stages = "- {name: node, scope: intra-node, timeoutPerJob: 3h, tests: [nccl-all-reduce]}\n"
    rules = rules_of(build(site_yaml(stages=stages)))
    assert "[3h])" in rules[0]["expr"]
    assert "[1h])" in rules_of(build())[0]["expr"]


def test_alerts_use_exported_labels_without_honor_labels() -> None:
    manifests = build(lab_text("serviceMonitor: {honorLabels: false}"))
    (failed,) = alerts_named(manifests, "NvcreJobFailed")
    assert "max by (exported_namespace, workflow, exported_job)" in failed["expr"]
    assert "{{ $labels.exported_job }}" in failed["annotations"]["description"]
    (busbw,) = alerts_named(manifests, "NvcreNcclBusBandwidthBelowThreshold")
    assert "unless on (exported_namespace, exported_job)" in busbw["expr"]
    (honored,) = alerts_named(build(lab_text()), "NvcreJobFailed")
    assert "max by (namespace, workflow, job)" in honored["expr"]


def test_cluster_names_are_matched_literally() -> None:
    text = edit(site_yaml(), "  cluster: lab\n", '  cluster: "gpu.prod+1"\n')
    rule = rules_of(build(text))[0]
    assert 'cluster=~"gpu\\\\.prod\\\\+1|"' in rule["expr"]
    assert rule["labels"] == {"cluster": "gpu.prod+1"}
    assert re.fullmatch(regex_escape("a.b+c|d"), "a.b+c|d")


def test_workflow_patterns_match_the_generated_objects_only() -> None:
    text = lab_text()
    planned = units_of(text)
    runs = [
        m
        for m in readiness_manifests(site(text), planned)
        if m.kind in {"Certification", "WorkloadRun"}
    ]
    for unit in planned:
        pattern = re.compile(workflow_pattern(site(text), [unit]))
        own = [m for m in runs if _runs(m, unit)]
        assert len(own) == 1, (unit.stage.name, unit.test.name)
        workflow = own[0].name
        if unit.test.nvcre is not None and unit.mode == "category":
            workflow += f"-{unit.test.nvcre.domain}-{unit.test.nvcre.variant}"
        assert pattern.fullmatch(workflow), (pattern.pattern, workflow)
        others = [m.name for m in runs if m is not own[0] and m.kind == "WorkloadRun"]
        assert not [n for n in others if pattern.fullmatch(n)], pattern.pattern


def _runs(manifest: Manifest, unit: TestUnit) -> bool:
    """Whether `manifest` is the Certification or WorkloadRun that runs `unit`."""
    labels = manifest.obj["spec"]["workloadMetadata"]["labels"]
    if labels["nvcregen.io/stage"] != unit.stage.name:
        return False
    if unit.mode == "category":
        return manifest.kind == "Certification"
    return manifest.kind == "WorkloadRun" and labels["nvcregen.io/test"] == unit.test.name


# Dashboard


def test_dashboard_config_map_for_the_grafana_sidecar() -> None:
    config_map = one(build(), "ConfigMap")
    assert config_map["metadata"]["labels"] == {"grafana_dashboard": "1"}
    assert config_map["metadata"]["namespace"] == "nvcre"
    text = config_map["data"]["nvcre-readiness.json"]
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n"


def test_dashboard_panels_query_the_recording_rules() -> None:
    model = dashboard_of(build(lab_text()))
    assert model["uid"] == "nvcre-lab" and len(model["uid"]) <= 40
    assert model["time"] == {"from": "now-12h", "to": "now"}
    panels = {p["title"]: p for p in model["panels"]}
    expected = {
        "Bus bandwidth by message size": RECORDINGS[0].record,
        "Algorithm bandwidth by message size": RECORDINGS[1].record,
        "Peak bus bandwidth by message size over the time range": RECORDINGS[0].record,
        "Goodput ratio by workflow (worst job)": RECORDINGS[2].record,
        "Jobs by status": RECORDINGS[3].record,
        "Nodes with hardware failures by workflow": RECORDINGS[4].record,
    }
    for title, record in expected.items():
        assert record in panels[title]["targets"][0]["expr"], title
    goodput = panels["Goodput ratio by workflow (worst job)"]["fieldConfig"]["defaults"]
    assert goodput["thresholds"]["steps"][1]["value"] == 0.9
    assert [p["id"] for p in model["panels"]] == list(range(1, len(model["panels"]) + 1))
