"""Alerts over NVCRE's metrics that still work when the gauges vanish at run end (pure).

NVCRE deletes its NCCL bandwidth gauges when a BandwidthMeasurement completes, every
goodput gauge except the ratio when a Job ends, and a Job's status and failed-node gauges
when the Job leaves its cache. Alerts over those gauges therefore look back with
`max_over_time`, and threshold alerts judge a Job once it is no longer in progress, from
what the window still holds. Each site threshold that the metrics can show (busbw, algbw,
goodput) becomes one alert, limited to the Workflows of the stages it applies to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nvcregen.compile.monitoring.promql import (
    HOUR_MS,
    MINUTE_MS,
    by_job,
    cluster_matchers,
    in_progress,
    job_text,
    not_in_progress,
    promql_string,
    regex_escape,
    whole_minutes,
)
from nvcregen.core import units
from nvcregen.core.manifest import Obj, hashed_name
from nvcregen.core.metrics import METRICS, Metric
from nvcregen.core.nvcre import CERTIFICATION_NAME_MAX, WORKLOADRUN_NAME_MAX
from nvcregen.kindapi.registry import kind_of
from nvcregen.plan.model import TestUnit
from nvcregen.spec.v1alpha1 import Site, Threshold

METRICS_SERVICE = "nvcre-metrics-service"
IN_PROGRESS_GRACE_MS = 30 * MINUTE_MS  # on top of the longest timeoutPerJob
METRICS_MISSING_FOR = "15m"
_VIOLATION = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!="}


def job_alerts(site: Site, test_units: Sequence[TestUnit], window: str) -> list[Obj]:
    """Alerts on NVCRE Jobs: failed nodes, failures, and Jobs that never finish.

    Args:
        site: The site.
        test_units: The planned tests; the longest timeout sets "in progress too long".
        window: How far back failed nodes and failures are still reported.

    Returns:
        The alerting rules.

    """
    sel = cluster_matchers(site)
    by = by_job(site)
    longest = max((u.timeout_ms for u in test_units), default=HOUR_MS)
    too_long = units.format_duration(whole_minutes(longest + IN_PROGRESS_GRACE_MS))
    job = job_text(site)
    failed_nodes = f"max_over_time(nvcre_job_failed_nodes{{{sel}}}[{window}])"
    failed = f'max_over_time(nvcre_job_status{{{sel}, status="failed"}}[{window}])'
    return [
        _alert(
            site,
            ("NvcreJobFailedNodes", "critical"),
            f"max by ({by}) ({failed_nodes}) > 0",
            "An NVCRE readiness job found nodes with hardware failures",
            f"{job} reported {{{{ $value }}}} failed node(s) within the last {window}.",
        ),
        _alert(
            site,
            ("NvcreJobFailed", "warning"),
            f"max by ({by}) ({failed}) == 1",
            "An NVCRE readiness job failed",
            f"{job} failed within the last {window}.",
        ),
        _alert(
            site,
            ("NvcreJobInProgressTooLong", "warning"),
            f"max by ({by}) ({in_progress(site)}) == 1",
            "An NVCRE readiness job has been in progress for too long",
            f"{job} has been in progress for over {too_long}, longer than the site's "
            "longest timeoutPerJob plus 30m: it may be blocked on scheduling or stuck.",
            duration=too_long,
        ),
    ]


def scrape_alert(site: Site) -> Obj:
    """An alert when no NVCRE controller target is up (wrong labels, TLS or token)."""
    ns = site.spec.nvcre.namespace
    up = f"up{{{cluster_matchers(site, f'namespace={promql_string(ns)}')}, "
    up += f"service={promql_string(METRICS_SERVICE)}}}"
    return _alert(
        site,
        ("NvcreMetricsMissing", "warning"),
        f"absent({up} == 1)",
        "Prometheus is not scraping the NVCRE controller",
        f"No NVCRE metrics target in namespace {ns} has been up for {METRICS_MISSING_FOR}: "
        "check the ServiceMonitor's labels, TLS and token.",
        duration=METRICS_MISSING_FOR,
    )


@dataclass(frozen=True)
class ThresholdAlert:
    """The alert for one field of one site threshold, and where it came from.

    Attributes:
        rule: The alerting rule.
        note: How the site's threshold became the alert, for index.json.
        catalog: Catalog files of the tests the threshold applies to.

    """

    rule: Obj
    note: str
    catalog: tuple[str, ...]


def threshold_alerts(
    site: Site, test_units: Sequence[TestUnit], window: str
) -> list[ThresholdAlert]:
    """One alert per site threshold field that NVCRE's metrics can show.

    Args:
        site: The site, whose `thresholds` are read.
        test_units: The planned tests, which say where each threshold applies.
        window: How far back bandwidth gauges are looked for after they vanish.

    Returns:
        The alerts, in the order of the site's thresholds.

    """
    return [_threshold_alert(site, target, window) for target in _targets(site, test_units)]


@dataclass(frozen=True)
class _Target:
    """One field of one site threshold, with the test units it applies to."""

    index: int
    threshold: Threshold
    field: str
    measure: Metric
    comparison: units.Comparison
    matching: tuple[TestUnit, ...]

    @property
    def wanted(self) -> str:
        """The threshold as written, and as compared when written otherwise (Gb/s, %)."""
        written, unit = self.comparison.written, self.comparison.unit
        text = f"{self.field} {written}"
        if (unit and unit not in written) or "%" in written:
            text += f" ({self.comparison.op} {self.bound} {unit})".replace(" )", ")")
        return text

    @property
    def bound(self) -> str:
        """The bound as a PromQL number, in GB/s for bandwidths."""
        return units.format_gbs(self.comparison.value)


def _targets(site: Site, test_units: Sequence[TestUnit]) -> list[_Target]:
    found: list[_Target] = []
    for index, threshold in enumerate(site.spec.thresholds):
        matching = tuple(
            u
            for u in test_units
            if u.test.name == threshold.test and u.stage.scope == threshold.scope
        )
        for field, measure in METRICS.items():
            text = getattr(threshold, field)
            if text is None or not matching or not _measurable(field, matching[0]):
                continue
            comparison = units.parse_comparison(text, unit_kind=measure.unit_kind)
            found.append(_Target(index, threshold, field, measure, comparison, matching))
    return found


def _measurable(field: str, unit: TestUnit) -> bool:
    if field == "goodput":
        return unit.test.measurement == "goodput"
    return kind_of(unit.test).collective


def _measured(site: Site, target: _Target, window: str) -> tuple[str, str]:
    """PromQL for a Job's measured value of a threshold's measure, and what it covers."""
    pattern = workflow_pattern(site, target.matching)
    matchers = [f"workflow=~{promql_string(pattern)}"]
    metric = target.measure.prom_metric
    test = target.matching[0].test
    swept = kind_of(test).sweep(test)
    if swept is None:  # goodput: the ratio is kept after the Job ends; 0 is "not yet"
        selected = f"{metric}{{{cluster_matchers(site, *matchers)}}}"
        return f"min by ({by_job(site)}) ({selected} > 0)", ""
    collective = swept.test_type  # NVCRE labels a sweep's gauges with it
    matchers.insert(0, f"nccl_test={promql_string(collective)}")
    by, where = f"{by_job(site)}, nccl_test", f" ({collective}, largest over message sizes)"
    if target.threshold.at is not None:
        size = units.parse_size(target.threshold.at)
        matchers.insert(1, f"message_size_bytes={promql_string(str(size))}")
        by += ", message_size_bytes"
        where = f" ({collective} at {target.threshold.at}, {size} bytes)"
    inner = f"max_over_time({metric}{{{cluster_matchers(site, *matchers)}}}[{window}])"
    return f"max by ({by}) ({inner})", where


def _threshold_alert(site: Site, target: _Target, window: str) -> ThresholdAlert:
    value, where = _measured(site, target, window)
    violation = _VIOLATION[target.comparison.op]
    unit = target.comparison.unit
    reached = '{{ printf "%.2f" $value }}' + (f" {unit}" if unit else "") + where
    rule = _alert(
        site,
        (target.measure.alert, "warning"),
        f"({value} {violation} {target.bound}) {not_in_progress(site)}",
        f"{target.measure.what} below the site's threshold",
        f"{job_text(site)} reached {reached}; the site requires {target.wanted} for "
        f"{target.threshold.test} at {target.threshold.scope} scope.",
        extra={"test": target.threshold.test, "scope": target.threshold.scope},
    )
    shown = f"{target.bound} {unit}".rstrip()
    note = (
        f"thresholds[{target.index}] {target.wanted} -> alert {target.measure.alert} when "
        f"{target.measure.prom_metric}{where} {violation} {shown} once the job is done"
    )
    catalog = tuple(sorted({u.test_file for u in target.matching}))
    return ThresholdAlert(rule, note, catalog)


def workflow_pattern(site: Site, matching: Sequence[TestUnit]) -> str:
    """A regex for the names of the NVCRE Workflows that run these test units.

    A Certification's Workflows are named `<certification>-<domain>-<variant>`, and a
    Certification is `<site>-<stage>-<hash>` (cut to fit); a WorkloadRun's Workflow is
    taken to start with the WorkloadRun's name, `<site>-<stage>-<test>-<hash>`.
    """
    patterns: list[str] = []
    for unit in matching:
        if unit.mode == "category":
            parts = [site.metadata.name, unit.stage.name]
            limit, rest = CERTIFICATION_NAME_MAX, "-.+"
        else:
            parts = [site.metadata.name, unit.stage.name, unit.test.name]
            limit, rest = WORKLOADRUN_NAME_MAX, "(-.+)?"
        prefix = hashed_name(parts, "0" * 8, limit)[:-8]  # the name without its hash
        pattern = f"{regex_escape(prefix)}[0-9a-f]{{8}}{rest}"
        if pattern not in patterns:
            patterns.append(pattern)
    return "|".join(patterns)


def _alert(
    site: Site,
    name_severity: tuple[str, str],
    expr: str,
    summary: str,
    description: str,
    *,
    duration: str | None = None,
    extra: dict[str, str] | None = None,
) -> Obj:
    name, severity = name_severity
    rule: Obj = {"alert": name, "expr": expr}
    if duration is not None:
        rule["for"] = duration
    rule["labels"] = {"cluster": site.spec.cluster, "severity": severity, **(extra or {})}
    rule["annotations"] = {"summary": summary, "description": description}
    return rule
