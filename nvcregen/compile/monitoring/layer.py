"""Monitoring objects for a site: how Prometheus scrapes NVCRE, its rules and dashboards.

With the Prometheus Operator (`spec.dependencies.prometheus.operator`), a ServiceMonitor
scrapes the NVCRE controller's metrics Service over HTTPS, verifying its certificate
against the CA the site names (`tls_config`), authenticating with the token of a
ServiceAccount that may only `get /metrics` (the ServiceMonitor names the token's Secret;
no value is ever written). A PrometheusRule
(`rules.py`, `alerts.py`) and a Grafana dashboard (`dashboards.py`) follow the site's
`monitoring` switches. `check_monitoring` reports settings that would leave Prometheus
blind or trust any server.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvcregen.compile.monitoring.alerts import METRICS_SERVICE
from nvcregen.compile.monitoring.dashboards import dashboard_config_map
from nvcregen.compile.monitoring.rules import COMPONENT, MONITORING_API, prometheus_rule
from nvcregen.core import codes, units
from nvcregen.core.errors import Diagnostic, Severity
from nvcregen.core.labels import UNVERIFIED_TLS
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.core.units import check_unit
from nvcregen.plan.model import TestUnit
from nvcregen.spec.positions import Document
from nvcregen.spec.v1alpha1 import Site

SERVICE_MONITOR = "nvcregen-nvcre-metrics"
SCRAPER = "nvcregen-metrics-scraper"
SCRAPER_TOKEN = "nvcregen-metrics-scraper-token"
METRICS_READER = "nvcre-metrics-reader"  # after `nvcregen-<site>-`: cluster-scoped RBAC
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_API = f"{RBAC_GROUP}/v1"
METRICS_PORT = "https"
METRICS_PATH = "/metrics"
# The labels of the NVCRE chart's metrics Service (release `nvcre`, nameOverride `nvcre`).
SERVICE_SELECTOR = {
    "app.kubernetes.io/name": "nvcre",
    "app.kubernetes.io/instance": "nvcre",
    "control-plane": "manager",
}
_AT = "/spec/monitoring/serviceMonitor"


def monitoring_manifests(site: Site, test_units: Sequence[TestUnit]) -> list[Manifest]:
    """Build the monitoring layer of a site (component "monitoring").

    Args:
        site: The site.
        test_units: The planned tests (`plan(site, catalog)`); they give the rules their
            workflow names and timeouts.

    Returns:
        With the Prometheus Operator: a ServiceMonitor with its scrape ServiceAccount,
        token Secret and `/metrics` RBAC, and (with `recordingRules`) a PrometheusRule;
        with `dashboards`, a Grafana dashboard ConfigMap.

    """
    monitoring = site.spec.monitoring
    operator = site.spec.dependencies.prometheus.operator
    manifests = scrape_manifests(site) if operator else []
    recorded = operator and monitoring.recording_rules
    if not (recorded or monitoring.dashboards):
        return manifests
    planned = list(test_units)
    if recorded:
        manifests.append(prometheus_rule(site, planned))
    if monitoring.dashboards:
        manifests.append(dashboard_config_map(site, planned, recorded=recorded))
    return manifests


def scrape_manifests(site: Site) -> list[Manifest]:
    """The ServiceMonitor and the identity it scrapes with (needs the Prometheus Operator)."""
    reader = f"nvcregen-{site.metadata.name}-{METRICS_READER}"
    objects = [service_monitor(site), *scraper_identity(site.spec.nvcre.namespace, reader)]
    return [Manifest(obj, COMPONENT, _AT) for obj in objects]


def scraper_identity(namespace: str, reader: str) -> list[Obj]:
    """A ServiceAccount, its token Secret (no value: Kubernetes fills it) and `/metrics` RBAC.

    `reader` names the ClusterRole and its binding: per site, since they are cluster-scoped.
    NVCRE's metrics endpoint authenticates the bearer token with a TokenReview and
    authorizes `get` on the non-resource URL `/metrics`; nothing else is granted.
    """
    account: Obj = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": SCRAPER, "namespace": namespace},
        "automountServiceAccountToken": False,
    }
    annotations = {"kubernetes.io/service-account.name": SCRAPER}
    token: Obj = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SCRAPER_TOKEN, "namespace": namespace, "annotations": annotations},
        "type": "kubernetes.io/service-account-token",
    }
    role: Obj = {
        "apiVersion": RBAC_API,
        "kind": "ClusterRole",
        "metadata": {"name": reader},
        "rules": [{"nonResourceURLs": [METRICS_PATH], "verbs": ["get"]}],
    }
    binding: Obj = {
        "apiVersion": RBAC_API,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": reader},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": reader},
        "subjects": [{"kind": "ServiceAccount", "name": SCRAPER, "namespace": namespace}],
    }
    return [account, token, role, binding]


def service_monitor(site: Site) -> Obj:
    """The ServiceMonitor for the NVCRE controller's metrics Service."""
    spec = site.spec.monitoring.service_monitor
    ns = site.spec.nvcre.namespace
    endpoint: Obj = {"port": METRICS_PORT, "scheme": "https", "path": METRICS_PATH}
    if spec.interval is not None:
        endpoint["interval"] = _duration(spec.interval)
    if spec.scrape_timeout is not None:
        endpoint["scrapeTimeout"] = _duration(spec.scrape_timeout)
    endpoint["honorLabels"] = spec.honor_labels
    endpoint["authorization"] = {
        "type": "Bearer",
        "credentials": {"name": SCRAPER_TOKEN, "key": "token"},
    }
    endpoint["tlsConfig"] = tls_config(site)
    metadata: Obj = {"name": SERVICE_MONITOR, "namespace": ns, "labels": dict(spec.labels)}
    if spec.tls.certificate == "self-signed":
        metadata["annotations"] = {UNVERIFIED_TLS: SELF_SIGNED}
    return {
        "apiVersion": MONITORING_API,
        "kind": "ServiceMonitor",
        "metadata": metadata,
        "spec": {
            "selector": {"matchLabels": dict(SERVICE_SELECTOR)},
            "namespaceSelector": {"matchNames": [ns]},
            "endpoints": [endpoint],
        },
    }


SELF_SIGNED = (
    "NVCRE 0.7.0's chart mounts no certificate: the controller serves a self-signed one, "
    "which no CA verifies; the bearer token authenticates the scrape"
)


def tls_config(site: Site) -> Obj:
    """The endpoint's TLS: verified only against a certificate the controller really serves.

    NVCRE 0.7.0's chart mounts no certificate, so the controller serves a self-signed one,
    and verifying it against any CA fails every scrape with an x509 error (a missing CA
    Secret even makes the operator reject the whole ServiceMonitor). So the endpoint skips
    verification explicitly (the bearer token still authenticates Prometheus) unless the
    site states that the platform mounts a certificate (`tls.certificate: platform`) and
    names its CA; `check_monitoring` refuses a CA named without that statement (NVC370).
    """
    tls = site.spec.monitoring.service_monitor.tls
    ns = site.spec.nvcre.namespace
    config: Obj = {"serverName": tls.server_name or f"{METRICS_SERVICE}.{ns}.svc"}
    ca = tls.ca_ref
    if tls.certificate != "platform" or ca is None or tls.insecure_skip_verify:
        config["insecureSkipVerify"] = True
        return config
    if ca.secret is not None:
        config["ca"] = {"secret": {"name": ca.secret.name, "key": ca.secret.key}}
    elif ca.config_map is not None:
        config["ca"] = {"configMap": {"name": ca.config_map.name, "key": ca.config_map.key}}
    config["insecureSkipVerify"] = False
    return config


def _duration(text: str) -> str:
    """A site duration in the canonical form the operator's pattern takes (e.g. 1m30s)."""
    return units.format_duration(units.parse_duration(text))


def check_monitoring(site: Site, doc: Document) -> list[Diagnostic]:
    """Report monitoring settings that would hide NVCRE from Prometheus or weaken TLS.

    Args:
        site: The parsed site.
        doc: Its document, for positions.

    Returns:
        NVC330 (error) when the ServiceMonitor's labels miss the Prometheus selector,
        NVC331 (warning) when verification of a certificate the platform serves is off,
        NVC370 (error) for a CA named while the controller serves a self-signed certificate,
        NVC380 (error) for a platform certificate without its CA, NVC309 (error) for a malformed
        interval or scrape timeout and NVC332 (error) for a scrape timeout longer than
        the interval; nothing without the Prometheus Operator.

    """
    if not site.spec.dependencies.prometheus.operator:
        return []
    problems = [
        *_selector_problems(site),
        *_tls_problems(site),
        *_duration_problems(site),
    ]
    return [
        Diagnostic(doc.span(where), severity, code, message, where, hint)
        for where, severity, code, message, hint in problems
    ]


_Problem = tuple[str, Severity, str, str, str]  # pointer, severity, code, message, hint


def _selector_problems(site: Site) -> list[_Problem]:
    labels = site.spec.monitoring.service_monitor.labels
    selector = site.spec.dependencies.prometheus.selector
    missing = {k: v for k, v in selector.items() if labels.get(k) != v}
    if not missing:
        return []
    message = (
        f"the ServiceMonitor's labels {_show(labels)} do not match the Prometheus selector "
        f"{_show(selector)}, so Prometheus would never scrape NVCRE"
    )
    hint = (
        f"add {_show(missing)} to serviceMonitor.labels, or set "
        "spec.dependencies.prometheus.selector to the labels your Prometheus selects "
        "monitors by (kubectl get prometheus -A -o yaml | grep -A3 serviceMonitorSelector)"
    )
    return [(f"{_AT}/labels", Severity.ERROR, codes.NVC330.code, message, hint)]


def _tls_problems(site: Site) -> list[_Problem]:
    tls = site.spec.monitoring.service_monitor.tls
    if tls.certificate == "self-signed":
        if tls.ca_ref is None:
            return []  # skipped explicitly: the only scrape that works with NVCRE 0.7.0's chart
        message = (
            "a CA is named for the NVCRE metrics endpoint, but NVCRE 0.7.0's chart mounts no "
            "certificate: the controller serves a self-signed one that this CA did not sign, "
            "so every scrape would fail verification (x509)"
        )
        hint = (
            "remove tls.ca (the ServiceMonitor then skips verification and keeps the bearer "
            "token), or set tls.certificate: platform if your platform mounts a certificate "
            "signed by this CA into the controller"
        )
        where = f"{_AT}/tls/{'caSecret' if tls.ca_secret is not None else 'ca'}"
        return [(where, Severity.ERROR, codes.NVC370.code, message, hint)]
    if tls.ca_ref is None:
        message = (
            "tls.certificate: platform says the platform mounts a certificate into the NVCRE "
            "controller, but no CA to verify it against is named"
        )
        hint = (
            "name the CA that signed it: tls.ca: {secret: {name: <secret>, key: ca.crt}} or "
            "{configMap: {...}}; or remove tls.certificate to skip verification"
        )
        return [(f"{_AT}/tls/certificate", Severity.ERROR, codes.NVC380.code, message, hint)]
    if tls.insecure_skip_verify:
        message = "TLS certificate verification of the NVCRE metrics endpoint is off"
        hint = (
            "the platform serves a certificate signed by tls.ca: keep verification on; skipping "
            "it does not replace the token, it only trusts any server"
        )
        return [
            (f"{_AT}/tls/insecureSkipVerify", Severity.WARNING, codes.NVC331.code, message, hint)
        ]
    return []


def _duration_problems(site: Site) -> list[_Problem]:
    spec = site.spec.monitoring.service_monitor
    fields = {"interval": spec.interval, "scrapeTimeout": spec.scrape_timeout}
    problems: list[_Problem] = []
    for name, value in fields.items():
        problem = check_unit("duration", value) if value is not None else None
        if problem is not None:
            problems.append((f"{_AT}/{name}", Severity.ERROR, codes.NVC309.code, *problem))
    if problems or spec.interval is None or spec.scrape_timeout is None:
        return problems
    if units.parse_duration(spec.scrape_timeout) <= units.parse_duration(spec.interval):
        return []
    message = (
        f"scrape timeout {spec.scrape_timeout} is longer than the interval {spec.interval}; "
        "the Prometheus Operator rejects such a ServiceMonitor"
    )
    hint = f"use a scrapeTimeout of at most {spec.interval}"
    return [(f"{_AT}/scrapeTimeout", Severity.ERROR, codes.NVC332.code, message, hint)]


def _show(labels: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(labels.items())) + "}"
