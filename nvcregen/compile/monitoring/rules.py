"""The PrometheusRule of a site: recording rules over NVCRE's metrics, and the alerts (pure).

Recording rules are named `level:metric:operations`, aggregate this site's series only
(see `promql.py`) and set an explicit `cluster` label. NVCRE deletes its NCCL bandwidth
gauges when a measurement completes and a Job's failed-node gauge when the Job leaves its
cache, so those rules record `max_over_time` across a window at least as long as the
longest NCCL job: the values stay visible to dashboards and alerts after the run. The
goodput ratio is kept after a Job ends, and 0 means "not computed yet", so it is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.compile.monitoring.alerts import job_alerts, scrape_alert, threshold_alerts
from nvcregen.compile.monitoring.promql import (
    HOUR_MS,
    SELECTOR,
    WINDOW,
    cluster_matchers,
    whole_minutes,
)
from nvcregen.core import units
from nvcregen.core.manifest import Manifest, Obj
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site

COMPONENT = "monitoring"
MONITORING_API = "monitoring.coreos.com/v1"
RULE_NAME = "nvcregen-nvcre"


@dataclass(frozen=True)
class Recording:
    """A recording rule: the series it records and the PromQL that computes it.

    Attributes:
        record: The recorded name, `level:metric:operations`.
        template: PromQL with `$SELECTOR` for the input's label matchers (without braces)
            and `$WINDOW` for the `max_over_time` window.

    """

    record: str
    template: str

    @property
    def metric(self) -> str:
        """The NVCRE metric the rule reads, e.g. `nvcre_nccl_busbw_gbs`."""
        return self.record.split(":")[1]

    def expr(self, matchers: str, window: str) -> str:
        """The PromQL of this rule with the given label matchers and window."""
        return self.template.replace(SELECTOR, matchers).replace(WINDOW, window)


RECORDINGS = (
    Recording(
        "cluster_nccl_test_message_size_bytes:nvcre_nccl_busbw_gbs:max_over_time",
        "max by (nccl_test, message_size_bytes) "
        "(max_over_time(nvcre_nccl_busbw_gbs{$SELECTOR}[$WINDOW]))",
    ),
    Recording(
        "cluster_nccl_test_message_size_bytes:nvcre_nccl_algbw_gbs:max_over_time",
        "max by (nccl_test, message_size_bytes) "
        "(max_over_time(nvcre_nccl_algbw_gbs{$SELECTOR}[$WINDOW]))",
    ),
    Recording(
        "cluster_workflow:nvcre_goodput_ratio:min",
        "min by (workflow) (nvcre_goodput_ratio{$SELECTOR} > 0)",
    ),
    Recording(
        "cluster_status:nvcre_job_status:sum",
        "sum by (status) (nvcre_job_status{$SELECTOR})",
    ),
    Recording(
        "cluster_workflow:nvcre_job_failed_nodes:max_over_time",
        "max by (workflow) (max_over_time(nvcre_job_failed_nodes{$SELECTOR}[$WINDOW]))",
    ),
)


def bandwidth_window(test_units: Sequence[TestUnit]) -> str:
    """The `max_over_time` window: an hour, or the longest NCCL job's timeout if longer."""
    longest = max((u.timeout_ms for u in test_units if kind_of(u.test).collective), default=0)
    return units.format_duration(whole_minutes(max(HOUR_MS, longest)))


def prometheus_rule(site: Site, test_units: Sequence[TestUnit]) -> Manifest:
    """A PrometheusRule with the recording rules and the alerts for one site.

    Args:
        site: The site; its `cluster`, thresholds and NVCRE namespace shape the rules.
        test_units: The planned tests; they give workflow names, test types and timeouts.

    Returns:
        The PrometheusRule in the NVCRE namespace, labelled with the labels the
        Prometheus selects by (`spec.dependencies.prometheus.selector`).

    """
    window = bandwidth_window(test_units)
    records: list[Obj] = [
        {
            "record": r.record,
            "expr": r.expr(cluster_matchers(site), window),
            "labels": {"cluster": site.spec.cluster},
        }
        for r in RECORDINGS
    ]
    thresholds = threshold_alerts(site, test_units, window)
    alerts = [*job_alerts(site, test_units, window), scrape_alert(site)]
    alerts += [t.rule for t in thresholds]
    obj: Obj = {
        "apiVersion": MONITORING_API,
        "kind": "PrometheusRule",
        "metadata": {
            "name": RULE_NAME,
            "namespace": site.spec.nvcre.namespace,
            "labels": dict(site.spec.dependencies.prometheus.selector),
        },
        "spec": {
            "groups": [
                {"name": "nvcre.records", "rules": records},
                {"name": "nvcre.alerts", "rules": alerts},
            ]
        },
    }
    notes = tuple(t.note for t in thresholds)
    catalog = tuple(sorted({f for t in thresholds for f in t.catalog}))
    return Manifest(obj, COMPONENT, "/spec/monitoring/recordingRules", catalog, notes)
